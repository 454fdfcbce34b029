// SPDX-License-Identifier: MIT
#pragma once

#include "chart_widget.h"
#include "vramlab/chart_data.h"

#include <optional>
#include <vector>

class QCustomPlot;
class QCPGraph;
class QCPItemText;

namespace vramlab {

/// Memory against one swept size (sequence length, batch, context) as stacked areas by
/// component, with the GPU's capacity as a line and the first size that does not fit marked.
class SweepChart : public ChartWidget {
    Q_OBJECT
public:
    explicit SweepChart(QWidget* parent = nullptr);

    /// Draws the core's sweep (chart_data.h); an empty series clears the chart. The exact
    /// boundary of the series is marked where a point does not fit.
    void setSeries(SweepSeries series, const QString& xLabel);
    const SweepSeries& series() const { return m_series; }
    /// The first swept value whose peak does not fit, if any.
    std::optional<Count> firstNotFitting() const { return m_firstNotFitting; }
    /// The hover readout at axis value `x`: the nearest point's value, peak, verdict and
    /// components, or empty without points.
    QString pointText(double x) const;

protected:
    void recolour() override;
    void rebuild() override;

private:
    /// Where `value` sits along the x-axis as drawn, 0 (left) to 1 (right), clamped.
    double axisShare(double value) const;

    QVector<QCPGraph*> m_graphs; // cumulative, one per component
    QCPGraph* m_peak = nullptr; // the step's peak where it rises above the sum
    SweepSeries m_series;
    QString m_xLabel;
    std::optional<Count> m_firstNotFitting;
    QCPItemText* m_beyondLabel = nullptr; ///< "up to ..." where the axis stops (the plot owns it)
    QCPItemText* m_notFitLabel = nullptr; ///< "does not fit from ..."
};

} // namespace vramlab
