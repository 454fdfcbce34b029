// SPDX-License-Identifier: MIT
#include "explain_view.h"

#include "chart_support.h"
#include "plot_theme.h"

#include <QScrollBar>

namespace vramlab {

ExplainView::ExplainView(QWidget* parent)
    : QTextBrowser(parent)
{
    setOpenExternalLinks(false);
}

QString ExplainView::html(const Report& r)
{
    auto view = [](std::string_view s) { return QString::fromUtf8(s.data(), int(s.size())).toHtmlEscaped(); };
    // Tensors by name, module, bytes of one copy and copies (compile's removed ones, ring attention's buffers).
    auto tensorList = [&view](const std::vector<ActivationTensor>& list) {
        QString l = QStringLiteral("<ul>");
        for (const ActivationTensor& t : list)
            l += QStringLiteral("<li>%1 (%2): %3 x %4</li>")
                     .arg(QString::fromStdString(t.name).toHtmlEscaped(), view(t.module), bytesText(t.bytesEach),
                         QString::number(t.count));
        return l + QStringLiteral("</ul>");
    };
    QString h
        = QStringLiteral("<h2>%1</h2><p>%2 parameters, %3 trainable. Memory per GPU (%4):</p><table cellpadding='4'>")
              .arg(QString::fromStdString(r.scenarioName).toHtmlEscaped(),
                  QString::fromStdString(formatCount(r.params.total)),
                  QString::fromStdString(formatCount(r.trainableParams)),
                  QString::fromStdString(r.stage).toHtmlEscaped());
    for (const char* key : kComponentKeys) {
        const Component* c = r.component(key);
        if (!c || (c->bytes == 0 && QLatin1String(key) != QLatin1String("weights")))
            continue;
        h += QStringLiteral(
            "<tr><td><span style='color:%1'>&#9632;</span> <b>%2</b></td><td align='right'><b>%3</b></td></tr>"
            "<tr><td colspan='2'>%4<br><code>%5</code></td></tr>")
                 .arg(PlotTheme::componentColor(QString::fromLatin1(key)).name(), view(c->label), bytesText(c->bytes),
                     view(c->explanation), QString::fromStdString(c->formula).toHtmlEscaped());
    }
    h += QStringLiteral("</table>");
    if (r.stepInputs.training && r.stepInputs.lastStage) // which framework behaviour made the loss tensors
        h += QStringLiteral("<h3>Loss</h3><p>%1 (%2): %3 saved by the final norm, LM head and loss, %4 alive while it "
                            "runs forward, %5 in its backward.</p>")
                 .arg(view(r.activations.lossSource), view(r.activations.lossFramework),
                     bytesText(r.activations.headBytes),
                     bytesText(r.activations.lossHeldBytes + r.activations.lossForwardBytes),
                     bytesText(r.activations.lossBackwardBytes));
    if (!r.activations.compileScope.empty()) { // run.compile: which eager tensors the compiled graph does not keep
        h += QStringLiteral(
            "<h3>torch.compile</h3><p>%1. AOTAutograd's min-cut partitioner recomputes in backward "
            "what only pointwise ops read there; matmul and attention inputs, reductions and random "
            "masks stay saved. Eager code would keep these too (%2 per micro-batch); the 16-bit inputs that replace "
            "fp32 copies are among the saved tensors:</p>")
                 .arg(view(r.activations.compileScope), bytesText(r.activations.compileRemovedBytes));
        h += tensorList(r.activations.compileRemoved);
    }
    if (r.activations.ringForwardBytes + r.activations.ringBackwardBytes > 0) { // context parallelism
        h += QStringLiteral(
            "<h3>Context parallelism</h3><p>Each GPU holds its share of the sequence (the saved tensors "
            "above). Ring attention (PyTorch context_parallel, allgather rotater) gathers the whole "
            "sequence's K and V for one layer at a time: %1 at the widest point of its forward (and "
            "of the recompute), %2 of its backward, freed when the layer's attention returns:</p>")
                 .arg(bytesText(r.activations.ringForwardBytes), bytesText(r.activations.ringBackwardBytes));
        h += tensorList(r.activations.ringBuffers);
    }
    h += QStringLiteral("<h3>Overhead, part by part</h3><ul>");
    for (const Component& p : r.overheadParts)
        h += QStringLiteral("<li><b>%1</b> %2: %3 <code>%4</code></li>")
                 .arg(view(p.label), bytesText(p.bytes), view(p.explanation),
                     QString::fromStdString(p.formula).toHtmlEscaped());
    h += QStringLiteral("</ul><h3>Verdict</h3><p>%1").arg(verdictText(r).toHtmlEscaped());
    if (r.peak != r.total)
        h += QStringLiteral("<br>The peak is above the sum: %1.")
                 .arg(QString::fromStdString(r.peakWhere).toHtmlEscaped());
    if (r.hostBytes > 0)
        h += QStringLiteral("<br>Host memory per GPU process: %1 (%2).")
                 .arg(bytesText(r.hostBytes), QString::fromStdString(r.hostFormula).toHtmlEscaped());
    h += QStringLiteral("</p><h3>Compute</h3><p>%1<br><code>%2</code></p>")
             .arg(computeText(r).toHtmlEscaped(), QString::fromStdString(r.flops.formula).toHtmlEscaped());
    if (!r.warnings.empty()) {
        h += QStringLiteral("<h3>Warnings</h3><ul>");
        for (const std::string& w : r.warnings)
            h += QStringLiteral("<li>%1</li>").arg(QString::fromStdString(w).toHtmlEscaped());
        h += QStringLiteral("</ul>");
    }
    return h;
}

void ExplainView::setReport(const Report* r, const QString& error)
{
    if (!r) {
        setHtml(QStringLiteral("<h2>Not a valid configuration</h2><p>%1</p>").arg(error.toHtmlEscaped()));
        return;
    }
    const int scroll = verticalScrollBar()->value();
    setHtml(html(*r));
    verticalScrollBar()->setValue(scroll);
}

} // namespace vramlab
