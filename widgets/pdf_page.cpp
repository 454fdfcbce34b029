// SPDX-License-Identifier: MIT
#include "pdf_page.h"

#include <algorithm>
#include <cmath>

namespace vramlab {

namespace {

constexpr double kPaperMarginPt = 36; // half an inch: inside any printer's unprintable edge

} // namespace

QString pdfPageName(PdfPage page)
{
    switch (page) {
    case PdfPage::A4:
        return QStringLiteral("a4");
    case PdfPage::Letter:
        return QStringLiteral("letter");
    case PdfPage::Slide:
        break;
    }
    return QStringLiteral("slide");
}

QStringList pdfPageNames()
{
    return { pdfPageName(PdfPage::Slide), pdfPageName(PdfPage::A4), pdfPageName(PdfPage::Letter) };
}

std::optional<PdfPage> parsePdfPage(const QString& name)
{
    for (PdfPage p : { PdfPage::Slide, PdfPage::A4, PdfPage::Letter })
        if (name == pdfPageName(p))
            return p;
    return std::nullopt;
}

QSize slideSize(QSize chart)
{
    return { int(std::lround(chart.height() * 16.0 / 9.0)), chart.height() };
}

PdfPlacement pdfPlacement(PdfPage page, QSizeF chart)
{
    PdfPlacement out;
    double margin = kPaperMarginPt;
    if (page == PdfPage::Slide) {
        out.pageSize = QPageSize(QSizeF(slideSize(chart.toSize())), QPageSize::Point);
        margin = 0;
    } else {
        out.pageSize = QPageSize(page == PdfPage::A4 ? QPageSize::A4 : QPageSize::Letter);
    }
    const QSizeF portrait = out.pageSize.sizePoints();
    auto scaleIn = [&](QSizeF pageSize) {
        return std::min(
            (pageSize.width() - 2 * margin) / chart.width(), (pageSize.height() - 2 * margin) / chart.height());
    };
    // Paper turns whichever way lets the chart be larger: a wide chart prints landscape.
    const QSizeF landscape = portrait.transposed();
    const bool turn = page != PdfPage::Slide && scaleIn(landscape) > scaleIn(portrait);
    out.orientation = turn ? QPageLayout::Landscape : QPageLayout::Portrait;
    out.pagePoints = turn ? landscape : portrait;
    const double s = scaleIn(out.pagePoints);
    const QSizeF drawn = chart * s;
    out.target = QRectF(
        QPointF((out.pagePoints.width() - drawn.width()) / 2, (out.pagePoints.height() - drawn.height()) / 2), drawn);
    return out;
}

} // namespace vramlab
