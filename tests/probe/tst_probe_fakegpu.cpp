// SPDX-License-Identifier: MIT
// vramlab-probe's fit and bench end to end over a fake CUDA runtime (tests/probe/
// fake_cudart.cpp: an imaginary 80 GiB H100, 512 MiB context, 2 MiB granularity). The
// bytes it reports are checked against the core's plan; the fake runtime exits 99 when a
// buffer is left allocated, so every run also checks that everything was freed.
#include "../cli/program_run.h"
#include "vramlab/probe_plan.h"
#include "vramlab/probe_report.h"
#include "vramlab/scenario_io.h"

#include <QProcessEnvironment>
#include <QtTest>

#include <map>

using namespace vramlab;
using vramlab::test::Run;

namespace {

struct Output {
    Run run;
    std::vector<ProbeProgress> progress;
    std::optional<ProbeReport> report;
};

/// Runs the fake-GPU probe with `env` added; reads its JSON lines.
Output probe(const QStringList& args, const QStringList& env = {})
{
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    for (const QString& kv : env)
        e.insert(kv.section('=', 0, 0), kv.section('=', 1));
    p.setProcessEnvironment(e);
    p.start(QStringLiteral(VRAMLAB_PROBE_FAKE), args);
    p.waitForFinished(60000);
    Output out { { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
                     p.readAllStandardError() },
        {}, {} };
    for (const QByteArray& line : out.run.out.split('\n')) {
        if (line.isEmpty())
            continue;
        const nlohmann::json doc = nlohmann::json::parse(line.toStdString());
        if (auto pr = readProbeProgress(doc))
            out.progress.push_back(*pr);
        else
            out.report = readProbeReport(doc, "stdout");
    }
    return out;
}

std::string scenarioPath(const char* relative)
{
    return vramlab::test::dataFile(relative).toStdString();
}
QString resource(const char* name)
{
    return QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/") + name;
}

const ProbeFitComponent* row(const ProbeFit& fit, const std::string& key)
{
    for (const ProbeFitComponent& c : fit.components)
        if (c.key == key)
            return &c;
    return nullptr;
}

constexpr Bytes kGranularity = 2 * kMiB;

} // namespace

class TestProbeFakeGpu : public QObject {
    Q_OBJECT
private slots:
    void info()
    {
        const Output o = probe({ "info", "--json" });
        QCOMPARE(o.run.code, 0);
        QVERIFY(o.report);
        QCOMPARE(o.report->device.name, std::string("NVIDIA H100 80GB HBM3 (fake)"));
        QCOMPARE(o.report->device.catalogGpu, std::string("h100-sxm-80gb"));
        QCOMPARE(o.report->device.totalBytes, 80 * kGiB);
        QCOMPARE(o.report->device.freeBytes, 80 * kGiB - 512 * kMiB);
        QCOMPARE(o.report->device.smClockMHz, 1980);
    }

    void fitMeasuresEveryPlannedBuffer()
    {
        const QString file = vramlab::test::dataFile("scenarios/llama-tiny.json");
        const Output o = probe({ "fit", file, "--json" });
        QVERIFY2(o.run.code == 0, o.run.err.constData());
        QVERIFY(o.report && o.report->fit);
        const ProbeFit& fit = *o.report->fit;
        QVERIFY(fit.fits);
        QVERIFY(fit.stoppedAt.empty());
        QCOMPARE(fit.granularityBytes, kGranularity);
        QCOMPARE(fit.contextBytes, 512 * kMiB);
        QCOMPARE(fit.safetyMarginBytes, 80 * kGiB / 50);

        // What the fake device took: each buffer rounded up to 2 MiB, per component.
        const ProbeAllocationPlan plan = probeAllocationPlan(loadScenarioFile(file.toStdString()));
        std::map<std::string, Bytes> requested, taken;
        std::map<std::string, Count> buffers;
        for (const ProbeBuffer& b : plan.buffers) {
            requested[std::string(b.component)] += b.bytes;
            taken[std::string(b.component)] += roundUp(b.bytes, kGranularity);
            ++buffers[std::string(b.component)];
        }
        QCOMPARE(fit.components.size(), requested.size() + 1); // + the context
        QCOMPARE(fit.components[0].key, std::string("cuda_context"));
        QCOMPARE(fit.components[0].measuredBytes, 512 * kMiB);
        QCOMPARE(fit.components[0].predictedBytes, plan.report.overheadParts[0].bytes);
        for (const auto& [key, bytes] : requested) {
            const ProbeFitComponent* c = row(fit, key);
            QVERIFY2(c, key.c_str());
            QCOMPARE(c->requestedBytes, bytes);
            QCOMPARE(c->measuredBytes, taken[key]);
            QCOMPARE(c->buffers, buffers[key]);
            QCOMPARE(c->allocatedBuffers, buffers[key]);
        }
        QCOMPARE(row(fit, "weights")->predictedBytes, plan.report.bytesOf("weights"));
        QCOMPARE(row(fit, "weights")->label, std::string("Weights"));
        QCOMPARE(row(fit, "workspace")->label, std::string("cuBLAS workspace"));
        QCOMPARE(row(fit, "activations")->predictedBytes, plan.report.bytesOf("activations"));
        // Progress: the first line starts at 0, each component announces itself.
        QVERIFY(!o.progress.empty());
        QCOMPARE(o.progress.front().phase, std::string("allocating weights"));
        QCOMPARE(o.progress.front().total, Count(plan.buffers.size()));
        QCOMPARE(o.progress.back().phase, std::string("freeing"));
    }

