// SPDX-License-Identifier: MIT
#include "chart_support.h"

#include "vramlab/flops_model.h"
#include "vramlab/report_text.h"

#include <QLocale>

namespace vramlab {

QString componentLabel(const QString& key)
{
    const ComponentInfo* c = findComponent(key.toStdString());
    return c ? QString::fromUtf8(c->label.data(), qsizetype(c->label.size())) : key;
}

QString bytesText(Bytes bytes)
{
    return QString::fromStdString(formatBytes(bytes));
}
double toGiB(Bytes bytes)
{
    return double(bytes) / double(kGiB);
}

QString verdictText(const Report& r)
{
    if (!r.gpu)
        return QStringLiteral("%1 per GPU (no GPU chosen)").arg(bytesText(r.peak));
    const Bytes room = r.usableBytes - r.peak;
    const QString word = QString::fromLatin1(r.verdictWord().data(), qsizetype(r.verdictWord().size()));
    const QString capacity = QString::fromStdString(capacityText(r));
    if (r.fits && !r.lowerBound.empty()) // what is free is unknown: the peak is at least this
        return QStringLiteral("%1: at least %2 of %3, a lower bound").arg(word, bytesText(r.peak), capacity);
    return QStringLiteral("%1: %2 of %3, %4 %5")
        .arg(word, bytesText(r.peak), capacity, bytesText(room < 0 ? -room : room),
            room < 0 ? QStringLiteral("over") : QStringLiteral("free"));
}

QColor verdictColor(const Report& r, const PlotTheme& theme)
{
    return !r.gpu || (r.fits && r.lowerBound.empty()) ? theme.fits : r.fits ? theme.caution : theme.overflow;
}

QString computeText(const Report& r)
{
    const FlopsEstimate& f = r.flops;
    QString text
        = QStringLiteral("%1 per step · %2 per token")
              .arg(QString::fromStdString(formatFlops(f.perStep)), QString::fromStdString(formatFlops(f.perToken)));
    if (f.stepTimeS > 0)
        text += QStringLiteral(" · ") + QString::fromStdString(stepTimeSummary(f));
    return text;
}

} // namespace vramlab
