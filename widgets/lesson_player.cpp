// SPDX-License-Identifier: MIT
#include "lesson_player.h"

#include "chart_support.h"
#include "scenario_document.h"

#include <QButtonGroup>
#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHash>
#include <QKeyEvent>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QScrollArea>
#include <QTextDocument>
#include <QVBoxLayout>

#include <cmath>

namespace vramlab {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

/// "Model states (the article's convention)", "KV cache", "flops per step".
QString quantityLabel(const std::string& quantity)
{
    const QString q = qs(quantity);
    if (q.startsWith(QLatin1String("textbook.")))
        return quantityLabel(quantity.substr(9)) + QStringLiteral(" (article's convention)");
    if (q == QLatin1String("model_states"))
        return QStringLiteral("Model states");
    if (q.startsWith(QLatin1String("per_gpu_bytes.")) && q != QLatin1String("per_gpu_bytes.total"))
        return componentLabel(q.mid(14));
    // The serving engine's report, in the words of its startup lines.
    static const QHash<QString, QString> serving
        = { { QStringLiteral("serving.budget_bytes"), QStringLiteral("Engine budget") },
              { QStringLiteral("serving.weights_bytes"), QStringLiteral("Weights") },
              { QStringLiteral("serving.activation_peak_bytes"), QStringLiteral("Profiled activation peak") },
              { QStringLiteral("serving.non_torch_bytes"), QStringLiteral("Non-torch memory") },
              { QStringLiteral("serving.cuda_graph_bytes"), QStringLiteral("CUDA graphs") },
              { QStringLiteral("serving.kv_cache_bytes"), QStringLiteral("KV cache") },
              { QStringLiteral("serving.kv_cache_tokens"), QStringLiteral("KV cache tokens") },
              { QStringLiteral("serving.gpu_blocks"), QStringLiteral("GPU blocks") },
              { QStringLiteral("serving.max_concurrency"), QStringLiteral("Max concurrency") },
              { QStringLiteral("serving.startup_fails"), QStringLiteral("Startup fails") } };
    if (const auto it = serving.constFind(q); it != serving.constEnd())
        return *it;
    QString last = q.section(QLatin1Char('.'), -1).replace(QLatin1Char('_'), QLatin1Char(' '));
    last[0] = last[0].toUpper();
    return last;
}

QString quantityText(double value, const std::string& unit)
{
    return qs(formatQuantity(value, unit));
}

} // namespace

LessonPlayer::LessonPlayer(ScenarioDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_doc(document)
    , m_lessonTitle(new QLabel)
    , m_title(new QLabel)
    , m_progressText(new QLabel)
    , m_progress(new QProgressBar)
    , m_text(new QLabel)
    , m_questionBox(new QGroupBox(QStringLiteral("Predict first")))
    , m_prompt(new QLabel)
    , m_optionsLayout(new QVBoxLayout)
    , m_optionGroup(new QButtonGroup(this))
    , m_number(new QDoubleSpinBox)
    , m_answer(new QPushButton(QStringLiteral("Answer")))
    , m_feedback(new QLabel)
    , m_numbers(new QLabel)
    , m_back(new QPushButton(QStringLiteral("◀ Back")))
    , m_next(new QPushButton(QStringLiteral("Next ▶")))
    , m_tryIt(new QPushButton(QStringLiteral("Try it yourself")))
{
    setFocusPolicy(Qt::StrongFocus);
    // The step scrolls when a long one meets a low projector; the buttons stay in view.
    auto* outer = new QVBoxLayout(this);
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setFocusPolicy(Qt::NoFocus);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // text wraps instead
    auto* content = new QWidget;
    scroll->setWidget(content);
    outer->addWidget(scroll, 1);
    auto* layout = new QVBoxLayout(content);
    for (QLabel* l : { m_lessonTitle, m_title, m_text, m_prompt, m_feedback, m_numbers }) {
        l->setWordWrap(true);
        l->setTextFormat(Qt::PlainText);
    }
    m_numbers->setTextFormat(Qt::RichText);
    m_progress->setTextVisible(false);
    m_progress->setMaximumHeight(8);
    layout->addWidget(m_lessonTitle);
    auto* progressRow = new QHBoxLayout;
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_progressText);
    layout->addLayout(progressRow);
    layout->addWidget(m_title);
    layout->addWidget(m_text);

    auto* q = new QVBoxLayout(m_questionBox);
    q->addWidget(m_prompt);
    q->addLayout(m_optionsLayout);
    m_number->setRange(-1e15, 1e15);
    m_number->setDecimals(3);
    m_number->setObjectName(QStringLiteral("lessonNumber"));
    q->addWidget(m_number);
    q->addWidget(m_answer);
    layout->addWidget(m_questionBox);
    layout->addWidget(m_feedback);
    layout->addWidget(m_numbers);
    layout->addStretch(1);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_back);
    buttons->addWidget(m_next);
    outer->addLayout(buttons);
    outer->addWidget(m_tryIt);
    // Buttons never take the focus: Space and the arrows always drive the lesson.
    for (QPushButton* b : { m_back, m_next, m_tryIt, m_answer })
        b->setFocusPolicy(Qt::NoFocus);
    m_tryIt->setToolTip(QStringLiteral("Leave the lesson and keep exploring this step's scenario"));

    connect(m_back, &QPushButton::clicked, this, &LessonPlayer::back);
    connect(m_next, &QPushButton::clicked, this, &LessonPlayer::next);
    connect(m_answer, &QPushButton::clicked, this, &LessonPlayer::answerFromInputs);
    connect(m_tryIt, &QPushButton::clicked, this, &LessonPlayer::left);
    applyFonts();
}

