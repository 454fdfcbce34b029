// SPDX-License-Identifier: MIT
#pragma once

#include "page.h"

namespace vramlab {

class BreakdownTable;
class StackedBarChart;

/// The memory picture: the stacked bar of the document's report beside its table.
class BreakdownPage : public Page {
    Q_OBJECT
public:
    explicit BreakdownPage(ScenarioDocument* document, QWidget* parent = nullptr);
    QString title() const override { return QStringLiteral("Breakdown"); }
    void setTheme(const PlotTheme& theme) override;

    StackedBarChart* chart() const { return m_chart; }
    BreakdownTable* table() const { return m_table; }

protected:
    void recompute() override;

private:
    StackedBarChart* m_chart;
    BreakdownTable* m_table;
};

} // namespace vramlab
