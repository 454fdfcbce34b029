// SPDX-License-Identifier: MIT
#include "chart_export.h"

#include "chart_support.h"
#include "concurrency_chart.h"
#include "explain_view.h"
#include "qcustomplot_include.h"
#include "serving_bar_chart.h"
#include "stacked_bar_chart.h"
#include "svg_fonts.h"
#include "sweep_chart.h"
#include "timeline_chart.h"
#include "vramlab/atomic_file.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/report_text.h"
#include "vramlab/scenario_name.h"
#include "vramlab/sweep.h"
#include "vramlab/text_escape.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgGenerator>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>

namespace vramlab {

namespace {

std::vector<std::string> stdLabels(const QStringList& labels)
{
    std::vector<std::string> out;
    for (const QString& l : labels)
        out.push_back(l.toStdString());
    return out;
}

/// A report table as HTML, built from its cells: each string is escaped where it is placed,
/// so a name can add no row, cell or markup (converting Markdown that holds names could).
QString htmlTable(const ReportTable& table)
{
    auto text = [](const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); };
    QString html = QStringLiteral("<div class=\"wide\"><table>\n<tr>");
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
            // Sizes and counts ("45.07 GiB", "48,394,036,736") stay on one line, right-aligned.
            static const QRegularExpression number(QStringLiteral(R"(^[-+]?[\d.,]+( [A-Za-z/%]+)?$)"));
            const bool numeric = c.user.empty() && number.match(QString::fromStdString(c.text)).hasMatch();
            html += numeric ? QStringLiteral("<td class=\"num\">%1</td>").arg(cell)
                            : QStringLiteral("<td>%1</td>").arg(cell);
        }
        html += QStringLiteral("</tr>\n");
    }
    return html + QStringLiteral("</table></div>\n");
}

QVector<ChartKind> reviewCharts(const Scenario& sc)
{
    QVector<ChartKind> charts = { ChartKind::Breakdown, ChartKind::SweepSequence, ChartKind::CompareMethods };
    if (sc.run.mode == Mode::Training)
        charts << ChartKind::CompareZero << ChartKind::Timeline;
    if (const std::optional<ServingReview> serving = servingReview(sc); serving && serving->error.empty())
        charts.prepend(ChartKind::ServingBudget); // what a serving scenario is about, first
    return charts;
}

} // namespace

void addChartTitle(QCustomPlot* plot, const QString& title, const QString& subtitle, const PlotTheme& theme)
{
    plot->plotLayout()->insertRow(0);
    auto* heading = new QCPTextElement(plot, title, theme.font(2));
    heading->setTextColor(theme.foreground);
    plot->plotLayout()->addElement(0, 0, heading);
    plot->plotLayout()->insertRow(1);
    auto* sub = new QCPTextElement(plot, subtitle, theme.font());
    sub->setTextColor(theme.foreground);
    plot->plotLayout()->addElement(1, 0, sub);
}

QString chartTitle(ChartKind kind)
{
    switch (kind) {
    case ChartKind::Breakdown:
        return QStringLiteral("memory per GPU");
    case ChartKind::SweepSequence:
        return QStringLiteral("memory against sequence length");
    case ChartKind::SweepBatch:
        return QStringLiteral("memory against micro-batch");
    case ChartKind::CompareMethods:
        return QStringLiteral("full fine-tuning, LoRA and QLoRA");
    case ChartKind::CompareZero:
        return QStringLiteral("ZeRO stages");
    case ChartKind::CompareFiles:
        return QStringLiteral("scenarios compared");
    case ChartKind::Timeline:
        return QStringLiteral("one training step over time");
    case ChartKind::ServingBudget:
        return QStringLiteral("serving memory budget");
    case ChartKind::ServingConcurrency:
        return QStringLiteral("max concurrency by context length");
    case ChartKind::Plan:
        break;
    }
    return QStringLiteral("plan");
}

/// The scenario's name, or what its settings say where it has none (a title's first words).
QString scenarioTitle(const Scenario& sc)
{
    return QString::fromStdString(sc.name.empty() ? describeScenario(sc) : sc.name);
}

