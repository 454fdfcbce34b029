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
    return r.fits ? QStringLiteral("FITS: %1 of %2, %3 free")
                        .arg(bytesText(r.peak), QString::fromStdString(capacityText(r)), bytesText(room))
                  : QStringLiteral("DOES NOT FIT: %1 of %2, %3 over")
                        .arg(bytesText(r.peak), QString::fromStdString(capacityText(r)), bytesText(-room));
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
