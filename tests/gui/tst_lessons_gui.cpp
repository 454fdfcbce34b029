// SPDX-License-Identifier: MIT
// The lesson player driven offscreen through whole lessons: keys, quiz right and wrong,
// the masked result and its reveal, back/next, "Try it yourself", presenter mode, and a
// broken lesson file reported in the banner.
#include "lesson_player.h"
#include "main_window.h"
#include "page.h"
#include "parameter_descriptors.h"
#include "parameter_panel.h"
#include "scenario_document.h"
#include "serving_page.h"
#include "stacked_bar_chart.h"
#include "vramlab/lesson.h"

#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QMenuBar>
#include <QPushButton>
#include <QRadioButton>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace vramlab;

namespace {

Lesson shippedLesson(const QString& name)
{
    QFile f(QStringLiteral(":/lessons/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("no lesson %s", qPrintable(name));
    return parseLessonText(f.readAll().toStdString(), name.toStdString());
}

/// Saves a picture for people to look at when VRAMLAB_SCREENSHOT_DIR is set.
void keepScreenshot(QWidget* w, const QString& name)
{
    if (const QByteArray dir = qgetenv("VRAMLAB_SCREENSHOT_DIR"); !dir.isEmpty()) {
        QTest::qWait(60); // queued replots
        w->grab().toImage().save(QDir(QString::fromLocal8Bit(dir)).filePath(name));
    }
}

} // namespace

class TestLessonsGui : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("VRAM Lab tests"));
        QApplication::setApplicationName(QStringLiteral("tst_lessons_gui"));
    }
    void init()
    {
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1600, 900);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
    void cleanup() { m_window.reset(); }

    void menuListsShippedLessons()
    {
        QMenu* lessons = nullptr;
        for (QAction* a : m_window->menuBar()->actions())
            if (a->text() == QLatin1String("&Lessons"))
                lessons = a->menu();
        QVERIFY(lessons);
        QStringList titles;
        for (QAction* a : lessons->actions())
            if (!a->isSeparator())
                titles << a->text();
        QCOMPARE(titles.size(), QDir(QStringLiteral(":/lessons")).entryList().size() + 1);
        QVERIFY(titles.contains(QStringLiteral("Inference and the KV cache, with GQA")));
        QCOMPARE(titles.last(), QStringLiteral("Open &lesson file…"));
    }

    // Every control a shipped lesson points at exists in the panel.
    void highlightsNameRealControls()
    {
        const QStringList files = QDir(QStringLiteral(":/lessons")).entryList();
        QVERIFY(files.size() >= 8);
        for (const QString& file : files)
            for (const LessonStep& step : shippedLesson(file).steps)
                for (const std::string& key : step.highlight)
                    if (key.rfind("chart.", 0) != 0)
                        QVERIFY2(findDescriptor(QString::fromStdString(key)),
                            qPrintable(file + QLatin1Char(' ') + QString::fromStdString(key)));
    }

    void wholeLessonWithKeys()
    {
        QVERIFY(m_window->openLesson(QStringLiteral(":/lessons/09-inference-kv-cache.json")));
        LessonPlayer* player = m_window->lessonPlayer();
        ScenarioDocument* doc = m_window->document();
        StackedBarChart* chart = m_window->chart();
        QVERIFY(m_window->findChild<QDockWidget*>(QStringLiteral("LessonDock"))->isVisible());
        const int steps = int(player->lesson()->steps.size());
        QCOMPARE(steps, 6);

        // Step 1 asks first: the chart and the verdict wait for the answer.
        QCOMPARE(player->currentStep(), 0);
        QCOMPARE(player->progressLabel()->text(), QStringLiteral("Step 1 of 6"));
        QVERIFY(!player->isRevealed());
        QVERIFY(chart->isMasked());
        QVERIFY(!m_window->verdictLabel()->isVisible());
        QCOMPARE(chart->plottedGiB(0, QStringLiteral("kv_cache")), 0.0);
        // No peeking through the other tabs (Explain, Timeline...) before the answer.
        QCOMPARE(m_window->tabs()->currentWidget(), m_window->page(QStringLiteral("breakdownPage")));
        for (Page* page : m_window->pages())
            if (page->objectName() != QLatin1String("breakdownPage"))
                QVERIFY(!m_window->tabs()->isTabEnabled(m_window->tabs()->indexOf(page)));
        QCOMPARE(player->nextButton()->text(), QStringLiteral("Reveal ▶"));
        QCOMPARE(doc->report()->bytesOf("kv_cache"), Bytes(2) * 32 * 4096 * 4096 * 2);
        QVERIFY(m_window->panel()->highlighted().contains(QStringLiteral("run.context_length")));
        // The highlight waits for the answer too: an emphasized legend entry would hint at it.
        QVERIFY(chart->emphasis().isEmpty());
        keepScreenshot(m_window.get(), QStringLiteral("lesson-before-reveal.png"));

        QVERIFY(player->answerNumber(2.15)); // right, within 0.05 GB
        QVERIFY(player->isRevealed());
        QVERIFY(!chart->isMasked());
        QVERIFY(m_window->verdictLabel()->isVisible());
        QVERIFY(
            m_window->tabs()->isTabEnabled(m_window->tabs()->indexOf(m_window->page(QStringLiteral("explainPage")))));
        QTest::qWait(20);
        QCOMPARE(chart->plottedGiB(0, QStringLiteral("kv_cache")), 2.0); // exactly 2 GiB
        QCOMPARE(chart->emphasis(), QStringList { QStringLiteral("kv_cache") });
        QVERIFY2(player->feedbackLabel()->text().startsWith(QStringLiteral("✔ Right: 2.15 GB")),
            qPrintable(player->feedbackLabel()->text()));
        QVERIFY2(player->numbersLabel()->text().contains(QStringLiteral("KV cache: <b>2.147 GB</b>")),
            qPrintable(player->numbersLabel()->text()));
        keepScreenshot(m_window.get(), QStringLiteral("lesson-after-reveal.png"));

        // Space: step 2 has no question, so it shows at once; batch 8 is 8 caches.
        QTest::keyClick(player, Qt::Key_Space);
        QCOMPARE(player->currentStep(), 1);
        QVERIFY(player->isRevealed());
        QVERIFY(!chart->isMasked());
        QCOMPARE(doc->scenario().run.inference.batchSize, Count(8));
        QCOMPARE(doc->report()->bytesOf("kv_cache"), 8 * Bytes(2) * 32 * 4096 * 4096 * 2);
        QVERIFY(m_window->panel()->highlighted().contains(QStringLiteral("run.batch_size")));

        // Right: step 3, a choice question answered wrong.
        QTest::keyClick(player, Qt::Key_Right);
        QCOMPARE(player->currentStep(), 2);
        QVERIFY(chart->isMasked());
        QCOMPARE(player->optionButtons().size(), 2);
        QVERIFY(!player->answerChoice(0));
        QCOMPARE(player->lastAnswerCorrect(), std::optional<bool>(false));
        QVERIFY2(player->feedbackLabel()->text().startsWith(QStringLiteral("✘ Not quite. Answer: No")),
            qPrintable(player->feedbackLabel()->text()));
        QVERIFY(!doc->report()->fits);
        // A yes/no quantity reads as words for the audience, not 0/1.
        QVERIFY2(player->numbersLabel()->text().contains(QStringLiteral("Fits: <b>no</b>")),
            qPrintable(player->numbersLabel()->text()));

        // Left goes back (the scenario with it); Right again asks again.
        QTest::keyClick(player, Qt::Key_Left);
        QCOMPARE(player->currentStep(), 1);
        QCOMPARE(doc->scenario().run.inference.contextLength, Count(4096));
        QTest::keyClick(player, Qt::Key_Right);
        QCOMPARE(doc->scenario().run.inference.contextLength, Count(32768));
        QVERIFY(!player->isRevealed());
        // The radio buttons and Answer, as a user clicks them: right this time.
        player->optionButtons()[1]->setChecked(true);
        QTest::mouseClick(player->answerButton(), Qt::LeftButton);
        QCOMPARE(player->lastAnswerCorrect(), std::optional<bool>(true));

        // Space through the rest: an unanswered question is revealed by the first press.
        QTest::keyClick(player, Qt::Key_Space); // step 4, GQA question
        QCOMPARE(player->currentStep(), 3);
        QVERIFY(!player->isRevealed());
        QTest::keyClick(player, Qt::Key_Space);
        QVERIFY(player->isRevealed());
        QVERIFY(player->feedbackLabel()->text().startsWith(QStringLiteral("Answer: 0.54 GB")));
        QCOMPARE(doc->report()->bytesOf("kv_cache"), Bytes(2) * 32 * 4096 * 1024 * 2); // 8 KV heads of 128
        QTest::keyClick(player, Qt::Key_Space);
        QCOMPARE(doc->scenario().model.numKvHeads, Count(1));
        QTest::keyClick(player, Qt::Key_Space);
        QCOMPARE(player->currentStep(), 5);
        QCOMPARE(player->nextButton()->text(), QStringLiteral("Finish"));
        // Each step was one undoable edit: undo returns to the MQA step's scenario.
        doc->undoStack()->undo();
        QVERIFY(doc->scenario().run.inference.weightDtype == DType::Bf16);
        doc->undoStack()->redo();
        QTest::keyClick(player, Qt::Key_Space); // past the end: the lesson closes
        QVERIFY(!m_window->findChild<QDockWidget*>(QStringLiteral("LessonDock"))->isVisible());
        QVERIFY(m_window->panel()->highlighted().isEmpty());
        QVERIFY(chart->emphasis().isEmpty());
    }

    void tryItYourselfKeepsTheScenario()
    {
        QVERIFY(m_window->openLesson(QStringLiteral(":/lessons/04-activations.json")));
        LessonPlayer* player = m_window->lessonPlayer();
        while (player->currentStep() < 3)
            QTest::keyClick(player, Qt::Key_Space);
        QCOMPARE(player->titleLabel()->text(), QStringLiteral("Tazi et al.'s formula"));
        QVERIFY(player->tryItButton()->isVisible());
        QTest::mouseClick(player->tryItButton(), Qt::LeftButton);
        QVERIFY(!m_window->findChild<QDockWidget*>(QStringLiteral("LessonDock"))->isVisible());
        const Scenario& sc = m_window->document()->scenario();
        QCOMPARE(QString::fromStdString(sc.model.preset), QStringLiteral("gpt3-175b"));
        QVERIFY(sc.run.attention == AttentionImpl::Eager);
        QCOMPARE(m_window->document()->report()->bytesOf("activations"), Bytes(353'263'338'244));
        QVERIFY(!m_window->chart()->isMasked());
        QVERIFY(m_window->verdictLabel()->isVisible());
        // The explorer is live again: a control edits the lesson's scenario.
        m_window->document()->setParameter(QStringLiteral("run.attention"), QStringLiteral("flash"));
        QVERIFY(m_window->document()->report()->bytesOf("activations") < Bytes(100'000'000'000));
    }

    // Typing the number and pressing Enter answers, as a keyboard-only presenter does.
    void typedNumberAndEnter()
    {
        QVERIFY(m_window->openLesson(QStringLiteral(":/lessons/09-inference-kv-cache.json")));
        LessonPlayer* player = m_window->lessonPlayer();
        QDoubleSpinBox* field = player->numberField();
        QVERIFY(field->isVisible());
        QCOMPARE(field->suffix(), QStringLiteral(" GB"));
        field->setFocus();
        field->selectAll();
        QTest::keyClicks(field, QStringLiteral("3"));
        QTest::keyClick(field, Qt::Key_Return);
        QVERIFY(player->isRevealed());
        QCOMPARE(player->lastAnswerCorrect(), std::optional<bool>(false)); // 3 is not 2.15 +- 0.05
        QVERIFY(!field->isVisible());
        QVERIFY(!m_window->chart()->isMasked());
    }

    void escapeLeaves()
    {
        QVERIFY(m_window->openLesson(QStringLiteral(":/lessons/01-four-things.json")));
        QTest::keyClick(m_window->lessonPlayer(), Qt::Key_Escape);
        QVERIFY(!m_window->findChild<QDockWidget*>(QStringLiteral("LessonDock"))->isVisible());
        QVERIFY(!m_window->chart()->isMasked());
    }

    void presenterMode()
    {
        QVERIFY(m_window->openLesson(QStringLiteral(":/lessons/01-four-things.json")));
        LessonPlayer* player = m_window->lessonPlayer();
        QCOMPARE(player->textLabel()->font().pointSize(), 14);
        m_window->setPresenterMode(true);
        QCOMPARE(player->textLabel()->font().pointSize(), 20);
        QCOMPARE(player->titleLabel()->font().pointSize(), 24);
        QVERIFY(player->textLabel()->isVisible());
        QTest::keyClick(player, Qt::Key_Space); // reveal
        QTest::keyClick(player, Qt::Key_Space);
        QTest::keyClick(player, Qt::Key_Space); // the optimizer-states question
        QCOMPARE(player->currentStep(), 2);
        QVERIFY(m_window->chart()->isMasked());
        keepScreenshot(m_window.get(), QStringLiteral("lesson-presenter-before.png"));
        QVERIFY(player->answerChoice(2));
        keepScreenshot(m_window.get(), QStringLiteral("lesson-presenter-after.png"));
        m_window->setDarkTheme(true);
        keepScreenshot(m_window.get(), QStringLiteral("lesson-presenter-dark.png"));
        m_window->setDarkTheme(false);
        m_window->setPresenterMode(false);
        QCOMPARE(player->textLabel()->font().pointSize(), 14);
    }

    // A serving lesson is about the Serving tab: it opens there, and "predict first" hides the engine's
    // numbers on it (and every other tab) until the answer.
    void servingLessonMasksTheServingPage()
    {
        QVERIFY(m_window->openLesson(QStringLiteral(":/lessons/11-serving-vllm.json")));
        LessonPlayer* player = m_window->lessonPlayer();
        ServingPage* serving = m_window->servingPage();
        QCOMPARE(m_window->tabs()->currentWidget(), serving);
        QVERIFY(serving->isMasked());
        QVERIFY(serving->message()->isVisible());
        QVERIFY(!serving->number(QStringLiteral("kvTokens"))->isVisible());
        QVERIFY(!m_window->verdictLabel()->isVisible());
        for (Page* page : m_window->pages())
            if (page != serving)
                QVERIFY(!m_window->tabs()->isTabEnabled(m_window->tabs()->indexOf(page)));
        QVERIFY(m_window->panel()->highlighted().contains(QStringLiteral("run.serving.gpu_memory_utilization")));

        QVERIFY(player->answerNumber(21.6));
        QVERIFY(!serving->isMasked());
        QVERIFY(serving->number(QStringLiteral("kvTokens"))->isVisible());
        QCOMPARE(serving->number(QStringLiteral("kvTokens"))->text(), QStringLiteral("33,184"));
        QVERIFY2(player->numbersLabel()->text().contains(QStringLiteral("Engine budget: <b>21.6 GiB</b>")),
            qPrintable(player->numbersLabel()->text()));
        keepScreenshot(m_window.get(), QStringLiteral("serving-lesson-after-reveal.png"));

        m_window->leaveLesson();
        QVERIFY(!serving->isMasked());
        for (Page* page : m_window->pages())
            QVERIFY(m_window->tabs()->isTabEnabled(m_window->tabs()->indexOf(page)));
    }

    // A window closed mid-lesson does not reopen with an empty lesson dock.
    void sessionDoesNotRestoreTheLessonDock()
    {
        QVERIFY(m_window->openLesson(QStringLiteral(":/lessons/01-four-things.json")));
        m_window->document()->undoStack()->setClean(); // no "save changes?" question on close
        QVERIFY(m_window->close());
        auto again = std::make_unique<MainWindow>();
        again->restoreSession(false);
        again->show();
        QVERIFY(QTest::qWaitForWindowExposed(again.get()));
        QVERIFY(!again->findChild<QDockWidget*>(QStringLiteral("LessonDock"))->isVisible());
        QVERIFY(again->findChild<QDockWidget*>(QStringLiteral("ParametersDock"))->isVisible());
        QVERIFY(!again->chart()->isMasked());
        again->document()->undoStack()->setClean();
        again->close();
    }

    void brokenLessonFileInBanner()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("mine.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "vramlab.lesson", "version": 1, "id": "x", "title": "X",
                    "scenario": {"model": {"preset": "llama-2-7b"}},
                    "steps": [{"title": "A", "text": "a"},
                              {"title": "B", "text": "b", "question": {"kind": "choice", "prompt": "?", "options": ["a", "b"], "answer": 2}}]})");
        f.close();
        const Scenario before = m_window->document()->scenario();
        QVERIFY(!m_window->openLesson(path));
        QCOMPARE(m_window->lastError(),
            path + QStringLiteral(": steps[1].question.answer: expected an index into options (0..1), got 2"));
        QVERIFY(!m_window->findChild<QDockWidget*>(QStringLiteral("LessonDock"))->isVisible());
        QCOMPARE(m_window->document()->scenario().name, before.name);
    }

private:
    std::unique_ptr<MainWindow> m_window;
};

QTEST_MAIN(TestLessonsGui)
#include "tst_lessons_gui.moc"
