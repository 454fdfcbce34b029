// SPDX-License-Identifier: MIT
// Input a hostile or unlucky user gives the core: echoed values made printable and short,
// duplicate keys, pipes and folders as files, INT64_MIN, GPUs with unknown rates, work
// past the stated limits, runs kept across an imported model, no verdict without a GPU.
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/hf_import.h"
#include "vramlab/planner.h"
#include "vramlab/presets.h"
#include "vramlab/report_json.h"
#include "vramlab/run_adaptation.h"
#include "vramlab/scenario_io.h"
#include "vramlab/step_timeline.h"
#include "vramlab/text_escape.h"
#include "vramlab/units.h"

#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace vramlab;
using nlohmann::json;

namespace {

json base()
{
    return json::parse(R"({"format": "vramlab.scenario", "version": 1, "name": "t",
        "model": {"preset": "llama-3-8b"},
        "run": {"mode": "training", "sequence_length": 4096, "gradient_accumulation_steps": 8,
                "parallelism": {"gpus": 8, "zero_stage": 3}, "gpu": "h100-sxm-80gb"}})");
}

std::string readError(const json& doc)
{
    try {
        estimate(readScenario(doc));
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

} // namespace

class TestHostileInput : public QObject {
    Q_OBJECT
private slots:
    void hugeValuesAreCutInErrors()
    {
        json doc = base();
        doc["run"]["precision"] = std::string(1'000'000, 'x');
        const std::string e = readError(doc);
        QVERIFY(e.rfind("run.precision: expected one of", 0) == 0);
        QVERIFY2(e.size() < 1000, std::to_string(e.size()).c_str()); // was over 1 MB
        QVERIFY(e.size() >= 3 && e.compare(e.size() - 3, 3, "…") == 0);
    }

    void controlCharactersAreEscaped()
    {
        json doc = base();
        doc["run"]["precision"] = "\x1b[31mred\nline\t\xc2\x9b";
        const std::string e = readError(doc);
        QVERIFY(e.find('\x1b') == std::string::npos);
        QVERIFY(e.find('\n') == std::string::npos);
        QVERIFY(e.find("\xc2\x9b") == std::string::npos); // C1 CSI
        QVERIFY(e.find("\\u001b[31mred\\nline\\t\\u009b") != std::string::npos);
        // Invalid UTF-8 bytes are shown, not passed on; already printable text is left alone.
        QCOMPARE(printableText("a\xff"
                               "b"),
            std::string("a\\xFFb"));
        QCOMPARE(printableText("Größe 16 GiB"), std::string("Größe 16 GiB"));
        QCOMPARE(printableText(printableText(std::string(500, 'y'), 50), 50), printableText(std::string(500, 'y'), 50));
        // A cut never splits a character.
        QCOMPARE(printableText("ééé", 5), std::string("éé…"));
    }

    void int64MinIsAValueNotUndefinedBehaviour()
    {
        QCOMPARE(formatCount(std::numeric_limits<Count>::min()), std::string("-9,223,372,036,854,775,808"));
        QCOMPARE(formatCount(-1234567), std::string("-1,234,567"));
        json doc = base();
        doc["run"]["sequence_length"] = std::numeric_limits<std::int64_t>::min();
        const std::string e = readError(doc);
        QVERIFY2(e.find("run.sequence_length: expected an integer from 1 to") == 0, e.c_str());
        QVERIFY(e.find("got -9,223,372,036,854,775,808") != std::string::npos);
    }

    void numbersAreFormattedAsPrintfDid()
    {
        // formatDouble and formatBytes replaced snprintf: the same text for awkward values
        // (ties, whole numbers, negatives, huge and tiny ones), not just typical ones.
        uint64_t x = 0x9E3779B97F4A7C15ull;
        auto next = [&] {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            return x;
        };
        struct Format {
            const char* printf;
            std::chars_format format;
            int precision;
        };
        const Format formats[] = { { "%.4g", std::chars_format::general, 4 }, { "%g", std::chars_format::general, 6 },
            { "%.3g", std::chars_format::general, 3 }, { "%.2f", std::chars_format::fixed, 2 },
            { "%.0f", std::chars_format::fixed, 0 } };
        for (int i = 0; i < 20'000; ++i) {
            const uint64_t r = next();
            double v = 0;
            switch (i % 4) {
            case 0:
                std::memcpy(&v, &r, sizeof v); // any bit pattern: NaN, infinities, subnormals
                break;
            case 1:
                v = double(r % 200'000) / 8.0 - 12'500.0; // ties at .5, .25, .125
                break;
            case 2:
                v = double(static_cast<int64_t>(r >> (r % 64))); // whole numbers of every size
                break;
            default:
                v = std::ldexp(double(r % 1'000'000), int(r % 90) - 45);
            }
            for (const Format& f : formats) {
                char want[512];
                std::snprintf(want, sizeof want, f.printf, v);
                QCOMPARE(formatDouble(v, f.format, f.precision), std::string(want));
            }
            const Bytes b = static_cast<Bytes>(r >> (r % 63)) * (i % 7 == 0 ? -1 : 1);
            const char* const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
            double scaled = double(b);
            int unit = 0;
            for (; std::fabs(scaled) >= 1024.0 && unit < 6; ++unit)
                scaled /= 1024.0;
            char want[64];
            if (unit == 0)
                std::snprintf(want, sizeof want, "%lld B", static_cast<long long>(b));
            else
                std::snprintf(want, sizeof want, "%.2f %s", scaled, units[unit]);
            QCOMPARE(formatBytes(b), std::string(want));
        }
    }

    void duplicateKeysAreRefused()
    {
        const std::string text = R"({"format": "vramlab.scenario", "version": 1, "model": {"preset": "gpt2"},
            "run": {"parallelism": {"gpus": 1, "gpus": 8}}})";
        try {
            parseJsonText(text, "dup.json");
            QFAIL("a duplicate key was accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.keyPath()), QStringLiteral("run.parallelism.gpus"));
            QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("dup.json"));
        }
        try {
            parseJsonText(R"({"a": [1, {"b": 1}, {"b": 2, "b": 3}]})", "x.json");
            QFAIL("a duplicate key in an array element was accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.keyPath()), QStringLiteral("a[2].b"));
        }
        // The same key in sibling objects is fine.
        QCOMPARE(parseJsonText(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})", "ok.json")["b"]["x"], 2);
    }

    void onlyRegularFilesAreRead()
    {
        QTemporaryDir dir;
        const std::string fifo = dir.filePath(QStringLiteral("pipe.json")).toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        QElapsedTimer t;
        t.start();
        try {
            loadScenarioFile(fifo); // would block forever in open() before
            QFAIL("a FIFO was read");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("not a regular file") != std::string::npos);
        }
        QVERIFY(t.elapsed() < 5000);
        QVERIFY_THROWS_EXCEPTION(InputError, loadScenarioFile(dir.path().toStdString()));
        try {
            loadScenarioFile("");
            QFAIL("an empty file name was accepted");
        } catch (const InputError& e) {
            QCOMPARE(std::string(e.what()), std::string("the file name is empty"));
        }
    }

    void noVerdictWithoutAGpu()
    {
        json doc = base();
        doc["run"].erase("gpu");
        const Report r = estimate(readScenario(doc));
        QVERIFY(!r.hasVerdict);
        const auto j = reportToJson(r);
        QVERIFY(j["fits"].is_null());
        QVERIFY(j["usable_bytes"].is_null());
        const Report withGpu = estimate(readScenario(base()));
        QVERIFY(withGpu.hasVerdict);
        QVERIFY(reportToJson(withGpu)["fits"].is_boolean());
    }

    void planRowsNameSequenceParallel()
    {
        // Llama-3-70B on 8 H100s (issue 16): TP rows turn on sequence parallelism; the row says so
        // and the row entered by hand gives the row's peak.
        Scenario sc = readScenario(base());
        sc.model = findPreset("llama-3-70b")->model;
        PlanRequest req;
        req.gpus = 8;
        req.topK = 1000;
        const PlanResult res = plan(sc, req);
        bool sawTp = false;
        for (const PlanCandidate& c : res.top) {
            const std::string s = c.summary();
            if (c.tensorParallel > 1) {
                sawTp = true;
                QVERIFY(c.sequenceParallel);
                QVERIFY2(s.find("TP " + std::to_string(c.tensorParallel) + " + sequence parallel") != std::string::npos,
                    s.c_str());
            }
            QVERIFY(s.find("offload") != std::string::npos); // "no offload" is said too
            Scenario applied = sc;
            applied.run = applyCandidate(sc.run, c, req.gpus);
            QCOMPARE(applied.run.parallelism.sequenceParallel, c.sequenceParallel);
            QCOMPARE(estimate(applied).peak, c.peak);
        }
        QVERIFY(sawTp);
        QVERIFY(planToJson(res)["top"][0].contains("sequence_parallel"));
    }

    void planNeedsTheGpuRatesItUses()
    {
        Scenario sc = readScenario(base());
        GpuSpec g = *sc.run.gpu;
        PlanRequest req;
        req.gpus = 8;
        auto planError = [&](const GpuSpec& gpu) -> std::string {
            Scenario s = sc;
            s.run.gpu = gpu;
            try {
                plan(s, req);
            } catch (const InputError& e) {
                return e.keyPath();
            }
            return {};
        };
        GpuSpec noFlops = g;
        noFlops.fp32Tflops = noFlops.tf32Tflops = noFlops.bf16Tflops = noFlops.fp16Tflops = noFlops.fp8Tflops = 0;
        QCOMPARE(planError(noFlops), std::string("run.gpu"));
        GpuSpec noLink = g;
        noLink.interconnectGBs = 0;
        QCOMPARE(planError(noLink), std::string("run.gpu.interconnect_gbs"));
        GpuSpec noHost = g;
        noHost.hostLinkGBs = 0;
        Scenario s = sc;
        s.run.gpu = noHost;
        req.topK = 1000;
        const PlanResult res = plan(s, req);
        QCOMPARE(res.notes.size(), size_t(1));
        for (const PlanCandidate& c : res.top)
            QVERIFY(!c.offloadOptimizer && !c.offloadParams); // free offload is never ranked
    }

    void timelineRecordsAtMostItsLimit()
    {
        json doc = base();
        doc["model"]["num_layers"] = 100'000;
        const Report r = estimate(readScenario(doc)); // the peak still comes (lean, no events)
        QVERIFY(r.peak > 0);
        QVERIFY(timelineEventCount(r.stepInputs) > kMaxTimelineEvents);
        QVERIFY_THROWS_EXCEPTION(InputError, simulateStep(r.stepInputs, 2));
        const Report small = estimate(readScenario(base()));
        QVERIFY(timelineEventCount(small.stepInputs) < kMaxTimelineEvents);
        QVERIFY(!simulateStep(small.stepInputs, 2).events.empty());
    }

    void importKeepsTheRunThatStillApplies()
    {
        // Llama-3-8B on TP 8 x PP 4 with a 16k sequence, then GPT-2 (12 heads, 12 layers, 1,024 positions).
        RunSpec run = readScenario(base()).run;
        run.parallelism.gpus = 32;
        run.parallelism.tensorParallel = 8;
        run.parallelism.pipelineParallel = 4;
        run.parallelism.zeroStage = 1;
        run.sequenceLength = 16384;
        const ModelSpec gpt2 = findPreset("gpt2")->model;
        const std::vector<std::string> changes = adaptRunToModel(gpt2, run);
        QCOMPARE(run.sequenceLength, Count(1024));
        QCOMPARE(run.parallelism.tensorParallel, Count(1)); // 8 does not divide 12 heads
        QCOMPARE(run.parallelism.pipelineParallel, Count(4)); // 4 stages of 12 layers still apply
        QCOMPARE(run.parallelism.gpus, Count(32));
        QCOMPARE(run.parallelism.zeroStage, 1);
        QCOMPARE(changes.size(), size_t(2));
        QVERIFY(changes[0].rfind("run.sequence_length: 16384 -> 1024", 0) == 0);
        QVERIFY(changes[1].rfind("run.parallelism.tensor_parallel: 8 -> 1", 0) == 0);
        validateRun(gpt2, run);
        // Nothing to change on a model the run suits.
        RunSpec same = readScenario(base()).run;
        QVERIFY(adaptRunToModel(findPreset("llama-3-8b")->model, same).empty());
        // gpt-oss imported over a training run: its training is not modelled, so the run becomes inference.
        const std::string cfg = std::string(VRAMLAB_TEST_DATA_DIR) + "/hf/gpt-oss-20b.json";
        const ModelSpec oss = importHfConfig(parseJsonText(readTextFile(cfg), cfg)).model;
        RunSpec training = readScenario(base()).run;
        QVERIFY(training.mode == Mode::Training);
        const std::vector<std::string> toInference = adaptRunToModel(oss, training);
        QVERIFY(training.mode == Mode::Inference);
        QCOMPARE(toInference.size(), size_t(1));
        QVERIFY(toInference[0].rfind("model.clamped_swiglu: mode training -> inference", 0) == 0);
        validateRun(oss, training);
        // Phi-3.5-MoE likewise: its SparseMixer training is not modelled, its inference is.
        const std::string phi = std::string(VRAMLAB_TEST_DATA_DIR) + "/hf/phi-3.5-moe-instruct.json";
        const ModelSpec moe = importHfConfig(parseJsonText(readTextFile(phi), phi)).model;
        RunSpec train = readScenario(base()).run;
        const std::vector<std::string> phiChanges = adaptRunToModel(moe, train);
        QVERIFY(train.mode == Mode::Inference);
        QCOMPARE(phiChanges.size(), size_t(1));
        QVERIFY(phiChanges[0].rfind("model.moe.sparse_mixer: mode training -> inference", 0) == 0);
        validateRun(moe, train);
    }
};

QTEST_APPLESS_MAIN(TestHostileInput)
#include "tst_hostile_input.moc"