void LessonPlayer::setLesson(const Lesson& lesson)
{
    m_lesson = lesson;
    m_lessonTitle->setText(qs(lesson.title));
    m_progress->setRange(0, int(lesson.steps.size()));
    goToStep(0);
    setFocus();
}

void LessonPlayer::goToStep(int index)
{
    if (!m_lesson || index < 0 || index >= int(m_lesson->steps.size()))
        return;
    m_step = index;
    const LessonStep& step = m_lesson->steps[size_t(index)];
    m_revealed = !step.question.has_value();
    m_correct.reset();
    m_doc->replaceScenario(step.scenario, QStringLiteral("Lesson: ") + qs(step.title));
    showStep();
}

void LessonPlayer::showStep()
{
    const LessonStep& step = m_lesson->steps[size_t(m_step)];
    const int n = int(m_lesson->steps.size());
    m_progress->setValue(m_step + 1);
    m_progressText->setText(QStringLiteral("Step %1 of %2").arg(m_step + 1).arg(n));
    m_title->setText(qs(step.title));
    m_text->setText(qs(step.text));

    qDeleteAll(m_options);
    m_options.clear();
    m_questionBox->setVisible(step.question.has_value());
    if (step.question) {
        const LessonQuestion& q = *step.question;
        m_prompt->setText(qs(q.prompt));
        const bool choice = q.kind == LessonQuestion::Kind::Choice;
        for (size_t i = 0; i < q.options.size(); ++i) {
            auto* option = new QRadioButton(qs(q.options[i]));
            option->setFocusPolicy(Qt::NoFocus);
            option->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred); // the dock's width decides
            option->setToolTip(Qt::convertFromPlainText(option->text()));
            m_optionGroup->addButton(option, int(i));
            m_optionsLayout->addWidget(option);
            m_options << option;
        }
        applyFonts();
        m_number->setSuffix(q.unit.empty() || q.unit == "count" ? QString() : QStringLiteral(" ") + qs(q.unit));
        m_number->setValue(0);
        if (!choice)
            m_number->setFocus();
    }
    QStringList keys, parts;
    for (const std::string& h : step.highlight)
        (h.rfind("chart.", 0) == 0 ? parts : keys) << qs(h.rfind("chart.", 0) == 0 ? h.substr(6) : h);
    emit highlightChanged(keys, parts);
    reveal();
    setFocus();
}

