// SPDX-License-Identifier: MIT
// The real window driven offscreen: controls change the report and the plotted values by
// what the core says; undo/redo; save and reopen; broken files; a screenshot that is not blank.
#include "breakdown_model.h"
#include "breakdown_table.h"
#include "chart_support.h"
#include "compare_view.h"
#include "explain_view.h"
#include "main_window.h"
#include "page.h"
#include "parameter_descriptors.h"
#include "parameter_panel.h"
#include "qcustomplot_include.h"
#include "scenario_document.h"
#include "stacked_bar_chart.h"
#include "sweep_chart.h"
#include "timeline_chart.h"
#include "vramlab/estimator.h"
#include "vramlab/fit.h"
#include "vramlab/report_text.h"
#include "vramlab/scenario_io.h"

#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMimeData>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QUndoStack>
#include <QtTest>

using namespace vramlab;

namespace {

double gib(Bytes b)
{
    return double(b) / double(kGiB);
}

/// What the core says for the document's scenario with one change applied.
Report coreSays(const Scenario& base, const std::function<void(Scenario&)>& change)
{
    Scenario sc = base;
    change(sc);
    return estimate(sc);
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings of the tests, not the user's
        QApplication::setOrganizationName(QStringLiteral("VRAM Lab tests"));
        QApplication::setApplicationName(QStringLiteral("tst_main_window"));
    }

    void init()
    {
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1400, 900);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
    void cleanup() { m_window.reset(); }

    void sliderChangesReportAndBars()
    {
        ScenarioDocument* doc = m_window->document();
        const Scenario before = doc->scenario();
        QSlider* seq = m_window->panel()->slider(QStringLiteral("run.sequence_length"));
        QVERIFY(seq);
        // One notch toward longer sequences, as a user's drag would.
        seq->setValue(ParameterPanel::sliderPosition(*findDescriptor(QStringLiteral("run.sequence_length")), 8192));
        QCOMPARE(doc->scenario().run.sequenceLength, Count(8192));
        const Report want = coreSays(before, [](Scenario& s) { s.run.sequenceLength = 8192; });
        QCOMPARE(doc->report()->bytesOf("activations"), want.bytesOf("activations"));
        QCOMPARE(doc->report()->total, want.total);
        QCOMPARE(m_window->chart()->plottedGiB(0, QStringLiteral("activations")), gib(want.bytesOf("activations")));
        QVERIFY(m_window->verdictLabel()->text().contains(QStringLiteral("FITS"))
            || m_window->verdictLabel()->text().contains(QStringLiteral("DOES NOT FIT")));
    }

    void spinComboAndCheckbox()
    {
        ScenarioDocument* doc = m_window->document();
        ParameterPanel* panel = m_window->panel();
        const Scenario base = doc->scenario();

        auto* gpus = qobject_cast<QSpinBox*>(panel->editor(QStringLiteral("run.parallelism.gpus")));
        QVERIFY(gpus);
        gpus->setValue(16);
        QCOMPARE(doc->report()->bytesOf("optimizer_states"),
            coreSays(base, [](Scenario& s) { s.run.parallelism.gpus = 16; }).bytesOf("optimizer_states"));

        auto* opt = qobject_cast<QComboBox*>(panel->editor(QStringLiteral("run.optimizer")));
        QVERIFY(opt);
        opt->setCurrentIndex(opt->findData(QStringLiteral("sgd")));
        emit opt->activated(opt->currentIndex());
        QCOMPARE(doc->report()->bytesOf("optimizer_states"), Bytes(0));
        QCOMPARE(m_window->chart()->plottedGiB(0, QStringLiteral("optimizer_states")), 0.0);

        auto* offload = qobject_cast<QCheckBox*>(panel->editor(QStringLiteral("run.parallelism.offload_optimizer")));
        QVERIFY(offload);
        opt->setCurrentIndex(opt->findData(QStringLiteral("adamw")));
        emit opt->activated(opt->currentIndex());
        offload->setChecked(true);
        QCOMPARE(doc->report()->bytesOf("master_weights"), Bytes(0));
        QVERIFY(doc->report()->hostBytes > 0);

        auto* mfu = qobject_cast<QDoubleSpinBox*>(panel->editor(QStringLiteral("run.mfu")));
        QVERIFY(mfu);
        // Doubling the compute efficiency halves the compute and recomputation time; the
        // communication and offload parts of the one step time stay.
        const StepTimeParts t40 = doc->report()->flops.time;
        mfu->setValue(0.8);
        const StepTimeParts t80 = doc->report()->flops.time;
        QCOMPARE(t80.computeS + t80.recomputeS, (t40.computeS + t40.recomputeS) / 2);
        QVERIFY(t80.offloadS > 0);
        QCOMPARE(t80.offloadS, t40.offloadS);
        QCOMPARE(doc->report()->flops.stepTimeS, t80.total());

        // A file's checkpointing outside the combo's list ({"every": 3}) is shown as itself, never as "None";
        // "First half" checkpoints the first half of the layers.
        auto* ckpt = qobject_cast<QComboBox*>(panel->editor(QStringLiteral("run.checkpointing")));
        QVERIFY(ckpt);
        doc->setParameter(QStringLiteral("run.checkpointing"), QStringLiteral("every 3"));
        QTRY_COMPARE(ckpt->currentData().toString(), QStringLiteral("every 3"));
        ckpt->setCurrentIndex(ckpt->findData(QStringLiteral("first half")));
        emit ckpt->activated(ckpt->currentIndex());
        QCOMPARE(doc->scenario().run.checkpointing.kind, Checkpointing::Kind::Layers);
        QCOMPARE(doc->scenario().run.checkpointing.every, ceilDiv(doc->scenario().model.numLayers, Count(2)));
    }

