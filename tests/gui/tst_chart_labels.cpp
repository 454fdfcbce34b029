// SPDX-License-Identifier: MIT
// Slide-quality charts (issue 16): no label overprints another or runs off the plot, for
// every chart kind, at 1280x720 and 1920x1080, on scenarios that fit, do not fit, and peak
// within a few percent of the GPU's usable memory (where the peak and capacity labels meet).
#include "chart_export.h"
#include "chart_labels.h"
#include "chart_support.h"
#include "qcustomplot_include.h"
#include "sweep_chart.h"
#include "vramlab/chart_data.h"
#include "vramlab/estimator.h"
#include "vramlab/scenario_io.h"

#include <QtTest>

#include <nlohmann/json.hpp>

Q_DECLARE_METATYPE(vramlab::Scenario)

using namespace vramlab;

namespace {

Scenario fitting()
{
    return loadScenarioFile(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-3-8b-8xh100.json");
}

Scenario over()
{
    Scenario s = fitting();
    s.run.parallelism = {}; // one GPU: far over
    return s;
}

/// The default run on a custom GPU sized so the peak is `share` of its usable memory.
Scenario nearCapacity(double share)
{
    Scenario s = fitting();
    const Report r = estimate(s);
    GpuSpec gpu = *s.run.gpu;
    gpu.displayName = "Custom GPU";
    gpu.memoryBytes = Bytes(double(r.peak) / share / (1 - s.run.safetyMargin));
    s.run.gpu = gpu;
    return s;
}

QString describe(const QCPItemText* item, const QRectF& r)
{
    return QStringLiteral("\"%1\" at %2,%3 %4x%5")
        .arg(item->text().replace(QLatin1Char('\n'), QLatin1String(" / ")))
        .arg(r.x())
        .arg(r.y())
        .arg(r.width())
        .arg(r.height());
}

} // namespace

class TestChartLabels : public QObject {
    Q_OBJECT
private slots:
    void labelsStayApart_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<Scenario>("scenario");
        QTest::addColumn<QSize>("size");
        const std::vector<std::pair<const char*, Scenario>> scenarios {
            { "fits", fitting() },
            { "over", over() },
            { "at 97 %", nearCapacity(0.97) },
            { "at 101 %", nearCapacity(1.01) },
        };
        for (const ChartKind kind : { ChartKind::Breakdown, ChartKind::SweepSequence, ChartKind::SweepBatch,
                 ChartKind::CompareMethods, ChartKind::CompareZero, ChartKind::Timeline })
            for (const auto& [name, sc] : scenarios)
                // Slides at 1280x720 and 1920x1080, and the chart's share of a 1280x720 window.
                for (const QSize size : { QSize(1280, 720), QSize(1920, 1080), QSize(460, 420) })
                    QTest::newRow(qPrintable(QStringLiteral("%1 %2 %3x%4")
                                                 .arg(chartName(kind), QString::fromLatin1(name))
                                                 .arg(size.width())
                                                 .arg(size.height())))
                        << int(kind) << sc << size;
    }

    void labelsStayApart()
    {
        QFETCH(int, kind);
        QFETCH(Scenario, scenario);
        QFETCH(QSize, size);
        const ExportedChart chart(ChartKind(kind), { scenario }, {}, size, exportTheme(false, size));
        QCustomPlot* plot = chart.plot();
        QVERIFY(estimate(scenario).fits
            == (QString::fromLatin1(QTest::currentDataTag()).contains(QLatin1String("fits"))
                || QString::fromLatin1(QTest::currentDataTag()).contains(QLatin1String("97"))));
        plot->setViewport(QRect(QPoint(0, 0), size)); // as the export lays it out (toPixmap, toPainter)
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const QRectF canvas(plot->viewport());
        QVector<QPair<const QCPItemText*, QRectF>> texts;
        for (int i = 0; i < plot->itemCount(); ++i)
            if (const auto* t = qobject_cast<const QCPItemText*>(plot->item(i)); t && t->visible())
                if (!t->text().trimmed().isEmpty())
                    texts.push_back({ t, textItemRect(t) });
        QVERIFY(!texts.isEmpty());
        for (const auto& [item, rect] : texts) {
            // Inside what clips it: the axis rect, or the whole picture.
            const QRectF clip = item->clipToAxisRect() && item->clipAxisRect()
                ? QRectF(item->clipAxisRect()->rect()).adjusted(-1, -1, 1, 1)
                : canvas;
            QVERIFY2(clip.contains(rect), qPrintable(describe(item, rect) + QStringLiteral(" runs out of its area")));
            if (plot->legend && plot->legend->visible() && plot->axisRect()->insetLayout()->elementCount() > 0
                && plot->legend->layout() == plot->axisRect()->insetLayout())
                QVERIFY2(!rect.intersects(plot->legend->outerRect()),
                    qPrintable(describe(item, rect) + QStringLiteral(" covers the legend")));
        }
        for (qsizetype a = 0; a < texts.size(); ++a)
            for (qsizetype b = a + 1; b < texts.size(); ++b)
                QVERIFY2(!texts[a].second.intersects(texts[b].second),
                    qPrintable(describe(texts[a].first, texts[a].second) + QStringLiteral(" overprints ")
                        + describe(texts[b].first, texts[b].second)));
    }

    // The sweep marks the scenario's own value, frames the region around the capacity, and
    // reads out the nearest point under the mouse.
    void sweepMarksTheScenarioAndReadsOut()
    {
        const Scenario sc = fitting();
        SweepChart chart;
        SweepSeries series = sweepSeries(sc, SweepParam::SequenceLength);
        const SweepPoint first = series.points.front(), last = series.points.back();
        QCOMPARE(series.current, Count(4096));
        chart.setSeries(std::move(series), QStringLiteral("sequence length (tokens)"));
        chart.resize(800, 500);
        chart.plot()->replot(QCustomPlot::rpImmediateRefresh);
        QStringList texts;
        for (int i = 0; i < chart.plot()->itemCount(); ++i)
            if (const auto* t = qobject_cast<const QCPItemText*>(chart.plot()->item(i)))
                texts << t->text().trimmed();
        QVERIFY2(texts.contains(QStringLiteral("now: 4,096")), qPrintable(texts.join(QLatin1Char('|'))));
        // The last point's peak is far past the capacity: the axis stops at 3x and says so.
        const double cap = double(first.usableBytes) / double(1ull << 30);
        QVERIFY(double(last.peak) / double(1ull << 30) > 3 * cap);
        QCOMPARE(chart.plot()->yAxis->range().upper, 3 * cap);
        QVERIFY(
            texts.contains(QStringLiteral("↑ up to %1 at %2")
                               .arg(bytesText(last.peak), QLocale(QLocale::English).toString(qlonglong(last.value)))));
        const QString tip = chart.pointText(double(first.value) * 1.01);
        QVERIFY2(
            tip.startsWith(QStringLiteral("<b>sequence length %1</b>: peak %2, fits")
                               .arg(QLocale(QLocale::English).toString(qlonglong(first.value)), bytesText(first.peak))),
            qPrintable(tip));
        QVERIFY(chart.pointText(double(last.value)).contains(QStringLiteral("does not fit")));
    }
};

QTEST_MAIN(TestChartLabels)
#include "tst_chart_labels.moc"
