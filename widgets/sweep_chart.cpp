// SPDX-License-Identifier: MIT
#include "sweep_chart.h"

#include "chart_support.h"
#include "plot_theme.h"
#include "qcustomplot_include.h"

#include <QVBoxLayout>

namespace vramlab {

SweepChart::SweepChart(QWidget* parent)
    : ChartWidget(parent)
{
    QCPGraph* below = nullptr;
    for (const char* key : kComponentKeys) {
        QCPGraph* g = m_plot->addGraph();
        g->setName(componentLabel(QString::fromLatin1(key)));
        if (below)
            g->setChannelFillGraph(below); // fill down to the previous cumulative curve
        below = g;
        m_graphs << g;
    }
    m_peak = m_plot->addGraph();
    m_peak->setName(QStringLiteral("Peak of the simulated step"));
    m_plot->yAxis->setLabel(QStringLiteral("GiB per GPU"));
    m_plot->legend->setVisible(true);
    placeLegendBelow(m_plot);
    setTheme(m_theme);
}

void SweepChart::recolour()
{
    for (int i = 0; i < m_graphs.size(); ++i) {
        const QColor c = PlotTheme::componentColor(QString::fromLatin1(kComponentKeys[size_t(i)]));
        m_graphs[i]->setPen(QPen(c.darker(115), 1));
        QColor fill = c;
        fill.setAlpha(220);
        m_graphs[i]->setBrush(fill);
    }
    m_peak->setPen(QPen(m_theme.foreground, m_theme.lineWidth, Qt::DotLine));
}

void SweepChart::setSeries(SweepSeries series, const QString& xLabel)
{
    m_series = std::move(series);
    m_xLabel = xLabel;
    rebuild();
}

void SweepChart::rebuild()
{
    m_plot->clearItems();
    m_firstNotFitting.reset();
    const std::vector<SweepPoint>& points = m_series.points;
    const int n = int(points.size());
    QVector<double> xs(n);
    QVector<double> cumulative(n, 0.0);
    double yMax = 1;
    for (int i = 0; i < n; ++i)
        xs[i] = double(points[size_t(i)].value);
    for (int g = 0; g < m_graphs.size(); ++g) {
        for (int i = 0; i < n; ++i)
            cumulative[i] += toGiB(points[size_t(i)].bytesOf(kComponentKeys[size_t(g)]));
        m_graphs[g]->setData(xs, cumulative, true);
    }
    QVector<double> peaks(n);
    bool peakDiffers = false;
    for (int i = 0; i < n; ++i) {
        const SweepPoint& r = points[size_t(i)];
        peaks[i] = toGiB(r.peak);
        peakDiffers = peakDiffers || r.peak != r.total;
        yMax = std::max(yMax, peaks[i]);
    }
    // The fit verdict uses the simulated step's peak: draw it wherever it differs from the stacked sum.
    m_peak->setData(xs, peaks, true);
    m_peak->setVisible(peakDiffers);
    if (peakDiffers)
        m_peak->addToLegend();
    else
        m_peak->removeFromLegend();

    m_plot->xAxis->setLabel(m_xLabel);
    if (m_series.range.logScale) {
        m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
        QSharedPointer<QCPAxisTickerLog> log(new QCPAxisTickerLog);
        log->setLogBase(2);
        log->setSubTickCount(0);
        m_plot->xAxis->setTicker(log);
        m_plot->xAxis->setNumberFormat(QStringLiteral("f"));
        m_plot->xAxis->setNumberPrecision(0);
    } else {
        m_plot->xAxis->setScaleType(QCPAxis::stLinear);
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
    if (n > 0)
        m_plot->xAxis->setRange(xs.front(), xs.back());

    const SweepPoint* any = n > 0 ? &points.front() : nullptr;
    if (any && any->usableBytes > 0) {
        const double cap = toGiB(any->usableBytes);
        yMax = std::max(yMax, cap);
        auto* line = new QCPItemStraightLine(m_plot);
        line->setPen(QPen(m_theme.capacity, m_theme.lineWidth, Qt::DashLine));
        line->point1->setCoords(xs.front(), cap);
        line->point2->setCoords(xs.back(), cap);
        auto* capLabel = new QCPItemText(m_plot);
        capLabel->setPositionAlignment(Qt::AlignBottom | Qt::AlignLeft);
        capLabel->position->setCoords(xs.front(), cap);
        capLabel->setText(QStringLiteral(" GPU: %1 usable").arg(bytesText(any->usableBytes)));
        capLabel->setColor(m_theme.foreground);
        capLabel->setFont(m_theme.font(-1));
        for (const SweepPoint& p : points) {
            if (!p.fits) {
                m_firstNotFitting = m_series.boundary.value_or(p.value);
                auto* mark = new QCPItemStraightLine(m_plot);
                mark->setPen(QPen(m_theme.overflow, m_theme.lineWidth));
                mark->point1->setCoords(double(*m_firstNotFitting), 0);
                mark->point2->setCoords(double(*m_firstNotFitting), 1);
                // Written on the side of the mark with room: left of it in the right half of
                // the range, right of it in the left half (issue 16: never off the plot). A
                // mark before the first value (nothing fits) is written from the left edge.
                const double from = double(*m_firstNotFitting), lo = xs.front(), hi = xs.back();
                const bool logX = m_plot->xAxis->scaleType() == QCPAxis::stLogarithmic;
                const double share = from <= lo ? 0.0
                    : from >= hi                ? 1.0
                    : logX                      ? std::log(from / lo) / std::log(hi / lo)
                                                : (from - lo) / (hi - lo);
                const bool rightOfMark = share < 0.5;
                auto* text = new QCPItemText(m_plot);
                text->setPositionAlignment(Qt::AlignTop | (rightOfMark ? Qt::AlignLeft : Qt::AlignRight));
                text->position->setType(QCPItemPosition::ptPlotCoords);
                text->position->setCoords(std::clamp(from, lo, hi), yMax * 1.2);
                const QString words = QStringLiteral("does not fit from %1")
                                          .arg(QLocale(QLocale::English).toString(qlonglong(*m_firstNotFitting)));
                text->setText(rightOfMark ? QLatin1Char(' ') + words : words + QLatin1Char(' '));
                text->setColor(m_theme.overflow);
                text->setFont(m_theme.font());
                break;
            }
        }
    }
    m_plot->yAxis->setRange(0, yMax * 1.25);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace vramlab
