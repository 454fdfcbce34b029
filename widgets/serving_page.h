// SPDX-License-Identifier: MIT
#pragma once

#include "page.h"

class QLabel;
class QScrollArea;
class QPlainTextEdit;
class QWidget;

namespace vramlab {

class ServingBarChart;
class ConcurrencyChart;
class FigureStrip;
class StackingSplitter;

/// A serving scenario (run.mode "serving") as its engine budgets it: the memory of each rank
/// against the GPU with the engine's budget line, max concurrency against context length,
/// the KV cache, speed, the startup failure, and the startup lines the engine prints.
/// Another scenario gets one sentence saying what the page is for.
class ServingPage : public Page {
    Q_OBJECT
public:
    explicit ServingPage(ScenarioDocument* document, QWidget* parent = nullptr);
    QString title() const override { return QStringLiteral("Serving"); }
    /// File > Export writes the memory budget chart (its CSV: the segments' bytes).
    ChartKind chartKind() const override { return ChartKind::ServingBudget; }
    void setTheme(const PlotTheme& theme) override;

    ServingBarChart* budgetChart() const { return m_budget; }
    ConcurrencyChart* concurrencyChart() const { return m_concurrency; }
    /// The sentence for a scenario that does not serve, or the core's error.
    QLabel* message() const { return m_message; }
    /// The engine's startup error, empty when it starts.
    QLabel* failure() const { return m_failure; }
    /// A key number by name: "kvTokens", "gpuBlocks", "maxConcurrency", "ttft", "tpot", "throughput".
    QLabel* number(const QString& name) const;
    /// The caption over a key number ("Max concurrency at 29,000").
    QLabel* caption(const QString& name) const;
    QPlainTextEdit* log() const { return m_log; }
    /// The key numbers: one row, or two where the tab is narrow.
    FigureStrip* figures() const { return m_figures; }
    /// The two charts: side by side, or stacked where the tab is narrow.
    StackingSplitter* charts() const { return m_charts; }
    /// A lesson's "predict first": the page shows `message` instead of the engine's numbers until unmasked.
    void setMasked(bool masked, const QString& message = QString());
    bool isMasked() const { return m_masked; }

protected:
    void recompute() override;

private:
    void showOnly(const QString& message);

    QLabel* m_message;
    QLabel* m_failure;
    QLabel* m_notes;
    QWidget* m_content;
    QScrollArea* m_scroll = nullptr; ///< m_content, scrolling where the screen is too small for it
    FigureStrip* m_figures = nullptr;
    StackingSplitter* m_charts = nullptr;
    ServingBarChart* m_budget;
    ConcurrencyChart* m_concurrency;
    QPlainTextEdit* m_log;
    bool m_masked = false;
    QString m_maskMessage;
};

} // namespace vramlab
