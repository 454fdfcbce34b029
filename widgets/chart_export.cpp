// SPDX-License-Identifier: MIT
#include "chart_export.h"

#include "chart_support.h"
#include "compare_view.h"
#include "explain_view.h"
#include "qcustomplot_include.h"
#include "stacked_bar_chart.h"
#include "sweep_chart.h"
#include "timeline_chart.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/report_text.h"
#include "vramlab/sweep.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

namespace vramlab {

namespace {

const QVector<QPair<ChartKind, QString>>& kinds()
{
    static const QVector<QPair<ChartKind, QString>> all = {
        {ChartKind::Breakdown, QStringLiteral("breakdown")},         {ChartKind::SweepSequence, QStringLiteral("sweep-seq")},
        {ChartKind::SweepBatch, QStringLiteral("sweep-batch")},      {ChartKind::CompareMethods, QStringLiteral("compare-methods")},
        {ChartKind::CompareZero, QStringLiteral("compare-zero")},    {ChartKind::CompareFiles, QStringLiteral("compare-files")},
        {ChartKind::Timeline, QStringLiteral("timeline")},
    };
    return all;
}

SweepParam sweepParam(ChartKind kind, const Scenario& sc)
{
    const bool training = sc.run.mode == Mode::Training;
    if (kind == ChartKind::SweepSequence)
        return training ? SweepParam::SequenceLength : SweepParam::ContextLength;
    return training ? SweepParam::MicroBatchSize : SweepParam::BatchSize;
}

QString sweepLabel(SweepParam p)
{
    switch (p) {
    case SweepParam::SequenceLength: return QStringLiteral("sequence length (tokens)");
    case SweepParam::MicroBatchSize: return QStringLiteral("micro-batch (samples)");
    case SweepParam::ContextLength: return QStringLiteral("context length (tokens)");
    case SweepParam::BatchSize: return QStringLiteral("batch (sequences)");
    default: return QString::fromStdString(keyPathOf(p));
    }
}

StackedBarChart::Column columnFor(const QString& label, const Scenario& sc)
{
    try {
        return {label, estimate(sc), {}};
    } catch (const std::exception& e) {
        return {label, std::nullopt, QString::fromUtf8(e.what())};
    }
}

/// Step 2 of a training scenario (the step whose peak the report gives); throws for serving.
StepTimeline stepTwo(const Report& r)
{
    if (!r.stepInputs.training)
        throw InputError("run.mode", "expected training: the timeline chart simulates a training step");
    return simulateStep(r.stepInputs, 2);
}

/// Chart data as CSV: sweep points, the timeline's events, or one row per bar.
QByteArray chartCsv(ChartKind kind, const QVector<Scenario>& scenarios, const QStringList& labels)
{
    QByteArray out;
    if (kind == ChartKind::Timeline)
        return QByteArray::fromStdString(timelineCsv(stepTwo(estimate(scenarios.front()))));
    if (kind == ChartKind::Breakdown)
        return QByteArray::fromStdString(breakdownCsv(estimate(scenarios.front())));
    if (kind == ChartKind::SweepSequence || kind == ChartKind::SweepBatch) {
        const Scenario& sc = scenarios.front();
        const SweepParam p = sweepParam(kind, sc);
        const bool length = p == SweepParam::SequenceLength || p == SweepParam::ContextLength;
        out = QByteArray::fromStdString(keyPathOf(p));
        for (const char* k : kComponentKeys)
            out += QByteArray(",") + k;
        out += ",total,peak,fits\n";
        for (const SweepPoint& pt : sweep(sc, p, length ? 128 : 1, length ? 131072 : 512, 64, true)) {
            out += QByteArray::number(qlonglong(pt.value));
            for (const char* k : kComponentKeys)
                out += ',' + QByteArray::number(qlonglong(pt.report.bytesOf(k)));
            out += ',' + QByteArray::number(qlonglong(pt.report.total)) + ',' + QByteArray::number(qlonglong(pt.report.peak)) +
                   (pt.report.fits ? ",true\n" : ",false\n");
        }
        return out;
    }
    QVector<StackedBarChart::Column> cols;
    if (kind == ChartKind::CompareMethods)
        cols = CompareView::methodColumns(scenarios.front());
    else if (kind == ChartKind::CompareZero)
        cols = CompareView::zeroColumns(scenarios.front());
    else
        for (int i = 0; i < scenarios.size(); ++i)
            cols << columnFor(labels.value(i), scenarios[i]);
    out = "column";
    for (const char* k : kComponentKeys)
        out += QByteArray(",") + k;
    out += ",total,peak,fits\n";
    for (const auto& c : cols) {
        out += '"' + c.label.toUtf8().replace('"', "\"\"") + '"';
        for (const char* k : kComponentKeys)
            out += ',' + (c.report ? QByteArray::number(qlonglong(c.report->bytesOf(k))) : QByteArray());
        out += c.report ? ',' + QByteArray::number(qlonglong(c.report->total)) + ',' + QByteArray::number(qlonglong(c.report->peak)) +
                              (c.report->fits ? ",true\n" : ",false\n")
                        : QByteArray(",,,invalid\n");
    }
    return out;
}

/// Markdown tables (as report_text writes them) as HTML tables; other lines as paragraphs.
QString markdownTablesToHtml(const QString& md)
{
    QString html;
    bool inTable = false, header = true;
    for (const QString& line : md.split(QLatin1Char('\n'))) {
        if (!line.startsWith(QLatin1Char('|'))) {
            if (inTable)
                html += QStringLiteral("</table>\n");
            inTable = false;
            if (!line.trimmed().isEmpty())
                html += QStringLiteral("<p>%1</p>\n").arg(line.toHtmlEscaped());
            continue;
        }
        if (line.startsWith(QLatin1String("|---")))
            continue;
        if (!inTable) {
            html += QStringLiteral("<table>\n");
            inTable = true;
            header = true;
        }
        QString cells = line.mid(1, line.size() - 2);
        cells.replace(QLatin1String("\\|"), QStringLiteral("\x01"));
        html += QStringLiteral("<tr>");
        for (QString cell : cells.split(QLatin1Char('|'))) {
            cell = cell.trimmed().replace(QStringLiteral("\x01"), QStringLiteral("|")).toHtmlEscaped();
            cell.replace(QRegularExpression(QStringLiteral("\\*\\*(.*?)\\*\\*")), QStringLiteral("<b>\\1</b>"));
            cell.replace(QRegularExpression(QStringLiteral("`(.*?)`")), QStringLiteral("<code>\\1</code>"));
            html += header ? QStringLiteral("<th>%1</th>").arg(cell) : QStringLiteral("<td>%1</td>").arg(cell);
        }
        html += QStringLiteral("</tr>\n");
        header = false;
    }
    if (inTable)
        html += QStringLiteral("</table>\n");
    return html;
}

QVector<ChartKind> reviewCharts(const Scenario& sc)
{
    QVector<ChartKind> charts = {ChartKind::Breakdown, ChartKind::SweepSequence, ChartKind::CompareMethods};
    if (sc.run.mode == Mode::Training)
        charts << ChartKind::CompareZero << ChartKind::Timeline;
    return charts;
}

} // namespace

std::optional<ChartKind> parseChartKind(const QString& name)
{
    for (const auto& [kind, n] : kinds())
        if (n == name)
            return kind;
    return std::nullopt;
}

QString chartKindName(ChartKind kind)
{
    for (const auto& [k, n] : kinds())
        if (k == kind)
            return n;
    return {};
}

QStringList chartKindNames()
{
    QStringList names;
    for (const auto& [k, n] : kinds())
        names << n;
    return names;
}

ExportedChart::ExportedChart(ChartKind kind, const QVector<Scenario>& scenarios, const QStringList& labels, QSize size,
                             const PlotTheme& theme)
    : m_size(size)
{
    const Scenario& sc = scenarios.front();
    if (kind == ChartKind::Timeline) {
        auto* chart = new TimelineChart;
        chart->setTheme(theme);
        const Report r = estimate(sc);
        chart->setTimeline(stepTwo(r), r.stepInputs, r.usableBytes);
        m_plot = chart->plot();
        m_widget.reset(chart);
    } else if (kind == ChartKind::SweepSequence || kind == ChartKind::SweepBatch) {
        auto* chart = new SweepChart;
        chart->setTheme(theme);
        const SweepParam p = sweepParam(kind, sc);
        chart->showScenario(sc, p, sweepLabel(p));
        m_plot = chart->plot();
        m_widget.reset(chart);
    } else {
        auto* chart = new StackedBarChart;
        chart->setTheme(theme);
        QVector<StackedBarChart::Column> cols;
        if (kind == ChartKind::Breakdown)
            cols << columnFor(QString::fromStdString(sc.model.name), sc);
        else if (kind == ChartKind::CompareMethods)
            cols = CompareView::methodColumns(sc);
        else if (kind == ChartKind::CompareZero)
            cols = CompareView::zeroColumns(sc);
        else
            for (int i = 0; i < scenarios.size(); ++i)
                cols << columnFor(labels.value(i, QString::fromStdString(scenarios[i].name)), scenarios[i]);
        chart->setColumns(cols);
        m_plot = chart->plot();
        m_widget.reset(chart);
    }
    m_widget->resize(size);
    fitLegendColumns(m_plot, size.width(), theme); // a hidden widget gets no resize event
}

ExportedChart::~ExportedChart() = default;

QCustomPlot* ExportedChart::plot() const { return m_plot; }

QByteArray ExportedChart::png(double scale) const
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    m_plot->toPixmap(m_size.width(), m_size.height(), scale).save(&buffer, "PNG");
    return bytes;
}