    void fitStopsAtTheSafetyMarginAndFreesEverything()
    {
        // Llama-3-8B on 8 GPUs needs about 45 GiB per GPU: a 16 GiB device stops it.
        const Output o
            = probe({ "fit", resource("llama-3-8b-8xh100.json"), "--json" }, { "VRAMLAB_FAKE_GPU_BYTES=17179869184" });
        QVERIFY2(o.run.code == 0, o.run.err.constData()); // 99 would mean a buffer was left allocated
        const ProbeFit& fit = *o.report->fit;
        QVERIFY(!fit.fits);
        QVERIFY(fit.predictedFits); // the scenario's own GPU is an 80 GB H100
        QVERIFY2(
            QString::fromStdString(fit.stoppedAt).endsWith("would enter the safety margin"), fit.stoppedAt.c_str());
        QCOMPARE(fit.safetyMarginBytes, 512 * kMiB); // 2 % of 16 GiB is less
        Bytes measured = 0;
        Count allocated = 0, planned = 0;
        for (const ProbeFitComponent& c : fit.components) {
            if (c.key != "cuda_context")
                measured += c.measuredBytes;
            allocated += c.allocatedBuffers;
            planned += c.buffers;
        }
        QVERIFY(allocated < planned);
        // Filled up to the margin: less than one more buffer's worth short of it.
        QVERIFY(measured <= 16 * kGiB - 512 * kMiB - 512 * kMiB);
        QVERIFY(measured > 16 * kGiB - 512 * kMiB - 512 * kMiB - 2 * kGiB);
    }

    void testOomGoesPastTheMargin()
    {
        const Output o = probe({ "fit", resource("llama-3-8b-8xh100.json"), "--json", "--test-oom" },
            { "VRAMLAB_FAKE_GPU_BYTES=17179869184" });
        QVERIFY2(o.run.code == 0, o.run.err.constData());
        QVERIFY(o.report->fit->oomTest);
        QVERIFY2(QString::fromStdString(o.report->fit->stoppedAt).endsWith("cudaMalloc out of memory"),
            o.report->fit->stoppedAt.c_str());
    }

    void benchWithoutCublasStillTimesTheCopy()
    {
        const Output o = probe({ "bench", vramlab::test::dataFile("scenarios/llama-tiny.json"), "--json" },
            { "VRAMLAB_PROBE_CUBLASLT=/nonexistent/libcublasLt.so" });
        QCOMPARE(o.run.code, 3);
        QVERIFY2(o.run.err.startsWith(
                     "vramlab-probe: GEMMs could not be timed: cuBLASLt not found (/nonexistent/libcublasLt.so)"),
            o.run.err.constData());
        QCOMPARE(o.run.err.count('\n'), 1);
        QVERIFY(o.report && o.report->bench);
        const ProbeBench& b = *o.report->bench;
        QVERIFY(b.gemms.empty());
        QCOMPARE(b.dtype, std::string("bf16"));
        QCOMPARE(b.peakTflops, 989.4);
        QCOMPARE(b.assumedMfu, 0.4);
        QCOMPARE(b.copyBytes, kGiB);
        // The fake events say 0.1 ms a launch: 1 GiB / 0.1 ms.
        QCOMPARE(b.copyGBs, double(kGiB) / 1e-4 / 1e9);
        QCOMPARE(o.progress.back().phase, std::string("timing device-to-device copy"));
    }
};

QTEST_GUILESS_MAIN(TestProbeFakeGpu)
#include "tst_probe_fakegpu.moc"
