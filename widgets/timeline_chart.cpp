// SPDX-License-Identifier: MIT
#include "timeline_chart.h"

#include "chart_labels.h"
#include "chart_support.h"
#include "qcustomplot_include.h"

namespace vramlab {

namespace {

QString categoryKey(int c)
{
    return QString::fromLatin1(timelineCategoryKey(static_cast<TimelineCategory>(c)));
}

} // namespace

TimelineChart::TimelineChart(QWidget* parent)
    : ChartWidget(parent)
{
    QCPGraph* below = nullptr;
    for (int c = 0; c < kTimelineCategories; ++c) {
        QCPGraph* g = m_plot->addGraph();
        g->setName(QString::fromLatin1(timelineCategoryLabel(static_cast<TimelineCategory>(c))));
        g->setLineStyle(QCPGraph::lsStepLeft); // memory changes at each event, then holds
        // Steps are vertical and horizontal edges: antialiasing gains nothing there, and an
        // antialiased fill of a polygon with thousands of corners dominated each redraw.
        g->setAntialiasedFill(false);
        if (below)
            g->setChannelFillGraph(below);
        below = g;
        m_graphs << g;
    }
    m_plot->yAxis->setLabel(QStringLiteral("GiB per GPU"));
    m_plot->xAxis->setLabel(QStringLiteral("events of the step (allocations and frees, in order)"));
    m_plot->legend->setVisible(true);
    placeLegendBelow(m_plot);
    setHoverText([this](const QPointF& pixel) {
        return m_plot->axisRect()->rect().contains(pixel.toPoint())
            ? eventText(int(std::floor(m_plot->xAxis->pixelToCoord(pixel.x()))))
            : QString();
    });
    // Near capacity the peak's label meets the capacity label: that one goes under the line.
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        if (!m_capacityLabel || !m_peakLabel)
            return;
        m_capacityLabel->setPositionAlignment(Qt::AlignBottom | Qt::AlignLeft);
        if (textItemRect(m_capacityLabel).intersects(textItemRect(m_peakLabel)))
            m_capacityLabel->setPositionAlignment(Qt::AlignTop | Qt::AlignLeft);
    });
    setTheme(m_theme);
}

void TimelineChart::setTimeline(const StepTimeline& timeline, const StepInputs& inputs, Bytes usableBytes)
{
    m_timeline = timeline;
    m_inputs = inputs;
    m_usable = usableBytes;
    rebuild();
}

QString TimelineChart::eventText(int index) const
{
    if (index < 0 || index >= int(m_timeline.events.size()))
        return {};
    const TimelineEvent& e = m_timeline.events[size_t(index)];
    QString where = QString::fromLatin1(toString(e.phase));
    if (e.microBatch >= 0)
        where += QStringLiteral(", micro-batch %1 of %2").arg(e.microBatch + 1).arg(m_inputs.microBatches);
    if (e.layer >= 0)
        where += QStringLiteral(", layer %1 of %2").arg(e.layer + 1).arg(m_inputs.layers);
    QString text
        = QStringLiteral("<b>%1</b><br>%2<br>alive: <b>%3</b>%4<table>")
              .arg(QString::fromLatin1(e.what.data(), int(e.what.size())).toHtmlEscaped(), where, bytesText(e.total()),
                  e.total() == m_timeline.peak ? QStringLiteral(" (the peak)") : QString());
    for (int c = kTimelineCategories - 1; c >= 0; --c)
        if (e.bytes[size_t(c)] > 0)
            text += QStringLiteral("<tr><td>%1</td><td align=right>&nbsp;%2</td></tr>")
                        .arg(m_graphs[c]->name(), bytesText(e.bytes[size_t(c)]));
    return text + QStringLiteral("</table>");
}

void TimelineChart::recolour()
{
    for (int c = 0; c < m_graphs.size(); ++c) {
        const QColor colour = PlotTheme::componentColor(categoryKey(c));
        m_graphs[c]->setPen(QPen(colour.darker(125), 1));
        QColor fill = colour;
        fill.setAlpha(225);
        m_graphs[c]->setBrush(fill);
    }
}

