// SPDX-License-Identifier: MIT
#include "chart_widget.h"

#include "qcustomplot_include.h"

#include <QToolTip>

namespace vramlab {

ChartWidget::ChartWidget(QWidget* parent)
    : QWidget(parent)
    , m_plot(createPlotIn(this))
    , m_theme(PlotTheme::fromPalette(palette(), false))
{
}

void ChartWidget::setHoverText(std::function<QString(const QPointF& pixel)> text)
{
    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this, text = std::move(text)](QMouseEvent* e) {
        const QString tip = text(e->position());
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(e->globalPosition().toPoint(), tip, m_plot);
    });
}

void ChartWidget::setTheme(const PlotTheme& theme)
{
    m_theme = theme;
    fitLegendColumns(m_plot, width(), m_theme);
    m_theme.apply(m_plot);
    recolour();
    rebuild();
}

void ChartWidget::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) // QCustomPlot ignores the palette: recolour by hand
        setTheme(PlotTheme::fromPalette(palette(), m_theme.fontPointSize > 12));
}

void ChartWidget::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitLegendColumns(m_plot, width(), m_theme);
}

} // namespace vramlab
