// SPDX-License-Identifier: MIT
#include "figure_strip.h"

#include <QGridLayout>
#include <QLabel>
#include <QResizeEvent>

#include <algorithm>

namespace vramlab {

FigureStrip::FigureStrip(QWidget* parent)
    : QWidget(parent)
    , m_grid(new QGridLayout(this))
{
    m_grid->setContentsMargins(0, 0, 0, 0);
}

void FigureStrip::addFigure(QLabel* caption, QLabel* value)
{
    m_figures.append(qMakePair(caption, value));
    arrange(int(m_figures.size()));
}

int FigureStrip::widthFor(int columns) const
{
    int sum = 0;
    for (int c = 0; c < columns; ++c) {
        int widest = 0;
        for (qsizetype i = c; i < m_figures.size(); i += columns) {
            const auto& [caption, value] = m_figures[i];
            widest = std::max({ widest, caption->minimumSizeHint().width(), value->sizeHint().width() });
        }
        sum += widest;
    }
    const int spacing = std::max(0, m_grid->horizontalSpacing());
    return sum + spacing * std::max(0, columns - 1);
}

QSize FigureStrip::minimumSizeHint() const
{
    const int two = int((m_figures.size() + 1) / 2);
    return { widthFor(std::max(1, two)), QWidget::minimumSizeHint().height() };
}

void FigureStrip::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    const int all = int(m_figures.size());
    const int want = event->size().width() >= widthFor(all) ? all : (all + 1) / 2;
    if (want != m_columns)
        arrange(want);
}

void FigureStrip::arrange(int columns)
{
    m_columns = std::max(1, columns);
    for (const auto& [caption, value] : m_figures) {
        m_grid->removeWidget(caption);
        m_grid->removeWidget(value);
    }
    for (int c = 0; c < m_grid->columnCount(); ++c)
        m_grid->setColumnStretch(c, 0);
    for (qsizetype i = 0; i < m_figures.size(); ++i) {
        const int row = int(i / m_columns) * 2, column = int(i % m_columns);
        m_grid->addWidget(m_figures[i].first, row, column);
        m_grid->addWidget(m_figures[i].second, row + 1, column);
        m_grid->setColumnStretch(column, 1);
    }
    updateGeometry();
}

} // namespace vramlab
