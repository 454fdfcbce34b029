// SPDX-License-Identifier: MIT
#include "stable_height_label.h"

#include <algorithm>

namespace vramlab {

StableHeightLabel::StableHeightLabel(QWidget* parent)
    : QLabel(parent)
{
    setWordWrap(true);
}

int StableHeightLabel::heightForWidth(int width) const
{
    const int h = QLabel::heightForWidth(width);
    if (m_tallest.size() > 16 && !m_tallest.contains(width))
        m_tallest.clear(); // layouts ask at a handful of widths; a resize brings new ones
    int& tallest = m_tallest[width];
    tallest = std::max(tallest, h);
    return tallest;
}

} // namespace vramlab