QString chartName(ChartKind kind)
{
    const std::string_view name = chartKindName(kind);
    return QString::fromLatin1(name.data(), qsizetype(name.size()));
}

ExportedChart::ExportedChart(
    ChartKind kind, const QVector<Scenario>& scenarios, const QStringList& labels, QSize size, const PlotTheme& theme)
    : m_size(size)
    , m_title(scenarioTitle(scenarios.front()) + QStringLiteral(": ") + chartTitle(kind))
{
    // The core computes what each chart shows (chart_data.h); a chart it cannot make throws.
    const Scenario& sc = scenarios.front();
    if (kind == ChartKind::Plan)
        throw InputError("--chart", "the plan is a table, not a picture: export it as .csv or .md");
    if (kind == ChartKind::ServingBudget || kind == ChartKind::ServingConcurrency) {
        // As the Serving page draws them, titled for a slide: scenario, GPU and the engine's verdict.
        QCustomPlot* plot = nullptr;
        if (kind == ChartKind::ServingBudget) {
            ServingBudgetChart data = servingBudgetChartOf(sc);
            auto* chart = new ServingBarChart;
            m_widget.reset(chart);
            chart->setTheme(theme);
            chart->resize(size); // before the bars: their labels and legend follow the width
            chart->setChart(std::move(data));
            plot = chart->plot();
        } else {
            ConcurrencyCurve data = concurrencyCurveOf(sc);
            auto* chart = new ConcurrencyChart;
            m_widget.reset(chart);
            chart->setTheme(theme);
            chart->resize(size);
            chart->setCurve(std::move(data));
            plot = chart->plot();
        }
        const QString gpu = sc.run.gpu ? QString::fromStdString(sc.run.gpu->displayName) : QStringLiteral("no GPU");
        addChartTitle(
            plot, m_title, QStringLiteral("%1 · %2").arg(gpu, QString::fromStdString(servingVerdictOf(sc))), theme);
        m_plot = plot;
        return; // sized before its data, its legend laid out by the chart itself
    }
    // The scenario's own report: the timeline draws it, the subtitle states its verdict.
    const std::optional<Report> own = kind == ChartKind::CompareFiles ? std::nullopt : std::optional(estimate(sc));
    if (kind == ChartKind::Timeline) {
        auto* chart = new TimelineChart;
        chart->setTheme(theme);
        chart->setTimeline(timelineSeries(*own), own->stepInputs, own->usableBytes);
        m_plot = chart->plot();
        m_widget.reset(chart);
    } else if (kind == ChartKind::SweepSequence || kind == ChartKind::SweepBatch) {
        auto* chart = new SweepChart;
        chart->setTheme(theme);
        const SweepParam p = sweepParamFor(kind, sc);
        chart->setSeries(sweepSeries(sc, p), QString::fromStdString(sweepAxisLabel(p)));
        m_plot = chart->plot();
        m_widget.reset(chart);
    } else {
        auto* chart = new StackedBarChart;
        chart->setTheme(theme);
        chart->setColumns(StackedBarChart::columnsOf(
            chartColumns(kind, std::vector<Scenario>(scenarios.begin(), scenarios.end()), stdLabels(labels))));
        m_plot = chart->plot();
        m_widget.reset(chart);
    }
    // A slide names what it shows (issue 16): the scenario and the chart, then the GPU and
    // the verdict, as the serving charts do.
    QString subtitle = QStringLiteral("%1 scenarios side by side").arg(scenarios.size());
    if (own)
        subtitle = own->gpu ? QStringLiteral("%1 × %2 · %3")
                                  .arg(sc.run.parallelism.gpus)
                                  .arg(QString::fromStdString(own->gpu->displayName), verdictText(*own))
                            : QStringLiteral("no GPU chosen");
    addChartTitle(m_plot, m_title, subtitle, theme);
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

void ExportedChart::paintVector(QPaintDevice* device, const QRectF& target) const
{
    QCPPainter painter;
    painter.begin(device);
    painter.setMode(QCPPainter::pmVectorized); // shapes and text as vectors, no cached pixmaps
    painter.setMode(QCPPainter::pmNoCaching);
    painter.translate(target.topLeft()); // laid out at its own size, scaled onto the page
    painter.scale(target.width() / m_size.width(), target.height() / m_size.height());
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
    generator.setTitle(m_title.toHtmlEscaped()); // Qt 6 writes the title into the XML as it is given
    generator.setDescription(QStringLiteral("VRAM Lab chart"));
    paintVector(&generator, QRectF(QPointF(0, 0), QSizeF(m_size)));
    buffer.close();
    return withGenericFontFamilies(bytes);
}

QByteArray ExportedChart::pdf(PdfPage page) const
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    const PdfPlacement placement = pdfPlacement(page, QSizeF(m_size));
    QPdfWriter writer(&buffer);
    writer.setResolution(72); // one unit of the painter = one point of the page
    writer.setPageLayout(
        QPageLayout(placement.pageSize, placement.orientation, QMarginsF(0, 0, 0, 0), QPageLayout::Point));
    writer.setTitle(m_title);
    writer.setCreator(QStringLiteral("VRAM Lab"));
    paintVector(&writer, placement.target);
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
    const Report r = estimate(sc, EstimateOptions { .replayAllocator = true });
    // The core's tables as data: one source for the text of both reports.
    const QString settings = htmlTable(settingsTable(sc));
    const QString breakdown = htmlTable(breakdownTable(r));
    QString serving;
    if (const std::optional<ServingReview> v = servingReview(sc)) {
        auto text = [](const std::string& t) { return QString::fromStdString(t).toHtmlEscaped(); };
        serving = QStringLiteral("<h2>%1</h2>\n").arg(text(v->heading));
        if (!v->error.empty()) {
            serving += QStringLiteral("<p>Not estimated: %1</p>\n").arg(text(v->error));
        } else {
            serving += QStringLiteral("<p><b>%1</b></p>\n<ul>\n").arg(text(v->verdict));
            for (const std::string& f : v->facts)
                serving += QStringLiteral("<li>%1</li>\n").arg(text(f));
            serving += QStringLiteral("</ul>\n") + htmlTable(v->budget);
            if (!v->logLines.empty()) {
                QString log;
                for (const std::string& line : v->logLines)
                    log += text(line) + QLatin1Char('\n');
                serving += QStringLiteral("<p>Startup lines as the engine prints them:</p>\n<pre>%1</pre>\n").arg(log);
            }
        }
    }
    QString charts;
    for (ChartKind kind : reviewCharts(sc)) {
        const ExportedChart chart(kind, { sc }, {}, chartSize, theme);
        QByteArray svg = chart.svg();
        svg = svg.mid(svg.indexOf("<svg")); // inline: drop the XML prolog
        QString caption = chartTitle(kind);
        caption[0] = caption[0].toUpper(); // "Memory against sequence length"
        charts += QStringLiteral("<figure>%1<figcaption>%2</figcaption></figure>\n")
                      .arg(QString::fromUtf8(svg), caption.toHtmlEscaped());
    }
    const QString html = QStringLiteral(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%1 — VRAM Lab review</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #1c1c1e; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; margin: 1em 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; text-align: left; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
th { background: #f2f2f2; } code { font-size: 90%; } figure { margin: 1.5em 0; } figcaption { color: #666; }
figure svg { width: 100%; height: auto; }
.verdict { font-size: 1.4em; font-weight: bold; color: %2; }
@media print {
  @page { margin: 15mm; } /* A4 or Letter: the printer's paper */
  body { max-width: none; margin: 0; padding: 0; font-size: 10pt; }
  h2, h3 { break-after: avoid; } figure, tr { break-inside: avoid; }
  .wide { overflow: visible; } th { background: none; }
}
</style></head><body>
<h1>%1</h1>
<p class="verdict">%3</p>
<h2>Settings</h2>%4
<h2>Memory per GPU</h2>%5
%9<h2>Charts</h2>%6
%7
<p><em>Made with VRAM Lab %8; every figure is reproducible with <code>vramlab-cli estimate</code>.</em></p>
</body></html>
)")
                             .arg(scenarioTitle(sc).toHtmlEscaped(),
                                 verdictColor(r, PlotTheme::fromPalette(lightPalette(), false)).name(),
                                 verdictText(r).toHtmlEscaped(), settings, breakdown, charts, ExplainView::html(r),
                                 QCoreApplication::applicationVersion().toHtmlEscaped(), serving);
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
            const QString name = chartName(k) + QStringLiteral(".png");
            writeFileAtomically(tmp + "/" + QFile::encodeName(name).toStdString(),
                ExportedChart(k, { sc }, {}, size, theme).png(2.0).toStdString());
            images.emplace_back(std::string(chartKindName(k)), (folderName + QLatin1Char('/') + name).toStdString());
        }
        const std::string report
            = reviewMarkdown(sc, estimate(sc, EstimateOptions { .replayAllocator = true }), images);
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

/// A plan table as .csv or .md, written atomically; the text is made only for the one asked.
bool exportTable(const QString& outPath, QString* error, const std::function<std::string()>& csv,
    const std::function<std::string()>& markdown)
{
    const QString ext = QFileInfo(outPath).suffix().toLower();
    auto fail = [&](const QString& why) {
        if (error)
            *error = outPath + QStringLiteral(": ") + why;
        return false;
    };
    const QFileInfo dir(QFileInfo(outPath).absolutePath());
    if (!dir.isDir())
        return fail(QStringLiteral("the folder does not exist"));
    if (ext == QLatin1String("csv"))
        return writeFileAtomic(outPath, QByteArray::fromStdString(csv()), error);
    if (ext == QLatin1String("md"))
        return writeFileAtomic(outPath, QByteArray::fromStdString(markdown()), error);
    return fail(
        QStringLiteral("the Plan tab exports its table as .csv or .md (a picture of it is not a chart), got \".%1\"")
            .arg(ext));
}

} // namespace

