// SPDX-License-Identifier: MIT
// Published serving-engine startup logs (tests/data/published/serving/*.json) against the
// serving model. Each case has a file in scenarios/ that either pins its scenario and names
// the logged numbers to compare, each with the bound it must stay within (the error the
// model gets today, so a regression fails), or says why the case cannot be pinned.
#include "vramlab/errors.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_model.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>

using namespace vramlab;
using nlohmann::json;

class TstServingPublished : public QObject {
    Q_OBJECT
private slots:
    void everyCaseComparedOrRefused();
};

namespace {

double gibOf(Bytes b)
{
    return static_cast<double>(b) / static_cast<double>(kGiB);
}
double mibOf(Bytes b)
{
    return static_cast<double>(b) / static_cast<double>(kMiB);
}

/// The predicted value named by a case file's "predicted" key.
double predicted(const ServingEstimate& e, const std::string& key)
{
    const ServingRank* k = e.ranks.empty() ? nullptr : &e.limiting();
    auto device = [&](const std::string& name) -> const LlamaCppDevice& {
        for (const LlamaCppDevice& d : e.devices)
            if (d.name == name)
                return d;
        throw std::runtime_error("no device " + name);
    };
    if (key == "gpu_blocks")
        return static_cast<double>(e.gpuBlocks.value_or(0));
    if (key == "cpu_blocks")
        return static_cast<double>(e.cpuBlocks);
    if (key == "kv_cache_tokens")
        return static_cast<double>(e.kvCacheTokens);
    if (key == "kv_cache_gib")
        return gibOf(k->kvCacheBytes);
    if (key == "weights_gib")
        return gibOf(k->weightsBytes);
    if (key == "activation_peak_gib")
        return gibOf(k->activationPeakBytes);
    if (key == "peak_torch_gib")
        return gibOf(k->weightsBytes + k->activationPeakBytes);
    if (key == "max_concurrency")
        return e.maxConcurrency;
    if (key == "k_size_gib")
        return gibOf(checkedMul(e.kvCacheTokens, k->kvBytesPerToken) / 2);
    if (key == "n_ctx_padded")
        return static_cast<double>(e.nCtxPadded);
    if (key == "cuda0_kv_buffer_mib")
        return mibOf(device("CUDA0").kvBufferBytes);
    if (key == "cuda1_kv_buffer_mib")
        return mibOf(device("CUDA1").kvBufferBytes);
    if (key == "kv_self_mib")
        return mibOf(e.kBytes + e.vBytes);
    if (key == "k_mib")
        return mibOf(e.kBytes);
    if (key == "v_mib")
        return mibOf(e.vBytes);
    if (key == "output_buffer_mib")
        return mibOf(e.outputBufferBytes);
    throw std::runtime_error("unknown predicted key " + key);
}

} // namespace

void TstServingPublished::everyCaseComparedOrRefused()
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(VRAMLAB_TEST_DATA_DIR) / "published" / "serving";
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json")
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    QVERIFY(files.size() >= 20);

    int comparedCases = 0, refused = 0, kvCount = 0;
    double kvSum = 0, kvWorst = 0;
    for (const fs::path& f : files) {
        const json c = parseJsonText(readTextFile(f.string()), f.string());
        const std::string id = c.at("id").get<std::string>();
        const fs::path pin = dir / "scenarios" / (id + ".json");
        QVERIFY2(fs::exists(pin),
            qPrintable(QString::fromStdString(id + ": no scenarios/" + id + ".json (compared or refused)")));
        const json p = parseJsonText(readTextFile(pin.string()), pin.string());
        if (p.contains("refused")) {
            QVERIFY(!p.at("refused").get<std::string>().empty());
            qInfo("%-62s refused: %s", id.c_str(), p.at("refused").get<std::string>().c_str());
            ++refused;
            continue;
        }
        QVERIFY(!p.at("pinned").get<std::string>().empty());
        const json& logged = c.at("logged");
        if (p.contains("not_compared"))
            for (auto it = p.at("not_compared").begin(); it != p.at("not_compared").end(); ++it) {
                QVERIFY2(logged.contains(it.key()),
                    qPrintable(QString::fromStdString(id + ": nothing logged as " + it.key())));
                qInfo("%-62s %-24s not compared: %s", id.c_str(), it.key().c_str(),
                    it.value().get<std::string>().c_str());
            }
        for (const json& run : p.at("runs")) {
            const Scenario sc = readScenario(run.at("scenario"));
            // A cache pinned to the log's memory (--kv-cache-memory-bytes) checks the block arithmetic, not the
            // budget: it stays out of the KV-capacity figures.
            const bool kvPinned = sc.run.serving && sc.run.serving->kvCacheMemoryBytes.has_value();
            for (const std::string& w : sc.warnings)
                QVERIFY2(w.find("unknown key") == std::string::npos, qPrintable(QString::fromStdString(id + ": " + w)));
            const ServingEstimate e = servingEstimate(sc.model, sc.run);
            for (const json& cmp : run.at("compare")) {
                const std::string lk = cmp.at("logged").get<std::string>(), pk = cmp.at("predicted").get<std::string>();
                const double bound = cmp.at("bound_percent").get<double>();
                QVERIFY2(logged.contains(lk), qPrintable(QString::fromStdString(id + ": nothing logged as " + lk)));
                double err = 0, want = 0, got = 0;
                if (lk == "startup") {
                    want = 1;
                    got = e.startupFails ? 1 : 0;
                    QCOMPARE(logged.at(lk).get<std::string>(), std::string("failed"));
                    err = e.startupFails ? 0 : 100;
                } else {
                    want = logged.at(lk).get<double>();
                    got = predicted(e, pk);
                    err = want == 0 ? (got == 0 ? 0 : 100) : 100 * (got - want) / std::abs(want);
                }
                qInfo("%-62s %-24s logged %12.4f predicted %12.4f error %+7.2f %% (bound %.1f %%)", id.c_str(),
                    lk.c_str(), want, got, err, bound);
                QVERIFY2(std::abs(err) <= bound,
                    qPrintable(QString::fromStdString(id + " " + lk)
                        + QStringLiteral(": error %1 % beyond %2 %").arg(err, 0, 'f', 2).arg(bound)));
                if (lk == "gpu_blocks" || lk.rfind("gpu_blocks_rule", 0) == 0 || lk == "kv_cache_tokens"
                    || lk.find("kv_buffer") != std::string::npos || lk == "kv_self_mib") {
                    if (want > 0 && !kvPinned) {
                        ++kvCount;
                        kvSum += std::abs(err);
                        kvWorst = std::max(kvWorst, std::abs(err));
                    }
                }
            }
        }
        ++comparedCases;
    }
    qInfo("%d cases compared, %d refused; KV capacity (blocks, tokens, llama.cpp KV buffers): %d numbers, mean |error| "
          "%.2f %%, worst %.2f %%",
        comparedCases, refused, kvCount, kvSum / std::max(1, kvCount), kvWorst);
    QCOMPARE(comparedCases + refused, static_cast<int>(files.size()));
    QVERIFY(comparedCases >= 14);
}

QTEST_APPLESS_MAIN(TstServingPublished)
#include "tst_serving_published.moc"
