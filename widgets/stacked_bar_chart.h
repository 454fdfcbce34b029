// SPDX-License-Identifier: MIT
#pragma once

#include "chart_widget.h"
#include "vramlab/chart_data.h"
#include "vramlab/report.h"

#include <QPointF>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

class QCustomPlot;
class QCPBars;
class QCPItemText;
class QCPItemStraightLine;

namespace vramlab {

/// Stacked component bars, one column per report, against the GPU's capacity: the
/// total and the headroom or overflow are written above each bar, hovering a segment
/// shows its exact bytes and formula. Colours are fixed per component.
class StackedBarChart : public ChartWidget {
    Q_OBJECT
public:
    struct Column {
        QString label;
        std::optional<Report> report; ///< empty: not a valid configuration
        QString error;
    };

    explicit StackedBarChart(QWidget* parent = nullptr);

    /// The core's columns (chart_data.h) as the chart's.
    static QVector<Column> columnsOf(const std::vector<ChartColumn>& columns);

    /// Replaces the columns; the plot redraws on the next event loop turn (queued).
    void setColumns(const QVector<Column>& columns);
    void setTitle(const QString& title);

    /// Components to point at (lessons): the others fade; empty shows all alike.
    void setEmphasis(const QStringList& componentKeys);
    /// The components drawn emphasized: none while masked (a quiz's highlight would hint
    /// at its answer), the lesson's afterwards.
    QStringList emphasis() const { return m_masked ? QStringList() : m_emphasis; }
    /// Hides the bars and numbers behind `message` until unmasked (predict before reveal).
    void setMasked(bool masked, const QString& message = QString());
    bool isMasked() const { return m_masked; }

    /// The plotted GiB of `componentKey` in column `column` (for tests and exports).
    double plottedGiB(int column, const QString& componentKey) const;
    /// The text shown for a point of the plot, or empty (the hover tooltip).
    QString toolTipAt(const QPointF& pixel) const;

protected:
    void recolour() override;
    void rebuild() override;

private:
    void placeLabels(); ///< after each layout: keeps the labels apart and on the plot
    struct CapacityLabel {
        QCPItemText* item;
        QPointF at; ///< where it starts, in plot coordinates: above the line's left end
        QString gpu, capacity; ///< its text, "GPU: capacity" on one line where it fits
    };
    struct TotalLabel {
        QCPItemText* item;
        QPointF at; ///< where it starts: above its column's peak
    };
    QVector<QCPBars*> m_bars; // one per component, stacked
    QVector<CapacityLabel> m_capacityLabels; ///< owned by the plot: cleared with its items
    QVector<TotalLabel> m_totalLabels; ///< each column's peak and headroom
    QVector<Column> m_columns;
    QString m_title;
    QStringList m_emphasis;
    bool m_masked = false;
    QString m_maskMessage;
};

} // namespace vramlab
