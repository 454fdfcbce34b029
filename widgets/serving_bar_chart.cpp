// SPDX-License-Identifier: MIT
#include "serving_bar_chart.h"

#include "chart_support.h"
#include "plot_theme.h"
#include "qcustomplot_include.h"

#include <QFontMetrics>
#include <QToolTip>

#include <algorithm>

namespace vramlab {

ServingBarChart::ServingBarChart(QWidget* parent)
    : ChartWidget(parent)
{
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->yAxis->setLabel(QStringLiteral("GiB per GPU"));
    m_plot->xAxis->grid()->setVisible(false);
    m_plot->legend->setVisible(true);
    placeLegendBelow(m_plot);
    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const double x = m_plot->xAxis->pixelToCoord(e->position().x());
        const double y = m_plot->yAxis->pixelToCoord(e->position().y());
        const int bar = qRound(x) - 1;
        QString tip;
        if (bar >= 0 && bar < int(m_chart.bars.size()) && std::abs(x - (bar + 1)) <= 0.3) {
            double base = 0;
            for (const ServingSegment& s : m_chart.bars[size_t(bar)].segments) {
                const double top = base + toGiB(s.bytes);
                if (y >= base && y < top)
                    tip = QStringLiteral("%1: %2 (%3 bytes)")
                              .arg(QString::fromStdString(s.label), bytesText(s.bytes),
                                  QLocale(QLocale::English).toString(qlonglong(s.bytes)));
                base = top;
            }
        }
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), tip, m_plot);
    });
    setTheme(m_theme);
}

void ServingBarChart::setChart(ServingBudgetChart chart)
{
    m_chart = std::move(chart);
    QStringList keys;
    if (!m_chart.bars.empty())
        for (const ServingSegment& s : m_chart.bars.front().segments)
            keys << QString::fromStdString(s.key);
    if (keys != m_keys) { // another engine: other segments
        for (QCPBars* b : std::as_const(m_bars))
            m_plot->removePlottable(b);
        m_bars.clear();
        m_keys = keys;
        QCPBars* below = nullptr;
        for (const ServingSegment& s :
            m_chart.bars.empty() ? std::vector<ServingSegment>() : m_chart.bars.front().segments) {
            auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
            bars->setName(QString::fromStdString(s.label));
            bars->setWidth(0.5);
            bars->setStackingGap(0);
            if (below)
                bars->moveAbove(below);
            below = bars;
            m_bars << bars;
        }
        recolour();
        fitLegendColumns(m_plot, width(), m_theme); // the new names decide the columns
    }
    rebuild();
}

void ServingBarChart::resizeEvent(QResizeEvent* event)
{
    ChartWidget::resizeEvent(event);
    rebuild(); // the legend's columns and whether the two lines' labels fit apart follow the size
}

double ServingBarChart::plottedGiB(int bar, const QString& key) const
{
    const int i = int(m_keys.indexOf(key));
    if (i < 0)
        return 0.0;
    auto it = m_bars[i]->data()->findBegin(bar + 1, false);
    if (it != m_bars[i]->data()->constEnd() && qFuzzyCompare(it->key, double(bar + 1)))
        return it->value;
    return 0.0;
}

void ServingBarChart::recolour()
{
    if (m_chart.bars.empty())
        return;
    const std::vector<ServingSegment>& segments = m_chart.bars.front().segments;
    for (int i = 0; i < m_bars.size() && i < int(segments.size()); ++i) {
        if (segments[size_t(i)].key == "unused") { // free memory: an outline, not a component
            m_bars[i]->setBrush(Qt::NoBrush);
            m_bars[i]->setPen(QPen(m_theme.grid.darker(130), m_theme.lineWidth, Qt::DashLine));
            continue;
        }
        m_bars[i]->setBrush(PlotTheme::roleColor(segments[size_t(i)].colour));
        m_bars[i]->setPen(QPen(m_theme.background, m_theme.lineWidth > 2 ? 2 : 1));
    }
}