void TimelineChart::rebuild()
{
    m_plot->clearItems();
    m_capacityLabel = m_peakLabel = nullptr;
    const std::vector<TimelineEvent>& events = m_timeline.events;
    const int n = int(events.size());
    // One more point after the last event so its step is drawn to the end.
    QVector<double> xs(n + 1);
    for (int i = 0; i <= n; ++i)
        xs[i] = i;
    QVector<double> cumulative(n + 1, 0.0);
    for (int c = 0; c < m_graphs.size(); ++c) {
        for (int i = 0; i <= n; ++i)
            cumulative[i] += toGiB(events.empty() ? 0 : events[size_t(std::min(i, n - 1))].bytes[size_t(c)]);
        m_graphs[c]->setData(xs, cumulative, true);
        // A category absent all step stays out of the legend.
        bool present = false;
        for (const TimelineEvent& e : events)
            present = present || e.bytes[size_t(c)] > 0;
        if (present)
            m_graphs[c]->addToLegend();
        else
            m_graphs[c]->removeFromLegend();
    }
    double yMax = std::max(1.0, toGiB(m_timeline.peak));

    // Phase labels along the top: where each micro-batch's forward and backward start.
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int i = 0; i < n; ++i) {
        const TimelineEvent& e = events[size_t(i)];
        const bool starts
            = i == 0 || events[size_t(i - 1)].phase != e.phase || events[size_t(i - 1)].microBatch != e.microBatch;
        if (!starts || e.phase == StepPhase::Loss || e.phase == StepPhase::Start)
            continue; // "start" is event 0, right beside the first forward's label
        QString label;
        switch (e.phase) {
        case StepPhase::Forward:
            label = QStringLiteral("F%1").arg(e.microBatch + 1);
            break;
        case StepPhase::Backward:
            label = QStringLiteral("B%1").arg(e.microBatch + 1);
            break;
        default:
            label = QStringLiteral("optimizer");
            break;
        }
        ticker->addTick(i, label);
    }
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setRange(0, std::max(1, n));

    if (m_usable > 0) {
        const double cap = toGiB(m_usable);
        yMax = std::max(yMax, cap);
        auto* line = new QCPItemStraightLine(m_plot);
        line->setPen(QPen(m_theme.capacity, m_theme.lineWidth, Qt::DashLine));
        line->point1->setCoords(0, cap);
        line->point2->setCoords(1, cap);
        auto* capLabel = new QCPItemText(m_plot);
        capLabel->setPositionAlignment(Qt::AlignBottom | Qt::AlignLeft);
        capLabel->position->setCoords(0, cap);
        capLabel->setText(QStringLiteral(" GPU capacity %1").arg(bytesText(m_usable)));
        capLabel->setColor(m_theme.foreground);
        capLabel->setFont(m_theme.font(-1));
        m_capacityLabel = capLabel;
    }
    if (n > 0) {
        int peakAt = 0;
        for (int i = 0; i < n; ++i)
            if (events[size_t(i)].total() == m_timeline.peak) {
                peakAt = i;
                break;
            }
        const double peak = toGiB(m_timeline.peak);
        auto* mark = new QCPItemTracer(m_plot);
        mark->setGraph(nullptr);
        mark->position->setCoords(peakAt + 0.5, peak);
        mark->setStyle(QCPItemTracer::tsCircle);
        mark->setSize(m_theme.lineWidth * 6);
        const bool over = m_usable > 0 && m_timeline.peak > m_usable;
        mark->setPen(QPen(over ? m_theme.overflow : m_theme.foreground, m_theme.lineWidth * 1.5));
        auto* text = new QCPItemText(m_plot);
        // Keep the label inside the plot: left of the mark when the peak is late in the step.
        const bool late = peakAt > n / 2;
        text->setPositionAlignment(Qt::AlignBottom | (late ? Qt::AlignRight : Qt::AlignLeft));
        text->position->setCoords(peakAt + 0.5, peak + yMax * 0.03);
        text->setText(
            QStringLiteral("peak %1: %2")
                .arg(bytesText(m_timeline.peak), QString::fromLatin1(toString(events[size_t(peakAt)].phase))));
        text->setColor(over ? m_theme.overflow : m_theme.foreground);
        text->setFont(m_theme.font());
        m_peakLabel = text;
    }
    m_plot->yAxis->setRange(0, yMax * 1.2);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace vramlab
