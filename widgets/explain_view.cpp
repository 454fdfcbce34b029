// SPDX-License-Identifier: MIT
#include "explain_view.h"

#include "chart_support.h"
#include "plot_theme.h"

#include "vramlab/report_text.h"

#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextList>

namespace vramlab {

ExplainView::ExplainView(QWidget* parent)
    : QTextBrowser(parent)
{
    setOpenExternalLinks(false);
    document()->setUndoRedoEnabled(false); // patch() edits the page: nothing to undo, nothing kept
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
    if (r.allocatorReplayed) {
        // What the GPU's counters will read: the caching-allocator replay (the verdict above stays the live peak).
        h += QStringLiteral("</p><h3>Allocated, reserved, device</h3><p>A GPU run reports three peaks; compare a "
                            "measurement with its own counter.</p><ul>");
        for (const CounterRow& c : counterRows(r))
            h += QStringLiteral("<li><b>%1</b> %2: %3</li>").arg(view(c.label), bytesText(c.bytes), view(c.what));
        h += QStringLiteral("</ul><p>They come from replaying the step tensor by tensor through a model of PyTorch's "
                            "caching allocator (512 B rounding, 2 MiB small segments, 20 MiB segments for 1-10 MiB "
                            "requests, best fit, splitting and merging%1; %2). PyTorch releases its cached blocks "
                            "and retries before it raises out of memory, so reserved memory above the GPU is not an "
                            "out-of-memory by itself: the verdict uses the live peak with the safety margin.")
                 .arg(r.stepInputs.training && r.allocatorExtrapolated
                         ? QStringLiteral(", the deepest layers added by their steady increment")
                         : QString(),
                     QStringLiteral("not on the sweeps, fit solvers or planner, which use the live peak"));
        if (r.allocatorOutOfMemory)
            h += QStringLiteral(" The replay runs out of memory even after releasing the cached blocks.");
    } else if (!r.allocatorNote.empty()) {
        h += QStringLiteral("<br>Allocator counters: %1.").arg(QString::fromStdString(r.allocatorNote).toHtmlEscaped());
    }
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

void ExplainView::setReport(const Report* r, const QString& error, const QString& heading)
{
    QString text
        = r ? html(*r) : QStringLiteral("<h2>%1</h2><p>%2</p>").arg(heading.toHtmlEscaped(), error.toHtmlEscaped());
    if (text == m_html) // parsing and laying out the page again would show the same
        return;
    m_html = std::move(text);
    const int scroll = verticalScrollBar()->value();
    if (!patch(m_html))
        setHtml(m_html);
    verticalScrollBar()->setValue(scroll);
}

namespace {

/// The same place in the page's structure: the same paragraph format, in a list or not, in
/// the same kind of frame or table.
bool sameStructure(const QTextBlock& a, const QTextBlock& b)
{
    // (Not the block's own character format: a table cell's differs between a page QTextEdit
    // set and one parsed aside, and it only styles an empty paragraph.)
    if (a.blockFormat() != b.blockFormat() || !a.textList() != !b.textList())
        return false;
    if (a.textList() && a.textList()->format() != b.textList()->format())
        return false;
    const QTextFrame* fa = QTextCursor(a).currentFrame();
    const QTextFrame* fb = QTextCursor(b).currentFrame();
    return fa->format() == fb->format() && (fa->parentFrame() == nullptr) == (fb->parentFrame() == nullptr);
}

/// The block's text and character formats are those of `b`.
bool sameContent(const QTextBlock& a, const QTextBlock& b)
{
    if (a.text() != b.text())
        return false;
    QTextBlock::iterator i = a.begin(), j = b.begin();
    for (; !i.atEnd() && !j.atEnd(); ++i, ++j)
        if (i.fragment().text() != j.fragment().text() || i.fragment().charFormat() != j.fragment().charFormat())
            return false;
    return i.atEnd() && j.atEnd();
}

} // namespace

bool ExplainView::patch(const QString& html)
{
    QTextDocument* shown = document();
    if (shown->isEmpty())
        return false;
    QTextDocument fresh; // parsed only: it is never laid out
    fresh.setDefaultFont(shown->defaultFont());
    fresh.setDefaultStyleSheet(shown->defaultStyleSheet());
    fresh.setHtml(html);
    if (fresh.blockCount() != shown->blockCount())
        return false;
    QList<QPair<QTextBlock, QTextBlock>> changed;
    for (QTextBlock a = shown->begin(), b = fresh.begin(); a.isValid() && b.isValid(); a = a.next(), b = b.next()) {
        if (!sameStructure(a, b))
            return false; // another shape of page (a section more or less): set it whole
        if (!sameContent(a, b))
            changed.append({ a, b });
    }
    // Block by block, each its own edit: the layout shapes and lays out again only the
    // blocks whose text changed and moves the others.
    for (const auto& [a, b] : std::as_const(changed)) {
        QTextCursor c(a);
        c.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
        c.beginEditBlock();
        c.removeSelectedText();
        for (QTextBlock::iterator it = b.begin(); !it.atEnd(); ++it)
            c.insertText(it.fragment().text(), it.fragment().charFormat());
        c.endEditBlock();
    }
    return true;
}

} // namespace vramlab
