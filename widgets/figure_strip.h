// SPDX-License-Identifier: MIT
#pragma once

#include <QList>
#include <QPair>
#include <QWidget>

class QGridLayout;
class QLabel;

namespace vramlab {

/// Figures (a caption over a value) side by side in one row, or in two rows when one row
/// does not fit its width: its minimum is the two-row width, so a narrow tab (beside a
/// lesson, in presenter mode) never widens the window to keep seven figures in a row.
class FigureStrip : public QWidget {
    Q_OBJECT
public:
    explicit FigureStrip(QWidget* parent = nullptr);
    /// Adds a figure at the end; the strip owns both labels.
    void addFigure(QLabel* caption, QLabel* value);
    /// Hides or shows the figure added `index`-th; the others close up (rows and widths count the shown ones).
    void setFigureShown(int index, bool shown);
    /// Figures per row now (all shown ones, or half rounded up).
    int columns() const { return m_columns; }
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    int widthFor(int columns) const;
    int shownCount() const;
    QList<QPair<QLabel*, QLabel*>> shownFigures() const;
    void arrange(int columns);

    QGridLayout* m_grid;
    QList<QPair<QLabel*, QLabel*>> m_figures;
    QList<bool> m_shown;
    int m_columns = 0;
};

} // namespace vramlab
