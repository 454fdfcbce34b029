// SPDX-License-Identifier: MIT
#include "chart_export.h"

#include "chart_support.h"
#include "compare_view.h"
#include "explain_view.h"
#include "qcustomplot_include.h"
#include "stacked_bar_chart.h"
#include "sweep_chart.h"
#include "timeline_chart.h"
#include "vramlab/atomic_file.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/report_text.h"
#include "vramlab/sweep.h"
#include "vramlab/text_escape.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QPdfWriter>
#include <QSvgGenerator>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>

namespace vramlab {

namespace {

const QVector<QPair<ChartKind, QString>>& kinds()
{
    static const QVector<QPair<ChartKind, QString>> all = {
        { ChartKind::Breakdown, QStringLiteral("breakdown") },
        { ChartKind::SweepSequence, QStringLiteral("sweep-seq") },
        { ChartKind::SweepBatch, QStringLiteral("sweep-batch") },
        { ChartKind::CompareMethods, QStringLiteral("compare-methods") },
        { ChartKind::CompareZero, QStringLiteral("compare-zero") },
        { ChartKind::CompareFiles, QStringLiteral("compare-files") },
        { ChartKind::Timeline, QStringLiteral("timeline") },
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
    case SweepParam::SequenceLength:
        return QStringLiteral("sequence length (tokens)");
    case SweepParam::MicroBatchSize:
        return QStringLiteral("micro-batch (samples)");
    case SweepParam::ContextLength:
        return QStringLiteral("context length (tokens)");
    case SweepParam::BatchSize:
        return QStringLiteral("batch (sequences)");
    default:
        return QString::fromStdString(keyPathOf(p));
    }
}

StackedBarChart::Column columnFor(const QString& label, const Scenario& sc)
{
    try {
        return { label, estimate(sc), {} };
    } catch (const std::exception& e) {
        return { label, std::nullopt, QString::fromUtf8(e.what()) };
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
            out += ',' + QByteArray::number(qlonglong(pt.report.total)) + ','
                + QByteArray::number(qlonglong(pt.report.peak)) + ',' + pt.report.fitsCsv() + '\n';
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
        out += QByteArray::fromStdString(csvField(c.label.toStdString())); // labels come from file names
        for (const char* k : kComponentKeys)
            out += ',' + (c.report ? QByteArray::number(qlonglong(c.report->bytesOf(k))) : QByteArray());
        out += c.report ? ',' + QByteArray::number(qlonglong(c.report->total)) + ','
                + QByteArray::number(qlonglong(c.report->peak)) + ',' + c.report->fitsCsv() + '\n'
                        : QByteArray(",,,invalid\n");
    }
    return out;
}

/// A report table as HTML, built from its cells: each string is escaped where it is placed,
/// so a name can add no row, cell or markup (converting Markdown that holds names could).
QString htmlTable(const ReportTable& table)
{
    auto text = [](const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); };
    QString html = QStringLiteral("<table>\n<tr>");
    for (const std::string& h : table.header)
        html += QStringLiteral("<th>%1</th>").arg(text(h));
    html += QStringLiteral("</tr>\n");
    for (const auto& row : table.rows) {
        html += QStringLiteral("<tr>");
        for (const ReportCell& c : row) {
            QString cell = text(c.user) + text(c.text);
            if (!c.code.empty())
                cell += QStringLiteral(" (<code>%1</code>)").arg(text(c.code));
            if (c.strong)
                cell = QStringLiteral("<b>%1</b>").arg(cell);
            html += QStringLiteral("<td>%1</td>").arg(cell);
        }
        html += QStringLiteral("</tr>\n");
    }
    return html + QStringLiteral("</table>\n");
}

QVector<ChartKind> reviewCharts(const Scenario& sc)
{
    QVector<ChartKind> charts = { ChartKind::Breakdown, ChartKind::SweepSequence, ChartKind::CompareMethods };
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

ExportedChart::ExportedChart(
    ChartKind kind, const QVector<Scenario>& scenarios, const QStringList& labels, QSize size, const PlotTheme& theme)
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

QCustomPlot* ExportedChart::plot() const
{
    return m_plot;
}

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
    // The core's writer: one policy (links followed, special and read-only files refused,
    // fsync, stale temporaries removed) for scenarios and exports alike.
    try {
        writeFileAtomically(QFile::encodeName(path).toStdString(), data.toStdString());
        return true;
    } catch (const InputError& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}

QByteArray reviewHtml(const Scenario& sc, QSize chartSize, const PlotTheme& theme)
{
    const Report r = estimate(sc);
    // The core's tables as data: one source for the text of both reports.
    const QString settings = htmlTable(settingsTable(sc));
    const QString breakdown = htmlTable(breakdownTable(r));
    QString charts;
    for (ChartKind kind : reviewCharts(sc)) {
        const ExportedChart chart(kind, { sc }, {}, chartSize, theme);
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
                             .arg(QString::fromStdString(sc.name).toHtmlEscaped(),
                                 r.fits ? QStringLiteral("#00783c") : QStringLiteral("#be1e14"),
                                 verdictText(r).toHtmlEscaped(), settings, breakdown, charts, ExplainView::html(r),
                                 QCoreApplication::applicationVersion().toHtmlEscaped());
    return html.toUtf8();
}

namespace {

/// Puts `tmp` where `folder` is: exchanged with an existing folder (the old one is then
/// under `tmp`), or renamed. Returns errno, 0 on success.
int moveFolderIntoPlace(const std::string& tmp, const std::string& folder, bool exists)
{
    if (!exists)
        return ::rename(tmp.c_str(), folder.c_str()) == 0 ? 0 : errno;
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, folder.c_str(), RENAME_EXCHANGE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return errno;
    // A file system without RENAME_EXCHANGE: the old folder goes first (not undoable).
    std::error_code ec;
    std::filesystem::remove_all(folder, ec);
    return ::rename(tmp.c_str(), folder.c_str()) == 0 ? 0 : errno;
}

/// The review report OUT.md and its images in OUT_files/, all or nothing.
bool exportReviewMarkdown(
    const Scenario& sc, const QString& outPath, QSize size, const PlotTheme& theme, QString* error)
{
    namespace fs = std::filesystem;
    const QFileInfo out(outPath);
    const QString folderName = out.completeBaseName() + QStringLiteral("_files");
    const std::string mdPath = QFile::encodeName(outPath).toStdString();
    const std::string folder = QFile::encodeName(out.absoluteDir().filePath(folderName)).toStdString();
    const std::string tmp = temporaryPathFor(folder);
    std::error_code ec;
    auto fail = [&](const std::string& why) {
        fs::remove_all(tmp, ec);
        if (error)
            *error = QString::fromStdString(why);
        return false;
    };
    try {
        saveTarget(mdPath); // a read-only or special report file is refused before anything is written
        const fs::file_status old = fs::symlink_status(folder, ec);
        if (fs::exists(old) && !fs::is_directory(old))
            return fail(folder + ": exists and is not a folder; refusing to replace it");
        const bool existed = fs::is_directory(old);
        // The images go to a temporary folder that takes OUT_files/'s place only once all of
        // them are written: a failed export leaves no partial folder, and a killed one a
        // "<folder>.tmp-<pid>" that the next export removes.
        removeStaleTemporaries(folder);
        fs::remove_all(tmp, ec);
        if (!fs::create_directory(tmp, ec))
            return fail(folder + ": cannot create the folder for the images: " + ec.message());
        std::vector<std::pair<std::string, std::string>> images;
        for (ChartKind k : reviewCharts(sc)) {
            const QString name = chartKindName(k) + QStringLiteral(".png");
            writeFileAtomically(tmp + "/" + QFile::encodeName(name).toStdString(),
                ExportedChart(k, { sc }, {}, size, theme).png(2.0).toStdString());
            images.emplace_back(chartKindName(k).toStdString(), (folderName + QLatin1Char('/') + name).toStdString());
        }
        const std::string report = reviewMarkdown(sc, estimate(sc), images);
        if (const int err = moveFolderIntoPlace(tmp, folder, existed))
            return fail(folder + ": cannot move the images into place: " + std::strerror(err));
        syncFolderOf(folder);
        try {
            writeFileAtomically(mdPath, report);
        } catch (...) {
            // Undo: the old folder back (or none), so the failed export leaves nothing new.
            if (!existed || ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, folder.c_str(), RENAME_EXCHANGE) != 0)
                fs::remove_all(folder, ec);
            throw;
        }
        fs::remove_all(tmp, ec); // the previous images, now under the temporary name
        return true;
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}

} // namespace

bool exportScenario(ChartKind kind, const QVector<Scenario>& scenarios, const QStringList& labels,
    const QString& outPath, QSize size, const PlotTheme& theme, QString* error)
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
            const QByteArray data = ext == QLatin1String("png") ? chart.png(2.0)
                : ext == QLatin1String("svg")                   ? chart.svg()
                                                                : chart.pdf();
            return writeFileAtomic(outPath, data, error);
        }
        if (ext == QLatin1String("csv"))
            return writeFileAtomic(outPath, chartCsv(kind, scenarios, labels), error);
        if (ext == QLatin1String("html"))
            return writeFileAtomic(outPath, reviewHtml(scenarios.front(), size, theme), error);
        if (ext == QLatin1String("md"))
            return exportReviewMarkdown(scenarios.front(), outPath, size, theme, error);
    } catch (const std::exception& e) {
        return fail(QString::fromUtf8(e.what()));
    }
    return fail(QStringLiteral("expected an extension .png, .svg, .pdf, .csv, .md or .html, got \".%1\"").arg(ext));
}

} // namespace vramlab
