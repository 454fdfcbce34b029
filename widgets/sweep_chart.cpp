// SPDX-License-Identifier: MIT
#include "sweep_chart.h"

#include "chart_labels.h"
#include "chart_support.h"
#include "plot_theme.h"
#include "qcustomplot_include.h"

#include <QLocale>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

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
    // The hover readout: the nearest swept value's peak, verdict and components.
    setHoverText([this](const QPointF& pixel) {
        return m_plot->axisRect()->rect().contains(pixel.toPoint()) ? pointText(m_plot->xAxis->pixelToCoord(pixel.x()))
                                                                    : QString();
    });
    // Both at the top: the "does not fit" mark's words go under the "up to" note they meet.
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        if (!m_beyondLabel || !m_notFitLabel)
            return;
        m_notFitLabel->position->setCoords(m_notFitLabel->position->key(), m_plot->yAxis->range().upper * 0.96);
        const QRectF beyond = textItemRect(m_beyondLabel);
        const QRectF words = textItemRect(m_notFitLabel);
        if (words.intersects(beyond)) {
            const QPointF at = m_notFitLabel->position->pixelPosition();
            m_notFitLabel->position->setPixelPosition(QPointF(at.x(), at.y() + beyond.bottom() - words.top() + 2));
        }
    });
    setTheme(m_theme);
}

QString SweepChart::pointText(double x) const
{
    const std::vector<SweepPoint>& points = m_series.points;
    if (points.empty())
        return {};
    // The nearest point by distance on the axis as drawn (ratio on a log axis).
    const bool logX = m_series.range.logScale && x > 0;
    const auto distance = [&](const SweepPoint& p) {
        return logX ? std::abs(std::log(double(p.value) / x)) : std::abs(double(p.value) - x);
    };
    const SweepPoint& p = *std::min_element(points.begin(), points.end(),
        [&](const SweepPoint& a, const SweepPoint& b) { return distance(a) < distance(b); });
    QString text = QStringLiteral("<b>%1 %2</b>: peak %3")
                       .arg(m_xLabel.section(QLatin1Char(' '), 0, -2).toHtmlEscaped(),
                           QLocale(QLocale::English).toString(qlonglong(p.value)), bytesText(p.peak));
    if (p.hasVerdict)
        text += p.fits ? QStringLiteral(", fits (%1 free)").arg(bytesText(p.usableBytes - p.peak))
                       : QStringLiteral(", <b>does not fit</b> (%1 over)").arg(bytesText(p.peak - p.usableBytes));
    for (size_t i = kComponentKeys.size(); i-- > 0;)
        if (p.componentBytes[i] > 0)
            text += QStringLiteral("<br>%1: %2")
                        .arg(componentLabel(QString::fromLatin1(kComponentKeys[i])), bytesText(p.componentBytes[i]));
    return text;
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

double SweepChart::axisShare(double value) const
{
    const QCPRange range = m_plot->xAxis->range();
    if (value <= range.lower)
        return 0;
    if (value >= range.upper)
        return 1;
    return m_plot->xAxis->scaleType() == QCPAxis::stLogarithmic
        ? std::log(value / range.lower) / std::log(range.upper / range.lower)
        : (value - range.lower) / (range.upper - range.lower);
}

void SweepChart::rebuild()
{
    m_plot->clearItems();
    m_beyondLabel = m_notFitLabel = nullptr;
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
    // The region around the capacity is what the chart is for: where the curve climbs far
    // past it (activations of long sequences), the axis stops at three times the capacity
    // and says where the curve ends instead of flattening everything near the line.
    double top = yMax * 1.25;
    if (any && any->usableBytes > 0) {
        const double cap = toGiB(any->usableBytes);
        top = std::max(top, cap * 1.25);
        if (std::max(yMax, cap) > 3 * cap) {
            top = 3 * cap;
            auto* beyond = new QCPItemText(m_plot);
            beyond->setPositionAlignment(Qt::AlignTop | Qt::AlignRight);
            beyond->position->setType(QCPItemPosition::ptAxisRectRatio);
            beyond->position->setCoords(1.0, 0.0);
            beyond->setText(QStringLiteral("↑ up to %1 at %2 ")
                                .arg(bytesText(points.back().peak),
                                    QLocale(QLocale::English).toString(qlonglong(points.back().value))));
            beyond->setColor(m_theme.foreground);
            beyond->setFont(m_theme.font(-1));
            m_beyondLabel = beyond;
        }
    }
    if (any && any->usableBytes > 0) {
        const double cap = toGiB(any->usableBytes);
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
                const bool rightOfMark = axisShare(from) < 0.5;
                auto* text = new QCPItemText(m_plot);
                text->setPositionAlignment(Qt::AlignTop | (rightOfMark ? Qt::AlignLeft : Qt::AlignRight));
                text->position->setType(QCPItemPosition::ptPlotCoords);
                text->position->setCoords(std::clamp(from, lo, hi), top * 0.96);
                const QString words = QStringLiteral("does not fit from %1")
                                          .arg(QLocale(QLocale::English).toString(qlonglong(*m_firstNotFitting)));
                text->setText(rightOfMark ? QLatin1Char(' ') + words : words + QLatin1Char(' '));
                text->setColor(m_theme.overflow);
                text->setFont(m_theme.font());
                m_notFitLabel = text;
                break;
            }
        }
    }
    // The scenario's own value: where the other tabs' numbers are.
    if (n > 0 && m_series.current >= points.front().value && m_series.current <= points.back().value) {
        auto* mark = new QCPItemStraightLine(m_plot);
        mark->setPen(QPen(m_theme.foreground, m_theme.lineWidth, Qt::DashDotLine));
        mark->point1->setCoords(double(m_series.current), 0);
        mark->point2->setCoords(double(m_series.current), 1);
        auto* now = new QCPItemText(m_plot);
        now->setPositionAlignment(
            Qt::AlignBottom | (axisShare(double(m_series.current)) < 0.5 ? Qt::AlignLeft : Qt::AlignRight));
        now->position->setType(QCPItemPosition::ptPlotCoords);
        now->position->setCoords(double(m_series.current), top * 0.02);
        now->setText(QStringLiteral(" now: %1 ").arg(QLocale(QLocale::English).toString(qlonglong(m_series.current))));
        now->setColor(m_theme.foreground);
        now->setFont(m_theme.font(-1));
        now->setBrush(m_theme.labelBackdrop());
    }
    m_plot->yAxis->setRange(0, top);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace vramlab
