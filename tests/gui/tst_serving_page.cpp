// SPDX-License-Identifier: MIT
// The Serving tab driven offscreen on published vLLM startup logs: the KV tokens, blocks and
// failure it shows are the core's, within the log's tolerance; its bars add up to the core's
// budget; a scenario that does not serve gets one sentence; the panel switches a scenario to
// serving and edits the engine's flags as one undoable edit each.
#include "chart_labels.h"
#include "concurrency_chart.h"
#include "explain_page.h"
#include "explain_view.h"
#include "figure_strip.h"
#include "main_window.h"
#include "parameter_descriptors.h"
#include "plan_view.h"
#include "plot_theme.h"
#include "qcustomplot_include.h"
#include "scenario_document.h"
#include "serving_bar_chart.h"
#include "serving_page.h"
#include "serving_plan_view.h"
#include "stacking_splitter.h"
#include "vramlab/parameter_tensors.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_chart.h"
#include "vramlab/serving_fit.h"
#include "vramlab/serving_plan.h"

#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace vramlab;
using nlohmann::json;

namespace {

const QString kPublished = QStringLiteral(VRAMLAB_TEST_DATA_DIR "/published/serving/");

json readJson(const QString& path)
{
    std::ifstream in(path.toStdString());
    return json::parse(in);
}

/// The bound (percent) the case allows for `logged`.
double boundPercent(const json& scenarioCase, const std::string& logged)
{
    for (const json& c : scenarioCase["runs"][0]["compare"])
        if (c["logged"] == logged)
            return c["bound_percent"].get<double>();
    return -1;
}

QString count(Count n)
{
    return QLocale(QLocale::English).toString(qlonglong(n));
}

} // namespace