    /// The Framework and Loss pickers change the loss tensors by what the core says, and the
    /// Explain text names the framework behaviour that made them.
    void frameworkAndLossPickers()
    {
        ScenarioDocument* doc = m_window->document();
        ParameterPanel* panel = m_window->panel();
        const Scenario base = doc->scenario();
        auto* framework = qobject_cast<QComboBox*>(panel->editor(QStringLiteral("run.framework")));
        auto* loss = qobject_cast<QComboBox*>(panel->editor(QStringLiteral("run.loss")));
        QVERIFY(framework && loss);
        QCOMPARE(loss->currentData().toString(), QStringLiteral("default"));

        framework->setCurrentIndex(framework->findData(QStringLiteral("torchtune")));
        emit framework->activated(framework->currentIndex());
        QCOMPARE(doc->report()->peak, coreSays(base, [](Scenario& s) { s.run.framework = Framework::Torchtune; }).peak);
        QVERIFY(ExplainView::html(*doc->report()).contains(QStringLiteral("CEWithChunkedOutputLoss")));

        loss->setCurrentIndex(loss->findData(QStringLiteral("fused")));
        emit loss->activated(loss->currentIndex());
        QVERIFY(doc->scenario().run.loss == LossKind::Fused);
        QCOMPARE(doc->report()->peak, coreSays(base, [](Scenario& s) {
            s.run.framework = Framework::Torchtune;
            s.run.loss = LossKind::Fused;
        }).peak);
        QVERIFY(ExplainView::html(*doc->report()).contains(QStringLiteral("Liger")));

        loss->setCurrentIndex(loss->findData(QStringLiteral("default")));
        emit loss->activated(loss->currentIndex());
        QVERIFY(!doc->scenario().run.loss);
    }

    void modeDisablesWhatDoesNotApply()
    {
        ParameterPanel* panel = m_window->panel();
        auto* mode = qobject_cast<QComboBox*>(panel->editor(QStringLiteral("run.mode")));
        QVERIFY(panel->editor(QStringLiteral("run.sequence_length"))->isEnabled());
        QVERIFY(!panel->editor(QStringLiteral("run.context_length"))->isEnabled());
        mode->setCurrentIndex(mode->findData(QStringLiteral("inference")));
        emit mode->activated(mode->currentIndex());
        QVERIFY(!panel->editor(QStringLiteral("run.sequence_length"))->isEnabled());
        QVERIFY(panel->editor(QStringLiteral("run.context_length"))->isEnabled());
        QVERIFY(m_window->document()->report()->bytesOf("kv_cache") > 0);
    }

    void impossibleCombinationIsShown()
    {
        auto* tp
            = qobject_cast<QSpinBox*>(m_window->panel()->editor(QStringLiteral("run.parallelism.tensor_parallel")));
        tp->setValue(3); // 8 GPUs and 32 heads are not divisible by 3
        QVERIFY(!m_window->document()->report());
        QCOMPARE(m_window->document()->scenario().run.parallelism.tensorParallel, Count(3)); // kept, not fixed
        QVERIFY(m_window->verdictLabel()->text().contains(QStringLiteral("Not a valid")));
        m_window->document()->undoStack()->undo();
        QVERIFY(m_window->document()->report());
    }

    void undoRedoAndDragIsOneStep()
    {
        ScenarioDocument* doc = m_window->document();
        QUndoStack* undo = doc->undoStack();
        const Count seq0 = doc->scenario().run.sequenceLength;
        const Bytes total0 = doc->report()->total;
        QSlider* seq = m_window->panel()->slider(QStringLiteral("run.sequence_length"));
        seq->setSliderDown(true); // a drag: several positions, one undo step
        for (int pos = seq->value() + 10; pos <= seq->value() + 100; pos += 10)
            seq->setValue(pos);
        seq->setSliderDown(false);
        QCOMPARE(undo->count(), 1);
        QVERIFY(doc->scenario().run.sequenceLength > seq0);
        undo->undo();
        QCOMPARE(doc->scenario().run.sequenceLength, seq0);
        QCOMPARE(doc->report()->total, total0);
        QCOMPARE(m_window->chart()->plottedGiB(0, QStringLiteral("activations")),
            gib(doc->report()->bytesOf("activations")));
        undo->redo();
        QVERIFY(doc->scenario().run.sequenceLength > seq0);
        QVERIFY(m_window->windowTitle().contains(QStringLiteral("[*]")));
        QVERIFY(m_window->isWindowModified());
    }

