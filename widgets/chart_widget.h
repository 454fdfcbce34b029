// SPDX-License-Identifier: MIT
#pragma once

#include "plot_theme.h"

#include <QWidget>

#include <functional>

class QCustomPlot;

namespace vramlab {

/// What every VRAM Lab chart shares: a QCustomPlot filling the widget, a theme that
/// follows the palette (light/dark) and presenter sizes, and a legend laid out to fit.
/// Subclasses colour their series and rebuild their data.
class ChartWidget : public QWidget {
    Q_OBJECT
public:
    QCustomPlot* plot() const { return m_plot; }
    /// Applies the theme to axes, legend and series, then redraws.
    void setTheme(const PlotTheme& theme);

protected:
    explicit ChartWidget(QWidget* parent);
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    /// Series colours and pens from m_theme.
    virtual void recolour() = 0;
    /// Data and items from the current inputs; ends with a queued replot.
    virtual void rebuild() = 0;
    /// The hover readout: `text` of the mouse's pixel in the plot, as a tooltip (hidden
    /// where it is empty).
    void setHoverText(std::function<QString(const QPointF& pixel)> text);

    QCustomPlot* m_plot;
    PlotTheme m_theme;
};

} // namespace vramlab
