// SPDX-License-Identifier: MIT
#pragma once

#include "page.h"

class QComboBox;
class QLabel;

namespace vramlab {

class SweepChart;

/// Memory against one size (sequence or context length, micro-batch or batch) over the
/// core's sweep range, with the exact boundary marked.
class SweepPage : public Page {
    Q_OBJECT
public:
    explicit SweepPage(ScenarioDocument* document, QWidget* parent = nullptr);
    QString title() const override { return QStringLiteral("Sweep"); }
    ChartKind chartKind() const override;
    void setTheme(const PlotTheme& theme) override;

    SweepChart* chart() const { return m_chart; }
    QComboBox* param() const { return m_param; }
    /// Why the sweep could not be drawn, or empty.
    QString errorText() const;

protected:
    void recompute() override;

private:
    SweepChart* m_chart;
    QComboBox* m_param;
    QLabel* m_error;
};

} // namespace vramlab