void ExportedChart::paintVector(QPaintDevice* device) const
{
    QCPPainter painter;
    painter.begin(device);
    painter.setMode(QCPPainter::pmVectorized); // shapes and text as vectors, no cached pixmaps
    painter.setMode(QCPPainter::pmNoCaching);
    m_plot->toPainter(&painter, m_size.width(), m_size.height());
    painter.end();
}

QByteArray ExportedChart::svg() const
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator generator;
    generator.setOutputDevice(&buffer);
    generator.setSize(m_size);
    generator.setViewBox(QRect(QPoint(0, 0), m_size));
    generator.setTitle(QStringLiteral("VRAM Lab chart"));
    paintVector(&generator);
    return bytes;
}

QByteArray ExportedChart::pdf() const
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QPdfWriter writer(&buffer);
    writer.setResolution(72); // one pixel of the chart = one point of the page
    writer.setPageSize(QPageSize(QSizeF(m_size), QPageSize::Point));
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    writer.setCreator(QStringLiteral("VRAM Lab"));
    paintVector(&writer);
    return bytes;
}

bool writeFileAtomic(const QString& path, const QByteArray& data, QString* error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(data) != data.size() || !file.commit()) {
        if (error)
            *error = path + QStringLiteral(": cannot write: ") + file.errorString();
        file.cancelWriting();
        return false;
    }
    return true;
}

