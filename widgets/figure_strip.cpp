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
    m_shown.append(true);
    arrange(shownCount());
}

void FigureStrip::setFigureShown(int index, bool shown)
{
    if (index < 0 || index >= m_shown.size() || m_shown[index] == shown)
        return;
    m_shown[index] = shown;
    m_figures[index].first->setVisible(shown);
    m_figures[index].second->setVisible(shown);
    const int all = shownCount();
    arrange(width() >= widthFor(all) ? all : (all + 1) / 2);
}

int FigureStrip::shownCount() const
{
    return int(std::count(m_shown.begin(), m_shown.end(), true));
}

QList<QPair<QLabel*, QLabel*>> FigureStrip::shownFigures() const
{
    QList<QPair<QLabel*, QLabel*>> out;
    for (qsizetype i = 0; i < m_figures.size(); ++i)
        if (m_shown[i])
            out.append(m_figures[i]);
    return out;
}

int FigureStrip::widthFor(int columns) const
{
    const QList<QPair<QLabel*, QLabel*>> figures = shownFigures();
    int sum = 0;
    for (int c = 0; c < columns; ++c) {
        int widest = 0;
        for (qsizetype i = c; i < figures.size(); i += columns) {
            const auto& [caption, value] = figures[i];
            widest = std::max({ widest, caption->minimumSizeHint().width(), value->sizeHint().width() });
        }
        sum += widest;
    }
    const int spacing = std::max(0, m_grid->horizontalSpacing());
    return sum + spacing * std::max(0, columns - 1);
}

QSize FigureStrip::minimumSizeHint() const
{
    const int two = (shownCount() + 1) / 2;
    return { widthFor(std::max(1, two)), QWidget::minimumSizeHint().height() };
}

void FigureStrip::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    const int all = shownCount();
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
    const QList<QPair<QLabel*, QLabel*>> figures = shownFigures();
    for (qsizetype i = 0; i < figures.size(); ++i) {
        const int row = int(i / m_columns) * 2, column = int(i % m_columns);
        m_grid->addWidget(figures[i].first, row, column);
        m_grid->addWidget(figures[i].second, row + 1, column);
        m_grid->setColumnStretch(column, 1);
    }
    updateGeometry();
}

} // namespace vramlab
