// SPDX-License-Identifier: MIT
#include "plot_theme.h"

#include "qcustomplot_include.h"

#include <QFontInfo>
#include <QFontMetricsF>
#include <QVBoxLayout>

#include <algorithm>

namespace vramlab {

PlotTheme PlotTheme::fromPalette(const QPalette& p, bool presenter)
{
    PlotTheme t;
    t.background = p.color(QPalette::Base);
    t.foreground = p.color(QPalette::Text);
    const bool dark = t.background.lightness() < 128;
    t.grid = dark ? QColor(80, 80, 80) : QColor(215, 215, 215);
    t.capacity = dark ? QColor(240, 240, 240) : QColor(20, 20, 20);
    t.fits = dark ? QColor(90, 200, 120) : QColor(0, 120, 60);
    t.overflow = dark ? QColor(255, 110, 90) : QColor(190, 30, 20);
    t.caution = dark ? QColor(240, 175, 60) : QColor(170, 95, 0);
    t.lineWidth = presenter ? 3.5 : 1.5;
    t.fontPointSize = presenter ? 18 : 10;
    return t;
}

QColor PlotTheme::componentColor(const QString& key)
{
    // The registry gives each component a colour role; an unknown key is drawn as overhead.
    const ComponentInfo* c = findComponent(key.toStdString());
    return roleColor(c ? c->colour : ColourRole::Grey);
}

QColor PlotTheme::roleColor(ColourRole role)
{
    // Okabe & Ito (2008), distinguishable with the common colour-vision deficiencies.
    switch (role) {
    case ColourRole::Blue:
        return QColor(0x00, 0x72, 0xB2);
    case ColourRole::SkyBlue:
        return QColor(0x56, 0xB4, 0xE9);
    case ColourRole::BluishGreen:
        return QColor(0x00, 0x9E, 0x73);
    case ColourRole::Orange:
        return QColor(0xE6, 0x9F, 0x00);
    case ColourRole::Vermillion:
        return QColor(0xD5, 0x5E, 0x00);
    case ColourRole::ReddishPurple:
        return QColor(0xCC, 0x79, 0xA7);
    case ColourRole::Yellow:
        return QColor(0xF0, 0xE4, 0x42);
    case ColourRole::Grey:
        break;
    }
    return QColor(0x99, 0x99, 0x99);
}

QFont PlotTheme::font(int delta) const
{
    QFont f;
    // The family the default resolves to ("DejaVu Sans", not fontconfig's "Sans Serif" alias):
    // an exported SVG names it, and a viewer knows a real family, not the alias.
    static const QString family = QFontInfo(f).family();
    f.setFamily(family);
    f.setPointSize(fontPointSize + delta);
    return f;
}

void PlotTheme::apply(QCustomPlot* plot) const
{
    plot->setBackground(background);
    for (QCPAxis* axis : { plot->xAxis, plot->yAxis, plot->xAxis2, plot->yAxis2 }) {
        const QPen pen(foreground, lineWidth > 2 ? 2 : 1);
        axis->setBasePen(pen);
        axis->setTickPen(pen);
        axis->setSubTickPen(pen);
        axis->setTickLabelColor(foreground);
        axis->setLabelColor(foreground);
        axis->setTickLabelFont(font());
        axis->setLabelFont(font(1));
        axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
        axis->grid()->setZeroLinePen(Qt::NoPen);
    }
    if (plot->legend) {
        plot->legend->setBrush(background);
        plot->legend->setTextColor(foreground);
        plot->legend->setBorderPen(QPen(grid));
        plot->legend->setFont(font());
    }
}

QCustomPlot* createPlotIn(QWidget* host)
{
    auto* plot = new QCustomPlot(host);
    auto* layout = new QVBoxLayout(host);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot);
    plot->setMinimumSize(260, 200); // two side by side still fit a 1280x720 screen (issue 16)
    return plot;
}

void placeLegendBelow(QCustomPlot* plot)
{
    auto* row = new QCPLayoutGrid;
    plot->plotLayout()->addElement(1, 0, row);
    row->setMargins(QMargins(6, 0, 6, 6));
    row->addElement(0, 0, plot->legend); // takes the legend out of the axis rect's inset layout
    plot->legend->setWrap(4);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst, true); // true: re-lay the existing items
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
}

void fitLegendColumns(QCustomPlot* plot, int width, const PlotTheme& theme)
{
    // The longest name with its swatch and padding, measured at the legend's font: a fixed guess of
    // 19 characters cut "Activation peak" and "Unused margin" on the Serving tab beside a lesson.
    const QFontMetricsF fm(theme.font());
    double longest = theme.fontPointSize * 6.0; // a legend still empty
    for (int i = 0; i < plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
            longest = std::max(longest, fm.horizontalAdvance(item->plottable()->name()));
    const QSize icon = plot->legend->iconSize();
    const double padding = icon.width() + plot->legend->iconTextPadding() + 2.0 * fm.height();
    const int columns = std::clamp(int(width / (longest + padding)), 1, 4);
    if (plot->legend->wrap() == columns)
        return;
    plot->legend->setWrap(columns);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst, true);
}

QPalette lightPalette()
{
    QPalette p(QColor(239, 239, 239)); // Fusion's light window colour
    p.setColor(QPalette::Base, Qt::white);
    p.setColor(QPalette::Text, QColor(20, 20, 20));
    p.setColor(QPalette::WindowText, QColor(20, 20, 20));
    p.setColor(QPalette::Highlight, QColor(0, 114, 178));
    for (auto role : { QPalette::WindowText, QPalette::Text, QPalette::ButtonText })
        p.setColor(QPalette::Disabled, role, QColor(150, 150, 150));
    return p;
}

PlotTheme exportTheme(bool dark, QSize size)
{
    PlotTheme t = PlotTheme::fromPalette(dark ? darkPalette() : lightPalette(), false);
    t.fontPointSize = std::clamp(size.height() / 56, 9, 40);
    t.lineWidth = std::clamp(size.height() / 450.0, 1.5, 6.0);
    return t;
}

QPalette darkPalette()
{
    QPalette p;
    const QColor window(37, 37, 40), base(28, 28, 30), text(230, 230, 230), disabled(130, 130, 130);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, QColor(86, 180, 233));
    p.setColor(QPalette::Highlight, QColor(0, 114, 178));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::PlaceholderText, disabled);
    for (auto role : { QPalette::WindowText, QPalette::Text, QPalette::ButtonText })
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

} // namespace vramlab
