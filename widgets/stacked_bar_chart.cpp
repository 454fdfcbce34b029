// SPDX-License-Identifier: MIT
#include "stacked_bar_chart.h"

#include "vramlab/report_text.h"

#include "chart_labels.h"
#include "chart_support.h"
#include "plot_theme.h"
#include "qcustomplot_include.h"

#include <QFontMetrics>
#include <QVBoxLayout>

namespace vramlab {

StackedBarChart::StackedBarChart(QWidget* parent)
    : ChartWidget(parent)
{
    m_plot->setNoAntialiasingOnDrag(true);

    QCPBars* below = nullptr;
    for (const char* key : kComponentKeys) {
        auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(componentLabel(QString::fromLatin1(key)));
        bars->setWidth(0.5);
        bars->setStackingGap(0); // the default differs between QCustomPlot versions
        if (below)
            bars->moveAbove(below);
        below = bars;
        m_bars << bars;
    }
    m_plot->yAxis->setLabel(QStringLiteral("GiB per GPU"));
    m_plot->xAxis->grid()->setVisible(false);
    m_plot->legend->setVisible(true);
    placeLegendBelow(m_plot);
    setHoverText([this](const QPointF& pixel) { return toolTipAt(pixel); });
    // Pixels are known only once the plot is laid out (window and export alike).
    connect(m_plot, &QCustomPlot::afterLayout, this, &StackedBarChart::placeLabels);
    setTheme(m_theme);
}

void StackedBarChart::placeLabels()
{
    // No label overprints another or runs off the plot (issue 16): the capacity label wraps
    // after the GPU's name and elides where the plot is narrow, and a column's total, when it
    // meets the capacity label near the line or a neighbour's total, moves above it.
    const QRect area = m_plot->axisRect()->rect();
    if (area.width() <= 0)
        return;
    for (const CapacityLabel& cap : std::as_const(m_capacityLabels)) {
        QCPItemText* item = cap.item;
        item->position->setCoords(cap.at);
        const QFontMetrics metrics(item->font());
        const QString line = cap.gpu + QStringLiteral(": ") + cap.capacity;
        if (metrics.horizontalAdvance(line) + 4 <= area.right() - item->position->pixelPosition().x()) {
            item->setText(line);
            continue;
        }
        // Two lines from the plot's left edge, each elided to the plot's width.
        const int width = area.width() - 8 - item->padding().left() - item->padding().right();
        item->position->setPixelPosition(QPointF(area.left() + 4, item->position->pixelPosition().y()));
        item->setText(metrics.elidedText(cap.gpu, Qt::ElideRight, width) + QLatin1Char('\n')
            + metrics.elidedText(cap.capacity, Qt::ElideRight, width));
    }
    QVector<QRectF> placed;
    for (const CapacityLabel& cap : std::as_const(m_capacityLabels))
        placed << textItemRect(cap.item);
    for (const TotalLabel& total : std::as_const(m_totalLabels)) {
        total.item->position->setCoords(total.at);
        placed << liftClear(total.item, placed); // columns close together stagger upwards
    }
}

void StackedBarChart::setTitle(const QString& title)
{
    m_title = title;
    rebuild();
}

void StackedBarChart::recolour()
{
    const QStringList shown = emphasis();
    for (int i = 0; i < m_bars.size(); ++i) {
        const QString key = QString::fromLatin1(kComponentKeys[size_t(i)]);
        QColor c = PlotTheme::componentColor(key);
        const bool emphasized = shown.contains(key);
        if (!shown.isEmpty() && !emphasized)
            c.setAlpha(60); // faded: the lesson points at the others
        m_bars[i]->setBrush(c);
        m_bars[i]->setPen(emphasized ? QPen(m_theme.foreground, m_theme.lineWidth * 2)
                                     : QPen(m_theme.background, m_theme.lineWidth > 2 ? 2 : 1));
    }
}

void StackedBarChart::setEmphasis(const QStringList& componentKeys)
{
    m_emphasis = componentKeys;
    recolour();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StackedBarChart::setMasked(bool masked, const QString& message)
{
    m_masked = masked;
    m_maskMessage = message;
    recolour();
    rebuild();
}

QVector<StackedBarChart::Column> StackedBarChart::columnsOf(const std::vector<ChartColumn>& columns)
{
    QVector<Column> out;
    out.reserve(qsizetype(columns.size()));
    for (const ChartColumn& c : columns)
        out.push_back({ QString::fromStdString(c.label), c.report, QString::fromStdString(c.error) });
    return out;
}

void StackedBarChart::setColumns(const QVector<Column>& columns)
{
    m_columns = columns;
    rebuild();
}

double StackedBarChart::plottedGiB(int column, const QString& key) const
{
    for (int i = 0; i < m_bars.size(); ++i) {
        if (QString::fromLatin1(kComponentKeys[size_t(i)]) != key)
            continue;
        auto it = m_bars[i]->data()->findBegin(column + 1, false);
        if (it != m_bars[i]->data()->constEnd() && qFuzzyCompare(it->key, double(column + 1)))
            return it->value;
    }
    return 0.0;
}

QString StackedBarChart::toolTipAt(const QPointF& pixel) const
{
    const double x = m_plot->xAxis->pixelToCoord(pixel.x());
    const double y = m_plot->yAxis->pixelToCoord(pixel.y());
    const int column = qRound(x) - 1;
    if (column < 0 || column >= m_columns.size() || std::abs(x - (column + 1)) > 0.3 || !m_columns[column].report)
        return {};
    const Report& r = *m_columns[column].report;
    double base = 0;
    for (const char* key : kComponentKeys) {
        const Component* c = r.component(key);
        if (!c)
            continue;
        const double top = base + toGiB(c->bytes);
        if (y >= base && y < top && c->bytes > 0)
            return QStringLiteral("<b>%1</b>: %2 (%3 bytes)<br>%4<br><i>%5</i>")
                .arg(QString::fromUtf8(c->label.data(), int(c->label.size())), bytesText(c->bytes),
                    QLocale(QLocale::English).toString(qlonglong(c->bytes)),
                    QString::fromStdString(c->formula).toHtmlEscaped(),
                    QString::fromUtf8(c->explanation.data(), int(c->explanation.size())));
        base = top;
    }
    return {};
}

void StackedBarChart::rebuild()
{
    m_plot->clearItems();
    m_capacityLabels.clear();
    m_totalLabels.clear();
    if (m_masked) { // nothing of the answer shows: no bars, no totals, no axis range
        for (QCPBars* bars : m_bars)
            bars->data()->clear();
        m_plot->yAxis->setRange(0, 1);
        auto* text = new QCPItemText(m_plot);
        text->position->setType(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(0.5, 0.45);
        text->setText(m_maskMessage);
        text->setFont(m_theme.font(6));
        text->setColor(m_theme.foreground);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double yMax = 1;
    for (int i = 0; i < m_bars.size(); ++i) {
        QVector<double> keys, values;
        for (int c = 0; c < m_columns.size(); ++c) {
            keys << c + 1;
            const auto& rep = m_columns[c].report;
            values << (rep ? toGiB(rep->bytesOf(kComponentKeys[size_t(i)])) : 0.0);
        }
        m_bars[i]->setData(keys, values, true);
    }
    const QPen capacityPen(m_theme.capacity, m_theme.lineWidth, Qt::DashLine);
    for (int c = 0; c < m_columns.size(); ++c) {
        const Column& col = m_columns[c];
        ticker->addTick(c + 1, col.label);
        auto* label = new QCPItemText(m_plot);
        label->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
        label->setFont(m_theme.font(1));
        label->setClipToAxisRect(false);
        if (!col.report) {
            label->position->setCoords(c + 1, 0);
            label->setText(
                QStringLiteral("not a valid configuration:\n") + col.error.section(QStringLiteral(": "), -2));
            label->setColor(m_theme.overflow);
            continue;
        }
        const Report& r = *col.report;
        const double total = toGiB(r.peak);
        if (r.peak != r.total) { // the step peaks above the sum: mark where
            auto* peak = new QCPItemLine(m_plot);
            peak->setPen(QPen(m_theme.foreground, m_theme.lineWidth, Qt::DotLine));
            peak->start->setCoords(c + 1 - 0.3, total);
            peak->end->setCoords(c + 1 + 0.3, total);
        }
        yMax = std::max(yMax, total);
        QString text = bytesText(r.peak);
        if (r.gpu) {
            const double cap = toGiB(r.usableBytes);
            yMax = std::max(yMax, cap);
            auto* line = new QCPItemLine(m_plot);
            line->setPen(capacityPen);
            line->start->setCoords(c + 1 - 0.45, cap);
            line->end->setCoords(c + 1 + 0.45, cap);
            const Bytes room = r.usableBytes - r.peak;
            text += !r.fits            ? QStringLiteral("\n%1 over").arg(bytesText(-room))
                : r.lowerBound.empty() ? QStringLiteral("\n%1 free").arg(bytesText(room))
                                       : QStringLiteral("\nlower bound");
            label->setColor(verdictColor(r, m_theme));
            const bool sameAsBefore
                = c > 0 && m_columns[c - 1].report && m_columns[c - 1].report->usableBytes == r.usableBytes;
            if (!sameAsBefore) { // label each different capacity once
                auto* capLabel = new QCPItemText(m_plot);
                capLabel->setPositionAlignment(Qt::AlignBottom | Qt::AlignLeft);
                capLabel->setTextAlignment(Qt::AlignLeft); // two lines where the plot is narrow
                capLabel->position->setCoords(c + 1 - 0.45, cap);
                capLabel->setText(QStringLiteral("%1: %2").arg(
                    QString::fromStdString(r.gpu->displayName), QString::fromStdString(capacityText(r))));
                capLabel->setColor(m_theme.foreground);
                capLabel->setFont(m_theme.font(-1));
                capLabel->setBrush(m_theme.labelBackdrop()); // readable where a bar over capacity runs behind it
                m_capacityLabels.push_back({ capLabel, capLabel->position->coords(),
                    QString::fromStdString(r.gpu->displayName), QString::fromStdString(capacityText(r)) });
            }
        } else {
            label->setColor(m_theme.foreground);
        }
        label->setText(text);
        label->position->setCoords(c + 1, total);
        m_totalLabels.push_back({ label, label->position->coords() });
    }
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setRange(0.4, double(m_columns.size()) + 0.6);
    m_plot->yAxis->setRange(0, yMax * 1.25);
    if (!m_title.isEmpty()) {
        auto* title = new QCPItemText(m_plot);
        title->position->setType(QCPItemPosition::ptAxisRectRatio);
        title->position->setCoords(0.5, 0.0);
        title->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
        title->setText(m_title);
        title->setFont(m_theme.font(2));
        title->setColor(m_theme.foreground);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace vramlab
