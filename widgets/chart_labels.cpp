// SPDX-License-Identifier: MIT
#include "chart_labels.h"

#include "qcustomplot_include.h"

#include <QFontMetrics>

#include <algorithm>

namespace vramlab {

QRectF textItemRect(const QCPItemText* item)
{
    // QCPItemText::draw: the text's bounding rect grown by the padding, anchored at the
    // position by the position alignment (getTextDrawPoint), in the item's font.
    const QFontMetrics metrics(item->font());
    const QRect text = metrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip | item->textAlignment(), item->text());
    const QMargins pad = item->padding();
    QRectF box(text.adjusted(-pad.left(), -pad.top(), pad.right(), pad.bottom()));
    const QPointF at = item->position->pixelPosition();
    const Qt::Alignment align = item->positionAlignment();
    double x = at.x(), y = at.y();
    if (align & Qt::AlignHCenter)
        x -= box.width() / 2;
    else if (align & Qt::AlignRight)
        x -= box.width();
    if (align & Qt::AlignVCenter)
        y -= box.height() / 2;
    else if (align & Qt::AlignBottom)
        y -= box.height();
    box.moveTopLeft(QPointF(x, y));
    return box;
}

QRectF liftClear(QCPItemText* item, const QVector<QRectF>& placed)
{
    QRectF box = textItemRect(item);
    // Each pass clears one label it meets, so at most one pass per placed label.
    for (qsizetype pass = 0; pass <= placed.size(); ++pass) {
        const auto met
            = std::find_if(placed.begin(), placed.end(), [&](const QRectF& other) { return box.intersects(other); });
        if (met == placed.end())
            break;
        const double up = box.bottom() - met->top() + 2;
        const QPointF at = item->position->pixelPosition();
        item->position->setPixelPosition(QPointF(at.x(), at.y() - up));
        box.translate(0, -up);
    }
    return box;
}

} // namespace vramlab