class TestServingPage : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("VRAM Lab tests"));
        QApplication::setApplicationName(QStringLiteral("tst_serving_page"));
    }
    void init()
    {
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1400, 900);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
    void cleanup() { m_window.reset(); }

    // vllm-i10517 at 29,000 tokens: 1,478 blocks (23,648 tokens) logged, and vLLM refused to start.
    void publishedFailureShowsTheCoresNumbers()
    {
        const json logged = openCase(QStringLiteral("vllm-i10517-llama31-8b-rtx3090-len29000"));
        ServingPage* page = m_window->servingPage();
        QCOMPARE(m_window->tabs()->currentWidget(), page); // a serving file opens on its tab
        const Scenario& sc = m_window->document()->scenario();
        const ServingEstimate e = servingEstimate(sc.model, sc.run);

        QCOMPARE(page->number(QStringLiteral("kvTokens"))->text(), count(e.kvCacheTokens));
        const double loggedTokens = logged["logged"]["kv_cache_tokens"].get<double>();
        QCOMPARE(loggedTokens, 23648.0);
        const double bound = boundPercent(m_case, "kv_cache_tokens");
        QCOMPARE(bound, 0.4);
        QVERIFY2(std::abs(double(e.kvCacheTokens) - loggedTokens) <= loggedTokens * bound / 100,
            qPrintable(count(e.kvCacheTokens)));
        QCOMPARE(page->number(QStringLiteral("gpuBlocks"))->text(), count(*e.gpuBlocks));
        QVERIFY(std::abs(double(*e.gpuBlocks) - 1478.0) <= 1478.0 * boundPercent(m_case, "gpu_blocks") / 100);

        // The engine's message, as it prints it; the header says so too.
        QVERIFY(e.startupFails);
        QVERIFY(page->failure()->isVisibleTo(page));
        QVERIFY(page->failure()->text().contains(QString::fromStdString(e.failure)));
        QVERIFY(page->failure()->text().contains(
            QStringLiteral("The model's max seq len (29000) is larger than the maximum number of tokens")));
        QVERIFY(m_window->verdictLabel()->text().startsWith(QStringLiteral("DOES NOT START: ")));
        QCOMPARE(page->message()->isVisibleTo(page), false);

        // The startup lines, plain text, as the core writes them.
        QStringList lines;
        for (const std::string& l : e.logLines)
            lines << QString::fromStdString(l);
        QCOMPARE(page->log()->toPlainText(), lines.join(QLatin1Char('\n')));
        QVERIFY(page->log()->toPlainText().contains(QStringLiteral("# GPU blocks: %1").arg(*e.gpuBlocks)));
        QVERIFY(page->log()->isReadOnly());

        // One bar (one rank): its segments are the rank's bytes and stack up to the GPU's memory.
        const ServingBarChart* chart = page->budgetChart();
        QCOMPARE(chart->chart().bars.size(), size_t(1));
        const ServingRank& k = e.ranks.front();
        const double gib = double(kGiB);
        QCOMPARE(chart->plottedGiB(0, QStringLiteral("weights")), double(k.weightsBytes) / gib);
        QCOMPARE(chart->plottedGiB(0, QStringLiteral("activation_peak")), double(k.activationPeakBytes) / gib);
        QCOMPARE(chart->plottedGiB(0, QStringLiteral("non_torch")), double(k.nonTorchBytes) / gib);
        QCOMPARE(chart->plottedGiB(0, QStringLiteral("kv_cache")), double(k.kvCacheBytes) / gib);
        const Bytes used = k.weightsBytes + k.activationPeakBytes + k.nonTorchBytes + k.cudaGraphBytes + k.kvCacheBytes;
        QCOMPARE(chart->chart().bars.front().usedBytes(), used);
        double stacked = 0;
        for (const ServingSegment& s : chart->chart().bars.front().segments)
            stacked += chart->plottedGiB(0, QString::fromStdString(s.key));
        QVERIFY(qFuzzyCompare(stacked, double(e.totalGpuBytes) / gib));
        // vLLM's line: gpu_memory_utilization x the memory, which the cache fills up to.
        QCOMPARE(*chart->chart().budgetBytes, k.budgetBytes);
        QCOMPARE(used, k.budgetBytes);
        QCOMPARE(chart->chart().budgetLabel,
            "gpu_memory_utilization 0.90: " + formatBytes(Bytes(0.9 * double(e.totalGpuBytes))));

        // The concurrency curve marks this length at the core's concurrency (0.82x logged).
        const ConcurrencyCurve& curve = page->concurrencyChart()->curve();
        QCOMPARE(curve.current.context, Count(29000));
        QCOMPARE(curve.current.concurrency, e.maxConcurrency);
        QVERIFY(std::abs(e.maxConcurrency - 0.82) <= 0.82 * boundPercent(m_case, "max_concurrency") / 100 + 0.005);
        QCOMPARE(page->number(QStringLiteral("maxConcurrency"))->text(),
            QString::number(e.maxConcurrency, 'f', 2) + QStringLiteral("×"));
        screenshot("failure");
        m_window->setPresenterMode(true); // projector sizes: the charts' fonts follow the theme
        screenshot("presenter");
        m_window->setPresenterMode(false);
    }

    // The same log at 20,000 tokens: 1,952 blocks, 1.56x, and vLLM starts.
    void publishedStartShowsBlocksAndSpeed()
    {
        openCase(QStringLiteral("vllm-i10517-llama31-8b-rtx3090-len20000"));
        ServingPage* page = m_window->servingPage();
        const Scenario& sc = m_window->document()->scenario();
        const ServingEstimate e = servingEstimate(sc.model, sc.run);
        QVERIFY(!e.startupFails);
        QVERIFY(!page->failure()->isVisibleTo(page));
        QCOMPARE(page->number(QStringLiteral("gpuBlocks"))->text(), count(*e.gpuBlocks));
        QVERIFY(std::abs(double(*e.gpuBlocks) - 1952.0) <= 1952.0 * boundPercent(m_case, "gpu_blocks") / 100);
        QCOMPARE(page->number(QStringLiteral("kvTokens"))->text(), count(*e.gpuBlocks * 16));
        QVERIFY(std::abs(e.maxConcurrency - 1.56) <= 1.56 * boundPercent(m_case, "max_concurrency") / 100 + 0.005);
        QVERIFY(m_window->verdictLabel()->text().startsWith(QStringLiteral("STARTS: ")));
        // Speed as serve-estimate gives it: batch 1 (1.56 requests held), 20,000 tokens.
        const ServingSpeed s = servingSpeed(sc.model, sc.run, e, 1, 20000, 20000);
        QVERIFY(s.available);
        QCOMPARE(page->number(QStringLiteral("tpot"))->text(), QStringLiteral("%1 ms").arg(s.tpotS * 1e3, 0, 'f', 1));
        QCOMPARE(page->caption(QStringLiteral("throughput"))->text(), QStringLiteral("Throughput, batch 1"));
        // The curve falls with the context: each point is the core's estimate at that length.
        const ConcurrencyCurve& curve = page->concurrencyChart()->curve();
        QVERIFY(curve.points.size() > 5);
        for (const ConcurrencyPoint& p : curve.points) {
            RunSpec r = sc.run;
            r.serving->maxModelLen = p.context;
            QCOMPARE(p.concurrency, servingEstimate(sc.model, r).maxConcurrency);
        }
    }

    // At the Serving tab's narrowest the context axis keeps its labels apart ("4k", "128k": fewer ticks,
    // not overprinted digits) and the scenario's mark stays inside the plot.
    void narrowConcurrencyChartKeepsLabelsApart()
    {
        const Scenario sc = readScenario(
            readJson(QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-3.1-8b-vllm-rtx3090.json")));
        for (const int width : { 240, 320, 600 }) {
            ConcurrencyChart chart;
            chart.resize(width, 300);
            chart.show();
            QVERIFY(QTest::qWaitForWindowExposed(&chart));
            const ServingEstimate e = servingEstimate(sc.model, sc.run);
            chart.setCurve(concurrencyCurve(sc.model, sc.run, e));
            chart.plot()->replot(QCustomPlot::rpImmediateRefresh);
            chart.plot()->replot(QCustomPlot::rpImmediateRefresh); // items placed on the laid-out axes
            QCPAxis* x = chart.plot()->xAxis;
            const QVector<double> ticks = x->tickVector();
            const QVector<QString> labels = x->tickVectorLabels();
            QVERIFY(ticks.size() >= 2);
            const QFontMetricsF fm(x->tickLabelFont());
            double lastRight = -1e9;
            for (int i = 0; i < ticks.size(); ++i) {
                if (!x->range().contains(ticks[i]))
                    continue;
                QVERIFY2(labels[i].size() <= 4, qPrintable(labels[i])); // "128k", not "131072"
                const double w = fm.horizontalAdvance(labels[i]), at = x->coordToPixel(ticks[i]);
                QVERIFY2(at - w / 2 >= lastRight, qPrintable(QStringLiteral("%1 px: %2").arg(width).arg(labels[i])));
                lastRight = at + w / 2;
            }
            const QRect inside = chart.plot()->axisRect()->rect();
            for (int i = 0; i < chart.plot()->itemCount(); ++i)
                if (auto* text = qobject_cast<QCPItemText*>(chart.plot()->item(i));
                    text && text->text().contains(QStringLiteral("tokens"))) {
                    const QRectF r = textItemRect(text);
                    QVERIFY2(r.left() >= inside.left() - 1 && r.right() <= inside.right() + 1,
                        qPrintable(QStringLiteral("%1 px: the mark %2 leaves the plot").arg(width).arg(text->text())));
                }
        }
    }

    // The budget chart's legend takes the columns its names fit, so at the tab's narrowest no name is cut
    // (a 13-character guess made two columns at 265 px: "Activation p", "Unused ma").
    void narrowBudgetChartLegendFits()
    {
        // The hybrid example adds a sixth entry, "Mamba-2 state".
        for (const char* file : { "llama-3.1-8b-vllm-rtx3090.json", "nemotron-nano-9b-v2-vllm-h100.json" }) {
            const Scenario sc = readScenario(
                readJson(QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/") + QString::fromLatin1(file)));
            const ServingEstimate e = servingEstimate(sc.model, sc.run);
            for (const int width : { 240, 265, 320, 600 }) {
                ServingBarChart chart;
                chart.resize(width, 400);
                chart.show();
                QVERIFY(QTest::qWaitForWindowExposed(&chart));
                chart.setChart(servingBudgetChart(sc.run, e));
                chart.plot()->replot(QCustomPlot::rpImmediateRefresh);
                QVERIFY2(static_cast<QWidget*>(chart.plot())->minimumSizeHint().width() <= width,
                    qPrintable(QStringLiteral("%1 px: the plot needs %2")
                                   .arg(width)
                                   .arg(static_cast<QWidget*>(chart.plot())->minimumSizeHint().width())));
                QVERIFY(chart.plot()->legend->outerRect().right() <= chart.plot()->width());
            }
        }
    }

    void otherScenariosGetOneSentence()
    {
        ServingPage* page = m_window->servingPage();
        m_window->tabs()->setCurrentWidget(page);
        QVERIFY(!m_window->document()->scenario().run.serving); // the default: training
        QVERIFY(page->message()->isVisibleTo(page));
        QVERIFY(page->message()->text().contains(QStringLiteral("run.mode: \"serving\"")));
        QCOMPARE(page->message()->textFormat(), Qt::PlainText);
        QVERIFY(page->budgetChart()->chart().bars.empty());
        QVERIFY(page->log()->toPlainText().isEmpty());
    }

    // The core's refusal shows in the page's line; nothing throws past it.
    void coreErrorsShowInTheMessage()
    {
        openCase(QStringLiteral("vllm-i10517-llama31-8b-rtx3090-len20000"));
        ServingPage* page = m_window->servingPage();
        Scenario sc = m_window->document()->scenario();
        sc.run.parallelism.tensorParallel = 3; // 32 heads do not split over 3 GPUs
        sc.run.parallelism.gpus = 3;
        m_window->document()->replaceScenario(sc, QStringLiteral("tp 3"));
        QVERIFY(page->message()->isVisibleTo(page));
        QVERIFY2(
            page->message()->text().contains(QStringLiteral("tensor_parallel")), qPrintable(page->message()->text()));
        QVERIFY(page->budgetChart()->chart().bars.empty());
        // The document computes the engine once per change; the page says its refusal.
        QVERIFY(!m_window->document()->servingEstimate());
        QCOMPARE(page->message()->text(), m_window->document()->servingError());
        m_window->document()->undoStack()->undo();
        QVERIFY(!page->message()->isVisibleTo(page));
        QVERIFY(m_window->document()->servingError().isEmpty());
        const Scenario& back = m_window->document()->scenario();
        QCOMPARE(m_window->document()->servingEstimate()->kvCacheTokens,
            servingEstimate(back.model, back.run).kvCacheTokens);
    }

    // The panel: Mode "serving" makes a vLLM scenario; the engine's flags are controls, each one edit.
    void panelSwitchesToServingAndEditsFlags()
    {
        ServingPage* page = m_window->servingPage();
        m_window->tabs()->setCurrentWidget(page);
        ScenarioDocument* doc = m_window->document();
        Scenario one = doc->scenario();
        one.run.parallelism = {}; // one GPU
        doc->replaceScenario(one, QStringLiteral("one GPU"));
        doc->setParameter(QStringLiteral("run.mode"), QStringLiteral("serving"));
        QVERIFY(doc->scenario().run.serving);
        QVERIFY(doc->scenario().run.serving->engine == ServingEngine::Vllm);
        QVERIFY(!page->message()->isVisibleTo(page));
        const ParamDescriptor* gmu = findDescriptor(QStringLiteral("run.serving.gpu_memory_utilization"));
        QVERIFY(gmu && gmu->applies(doc->scenario()));
        QVERIFY(!findDescriptor(QStringLiteral("run.batch_size"))->applies(doc->scenario()));

        doc->setParameter(QStringLiteral("run.serving.gpu_memory_utilization"), 0.8);
        QCOMPARE(doc->scenario().run.serving->gpuMemoryUtilization.value_or(0), 0.8);
        const Bytes total = doc->scenario().run.gpu->memoryBytes;
        QCOMPARE(*page->budgetChart()->chart().budgetBytes, Bytes(0.8 * double(total)));
        doc->setParameter(QStringLiteral("run.serving.max_model_len"), 4096);
        QCOMPARE(page->concurrencyChart()->curve().current.context, Count(4096));
        doc->setParameter(QStringLiteral("run.serving.kv_cache_dtype"), QStringLiteral("fp8"));
        QCOMPARE(findDescriptor(QStringLiteral("run.serving.kv_cache_dtype"))->get(doc->scenario()).toString(),
            QStringLiteral("fp8"));
        doc->setParameter(QStringLiteral("run.serving.max_num_seqs"), 64);
        QCOMPARE(*doc->scenario().run.serving->maxNumSeqs, Count(64));

        // Saved and opened again: the same flags.
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("served.json"));
        QString error;
        QVERIFY2(doc->save(file, &error), qPrintable(error));
        const Scenario back = loadScenarioFile(file.toStdString());
        QCOMPARE(back.run.serving->gpuMemoryUtilization.value_or(0), 0.8);
        QCOMPARE(*back.run.serving->maxModelLen, Count(4096));
        QVERIFY(*back.run.serving->kvCacheDtype == DType::Fp8);
        QCOMPARE(*back.run.serving->maxNumSeqs, Count(64));

        // Another engine: its own budget line and flags; llama.cpp draws a bar per device.
        doc->setParameter(QStringLiteral("run.serving.engine"), QStringLiteral("sglang"));
        QVERIFY(!gmu->applies(doc->scenario()));
        // SGLang 0.4.9's default on the H100: round((81,559 - 10,240) / 81,559, 3).
        QVERIFY2(page->budgetChart()->chart().budgetLabel.starts_with("mem_fraction_static 0.874"),
            page->budgetChart()->chart().budgetLabel.c_str());
        doc->setParameter(QStringLiteral("run.serving.engine"), QStringLiteral("llama.cpp"));
        doc->setParameter(QStringLiteral("run.serving.n_gpu_layers"), 33);
        const ServingBudgetChart& bars = page->budgetChart()->chart();
        QCOMPARE(bars.bars.size(), size_t(2)); // CUDA0 and the CPU (the input embedding)
        QCOMPARE(bars.bars.front().label, std::string("CUDA0"));
        QVERIFY(bars.bars.front().bytesOf("kv_cache") > 0);

        // Each flag was one edit (mode, four vLLM flags, two engines, GPU layers): undone back to training.
        QCOMPARE(doc->undoStack()->count(), 9);
        for (int i = 0; i < 8; ++i)
            doc->undoStack()->undo();
        QVERIFY(!doc->scenario().run.serving);
        QVERIFY(page->message()->isVisibleTo(page));
    }

    // Issue 20: the Plan tab of a serving scenario is the serving planner, as the core ranks
    // it (64 requests of 4,096 tokens of Llama 3.1 8B under vLLM 0.6.4 on 4 RTX 3090s); a
    // fitting row applied is one undoable edit whose engine report is the row's; a row that
    // does not fit is listed with why and cannot be applied; the limits filter; the table
    // exports as shown.
    void planTabPlansServing()
    {
        openCase(QStringLiteral("vllm-i10517-llama31-8b-rtx3090-len20000"));
        m_window->tabs()->setCurrentWidget(m_window->page(QStringLiteral("planPage")));
        ServingPlanView* view = m_window->servingPlanView();
        QVERIFY(view->isVisible());
        QVERIFY(!m_window->planView()->isVisible());
        const Scenario sc = m_window->document()->scenario();
        QCOMPARE(view->control(ServingPlanView::Context)->value(), 20000); // the scenario's max_model_len

        // Fits on the scenario as it is (one GPU): the longest context for one request, applied.
        const ServingFit longest = longestContext(sc.model, sc.run, 1);
        QVERIFY(longest.value);
        QVERIFY2(view->fitText(1).startsWith(count(*longest.value) + QLatin1Char(':')), qPrintable(view->fitText(1)));
        const int edits = m_window->document()->undoStack()->index();
        view->applyFit(1);
        QCOMPARE(m_window->document()->undoStack()->index(), edits + 1);
        QCOMPARE(m_window->document()->scenario().run.serving->maxModelLen, longest.value);
        m_window->document()->undoStack()->undo();

        view->control(ServingPlanView::Gpus)->setValue(4);
        view->control(ServingPlanView::Requests)->setValue(64);
        view->control(ServingPlanView::Context)->setValue(4096);
        ServingPlanRequest req;
        req.gpus = 4;
        req.concurrency = 64;
        req.context = 4096;
        const ServingPlanResult want = servingPlan(sc.model, sc.run, req);
        QVERIFY(!want.top.empty() && !want.unfit.empty());
        const ServingPlanResult& got = view->result();
        QCOMPARE(got.top.size(), want.top.size());
        QCOMPARE(view->table()->rowCount(), int(want.top.size() + want.unfit.size()));
        for (size_t i = 0; i < want.top.size(); ++i) {
            QCOMPARE(got.top[i].summary(), want.top[i].summary());
            QCOMPARE(got.top[i].speed.tpotS, want.top[i].speed.tpotS);
            QCOMPARE(view->table()->item(int(i), 5)->text(), QString::fromStdString(want.top[i].summary()));
        }
        const int unfitRow = int(want.top.size());
        QCOMPARE(view->table()->item(unfitRow, 6)->text(), QString::fromStdString(want.unfit[0].why));
        QVERIFY(!(view->table()->item(unfitRow, 0)->flags() & Qt::ItemIsSelectable));
        QCOMPARE(view->table()->verticalHeaderItem(unfitRow)->text(), QStringLiteral("no"));

        // Export as shown, then apply #1: every setting of its summary, and its engine report.
        QTemporaryDir dir;
        const QString csv = dir.filePath(QStringLiteral("serving-plan.csv"));
        QVERIFY2(m_window->exportTo(csv, QSize(800, 500), false), qPrintable(m_window->lastError()));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), QByteArray::fromStdString(servingPlanCsv(got)));
        const ServingPlanCandidate best = got.top.front();
        view->applyRow(unfitRow); // not applied: it does not fit
        QCOMPARE(m_window->document()->undoStack()->index(), edits);
        view->applyRow(0);
        QCOMPARE(m_window->document()->undoStack()->index(), edits + 1);
        const RunSpec& applied = m_window->document()->scenario().run;
        QCOMPARE(applied.parallelism.gpus, Count(4));
        QCOMPARE(applied.parallelism.tensorParallel, best.tensorParallel);
        QCOMPARE(applied.serving->maxModelLen, std::optional<Count>(4096));
        QCOMPARE(applied.serving->kvCacheDtype, best.kvCacheDtype);
        const ServingEstimate e = servingEstimate(sc.model, applied);
        QCOMPARE(e.kvCacheTokens, best.estimate.kvCacheTokens);
        QCOMPARE(e.replicas, best.dataParallel);
        QCOMPARE(requestsHeld(e, *applied.serving) * e.replicas, best.requestsHeld);
        // Re-planned on the applied run (4 GPUs, 4,096 tokens, the 64 requests kept): the same #1.
        QTRY_VERIFY(!view->result().top.empty() && view->result().top.front().summary() == best.summary());

        // A TTFT limit of 1 ms: nothing fits, and the summary says so.
        view->control(ServingPlanView::MaxTtftMs)->setValue(1);
        QVERIFY(view->result().top.empty());
        QVERIFY2(view->summaryText().contains(QStringLiteral("Nothing fits")), qPrintable(view->summaryText()));
        screenshot("plan");
    }

    // A hybrid Mamba-2 model's config.json: the import keeps the window's H100 and turns training into vLLM
    // serving (the only budget modelled for it); the Serving tab draws the Mamba-2 states as their own segment;
    // the header gives the engine's verdict while the one-request tabs say why they have no answer.
    void hybridModelServes()
    {
        QVERIFY(m_window->openFile(QStringLiteral(VRAMLAB_TEST_DATA_DIR "/hf/nemotron-nano-9b-v2.json")));
        const Scenario& sc = m_window->document()->scenario();
        QVERIFY(sc.run.serving && sc.run.serving->engine == ServingEngine::Vllm);
        QVERIFY(sc.model.ssm.enabled());
        const ServingEstimate e = servingEstimate(sc.model, sc.run);
        ServingPage* page = m_window->servingPage();
        m_window->tabs()->setCurrentWidget(page);
        QCOMPARE(page->number(QStringLiteral("kvTokens"))->text(), count(e.kvCacheTokens));
        const ServingBarChart* chart = page->budgetChart();
        const double gib = double(kGiB);
        QVERIFY(e.limiting().stateBytes > 0);
        QCOMPARE(chart->plottedGiB(0, QStringLiteral("ssm_state")), double(e.limiting().stateBytes) / gib);
        QCOMPARE(chart->plottedGiB(0, QStringLiteral("kv_cache")),
            double(e.limiting().kvCacheBytes - e.limiting().stateBytes) / gib);
        QVERIFY(page->log()->toPlainText().contains(QStringLiteral("Setting attention block size to 672 tokens")));
        QVERIFY2(m_window->verdictLabel()->text().startsWith(QStringLiteral("STARTS: ")),
            qPrintable(m_window->verdictLabel()->text()));
        // The one-request report is refused, naming model.ssm.
        QVERIFY(!m_window->document()->report());
        QVERIFY(m_window->document()->error().startsWith(QStringLiteral("model.ssm: ")));
        // The Explain tab points to where the answer is, not "Not a valid configuration".
        m_window->tabs()->setCurrentWidget(m_window->explainPage());
        QTRY_VERIFY(m_window->explainView()->toPlainText().startsWith(QStringLiteral("Explained on the Serving tab")));
        m_window->tabs()->setCurrentWidget(page);
        screenshot("hybrid");
        // The key numbers take two rows where one does not fit (beside a lesson, in presenter mode), so the tab
        // never widens the window; wide, they are one row.
        FigureStrip* strip = page->figures();
        strip->resize(strip->minimumSizeHint().width(), strip->height());
        QCOMPARE(strip->columns(), 4);
        strip->resize(3000, strip->height());
        QCOMPARE(strip->columns(), 7);
        // The two charts stand side by side where the width holds them, one above the other where only the height
        // does, and where neither does the budget alone, the curve folded until there is room: the minimum width is
        // the budget's, so a lesson beside the tab never widens the window.
        StackingSplitter* charts = page->charts();
        const int sideBySide = charts->sideBySideWidth(), tall = charts->stackedHeight();
        const int budgetWidth = page->budgetChart()->minimumSizeHint().width();
        QVERIFY(sideBySide > budgetWidth);
        QCOMPARE(charts->minimumSizeHint().width(), budgetWidth);
        charts->resize(sideBySide - 1, tall);
        QCOMPARE(charts->orientation(), Qt::Vertical);
        QVERIFY(!charts->folded() && !page->concurrencyChart()->isHidden());
        QCOMPARE(page->budgetChart()->width(), sideBySide - 1); // one above the other, each the whole width
        charts->resize(sideBySide - 1, tall - 1);
        QCOMPARE(charts->orientation(), Qt::Horizontal);
        QVERIFY(charts->folded() && page->concurrencyChart()->isHidden());
        QVERIFY(page->budgetChart()->width() >= sideBySide - 1 - charts->handleWidth()); // the width, less a handle
        charts->resize(sideBySide, tall - 1);
        QCOMPARE(charts->orientation(), Qt::Horizontal);
        QVERIFY(!charts->folded() && !page->concurrencyChart()->isHidden());
        // A short tab (a 720 px projector) gives the budget the whole width for its legend, however wide.
        charts->resize(3 * sideBySide, 359);
        QVERIFY(charts->folded() && page->concurrencyChart()->isHidden());
        charts->resize(3 * sideBySide, 360);
        QVERIFY(!charts->folded());
        // Presenter mode leaves the speed to the header: four figures, one row where it fits.
        page->setTheme(PlotTheme::fromPalette(lightPalette(), true));
        QVERIFY(
            page->number(QStringLiteral("ttft"))->isHidden() && page->number(QStringLiteral("throughput"))->isHidden());
        strip->resize(3000, strip->height());
        QCOMPARE(strip->columns(), 4);
        page->setTheme(PlotTheme::fromPalette(lightPalette(), false));
        QVERIFY(!page->number(QStringLiteral("tpot"))->isHidden());
        strip->resize(3000, strip->height());
        QCOMPARE(strip->columns(), 7);
    }

    // Choosing a hybrid preset in the panel on the default training scenario serves it with vLLM (training is
    // not modelled for it), as the import does; choosing a transformer again keeps serving, which it can.
    void hybridPresetServes()
    {
        ScenarioDocument* doc = m_window->document();
        QVERIFY(!doc->scenario().run.serving);
        doc->setParameter(QStringLiteral("model.preset"), QStringLiteral("nemotron-nano-9b-v2"));
        QVERIFY(doc->scenario().run.serving && doc->scenario().run.serving->engine == ServingEngine::Vllm);
        QCOMPARE(countParameters(doc->scenario().model).total, Count(8'888'227'328));
        QVERIFY(doc->servingEstimate() && !doc->servingEstimate()->startupFails);
        QVERIFY(doc->error().startsWith(QStringLiteral("model.ssm: ")));
        doc->undoStack()->undo(); // one edit: the model and the run together
        QVERIFY(!doc->scenario().run.serving);
        QVERIFY(doc->report());
    }

    // Qwen3.5's config.json in the window: the vision transformer is counted, and the run becomes vLLM serving of the
    // language model (--language-model-only, 0.17.0), the one budget modelled for it; the states are named by their
    // mixer. Its preset in the panel does the same from a training scenario.
    void qwenVisionLanguageModelServes()
    {
        QVERIFY(m_window->openFile(QStringLiteral(VRAMLAB_TEST_DATA_DIR "/hf/qwen3.5-27b.json")));
        const Scenario& sc = m_window->document()->scenario();
        QVERIFY(sc.model.vision.qwen() && sc.model.ssm.deltaNet());
        QCOMPARE(countParameters(sc.model).total, Count(27'356'728'560));
        QVERIFY(sc.run.serving && sc.run.serving->engine == ServingEngine::Vllm && sc.run.serving->languageModelOnly);
        QCOMPARE(sc.run.serving->engineVersion, std::string("0.17.0"));
        const std::optional<ServingEstimate>& e = m_window->document()->servingEstimate();
        QVERIFY(e && e->limiting().statePerSequenceBytes == Bytes(48) * 3'207'168);
        ServingPage* page = m_window->servingPage();
        m_window->tabs()->setCurrentWidget(page);
        QVERIFY(page->log()->toPlainText().contains(QStringLiteral("Setting attention block size to 784 tokens")));
        QCOMPARE(page->budgetChart()->plottedGiB(0, QStringLiteral("ssm_state")),
            double(e->limiting().stateBytes) / double(kGiB));
        screenshot("qwen3.5");
    }
    void qwenPresetServes()
    {
        ScenarioDocument* doc = m_window->document();
        QVERIFY(!doc->scenario().run.serving);
        doc->setParameter(QStringLiteral("model.preset"), QStringLiteral("qwen3.5-35b-a3b"));
        QVERIFY(doc->scenario().run.serving && doc->scenario().run.serving->languageModelOnly);
        // In bf16 on the default H100 at the model's 262,144 tokens the language model's 64.5 GiB leave 3.24 GiB of
        // cache where one request needs 5.08 GiB: vLLM does not start, and the header says so (the FP8 example,
        // resources/scenarios/qwen3.6-35b-a3b-fp8-vllm-h100.json, holds 7.02 such requests).
        QVERIFY(doc->servingEstimate() && doc->servingEstimate()->startupFails);
        QVERIFY2(doc->servingEstimate()->failure.starts_with("To serve at least one request with the models's max seq "
                                                             "len (262144), (5.08 GiB KV cache is needed"),
            doc->servingEstimate()->failure.c_str());
        QVERIFY(m_window->verdictLabel()->text().startsWith(QStringLiteral("DOES NOT START")));
    }

private:
    /// Opens the published case's scenario as a file (the case holds it under runs[0]); returns the log's case.
    json openCase(const QString& name)
    {
        m_case = readJson(kPublished + QStringLiteral("scenarios/") + name + QStringLiteral(".json"));
        const QString file = m_dir.filePath(name + QStringLiteral(".json"));
        std::ofstream(file.toStdString()) << m_case["runs"][0]["scenario"].dump(2);
        if (!m_window->openFile(file))
            qWarning() << m_window->lastError();
        return readJson(kPublished + name + QStringLiteral(".json"));
    }

    void screenshot(const char* name)
    {
        const QByteArray dir = qgetenv("VRAMLAB_SCREENSHOTS");
        if (dir.isEmpty())
            return;
        for (int i = 0; i < 3; ++i) // the layout and the charts' queued replots
            QApplication::processEvents();
        m_window->grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/serving-%1.png").arg(name));
    }

    std::unique_ptr<MainWindow> m_window;
    QTemporaryDir m_dir;
    json m_case;
};

QTEST_MAIN(TestServingPage)
#include "tst_serving_page.moc"
