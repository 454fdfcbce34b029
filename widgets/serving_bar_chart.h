// SPDX-License-Identifier: MIT
#pragma once

#include "chart_widget.h"
#include "vramlab/serving_chart.h"

#include <QString>
#include <QVector>

class QCPBars;

namespace vramlab {

/// The serving engine's memory budget: one stacked bar per rank (or llama.cpp device) against
/// the GPU's memory, with a labelled line at the engine's budget (chart data: servingBudgetChart).
class ServingBarChart : public ChartWidget {
    Q_OBJECT
public:
    explicit ServingBarChart(QWidget* parent = nullptr);

    /// Replaces the bars (an empty chart clears it); redraws on the next event loop turn.
    void setChart(ServingBudgetChart chart);
    const ServingBudgetChart& chart() const { return m_chart; }
    /// The plotted GiB of segment `key` in bar `bar` (tests).
    double plottedGiB(int bar, const QString& key) const;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void recolour() override;
    void rebuild() override;

private:
    ServingBudgetChart m_chart;
    QVector<QCPBars*> m_bars; // one per segment key, stacked in the chart's order
    QStringList m_keys;
};

} // namespace vramlab
