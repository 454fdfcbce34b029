// SPDX-License-Identifier: MIT
#pragma once

#include "pdf_page.h"
#include "plot_theme.h"
#include "vramlab/chart_data.h"
#include "vramlab/scenario.h"

#include <QByteArray>
#include <QSize>
#include <QString>
#include <QVector>

#include <memory>
#include <optional>

class QCustomPlot;
class QPaintDevice;
class QWidget;

namespace vramlab {

/// The chart's command-line name ("sweep-seq") as a QString.
QString chartName(ChartKind kind);
/// What the chart shows, for its exported title ("memory against sequence length").
QString chartTitle(ChartKind kind);

/// One chart drawn off screen at a given size, the same way the window draws it:
/// exporting from the window and from the command line use this, so the same scenario
/// and size give the same picture.
class ExportedChart {
public:
    /// `scenarios`: one (two or more for compare-files); `labels` name them (file names).
    ExportedChart(ChartKind kind, const QVector<Scenario>& scenarios, const QStringList& labels, QSize size,
        const PlotTheme& theme);
    ~ExportedChart();
    QCustomPlot* plot() const;
    QSize size() const { return m_size; }

    /// PNG at `scale` x the size (2 for crisp slides).
    QByteArray png(double scale = 2.0) const;
    /// SVG with text kept as text, titled with the chart's title.
    QByteArray svg() const;
    /// One-page PDF, vector, on `page` (pdf_page.h), its Title metadata the chart's title.
    QByteArray pdf(PdfPage page = PdfPage::Slide) const;
    /// "Scenario: what the chart shows", drawn over the chart.
    QString title() const { return m_title; }

private:
    void paintVector(QPaintDevice* device, const QRectF& target) const;

    std::unique_ptr<QWidget> m_widget;
    QCustomPlot* m_plot = nullptr;
    QSize m_size;
    QString m_title;
};

/// Writes `data` to `path` atomically (QSaveFile): a failed write leaves no half file.
bool writeFileAtomic(const QString& path, const QByteArray& data, QString* error);

/// Everything `vramlab --export` and File > Export can write, chosen by OUT's extension:
/// .png .svg .pdf (the chart; a PDF on `page`, a slide drawn at slideSize(size)), .csv (the
/// chart's data: chartCsv), .md (the review report with its chart images beside it), .html (one
/// self-contained review report with the charts inline). ChartKind::Plan writes the default
/// plan's table (exportPlan; a serving scenario's: exportServingPlan). Errors name the file and why.
bool exportScenario(ChartKind kind, const QVector<Scenario>& scenarios, const QStringList& labels,
    const QString& outPath, QSize size, const PlotTheme& theme, QString* error, PdfPage page = PdfPage::Slide);

/// The Plan tab's ranked setups (what its table shows) as .csv (planCsv) or .md (planMarkdown);
/// any other extension is refused with a sentence saying so.
bool exportPlan(const PlanResult& result, const QString& outPath, QString* error);
/// The serving plan's rows (servingPlanCsv, servingPlanMarkdown), as exportPlan.
bool exportServingPlan(const ServingPlanResult& result, const QString& outPath, QString* error);

/// A title and a subtitle over `plot` (exported serving charts: scenario, GPU, verdict).
void addChartTitle(QCustomPlot* plot, const QString& title, const QString& subtitle, const PlotTheme& theme);

/// The self-contained HTML review report (settings, verdict, breakdown, inline SVG charts,
/// FLOPs, formulas).
QByteArray reviewHtml(const Scenario& scenario, QSize chartSize, const PlotTheme& theme);

} // namespace vramlab
