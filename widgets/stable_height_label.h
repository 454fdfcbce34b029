// SPDX-License-Identifier: MIT
#pragma once

#include <QHash>
#include <QLabel>

namespace vramlab {

/// A word-wrapped label whose height, at a given width, grows with its text but does not
/// shrink back: a figure that changes on every slider move (one line, then two, then one)
/// would otherwise move everything below it at each move, and a chart that is resized
/// redraws from scratch. A new width (the window resized) measures afresh.
class StableHeightLabel : public QLabel {
    Q_OBJECT
public:
    explicit StableHeightLabel(QWidget* parent = nullptr);
    int heightForWidth(int width) const override;

private:
    mutable QHash<int, int> m_tallest; ///< width -> the tallest height measured at it
};

} // namespace vramlab
