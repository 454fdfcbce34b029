// SPDX-License-Identifier: MIT
#include "probe_chart.h"

#include "chart_support.h"
#include "qcustomplot_include.h"

namespace vramlab {

ProbeChart::ProbeChart(QWidget* parent)
    : ChartWidget(parent)
{
    auto* group = new QCPBarsGroup(m_plot);
    m_predictedBars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_measuredBars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    for (QCPBars* bars : { m_predictedBars, m_measuredBars }) {
        bars->setWidth(0.38);
        bars->setBarsGroup(group);
    }
    m_plot->xAxis->grid()->setVisible(false);
    m_plot->legend->setVisible(true);
    placeLegendBelow(m_plot);
    setTheme(m_theme);
}

void ProbeChart::clear()
{
    m_labels.clear();
    m_predicted.clear();
    m_measured.clear();
    m_peakLine = 0;
    rebuild();
}

void ProbeChart::setReport(const ProbeReport& report)
{
    clear();
    if (report.fit) {
        m_unit = QStringLiteral("GiB");
        m_predictedBars->setName(tr("Predicted"));
        m_measuredBars->setName(tr("Measured (free-memory fall)"));
        for (const ProbeFitComponent& c : report.fit->components) {
            m_labels << QString::fromStdString(c.label);
            m_predicted << toGiB(c.predictedBytes);
            m_measured << toGiB(c.measuredBytes);
        }
    } else if (report.bench) {
        m_unit = QStringLiteral("TFLOP/s");
        m_predictedBars->setName(
            tr("Estimate: catalog peak x assumed MFU %1%").arg(100 * report.bench->assumedMfu, 0, 'f', 0));
        m_measuredBars->setName(tr("Achieved"));
        m_peakLine = report.bench->peakTflops;
        for (const ProbeGemm& g : report.bench->gemms) {
            m_labels << QStringLiteral("%1\n%2").arg(
                QString::fromStdString(g.layer), QString::fromStdString(g.pass).replace('_', ' '));
            m_predicted << report.bench->peakTflops * report.bench->assumedMfu;
            m_measured << g.tflops;
        }
    }
    rebuild();
}

void ProbeChart::recolour()
{
    m_predictedBars->setBrush(m_theme.grid.darker(130));
    m_predictedBars->setPen(QPen(m_theme.foreground, 1));
    m_measuredBars->setBrush(PlotTheme::componentColor(QStringLiteral("weights")));
    m_measuredBars->setPen(QPen(m_theme.background, 1));
}

void ProbeChart::rebuild()
{
    m_plot->clearItems();
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    QVector<double> keys;
    double yMax = std::max(1.0, m_peakLine);
    for (int i = 0; i < m_labels.size(); ++i) {
        keys << i + 1;
        ticker->addTick(i + 1, m_labels[i]);
        yMax = std::max({ yMax, m_predicted[i], m_measured[i] });
    }
    m_predictedBars->setData(keys, m_predicted, true);
    m_measuredBars->setData(keys, m_measured, true);
    if (m_peakLine > 0) {
        auto* line = new QCPItemStraightLine(m_plot);
        line->setPen(QPen(m_theme.capacity, m_theme.lineWidth, Qt::DashLine));
        line->point1->setCoords(0, m_peakLine);
        line->point2->setCoords(1, m_peakLine);
        auto* label = new QCPItemText(m_plot);
        label->setPositionAlignment(Qt::AlignBottom | Qt::AlignLeft);
        label->position->setCoords(0.6, m_peakLine);
        label->setText(tr("catalog peak %1 TFLOP/s").arg(m_peakLine, 0, 'f', 1));
        label->setColor(m_theme.foreground);
        label->setFont(m_theme.font(-1));
    }
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setTickLabelRotation(m_labels.size() > 8 ? 60 : 0);
    m_plot->xAxis->setRange(0.4, double(m_labels.size()) + 0.6);
    m_plot->yAxis->setRange(0, yMax * 1.15);
    m_plot->yAxis->setLabel(m_unit);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace vramlab
