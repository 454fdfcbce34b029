// SPDX-License-Identifier: MIT
#include "stacking_splitter.h"

#include <QResizeEvent>

#include <algorithm>

namespace vramlab {

namespace {

int minimumWidthOf(const QWidget* w)
{
    return std::max(w->minimumWidth(), w->minimumSizeHint().width());
}

int minimumHeightOf(const QWidget* w)
{
    return std::max(w->minimumHeight(), w->minimumSizeHint().height());
}

} // namespace

StackingSplitter::StackingSplitter(QWidget* parent)
    : QSplitter(Qt::Horizontal, parent)
{
}

/// Every pane's extent (folded ones included: the room they need back), a handle between each two.
template <typename Extent> int StackingSplitter::sum(Extent extent) const
{
    int total = 0;
    for (int i = 0; i < count(); ++i)
        total += extent(widget(i));
    return total + handleWidth() * std::max(0, count() - 1);
}

int StackingSplitter::sideBySideWidth() const
{
    return sum(minimumWidthOf);
}

int StackingSplitter::stackedHeight() const
{
    return sum(minimumHeightOf);
}

QSize StackingSplitter::minimumSizeHint() const
{
    // The height is what the arrangement on show needs; the width the first pane's, which folding leaves.
    QSize s = QSplitter::minimumSizeHint();
    if (count() > 0)
        s.setWidth(minimumWidthOf(widget(0)));
    return s;
}

void StackingSplitter::resizeEvent(QResizeEvent* event)
{
    // The arrangement follows the size given, never the other way round: it cannot oscillate.
    const bool wide = event->size().width() >= sideBySideWidth();
    const bool tall = event->size().height() >= stackedHeight();
    const bool fold = (!wide && !tall) || event->size().height() < m_foldBelowHeight;
    const Qt::Orientation want = !wide && tall && !fold ? Qt::Vertical : Qt::Horizontal;
    const bool changed = want != orientation() || fold != m_folded;
    if (want != orientation())
        setOrientation(want);
    if (fold != m_folded) {
        m_folded = fold;
        for (int i = 1; i < count(); ++i)
            widget(i)->setVisible(!fold);
    }
    if (changed)
        updateGeometry(); // the minimum height changed with the arrangement
    QSplitter::resizeEvent(event);
}

} // namespace vramlab
