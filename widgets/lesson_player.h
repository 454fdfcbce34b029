// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/lesson.h"

#include <QStringList>
#include <QWidget>

#include <optional>

class QButtonGroup;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QVBoxLayout;

namespace vramlab {

class ScenarioDocument;

/// Plays a workshop lesson step by step: each step puts its scenario into the document
/// (one undoable edit), shows its explanation, points at controls and chart parts, and
/// may ask a question whose answer is masked until the room has predicted. Keys: Space or
/// Right = next (or reveal), Left = back, Esc = leave. "Try it yourself" leaves the user
/// in the explorer with the step's scenario.
class LessonPlayer : public QWidget {
    Q_OBJECT
public:
    explicit LessonPlayer(ScenarioDocument* document, QWidget* parent = nullptr);

    /// Starts `lesson` at its first step.
    void setLesson(const Lesson& lesson);
    const std::optional<Lesson>& lesson() const { return m_lesson; }
    int currentStep() const { return m_step; }
    /// False while the step's question waits for an answer (the result is masked).
    bool isRevealed() const { return m_revealed; }
    /// Whether the last answer given to this step's question was right (nullopt: none given).
    std::optional<bool> lastAnswerCorrect() const { return m_correct; }

    /// Reveals an unanswered question's answer, else goes to the next step.
    void next();
    void back();
    void goToStep(int index);
    /// Answers the current question (the Answer button does the same with the inputs).
    bool answerChoice(int option);
    bool answerNumber(double value);
    void setPresenter(bool on);

    QLabel* titleLabel() const { return m_title; }
    QLabel* textLabel() const { return m_text; }
    QLabel* progressLabel() const { return m_progressText; }
    QLabel* feedbackLabel() const { return m_feedback; }
    QLabel* numbersLabel() const { return m_numbers; }
    QPushButton* nextButton() const { return m_next; }
    QPushButton* backButton() const { return m_back; }
    QPushButton* answerButton() const { return m_answer; }
    QPushButton* tryItButton() const { return m_tryIt; }
    QDoubleSpinBox* numberField() const { return m_number; }
    QList<QRadioButton*> optionButtons() const { return m_options; }

signals:
    /// The step on screen points at these panel keys and chart components.
    void highlightChanged(const QStringList& panelKeys, const QStringList& chartParts);
    /// The result must stay hidden (true) or may show (false).
    void resultMasked(bool masked);
    /// The user left the lesson (Esc, or "Try it yourself": the scenario stays).
    void left();

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    void showStep();
    void reveal();
    void answerFromInputs();
    void applyFonts();

    ScenarioDocument* m_doc;
    std::optional<Lesson> m_lesson;
    int m_step = 0;
    bool m_revealed = true;
    bool m_presenter = false;
    std::optional<bool> m_correct;

    QLabel* m_lessonTitle;
    QLabel* m_title;
    QLabel* m_progressText;
    QProgressBar* m_progress;
    QLabel* m_text;
    QGroupBox* m_questionBox;
    QLabel* m_prompt;
    QVBoxLayout* m_optionsLayout;
    QButtonGroup* m_optionGroup;
    QList<QRadioButton*> m_options;
    QDoubleSpinBox* m_number;
    QPushButton* m_answer;
    QLabel* m_feedback;
    QLabel* m_numbers;
    QPushButton* m_back;
    QPushButton* m_next;
    QPushButton* m_tryIt;
};

} // namespace vramlab