void LessonPlayer::reveal()
{
    const LessonStep& step = m_lesson->steps[size_t(m_step)];
    const int n = int(m_lesson->steps.size());
    m_back->setEnabled(m_step > 0);
    m_next->setText(!m_revealed ? QStringLiteral("Reveal ▶")
            : m_step + 1 < n    ? QStringLiteral("Next ▶")
                                : QStringLiteral("Finish"));
    // Once revealed the inputs step aside: the prompt, the verdict and the numbers remain.
    const bool numberQuestion = step.question && step.question->kind == LessonQuestion::Kind::Number;
    m_answer->setVisible(!m_revealed);
    for (QRadioButton* o : m_options)
        o->setVisible(!m_revealed);
    m_number->setVisible(numberQuestion && !m_revealed);
    emit resultMasked(!m_revealed);

    QString feedback;
    if (m_revealed && step.question) {
        const LessonQuestion& q = *step.question;
        const QString answer = q.kind == LessonQuestion::Kind::Choice ? qs(q.options[size_t(q.answerIndex)])
                                                                      : quantityText(q.answerValue, q.unit);
        feedback = !m_correct ? QStringLiteral("Answer: ")
            : *m_correct      ? QStringLiteral("✔ Right: ")
                              : QStringLiteral("✘ Not quite. Answer: ");
        feedback += answer;
        if (!q.explanation.empty())
            feedback += QStringLiteral("\n") + qs(q.explanation);
        const char* colour = !m_correct ? "palette(text)" : *m_correct ? "#2e9d4a" : "#d0413a";
        m_feedback->setStyleSheet(QStringLiteral("QLabel { color: %1; }").arg(QLatin1String(colour)));
    }
    m_feedback->setText(feedback);
    m_feedback->setVisible(!feedback.isEmpty());

    // The step's numbers, article against VRAM Lab, once the result shows.
    QString numbers;
    if (m_revealed && m_doc->report()) {
        try {
            for (const ExpectationResult& r : evaluateStep(step, *m_doc->report())) {
                const LessonExpectation& e = *r.expectation;
                const auto shown = [&](double v) {
                    return r.yesNo ? (v != 0 ? QStringLiteral("yes") : QStringLiteral("no")) : quantityText(v, e.unit);
                };
                numbers += QStringLiteral("%1 %2: <b>%3</b>")
                               .arg(r.ok ? QStringLiteral("✔") : QStringLiteral("≠"),
                                   quantityLabel(e.quantity).toHtmlEscaped(), shown(r.actual).toHtmlEscaped());
                if (!r.ok)
                    numbers += QStringLiteral(" (lesson says %1)").arg(shown(e.value).toHtmlEscaped());
                numbers += QStringLiteral("<br>");
            }
        } catch (const std::exception& e) {
            numbers = QString::fromUtf8(e.what()).toHtmlEscaped();
        }
    }
    m_numbers->setText(numbers);
    m_numbers->setVisible(!numbers.isEmpty());
}

void LessonPlayer::next()
{
    if (!m_lesson)
        return;
    if (!m_revealed) {
        m_revealed = true;
        reveal();
    } else if (m_step + 1 < int(m_lesson->steps.size())) {
        goToStep(m_step + 1);
    } else {
        emit left();
    }
}

void LessonPlayer::back()
{
    goToStep(m_step - 1);
}

bool LessonPlayer::answerChoice(int option)
{
    const LessonStep& step = m_lesson->steps[size_t(m_step)];
    if (m_revealed || !step.question || step.question->kind != LessonQuestion::Kind::Choice)
        return false;
    if (option >= 0 && option < m_options.size())
        m_options[option]->setChecked(true);
    m_correct = option == step.question->answerIndex;
    m_revealed = true;
    reveal();
    return *m_correct;
}

bool LessonPlayer::answerNumber(double value)
{
    const LessonStep& step = m_lesson->steps[size_t(m_step)];
    if (m_revealed || !step.question || step.question->kind != LessonQuestion::Kind::Number)
        return false;
    m_number->setValue(value);
    m_correct = acceptsAnswer(*step.question, value);
    m_revealed = true;
    reveal();
    return *m_correct;
}

void LessonPlayer::answerFromInputs()
{
    const LessonStep& step = m_lesson->steps[size_t(m_step)];
    if (!step.question)
        return;
    if (step.question->kind == LessonQuestion::Kind::Choice) {
        if (m_optionGroup->checkedId() >= 0)
            answerChoice(m_optionGroup->checkedId());
    } else {
        answerNumber(m_number->value());
    }
    setFocus();
}

void LessonPlayer::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Space:
    case Qt::Key_Right:
    case Qt::Key_PageDown:
        next();
        return;
    case Qt::Key_Left:
    case Qt::Key_PageUp:
        back();
        return;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (!m_revealed)
            answerFromInputs();
        return;
    case Qt::Key_Escape:
        emit left();
        return;
    default:
        QWidget::keyPressEvent(event);
    }
}

void LessonPlayer::setPresenter(bool on)
{
    m_presenter = on;
    applyFonts();
}

void LessonPlayer::applyFonts()
{
    // Sizes in points relative to the window font, larger still on a projector.
    const auto sized = [this](QWidget* w, int normal, int presenter, bool bold) {
        QFont f = font();
        f.setPointSize(m_presenter ? presenter : normal);
        f.setBold(bold);
        w->setFont(f);
    };
    sized(m_lessonTitle, 11, 15, false);
    sized(m_title, 16, 24, true);
    sized(m_text, 14, 20, false);
    sized(m_questionBox, 13, 18, false);
    sized(m_prompt, 14, 20, true);
    for (QRadioButton* o : m_options)
        sized(o, 13, 18, false);
    sized(m_number, 13, 18, false);
    sized(m_feedback, 13, 18, true);
    sized(m_numbers, 12, 17, false);
    for (QPushButton* b : { m_back, m_next, m_tryIt, m_answer })
        sized(b, 12, 18, false);
    setMinimumWidth(m_presenter ? 600 : 420);
}

} // namespace vramlab
