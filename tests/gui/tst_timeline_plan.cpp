// SPDX-License-Identifier: MIT
// The Timeline and Plan tabs driven offscreen: what they draw and list is what the core
// says; applying a plan row or a fit is one undoable edit.
#include "main_window.h"
#include "plan_view.h"
#include "qcustomplot_include.h"
#include "scenario_document.h"
#include "timeline_chart.h"
#include "vramlab/estimator.h"
#include "vramlab/fit.h"
#include "vramlab/planner.h"

#include <QComboBox>
#include <QLabel>
#include <QTabWidget>
#include <QTableWidget>
#include <QUndoStack>
#include <QtTest>

using namespace vramlab;

class TestTimelinePlan : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("VRAM Lab tests"));
        QApplication::setApplicationName(QStringLiteral("tst_timeline_plan"));
    }
    void init()
    {
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1400, 900);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
    void cleanup() { m_window.reset(); }

    void timelineDrawsTheCoresStep()
    {
        m_window->tabs()->setCurrentIndex(4);
        const Report& r = *m_window->document()->report();
        TimelineChart* chart = m_window->timelineChart();
        const StepTimeline want = simulateStep(r.stepInputs, 2);
        QCOMPARE(chart->timeline().peak, r.peak);
        QCOMPARE(chart->timeline().events.size(), want.events.size());
        // The top of the stack at every event is the bytes alive there, in GiB.
        QCPGraph* top = chart->plot()->graph(kTimelineCategories - 1);
        int peakAt = -1;
        for (int i = 0; i < int(want.events.size()); ++i) {
            QCOMPARE(top->data()->at(i)->value, double(want.events[size_t(i)].total()) / double(kGiB));
            if (peakAt < 0 && want.events[size_t(i)].total() == want.peak)
                peakAt = i;
        }
        QVERIFY(chart->eventText(peakAt).contains(QStringLiteral("(the peak)")));
        QVERIFY(chart->eventText(peakAt).contains(QString::fromStdString(formatBytes(want.peak))));

        // Step 1: Adam's states are created at the end, so the step starts lower by them.
        QComboBox* step = m_window->timelineStep();
        step->setCurrentIndex(step->findData(1));
        emit step->activated(step->currentIndex());
        const StepTimeline one = simulateStep(r.stepInputs, 1);
        QCOMPARE(chart->timeline().step, 1);
        QCOMPARE(chart->timeline().peak, one.peak);
        QCOMPARE(chart->timeline().events.front().total(), want.events.front().total() - r.bytesOf("optimizer_states"));
        screenshot("timeline");
    }

    void timelineFollowsEdits()
    {
        m_window->tabs()->setCurrentIndex(4);
        ScenarioDocument* doc = m_window->document();
        doc->setParameter(QStringLiteral("run.micro_batch_size"), 4);
        QCOMPARE(m_window->timelineChart()->timeline().peak, doc->report()->peak);
        Scenario sc = doc->scenario();
        sc.run.mode = Mode::Inference;
        doc->replaceScenario(sc, QStringLiteral("serve"));
        QVERIFY(m_window->timelineChart()->timeline().events.empty());
    }

    void planListsTheCoresRanking()
    {
        m_window->tabs()->setCurrentIndex(5);
        PlanView* view = m_window->planView();
        const Scenario sc = m_window->document()->scenario();
        PlanRequest req;
        req.gpus = sc.run.parallelism.gpus;
        req.globalBatch = sc.run.microBatchSize * sc.run.gradientAccumulationSteps * sc.run.parallelism.dataParallel();
        const PlanResult want = plan(sc, req);
        QCOMPARE(view->result().evaluated, want.evaluated);
        QCOMPARE(view->result().top.size(), want.top.size());
        QCOMPARE(view->table()->rowCount(), int(want.top.size()));
        for (size_t i = 0; i < want.top.size(); ++i) {
            QCOMPARE(view->result().top[i].peak, want.top[i].peak);
            QCOMPARE(view->table()->item(int(i), 2)->text(), QString::fromStdString(formatBytes(want.top[i].peak)));
            QCOMPARE(view->table()->item(int(i), 3)->text(), QString::fromStdString(want.top[i].summary()));
        }

        // Applying row 2 changes the scenario to that setup in one undoable step.
        QUndoStack* undo = m_window->document()->undoStack();
        const int before = undo->count();
        view->applyRow(1);
        const RunSpec& run = m_window->document()->scenario().run;
        QCOMPARE(run.parallelism.zeroStage, want.top[1].zeroStage);
        QCOMPARE(run.parallelism.tensorParallel, want.top[1].tensorParallel);
        QCOMPARE(run.microBatchSize, want.top[1].microBatch);
        QCOMPARE(run.gradientAccumulationSteps, want.top[1].accumulation);
        QCOMPARE(m_window->document()->report()->peak, want.top[1].peak);
        QCOMPARE(undo->count(), before + 1);
        undo->undo();
        QCOMPARE(m_window->document()->scenario().run.microBatchSize, sc.run.microBatchSize);
        screenshot("plan");
    }

    void fitSolversApply()
    {
        m_window->tabs()->setCurrentIndex(5);
        const Scenario sc = m_window->document()->scenario();
        const FitResult mb = fitMax(sc, SweepParam::MicroBatchSize);
        QVERIFY(mb.value);
        QVERIFY(m_window->planView()->fitText(0).contains(QStringLiteral("<b>%1</b>").arg(*mb.value)));
        m_window->planView()->applyFit(0);
        const Report& r = *m_window->document()->report();
        QCOMPARE(m_window->document()->scenario().run.microBatchSize, *mb.value);
        QVERIFY(r.fits);
        // One more does not fit: the boundary is exact.
        Scenario more = m_window->document()->scenario();
        more.run.microBatchSize += 1;
        QVERIFY(!estimate(more).fits);
    }

private:
    void screenshot(const char* name)
    {
        if (const QByteArray dir = qgetenv("VRAMLAB_SCREENSHOT_DIR"); !dir.isEmpty()) {
            QCoreApplication::processEvents();
            m_window->grab().save(
                QString::fromLocal8Bit(dir) + QLatin1Char('/') + QString::fromLatin1(name) + QStringLiteral(".png"));
        }
    }

    std::unique_ptr<MainWindow> m_window;
};

QTEST_MAIN(TestTimelinePlan)
#include "tst_timeline_plan.moc"