    // A size slider stops at what people try: an arrow key goes one stop (8,192 -> 12,288),
    // Page Up doubles, and the whole 128 .. 1,048,576 range is 27 stops (a few pixels each).
    void sizeSlidersStepThroughSensibleValues()
    {
        ScenarioDocument* doc = m_window->document();
        const ParamDescriptor& d = *findDescriptor(QStringLiteral("run.sequence_length"));
        const std::vector<double> stops = ParameterPanel::sizeStops(d);
        QCOMPARE(stops.size(), size_t(27));
        QCOMPARE(stops[1], 192.0);
        QCOMPARE(stops.back(), 1048576.0);
        QSlider* seq = m_window->panel()->slider(QStringLiteral("run.sequence_length"));
        QCOMPARE(seq->maximum(), 26);
        doc->setParameter(QStringLiteral("run.sequence_length"), QVariant::fromValue<qlonglong>(8192));
        QCOMPARE(ParameterPanel::sliderValue(d, seq->value()), 8192.0);
        seq->setFocus();
        QTest::keyClick(seq, Qt::Key_Right);
        QCOMPARE(doc->scenario().run.sequenceLength, Count(12288));
        QTest::keyClick(seq, Qt::Key_PageUp);
        QCOMPARE(doc->scenario().run.sequenceLength, Count(24576));
        QTest::keyClick(seq, Qt::Key_Left);
        QCOMPARE(doc->scenario().run.sequenceLength, Count(16384));
        // A value typed in the spin box sits at the nearest stop; the slider does not change it.
        doc->setParameter(QStringLiteral("run.sequence_length"), QVariant::fromValue<qlonglong>(10000));
        QCOMPARE(ParameterPanel::sliderValue(d, seq->value()), 8192.0);
        QCOMPARE(doc->scenario().run.sequenceLength, Count(10000));
    }

    // An invalid setting marks the control its error names, and the mark goes with the error.
    void invalidSettingMarksItsControl()
    {
        ScenarioDocument* doc = m_window->document();
        doc->setParameter(QStringLiteral("run.parallelism.tensor_parallel"), QVariant::fromValue<qlonglong>(3));
        QVERIFY(!doc->error().isEmpty());
        QCOMPARE(doc->errorKey(), QStringLiteral("run.parallelism.gpus")); // 8 GPUs are not a multiple of TP 3
        QLabel* label = m_window->panel()->label(doc->errorKey());
        QVERIFY(label);
        QVERIFY2(label->styleSheet().contains(QStringLiteral("#b8251a")), qPrintable(label->styleSheet()));
        doc->undoStack()->undo();
        QVERIFY(doc->error().isEmpty());
        QVERIFY(doc->errorKey().isEmpty());
        QVERIFY(label->styleSheet().isEmpty());
    }

    void dragComputesOnlyTheLatestPosition()
    {
        ScenarioDocument* doc = m_window->document();
        QSignalSpy changed(doc, &ScenarioDocument::changed);
        QSlider* seq = m_window->panel()->slider(QStringLiteral("run.sequence_length"));
        const ParamDescriptor& d = *findDescriptor(QStringLiteral("run.sequence_length"));
        seq->setSliderDown(true);
        // Three mouse moves in one turn of the event loop: one estimate, of the last of them.
        for (Count v : { 8192, 16384, 32768 })
            seq->setSliderPosition(ParameterPanel::sliderPosition(d, double(v)));
        QTRY_COMPARE(doc->scenario().run.sequenceLength, Count(32768));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(doc->report()->total, estimate(doc->scenario()).total);
        QCOMPARE(m_window->chart()->plottedGiB(0, QStringLiteral("activations")),
            gib(doc->report()->bytesOf("activations")));
        // Released before the turn ends: the last position is applied at once, as one undo step.
        seq->setSliderPosition(ParameterPanel::sliderPosition(d, 2048));
        seq->setSliderDown(false);
        QCOMPARE(doc->scenario().run.sequenceLength, Count(2048));
        QCOMPARE(doc->undoStack()->count(), 1);
        // Another control's edit during a drag comes after the drag's position.
        seq->setSliderDown(true);
        seq->setSliderPosition(ParameterPanel::sliderPosition(d, 4096));
        doc->setParameter(QStringLiteral("run.micro_batch_size"), QVariant::fromValue<qlonglong>(2));
        auto* micro = qobject_cast<QSpinBox*>(m_window->panel()->editor(QStringLiteral("run.micro_batch_size")));
        micro->setValue(3);
        QCOMPARE(doc->scenario().run.sequenceLength, Count(4096));
        QCOMPARE(doc->scenario().run.microBatchSize, Count(3));
        seq->setSliderDown(false);
        QCOMPARE(doc->scenario().run.sequenceLength, Count(4096));
    }

