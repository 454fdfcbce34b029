// SPDX-License-Identifier: MIT
#pragma once

#include "chart_widget.h"
#include "vramlab/step_timeline.h"

class QCPGraph;
class QCPItemText;

namespace vramlab {

/// One simulated training step: memory alive after each allocation or free, stacked by
/// category, with the GPU's capacity and the peak marked. Hovering names the event and
/// what is alive there.
class TimelineChart : public ChartWidget {
    Q_OBJECT
public:
    explicit TimelineChart(QWidget* parent = nullptr);

    /// `usableBytes` 0: no GPU line.
    void setTimeline(const StepTimeline& timeline, const StepInputs& inputs, Bytes usableBytes);
    const StepTimeline& timeline() const { return m_timeline; }
    /// The hover text for event `index` (what happens, phase, layer, bytes by category).
    QString eventText(int index) const;

protected:
    void recolour() override;
    void rebuild() override;

private:
    QVector<QCPGraph*> m_graphs; // cumulative, one per category
    StepTimeline m_timeline;
    StepInputs m_inputs;
    Bytes m_usable = 0;
    QCPItemText* m_capacityLabel = nullptr; ///< owned by the plot, reset with its items
    QCPItemText* m_peakLabel = nullptr;
};

} // namespace vramlab
