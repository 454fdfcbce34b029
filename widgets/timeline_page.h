// SPDX-License-Identifier: MIT
#pragma once

#include "page.h"

class QComboBox;
class QLabel;

namespace vramlab {

class TimelineChart;

/// One training step of the document as allocations and frees. Step 2 is the step the
/// estimate simulated for its peak (kept in the report); step 1 is simulated on demand.
class TimelinePage : public Page {
    Q_OBJECT
public:
    explicit TimelinePage(ScenarioDocument* document, QWidget* parent = nullptr);
    QString title() const override { return QStringLiteral("Timeline"); }
    ChartKind chartKind() const override { return ChartKind::Timeline; }
    void setTheme(const PlotTheme& theme) override;

    TimelineChart* chart() const { return m_chart; }
    QComboBox* step() const { return m_step; }
    QLabel* info() const { return m_info; }

protected:
    void recompute() override;

private:
    TimelineChart* m_chart;
    QComboBox* m_step;
    QLabel* m_info;
};

} // namespace vramlab