    void explainChangesOnlyWhatChangedAndShowsTheWholePage()
    {
        ScenarioDocument* doc = m_window->document();
        m_window->tabs()->setCurrentWidget(m_window->page(QStringLiteral("explainPage")));
        // Moves that keep the page's structure (numbers change), then ones that change it
        // (an invalid configuration and back): the page always reads as if set whole.
        const std::pair<const char*, int> edits[] = { { "run.parallelism.gpus", 16 }, { "run.parallelism.gpus", 64 },
            { "run.sequence_length", 8192 }, { "run.parallelism.tensor_parallel", 3 },
            { "run.parallelism.tensor_parallel", 1 }, { "run.parallelism.gpus", 8 } };
        for (const auto& [key, value] : edits) {
            doc->setParameter(QString::fromLatin1(key), QVariant::fromValue<qlonglong>(value));
            QTextBrowser whole;
            whole.setHtml(doc->report()
                    ? ExplainView::html(*doc->report())
                    : QStringLiteral("<h2>Not a valid configuration</h2><p>%1</p>").arg(doc->error().toHtmlEscaped()));
            QCOMPARE(m_window->explainView()->toPlainText(), whole.toPlainText());
        }
    }

    void hiddenPagesWaitAndShowTheCurrentScenario()
    {
        ScenarioDocument* doc = m_window->document();
        m_window->tabs()->setCurrentWidget(m_window->page(QStringLiteral("breakdownPage")));
        doc->setParameter(QStringLiteral("run.sequence_length"), QVariant::fromValue<qlonglong>(8192));
        // Pages not on show did no work for the edit...
        for (Page* page : m_window->pages())
            QCOMPARE(page->isStale(), page != m_window->page(QStringLiteral("breakdownPage")));
        // ...and each shows the current scenario once it is on show.
        m_window->tabs()->setCurrentWidget(m_window->page(QStringLiteral("timelinePage")));
        QVERIFY(!m_window->page(QStringLiteral("timelinePage"))->isStale());
        QCOMPARE(m_window->timelineChart()->timeline().peak, doc->report()->peak);
        m_window->tabs()->setCurrentWidget(m_window->page(QStringLiteral("explainPage")));
        QVERIFY(m_window->explainView()->toPlainText().contains(bytesText(doc->report()->bytesOf("activations"))));
        m_window->tabs()->setCurrentWidget(m_window->page(QStringLiteral("sweepPage")));
        const SweepSeries want = sweepSeries(doc->scenario(), SweepParam::SequenceLength);
        const SweepSeries& shown = m_window->sweepChart()->series();
        QCOMPARE(shown.points.size(), want.points.size());
        for (size_t i = 0; i < want.points.size(); ++i)
            QCOMPARE(shown.points[i].total, want.points[i].total);
    }

    void saveAndReopen()
    {
        QTemporaryDir dir;
        ScenarioDocument* doc = m_window->document();
        doc->setParameter(QStringLiteral("run.micro_batch_size"), QVariant::fromValue<qlonglong>(4));
        const QString path = dir.filePath(QStringLiteral("s.json"));
        QVERIFY(m_window->saveTo(path));
        QVERIFY(!m_window->isWindowModified());
        const Bytes total = doc->report()->total;
        doc->setParameter(QStringLiteral("run.micro_batch_size"), QVariant::fromValue<qlonglong>(1));
        QVERIFY(m_window->openFile(path));
        QCOMPARE(doc->scenario().run.microBatchSize, Count(4));
        QCOMPARE(doc->report()->total, total);
        QCOMPARE(doc->undoStack()->count(), 0);
    }