bool exportPlan(const PlanResult& result, const QString& outPath, QString* error)
{
    return exportTable(
        outPath, error, [&] { return planCsv(result); }, [&] { return planMarkdown(result); });
}

bool exportServingPlan(const ServingPlanResult& result, const QString& outPath, QString* error)
{
    return exportTable(
        outPath, error, [&] { return servingPlanCsv(result); }, [&] { return servingPlanMarkdown(result); });
}

bool exportScenario(ChartKind kind, const QVector<Scenario>& scenarios, const QStringList& labels,
    const QString& outPath, QSize size, const PlotTheme& theme, QString* error, PdfPage page)
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
    if (kind == ChartKind::Plan) {
        try {
            const Scenario& sc = scenarios.front();
            return sc.run.serving ? exportServingPlan(defaultServingPlan(sc), outPath, error)
                                  : exportPlan(defaultPlan(sc), outPath, error);
        } catch (const std::exception& e) {
            return fail(QString::fromUtf8(e.what()));
        }
    }
    const QFileInfo dir(QFileInfo(outPath).absolutePath());
    if (!dir.isDir())
        return fail(QStringLiteral("the folder does not exist"));
    if (!dir.isWritable())
        return fail(QStringLiteral("the folder is not writable"));
    try {
        if (ext == QLatin1String("png") || ext == QLatin1String("svg") || ext == QLatin1String("pdf")) {
            const bool pdf = ext == QLatin1String("pdf");
            // A slide is drawn at 16:9 (the same height, so the same fonts) to fill its page.
            const ExportedChart chart(
                kind, scenarios, labels, pdf && page == PdfPage::Slide ? slideSize(size) : size, theme);
            const QByteArray data = pdf ? chart.pdf(page) : ext == QLatin1String("svg") ? chart.svg() : chart.png(2.0);
            return writeFileAtomic(outPath, data, error);
        }
        if (ext == QLatin1String("csv"))
            return writeFileAtomic(outPath,
                QByteArray::fromStdString(
                    chartCsv(kind, std::vector<Scenario>(scenarios.begin(), scenarios.end()), stdLabels(labels))),
                error);
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
