// SPDX-License-Identifier: MIT
// Published GPU peak measurements (tests/data/published/training/*.json) against the
// estimate: every case is either modelled, and must land within its stated tolerance,
// or refused by the reader naming the key that is not modelled yet.
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_io.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>

using namespace vramlab;
using nlohmann::json;

class TstPublished : public QObject {
    Q_OBJECT
private slots:
    void everyCaseModelledOrRefused();
};

void TstPublished::everyCaseModelledOrRefused()
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(VRAMLAB_TEST_DATA_DIR) / "published" / "training";
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json")
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    QVERIFY(files.size() >= 46);

    int modelled = 0, refused = 0;
    double sumAbs = 0, worstAbs = 0;
    for (const fs::path& f : files) {
        const json c = parseJsonText(readTextFile(f.string()), f.string());
        const std::string id = c.at("id").get<std::string>();
        const json& meas = c.at("measured");
        const std::string kind = meas.at("kind").get<std::string>();
        const double unit = meas.at("unit").get<std::string>() == "GB" ? 1e9 : 1073741824.0;
        const double measured = meas.at("value").get<double>() * unit;

        if (c.contains("expected_refusal")) {
            // A key that changes memory but is not modelled: the reader must refuse it by name.
            const std::string key = c.at("expected_refusal").get<std::string>();
            try {
                const Scenario sc = readScenario(c.at("scenario"));
                (void)estimate(sc);
                QFAIL(qPrintable(
                    QString::fromStdString(id + ": expected a refusal naming " + key + ", got an estimate")));
            } catch (const InputError& e) {
                QVERIFY2(e.keyPath() == key,
                    qPrintable(QString::fromStdString(id + ": refused on " + e.keyPath() + ", expected " + key)));
                qInfo("%-80s refused: %s", id.c_str(), e.what());
            }
            ++refused;
            continue;
        }

        QVERIFY2(
            c.contains("tolerance"), qPrintable(QString::fromStdString(id + ": no tolerance and no expected_refusal")));
        const double tol = c.at("tolerance").at("relative").get<double>();
        QVERIFY(!c.at("tolerance").at("reason").get<std::string>().empty());
        const Scenario sc = readScenario(c.at("scenario"));
        for (const std::string& w : sc.warnings) // nothing of the case may be silently ignored
            QVERIFY2(w.find("unknown key") == std::string::npos, qPrintable(QString::fromStdString(id + ": " + w)));
        const Report rep = estimate(sc);
        // Allocator counters (allocated, active, reserved) never include the CUDA context.
        const double predicted = static_cast<double>(rep.peak - sc.run.overheads.cudaContextBytes);
        const double err = (predicted - measured) / measured;
        qInfo("%-60s %-9s measured %8.2f predicted %8.2f %s  error %+6.1f %% (tolerance %.0f %%)", id.c_str(),
            kind.c_str(), measured / unit, predicted / unit, unit == 1e9 ? "GB " : "GiB", 100 * err, 100 * tol);
        QVERIFY2(std::abs(err) <= tol,
            qPrintable(QString::fromStdString(id)
                + QStringLiteral(": error %1 % beyond %2 %").arg(100 * err, 0, 'f', 1).arg(100 * tol, 0, 'f', 0)));
        ++modelled;
        sumAbs += std::abs(err);
        worstAbs = std::max(worstAbs, std::abs(err));
    }
    qInfo("%d modelled (mean |error| %.1f %%, worst %.1f %%), %d refused", modelled,
        100 * sumAbs / std::max(1, modelled), 100 * worstAbs, refused);
    QVERIFY(modelled > 0);
}

QTEST_APPLESS_MAIN(TstPublished)
#include "tst_published.moc"