void ServingBarChart::rebuild()
{
    m_plot->clearItems();
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double yMax = std::max(1.0, toGiB(m_chart.gpuBytes));
    for (int i = 0; i < m_bars.size(); ++i) {
        QVector<double> keys, values;
        for (size_t b = 0; b < m_chart.bars.size(); ++b) {
            const std::vector<ServingSegment>& segs = m_chart.bars[b].segments;
            keys << double(b + 1);
            values << (size_t(i) < segs.size() ? toGiB(segs[size_t(i)].bytes) : 0.0);
        }
        m_bars[i]->setData(keys, values, true);
        // A segment this engine leaves empty (SGLang's activation peak) takes no legend row.
        if (std::any_of(values.begin(), values.end(), [](double v) { return v > 0; }))
            m_bars[i]->addToLegend();
        else
            m_bars[i]->removeFromLegend();
    }
    const int n = int(m_chart.bars.size());
    for (int b = 0; b < n; ++b) {
        const ServingBar& bar = m_chart.bars[size_t(b)];
        // The total under the bar's name: above it, it would meet the budget lines' labels.
        ticker->addTick(
            b + 1, QStringLiteral("%1\n%2 used").arg(QString::fromStdString(bar.label), bytesText(bar.usedBytes())));
        yMax = std::max(yMax, toGiB(bar.usedBytes()));
        if (bar.capacityBytes && bar.usedBytes() > *bar.capacityBytes) { // llama.cpp's split beyond a GPU
            auto* over = new QCPItemText(m_plot);
            over->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
            over->position->setCoords(b + 1, toGiB(bar.usedBytes()));
            over->setText(QStringLiteral("%1 over").arg(bytesText(bar.usedBytes() - *bar.capacityBytes)));
            over->setColor(m_theme.overflow);
            over->setFont(m_theme.font(1));
        }
    }
    auto line = [&](double gib, const QString& text, const QPen& pen, Qt::Alignment align) {
        auto* l = new QCPItemStraightLine(m_plot);
        l->setPen(pen);
        l->point1->setCoords(0, gib);
        l->point2->setCoords(1, gib);
        if (text.isEmpty())
            return;
        auto* t = new QCPItemText(m_plot);
        t->setPositionAlignment(align | Qt::AlignLeft);
        t->position->setCoords(0.45, gib);
        t->setText(text);
        t->setColor(m_theme.foreground);
        t->setFont(m_theme.font());
        t->setBrush(m_theme.background); // readable where it crosses a bar
        t->setPadding(QMargins(2, 1, 2, 1));
    };
    // Both labels stand above their lines (below, the budget's would hide the cache's top); lines
    // too close for two labels share the upper one.
    QString gpuText = QStringLiteral(" GPU memory %1").arg(bytesText(m_chart.gpuBytes));
    const double rectPx = m_plot->axisRect()->height() > 0 ? m_plot->axisRect()->height() : 300;
    const int lineHeightPx = QFontMetrics(m_theme.font()).height();
    int gpuLabelLines = 1;
    if (m_chart.budgetBytes) {
        const QString budgetText = QStringLiteral(" ") + QString::fromStdString(m_chart.budgetLabel);
        const double gapPx = toGiB(m_chart.gpuBytes - *m_chart.budgetBytes) / (yMax * 1.15) * rectPx;
        const bool close = gapPx < lineHeightPx * 1.3;
        if (close) {
            gpuText += QStringLiteral("\n") + budgetText;
            gpuLabelLines = 2;
        }
        line(toGiB(*m_chart.budgetBytes), close ? QString() : budgetText,
            QPen(m_theme.overflow, m_theme.lineWidth, Qt::DashDotLine), Qt::AlignBottom);
    }
    if (m_chart.gpuBytes > 0)
        line(
            toGiB(m_chart.gpuBytes), gpuText, QPen(m_theme.capacity, m_theme.lineWidth, Qt::DashLine), Qt::AlignBottom);
    // As many legend columns as the measured names fit: a guess of 13 characters a column cut
    // "Activation peak" and "Unused margin" at the Serving tab's narrowest (beside a lesson).
    fitLegendColumns(m_plot, width(), m_theme);
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setRange(0.4, double(std::max(1, n)) + 0.6);
    // Room above the GPU line for its label: two lines where the budget's joins it would otherwise leave the top one
    // outside a short plot (the Serving tab at 1280x720).
    double yTop = yMax * 1.15;
    const double labelPx = gpuLabelLines * lineHeightPx + 6;
    if (m_chart.gpuBytes > 0 && labelPx < rectPx * 0.5)
        yTop = std::max(yTop, toGiB(m_chart.gpuBytes) / (1.0 - labelPx / rectPx));
    m_plot->yAxis->setRange(0, yTop);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace vramlab
