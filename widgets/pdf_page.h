// SPDX-License-Identifier: MIT
#pragma once

#include <QPageLayout>
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>

#include <optional>

namespace vramlab {

/// The page an exported PDF is: a 16:9 slide the chart fills, or a paper page with the
/// chart scaled into its margins (issue 16: decks and printed design reviews).
enum class PdfPage { Slide, A4, Letter };

/// "slide", "a4", "letter": what `--page` takes and QSettings keeps.
QString pdfPageName(PdfPage page);
QStringList pdfPageNames();
std::optional<PdfPage> parsePdfPage(const QString& name);

/// A slide keeps the chart's height (fonts scale with it) and takes the 16:9 width.
QSize slideSize(QSize chart);

/// Where a chart of `chart` pixels goes: the page (points, at 72 dpi one pixel = one point)
/// and the rectangle the chart is scaled into, centred, aspect kept.
struct PdfPlacement {
    QPageSize pageSize;
    QPageLayout::Orientation orientation = QPageLayout::Portrait;
    QSizeF pagePoints;
    QRectF target;
};
PdfPlacement pdfPlacement(PdfPage page, QSizeF chart);

} // namespace vramlab
