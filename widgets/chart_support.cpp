// SPDX-License-Identifier: MIT
#include "chart_support.h"

#include <QLocale>

namespace vramlab {

QString componentLabel(const QString& key)
{
    static const QHash<QString, QString> labels = {
        { QStringLiteral("weights"), QStringLiteral("Weights") },
        { QStringLiteral("master_weights"), QStringLiteral("Master weights") },
        { QStringLiteral("gradients"), QStringLiteral("Gradients") },
        { QStringLiteral("optimizer_states"), QStringLiteral("Optimizer states") },
        { QStringLiteral("activations"), QStringLiteral("Activations") },
        { QStringLiteral("kv_cache"), QStringLiteral("KV cache") },
        { QStringLiteral("overhead"), QStringLiteral("Overhead") },
    };
    return labels.value(key, key);
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
    return r.fits
        ? QStringLiteral("FITS: %1 of %2, %3 free").arg(bytesText(r.peak), bytesText(r.usableBytes), bytesText(room))
        : QStringLiteral("DOES NOT FIT: %1 of %2, %3 over")
              .arg(bytesText(r.peak), bytesText(r.usableBytes), bytesText(-room));
}

QString computeText(const Report& r)
{
    const FlopsEstimate& f = r.flops;
    QString text
        = QStringLiteral("%1 per step · %2 per token")
              .arg(QString::fromStdString(formatFlops(f.perStep)), QString::fromStdString(formatFlops(f.perToken)));
    if (f.stepTimeS > 0)
        text += QStringLiteral(" · %1 s per step · %2 tokens/s at %3% MFU of %4 TFLOP/s")
                    .arg(QString::number(f.stepTimeS, 'g', 4),
                        QLocale(QLocale::English).toString(qlonglong(f.tokensPerS)))
                    .arg(qRound(f.mfu * 100))
                    .arg(f.peakTflops);
    return text;
}

} // namespace vramlab
