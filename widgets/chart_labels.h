// SPDX-License-Identifier: MIT
#pragma once

#include <QRectF>
#include <QVector>

class QCPItemText;

namespace vramlab {

/// Where `item` draws its text box (padding included), in the plot's pixels, as
/// QCPItemText::draw places it (unrotated text); valid after the plot's layout.
QRectF textItemRect(const QCPItemText* item);

/// Moves `item` up, in whole steps past what it meets, until it overlaps none of `placed`;
/// returns where it ends.
QRectF liftClear(QCPItemText* item, const QVector<QRectF>& placed);

} // namespace vramlab