QByteArray reviewHtml(const Scenario& sc, QSize chartSize, const PlotTheme& theme)
{
    const Report r = estimate(sc);
    // Markdown tables from the core, turned into HTML: one source for the text of both reports.
    const QString settings = markdownTablesToHtml(QString::fromStdString(settingsMarkdown(sc)));
    const QString breakdown = markdownTablesToHtml(QString::fromStdString(breakdownMarkdown(r)));
    QString charts;
    for (ChartKind kind : reviewCharts(sc)) {
        const ExportedChart chart(kind, {sc}, {}, chartSize, theme);
        QByteArray svg = chart.svg();
        svg = svg.mid(svg.indexOf("<svg")); // inline: drop the XML prolog
        charts += QStringLiteral("<figure>%1<figcaption>%2</figcaption></figure>\n")
                      .arg(QString::fromUtf8(svg), chartKindName(kind).toHtmlEscaped());
    }
    const QString html = QStringLiteral(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%1 — VRAM Lab review</title>
<style>
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #1c1c1e; line-height: 1.45; }
table { border-collapse: collapse; margin: 1em 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; text-align: left; }
th { background: #f2f2f2; } code { font-size: 90%; } figure { margin: 1.5em 0; } figcaption { color: #666; }
.verdict { font-size: 1.4em; font-weight: bold; color: %2; }
</style></head><body>
<p class="verdict">%3</p>
<h2>Settings</h2>%4
<h2>Memory per GPU</h2>%5
<h2>Charts</h2>%6
%7
<p><em>Made with VRAM Lab %8; every figure is reproducible with <code>vramlab-cli estimate</code>.</em></p>
</body></html>
)")
                             .arg(QString::fromStdString(sc.name).toHtmlEscaped(), r.fits ? QStringLiteral("#00783c") : QStringLiteral("#be1e14"),
                                  verdictText(r).toHtmlEscaped(), settings, breakdown, charts, ExplainView::html(r),
                                  QCoreApplication::applicationVersion().toHtmlEscaped());
    return html.toUtf8();
}

bool exportScenario(ChartKind kind, const QVector<Scenario>& scenarios, const QStringList& labels, const QString& outPath,
                    QSize size, const PlotTheme& theme, QString* error)
{
    const QString ext = QFileInfo(outPath).suffix().toLower();
    auto fail = [&](const QString& why) {
        if (error)
            *error = outPath + QStringLiteral(": ") + why;
        return false;
    };
    if (scenarios.isEmpty())
        return fail(QStringLiteral("no scenario to export"));
    if (kind == ChartKind::CompareFiles && scenarios.size() < 2)
        return fail(QStringLiteral("--chart compare-files needs two scenario files or more"));
    const QFileInfo dir(QFileInfo(outPath).absolutePath());
    if (!dir.isDir())
        return fail(QStringLiteral("the folder does not exist"));
    if (!dir.isWritable())
        return fail(QStringLiteral("the folder is not writable"));
    try {
        if (ext == QLatin1String("png") || ext == QLatin1String("svg") || ext == QLatin1String("pdf")) {
            const ExportedChart chart(kind, scenarios, labels, size, theme);
            const QByteArray data = ext == QLatin1String("png") ? chart.png(2.0) : ext == QLatin1String("svg") ? chart.svg() : chart.pdf();
            return writeFileAtomic(outPath, data, error);
        }
        if (ext == QLatin1String("csv"))
            return writeFileAtomic(outPath, chartCsv(kind, scenarios, labels), error);
        if (ext == QLatin1String("html"))
            return writeFileAtomic(outPath, reviewHtml(scenarios.front(), size, theme), error);
        if (ext == QLatin1String("md")) {
            // The review report, its chart images in a folder beside it (OUT_files/).
            const Scenario& sc = scenarios.front();
            const QFileInfo out(outPath);
            const QString folderName = out.completeBaseName() + QStringLiteral("_files");
            const QString folder = out.absoluteDir().filePath(folderName);
            if (!QDir().mkpath(folder))
                return fail(QStringLiteral("cannot create ") + folder);
            std::vector<std::pair<std::string, std::string>> images;
            for (ChartKind k : reviewCharts(sc)) {
                const QString name = chartKindName(k) + QStringLiteral(".png");
                if (!writeFileAtomic(QDir(folder).filePath(name), ExportedChart(k, {sc}, {}, size, theme).png(2.0), error))
                    return false;
                images.emplace_back(chartKindName(k).toStdString(), (folderName + QLatin1Char('/') + name).toStdString());
            }
            return writeFileAtomic(outPath, QByteArray::fromStdString(reviewMarkdown(sc, estimate(sc), images)), error);
        }
    } catch (const std::exception& e) {
        return fail(QString::fromUtf8(e.what()));
    }
    return fail(QStringLiteral("expected an extension .png, .svg, .pdf, .csv, .md or .html, got \".%1\"").arg(ext));
}

} // namespace vramlab
