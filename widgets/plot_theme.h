// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/component_kind.h"

#include <QColor>
#include <QFont>
#include <QPalette>
#include <QSize>
#include <QString>

class QCustomPlot;
class QWidget;

namespace vramlab {

/// Colours and sizes shared by every chart: fixed, colour-blind-safe component colours
/// (Okabe-Ito), text and grid from the palette (light or dark), and thicker lines and
/// larger fonts in presenter mode.
struct PlotTheme {
    QColor background;
    QColor foreground;
    QColor grid;
    QColor capacity;
    QColor fits;
    QColor overflow;
    QColor caution; ///< a verdict that holds only if the estimate is not a lower bound
    double lineWidth = 1.5;
    int fontPointSize = 10;

    static PlotTheme fromPalette(const QPalette& palette, bool presenter);
    /// The colour of a component key ("weights", "activations", ...).
    static QColor componentColor(const QString& key);
    static QColor roleColor(ColourRole role);
    /// Applies background, axes, tick labels and grid to a plot.
    void apply(QCustomPlot* plot) const;
    QFont font(int delta = 0) const;
    /// Behind a label drawn over bars or areas: the background, slightly see-through.
    QColor labelBackdrop() const
    {
        QColor c = background;
        c.setAlpha(200);
        return c;
    }
};

/// A QCustomPlot filling `host` (margins off, a size that stays readable).
QCustomPlot* createPlotIn(QWidget* host);

/// Moves the legend into a row under the axis rect, laid out in columns, so it never
/// covers bars, lines or labels (at any font size, presenter mode included).
void placeLegendBelow(QCustomPlot* plot);

/// Lays the legend out in as many columns as `width` pixels hold at the theme's font
/// (1 to 4), so no name is cut off.
void fitLegendColumns(QCustomPlot* plot, int width, const PlotTheme& theme);

/// The light and dark palettes of the window and of exports (Qt 6.4 has no system
/// colour-scheme hint): fixed, so a chart exported headless and from the window match.
QPalette lightPalette();
QPalette darkPalette();
/// The chart theme of an export: the light or dark palette, with fonts and lines sized
/// for the picture's height so a 1600x900 chart reads on a slide.
PlotTheme exportTheme(bool dark, QSize size);

} // namespace vramlab
