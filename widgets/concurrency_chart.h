// SPDX-License-Identifier: MIT
#pragma once

#include "chart_widget.h"
#include "vramlab/serving_chart.h"

class QCPGraph;
class QCPItemText;

namespace vramlab {

/// Max concurrency against context length (log-log), the scenario's own length marked, and
/// the line of one request below which vLLM refuses to start (chart data: concurrencyCurve).
class ConcurrencyChart : public ChartWidget {
    Q_OBJECT
public:
    explicit ConcurrencyChart(QWidget* parent = nullptr);

    /// Replaces the curve (no points clears it); redraws on the next event loop turn.
    void setCurve(ConcurrencyCurve curve);
    const ConcurrencyCurve& curve() const { return m_curve; }

protected:
    void recolour() override;
    void rebuild() override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void placeMark();

    QCPGraph* m_line = nullptr;
    QCPGraph* m_current = nullptr;
    QCPItemText* m_mark = nullptr; ///< "1.66× at 20,000 tokens" beside the scenario's point
    ConcurrencyCurve m_curve;
};

} // namespace vramlab