    void brokenFileLeavesScenarioUntouched()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("broken.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"model": {"preset": "llama-3-8b"}, "run": {"parallelism": {"zero_stage": 7}}})");
        f.close();
        const QByteArray before = QByteArray::fromStdString(scenarioToJson(m_window->document()->scenario()).dump());
        QVERIFY(!m_window->openFile(path));
        QVERIFY(m_window->lastError().contains(QStringLiteral("run.parallelism.zero_stage")));
        QVERIFY(m_window->lastError().startsWith(path));
        QCOMPARE(QByteArray::fromStdString(scenarioToJson(m_window->document()->scenario()).dump()), before);
        QVERIFY(!m_window->openFile(dir.filePath(QStringLiteral("missing.json"))));
    }

    void importsHuggingFaceConfig()
    {
        QVERIFY(m_window->panel()->findChild<QPushButton*>(QStringLiteral("importConfig"))); // the panel's way in
        QVERIFY(m_window->openFile(QStringLiteral(VRAMLAB_TEST_DATA_DIR "/hf/mistral-7b.json")));
        QCOMPARE(m_window->document()->report()->params.total, Count(7'241'732'096));
        m_window->document()->undoStack()->undo(); // an import is one undoable step
        QCOMPARE(m_window->document()->report()->params.total, Count(8'030'261'248));
    }

    void presetAndParameterSlider()
    {
        ScenarioDocument* doc = m_window->document();
        auto* preset = qobject_cast<QComboBox*>(m_window->panel()->editor(QStringLiteral("model.preset")));
        preset->setCurrentIndex(preset->findData(QStringLiteral("llama-2-7b")));
        emit preset->activated(preset->currentIndex());
        QCOMPARE(doc->report()->params.total, Count(6'738'415'616));
        auto* size = qobject_cast<QDoubleSpinBox*>(m_window->panel()->editor(QStringLiteral("model.parameters_b")));
        size->setValue(30);
        QVERIFY(std::abs(double(doc->report()->params.total) / 30e9 - 1) < 0.05);
    }

    void tabsSweepAndCompare()
    {
        m_window->tabs()->setCurrentWidget(m_window->page(QStringLiteral("sweepPage")));
        // 8B at 128k tokens does not fit 80 GB: the marked boundary is the core's fit, exactly.
        const FitResult fit = fitMax(m_window->document()->scenario(), SweepParam::SequenceLength);
        QCOMPARE(m_window->sweepChart()->firstNotFitting(), std::optional<Count>(*fit.value + 1));
        m_window->tabs()->setCurrentWidget(m_window->page(QStringLiteral("comparePage")));
        const auto cols = CompareView::methodColumns(m_window->document()->scenario());
        QCOMPARE(cols.size(), 4);
        QVERIFY(cols[0].report->total < cols[1].report->total); // inference below full training
        QVERIFY(cols[3].report->total < cols[2].report->total); // QLoRA below LoRA
        QCOMPARE(m_window->compareView()->methodsChart()->plottedGiB(1, QStringLiteral("optimizer_states")),
            gib(cols[1].report->bytesOf("optimizer_states")));
        const auto zero = CompareView::zeroColumns(m_window->document()->scenario());
        for (int i = 1; i < 4; ++i)
            QVERIFY(zero[i].report->total < zero[i - 1].report->total);
    }

    void breakdownTableExpandsActivations()
    {
        BreakdownTable* t = m_window->table();
        const QModelIndex acts = t->breakdownModel()->indexOfKey(QStringLiteral("activations")); // by key, not position
        QCOMPARE(acts.data().toString(), QStringLiteral("Activations"));
        QCOMPARE(t->model()->rowCount(acts), int(m_window->document()->report()->activations.tensors.size()));
        // Edit > Copy breakdown as CSV: the core's breakdown CSV, as File > Export writes it
        // (before: text read back out of the table, "component,bytes,share").
        QAction* copy = nullptr;
        for (QAction* a : m_window->findChildren<QAction*>())
            if (a->text() == QLatin1String("&Copy breakdown as CSV"))
                copy = a;
        QVERIFY(copy);
        copy->trigger();
        QCOMPARE(
            QApplication::clipboard()->text(), QString::fromStdString(breakdownCsv(*m_window->document()->report())));
        QVERIFY(QApplication::clipboard()->text().startsWith(
            QStringLiteral("key,component,bytes,gib,share_percent,formula\nweights,Weights,")));
    }

    void themesRecolourCharts()
    {
        m_window->setDarkTheme(true);
        // Text turns light on dark, and the plot's own pixels turn dark.
        QVERIFY(m_window->chart()->plot()->xAxis->tickLabelColor().lightness() > 180);
        QVERIFY(m_window->chart()->plot()->toPixmap(200, 200).toImage().pixelColor(5, 5).lightness() < 80);
        m_window->setDarkTheme(false);
        QVERIFY(m_window->chart()->plot()->xAxis->tickLabelColor().lightness() < 80);
        QVERIFY(m_window->chart()->plot()->toPixmap(200, 200).toImage().pixelColor(5, 5).lightness() > 180);
        m_window->setPresenterMode(true);
        QVERIFY(m_window->chart()->plot()->yAxis->tickLabelFont().pointSize() >= 18);
        QVERIFY(!m_window->table()->isVisible());
        m_window->setPresenterMode(false);
        QVERIFY(m_window->table()->isVisible());
    }

    // The View menu's theme recolours the header's verdict at once, with no edit after it:
    // a training verdict, a serving one (the engine's) and an invalid configuration.
    void themeSwitchRecoloursTheVerdictAtOnce_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("training") << QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-3-8b-8xh100.json");
        QTest::newRow("serving") << QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-2-7b-serving.json");
        QTest::newRow("invalid") << QString();
        // torchtitan's 405B run measured 82.5 GiB reserved; FSDP inside pipelining is a lower bound here.
        QTest::newRow("lower bound") << QStringLiteral(
            VRAMLAB_SOURCE_DIR "/tests/data/published/training/"
                               "torchtitan-llama3.1-405b-fsdp8-tp8-pp8-1f1b-full-ac-compile-"
                               "float8-asynctp.json");
    }
    void themeSwitchRecoloursTheVerdictAtOnce()
    {
        QFETCH(QString, file);
        QTemporaryDir dir;
        if (file.contains(QStringLiteral("/published/"))) { // a published case: its "scenario" as a file
            QFile in(file);
            QVERIFY(in.open(QIODevice::ReadOnly));
            const QJsonObject scenario = QJsonDocument::fromJson(in.readAll()).object().value("scenario").toObject();
            file = dir.filePath(QStringLiteral("case.json"));
            QFile out(file);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(QJsonDocument(scenario).toJson());
        }
        if (!file.isEmpty()) {
            QVERIFY(m_window->openFile(file));
        } else { // the default scenario with 3-way tensor parallelism: 8 GPUs and 32 heads do not divide
            m_window->document()->setParameter(QStringLiteral("run.parallelism.tensor_parallel"), 3);
            QVERIFY(!m_window->document()->report());
        }
        QAction* dark = nullptr;
        for (QAction* a : m_window->findChildren<QAction*>())
            if (a->text() == QStringLiteral("&Dark theme"))
                dark = a;
        QVERIFY(dark);
        for (const bool on : { true, false, true }) {
            if (dark->isChecked() != on)
                dark->trigger();
            QCOMPARE(dark->isChecked(), on);
            const PlotTheme theme = PlotTheme::fromPalette(on ? darkPalette() : lightPalette(), false);
            const QString sheet = m_window->verdictLabel()->styleSheet();
            const QString text = m_window->verdictLabel()->text();
            const std::optional<Report>& r = m_window->document()->report();
            const bool bad = !r || !r->fits;
            const bool lowerBound = r && !r->lowerBound.empty();
            QCOMPARE(lowerBound, QTest::currentDataTag() == QByteArray("lower bound"));
            // A lower bound that fits is no "FITS": the published run reserved 82.5 GiB of the H100's 80.
            QCOMPARE(text.startsWith(QStringLiteral("MAY NOT FIT: at least ")), lowerBound && !bad);
            const QColor want = bad ? theme.overflow : lowerBound ? theme.caution : theme.fits;
            QVERIFY2(sheet.contains(want.name()), qPrintable(sheet + " " + text));
            // And what is drawn: the label's text in that colour.
            const QImage shot = m_window->verdictLabel()->grab().toImage();
            bool drawn = false;
            for (int y = 0; y < shot.height() && !drawn; ++y)
                for (int x = 0; x < shot.width() && !drawn; ++x)
                    drawn = shot.pixelColor(x, y) == want;
            QVERIFY2(drawn, qPrintable(text));
        }
        dark->trigger(); // back to light for the next tests
    }

    /// File > Apply DeepSpeed config: Trainer's ZeRO-3 config becomes one undoable edit of the run; a config VRAM
    /// Lab cannot model leaves the scenario as it was and the banner names the file and the key.
    void appliesDeepSpeedConfig()
    {
        ScenarioDocument* doc = m_window->document();
        const Scenario before = doc->scenario();
        const auto done = m_window->applyDeepSpeedFile(
            QStringLiteral(VRAMLAB_SOURCE_DIR "/tests/data/deepspeed/hf-trainer-zero3.json"));
        QVERIFY(done && !done->applied.empty());
        QVERIFY(doc->scenario().run.framework == Framework::Deepspeed);
        QCOMPARE(doc->scenario().run.parallelism.zeroStage, 3);
        QCOMPARE(doc->scenario().run.parallelism.stage3PrefetchBucketSize.value_or(0),
            before.model.hiddenSize * before.model.hiddenSize * 9 / 10);
        QCOMPARE(doc->report()->peak, estimate(doc->scenario()).peak);
        doc->undoStack()->undo();
        QVERIFY(doc->scenario().run.framework == before.run.framework);
        QCOMPARE(doc->scenario().run.parallelism.zeroStage, before.run.parallelism.zeroStage);
        const QString lamb = QStringLiteral(VRAMLAB_SOURCE_DIR "/tests/data/deepspeed/dsexamples-bing-bert-lamb.json");
        QVERIFY(!m_window->applyDeepSpeedFile(lamb));
        QVERIFY(doc->scenario().run.framework == before.run.framework);
        QVERIFY2(m_window->lastError().contains(QStringLiteral("dsexamples-bing-bert-lamb.json"))
                && m_window->lastError().contains(QStringLiteral("optimizer.type")),
            qPrintable(m_window->lastError()));
    }

    /// File > Apply torchtitan config…: the model and the run as torchtitan reads its TOML, one undoable edit;
    /// a refused file names itself and the key, and changes nothing.
    void appliesTorchtitanConfig()
    {
        ScenarioDocument* doc = m_window->document();
        const Scenario before = doc->scenario();
        const auto done
            = m_window->applyTorchtitanFile(QStringLiteral(VRAMLAB_SOURCE_DIR "/tests/data/torchtitan/llama3_8b.toml"));
        QVERIFY(done && !done->applied.empty());
        QVERIFY(doc->scenario().run.framework == Framework::Torchtitan);
        QCOMPARE(QString::fromStdString(doc->scenario().model.preset), QStringLiteral("llama-3-8b"));
        QVERIFY(doc->scenario().run.checkpointing.kind == Checkpointing::Kind::SelectiveOp);
        QCOMPARE(doc->scenario().run.parallelism.gpus, before.run.parallelism.gpus);
        QCOMPARE(doc->report()->peak, estimate(doc->scenario()).peak);
        doc->undoStack()->undo();
        QVERIFY(doc->scenario().run.framework == before.run.framework);
        QCOMPARE(doc->scenario().model.preset, before.model.preset);
        const QString debug = QStringLiteral(VRAMLAB_SOURCE_DIR "/tests/data/torchtitan/debug_model.toml");
        QVERIFY(!m_window->applyTorchtitanFile(debug));
        QVERIFY(doc->scenario().run.framework == before.run.framework);
        QVERIFY2(m_window->lastError().contains(QStringLiteral("debug_model.toml"))
                && m_window->lastError().contains(QStringLiteral("model.flavor")),
            qPrintable(m_window->lastError()));
    }

    /// File > Apply TRL config…: the run as trl sft reads the YAML, one undoable edit; a refused file changes nothing.
    void appliesTrlConfig()
    {
        ScenarioDocument* doc = m_window->document();
        const Scenario before = doc->scenario();
        const auto done
            = m_window->applyTrlFile(QStringLiteral(VRAMLAB_SOURCE_DIR "/tests/data/trl/qlora-llama3-8b.yaml"));
        QVERIFY(done && !done->applied.empty());
        QVERIFY(doc->scenario().run.framework == Framework::HfTransformers);
        QVERIFY(doc->scenario().run.finetune.method == FinetuneMethod::Qlora);
        QCOMPARE(doc->scenario().model.preset, before.model.preset);
        QCOMPARE(doc->report()->peak, estimate(doc->scenario()).peak);
        doc->undoStack()->undo();
        QCOMPARE(scenarioToJson(doc->scenario()), scenarioToJson(before));
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("bad.yaml"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("max_seq_length: 4096\n");
        f.close();
        QVERIFY(!m_window->applyTrlFile(bad));
        QVERIFY(doc->scenario().run.finetune.method == before.run.finetune.method);
        QVERIFY2(m_window->lastError().contains(QStringLiteral("bad.yaml"))
                && m_window->lastError().contains(QStringLiteral("max_seq_length")),
            qPrintable(m_window->lastError()));
    }

    /// File > Apply axolotl config…: axolotl's QLoRA example as one undoable edit.
    void appliesAxolotlConfig()
    {
        ScenarioDocument* doc = m_window->document();
        const Scenario before = doc->scenario();
        const auto done
            = m_window->applyAxolotlFile(QStringLiteral(VRAMLAB_SOURCE_DIR "/tests/data/axolotl/llama-3-qlora.yml"));
        QVERIFY(done && !done->applied.empty());
        QVERIFY(doc->scenario().run.finetune.method == FinetuneMethod::Qlora);
        QCOMPARE(doc->report()->peak, estimate(doc->scenario()).peak);
        doc->undoStack()->undo();
        QCOMPARE(scenarioToJson(doc->scenario()), scenarioToJson(before));
        QVERIFY(!m_window->applyAxolotlFile(
            QStringLiteral(VRAMLAB_SOURCE_DIR "/tests/data/axolotl/llama-3-fft-8b-liger-fsdp.yaml")));
        QVERIFY2(m_window->lastError().contains(QStringLiteral("fsdp")), qPrintable(m_window->lastError()));
    }

    void commandLineWithoutDisplay()
    {
        for (const char* arg : { "--version", "--help" }) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.remove(QStringLiteral("DISPLAY"));
            env.remove(QStringLiteral("WAYLAND_DISPLAY"));
            env.remove(QStringLiteral("QT_QPA_PLATFORM"));
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(VRAMLAB_GUI), { QString::fromLatin1(arg) });
            QVERIFY(p.waitForFinished(20000));
            QCOMPARE(p.exitCode(), 0);
            QVERIFY(
                p.readAllStandardOutput().startsWith(arg == std::string("--version") ? "vramlab " : "usage: vramlab"));
        }
    }

    void hoverShowsBytesAndFormula()
    {
        QCustomPlot* plot = m_window->chart()->plot();
        plot->replot();
        const Report& r = *m_window->document()->report();
        // The middle of the optimizer-states segment of the only bar.
        const double mid = gib(r.bytesOf("weights") + r.bytesOf("master_weights") + r.bytesOf("gradients"))
            + gib(r.bytesOf("optimizer_states")) / 2;
        const QPointF at(plot->xAxis->coordToPixel(1.0), plot->yAxis->coordToPixel(mid));
        const QString tip = m_window->chart()->toolTipAt(at);
        QVERIFY2(tip.contains(QStringLiteral("Optimizer states")), qPrintable(tip));
        QVERIFY(tip.contains(QLocale(QLocale::English).toString(qlonglong(r.bytesOf("optimizer_states")))));
        QVERIFY(tip.contains(QStringLiteral("2 states (m, v)")));
        QVERIFY(
            m_window->chart()->toolTipAt(QPointF(plot->xAxis->coordToPixel(0.5), at.y())).isEmpty()); // beside the bar
    }

    void dropOpensScenario()
    {
        QTemporaryDir dir;
        Scenario sc = m_window->document()->scenario();
        sc.run.microBatchSize = 3;
        const QString path = dir.filePath(QStringLiteral("dropped.json"));
        saveScenarioFile(path.toStdString(), sc);
        QMimeData mime;
        mime.setUrls({ QUrl::fromLocalFile(path) });
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(m_window.get(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(m_window.get(), &drop);
        QCOMPARE(m_window->document()->scenario().run.microBatchSize, Count(3));
        QCOMPARE(m_window->document()->filePath(), path);
    }

    void sessionComesBack()
    {
        m_window->document()->setParameter(QStringLiteral("run.sequence_length"), QVariant::fromValue<qlonglong>(2048));
        m_window->document()->save(QDir::temp().filePath(QStringLiteral("vramlab-session-test.json")), nullptr);
        m_window->setDarkTheme(true);
        QVERIFY(m_window->close()); // saves geometry, theme and the scenario
        auto again = std::make_unique<MainWindow>();
        again->restoreSession();
        QCOMPARE(again->document()->scenario().run.sequenceLength, Count(2048));
        QVERIFY(again->chart()->plot()->xAxis->tickLabelColor().lightness() > 180); // dark again
        again->setDarkTheme(false);
        again->close();
        QFile::remove(QDir::temp().filePath(QStringLiteral("vramlab-session-test.json")));
    }

    void copyChartAndTable()
    {
        auto trigger = [this](const QString& text) {
            for (QAction* a : m_window->findChildren<QAction*>())
                if (a->text().remove(QLatin1Char('&')) == text) {
                    a->trigger();
                    return true;
                }
            return false;
        };
        QVERIFY(trigger(QStringLiteral("Copy chart as image")));
        QCOMPARE(QApplication::clipboard()->image().size(), QSize(3200, 1800));
        QVERIFY(trigger(QStringLiteral("Copy breakdown as Markdown")));
        QVERIFY(QApplication::clipboard()->text().startsWith(
            QStringLiteral("| Component | Size | Bytes | Share | Formula |")));
        QVERIFY(trigger(QStringLiteral("Copy breakdown as CSV")));
        // The core's breakdown CSV (as File > Export writes it), no longer text read back out of the table.
        QVERIFY(QApplication::clipboard()->text().startsWith(
            QStringLiteral("key,component,bytes,gib,share_percent,formula")));
    }

    void unsavedWorkSurvivesACrash()
    {
        for (const QFileInfo& f : QDir(AutosaveFile::folder()).entryInfoList({ QStringLiteral("autosave*.json") }))
            QFile::remove(f.filePath());
        m_window->document()->setParameter(QStringLiteral("run.micro_batch_size"), QVariant::fromValue<qlonglong>(6));
        m_window->autosaveNow(); // what the timer does 1.5 s after the edit
        QVERIFY(m_window->hasAutosave());
        // A crash: the window's process ends without closing it (here: its file passes to a
        // process id that does not run); the next session finds the work and restores it.
        QVERIFY(QFile::copy(m_window->autosavePath(), AutosaveFile::pathFor(4'194'999, 1)));
        auto next = std::make_unique<MainWindow>();
        next->restoreSession(false);
        QVERIFY(next->hasAutosave());
        QVERIFY(next->restoreAutosave());
        QCOMPARE(next->document()->scenario().run.microBatchSize, Count(6));
        QVERIFY(next->document()->isModified()); // restored work is still unsaved
        QVERIFY(!next->hasAutosave());
        // A clean close leaves nothing behind.
        m_window->autosaveNow();
        QVERIFY(m_window->hasAutosave());
        m_window->document()->undoStack()->setClean();
        QVERIFY(m_window->close());
        QVERIFY(!m_window->hasAutosave());
        next->document()->undoStack()->setClean();
    }

    void unreadableFileIsNeverOverwritten()
    {
        QTemporaryDir dir;
        const QString good = dir.filePath(QStringLiteral("good.json"));
        QVERIFY(m_window->saveTo(good));
        const QString bad = dir.filePath(QStringLiteral("bad.json"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{ not json");
        f.close();
        QVERIFY(!m_window->openFile(bad));
        QCOMPARE(m_window->document()->filePath(), good); // Save still targets the good file
        m_window->document()->setParameter(QStringLiteral("run.micro_batch_size"), QVariant::fromValue<qlonglong>(2));
        QVERIFY(m_window->saveTo(m_window->document()->filePath()));
        QFile check(bad);
        QVERIFY(check.open(QIODevice::ReadOnly));
        QCOMPARE(check.readAll(), QByteArray("{ not json"));
    }

    void screenshotIsNotBlank()
    {
        m_window->setDarkTheme(false);
        QTest::qWait(50); // queued replots
        const QImage shot = m_window->grab().toImage();
        QVERIFY(shot.width() >= 1000 && shot.height() >= 700);
        QSet<QRgb> colours;
        for (int y = 0; y < shot.height(); y += 7)
            for (int x = 0; x < shot.width(); x += 7)
                colours.insert(shot.pixel(x, y));
        QVERIFY2(colours.size() > 50, qPrintable(QString::number(colours.size())));
        // The component colours are on screen: the bars are drawn.
        QVERIFY(colours.contains(PlotTheme::componentColor(QStringLiteral("optimizer_states")).rgb()));
        if (const QByteArray out = qgetenv("VRAMLAB_SCREENSHOT"); !out.isEmpty())
            shot.save(QString::fromLocal8Bit(out));
    }

private:
    std::unique_ptr<MainWindow> m_window;
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
