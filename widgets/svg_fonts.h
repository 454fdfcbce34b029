// SPDX-License-Identifier: MIT
#pragma once

#include <QByteArray>

namespace vramlab {

/// `svg` with a CSS generic family (sans-serif, or monospace for a fixed-pitch font) ending
/// every font-family attribute: QSvgGenerator names the font's family alone, and a viewer
/// that lacks it would fall back to its default, often a serif.
QByteArray withGenericFontFamilies(const QByteArray& svg);

} // namespace vramlab
