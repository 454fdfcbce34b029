// SPDX-License-Identifier: MIT
#pragma once

#include "plot_theme.h"
#include "stacked_bar_chart.h"
#include "vramlab/chart_data.h"
#include "vramlab/scenario.h"

#include <QWidget>

#include <optional>

class QTabWidget;
class QTableWidget;
class QLabel;

namespace vramlab {

/// Side by side, as the seed articles tabulate them: inference vs full training vs LoRA
/// vs QLoRA for the current model; ZeRO 0/1/2/3 for the current run; and any two
/// scenario files (A/B) with their differences highlighted.
class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);

    void setScenario(const Scenario& scenario);
    void setTheme(const PlotTheme& theme);
    /// Sets side A or B (0 or 1) of the two-scenario comparison.
    void setSide(int side, const Scenario& scenario, const QString& label);

    StackedBarChart* methodsChart() const { return m_methods; }
    StackedBarChart* zeroChart() const { return m_zero; }
    StackedBarChart* abChart() const { return m_ab; }
    QTableWidget* abTable() const { return m_abTable; }
    /// What the current sub-tab shows, for export: compare-methods, compare-zero or compare-files.
    ChartKind chartKind() const;
    /// The A/B scenarios set so far and their labels.
    QVector<Scenario> sides(QStringList* labels) const;

    /// The method variants of a scenario: inference, full training, LoRA, QLoRA.
    static QVector<StackedBarChart::Column> methodColumns(const Scenario& scenario);
    /// ZeRO stages 0-3 of a training scenario (at 8 GPUs when it runs on one).
    static QVector<StackedBarChart::Column> zeroColumns(const Scenario& scenario);

signals:
    void openSideRequested(int side);
    void useCurrentRequested(int side);

private:
    void rebuildAb();

    QTabWidget* m_tabs;
    StackedBarChart* m_methods;
    StackedBarChart* m_zero;
    StackedBarChart* m_ab;
    QTableWidget* m_abTable;
    QLabel* m_abHint;
    std::optional<Scenario> m_sides[2];
    QString m_labels[2];
};

} // namespace vramlab
