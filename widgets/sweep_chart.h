// SPDX-License-Identifier: MIT
#pragma once

#include "chart_widget.h"
#include "vramlab/scenario.h"
#include "vramlab/sweep.h"

#include <optional>
#include <vector>

class QCustomPlot;
class QCPGraph;

namespace vramlab {

/// Memory against one swept size (sequence length, batch, context) as stacked areas by
/// component, with the GPU's capacity as a line and the first size that does not fit marked.
class SweepChart : public ChartWidget {
    Q_OBJECT
public:
    explicit SweepChart(QWidget* parent = nullptr);

    /// `firstNotFitting`: the exact boundary (from a fit search) to mark; without it the
    /// first sampled point that does not fit is marked.
    void setSweep(const QString& xLabel, const std::vector<SweepPoint>& points, bool logX,
        std::optional<Count> firstNotFitting = std::nullopt);
    /// The first swept value whose peak does not fit, if any.
    std::optional<Count> firstNotFitting() const { return m_firstNotFitting; }

    /// Sweeps `param` of `scenario` over its usual range (64 log-spaced points; lengths
    /// 128..131072, batches 1..512) and marks the exact boundary from the core's fit search.
    void showScenario(const Scenario& scenario, SweepParam param, const QString& xLabel);

protected:
    void recolour() override;
    void rebuild() override;

private:
    QVector<QCPGraph*> m_graphs; // cumulative, one per component
    QCPGraph* m_peak = nullptr; // the step's peak where it rises above the sum
    std::vector<SweepPoint> m_points;
    QString m_xLabel;
    bool m_logX = true;
    std::optional<Count> m_firstNotFitting;
    std::optional<Count> m_exactBoundary;
};

} // namespace vramlab
