// SPDX-License-Identifier: MIT
#pragma once

#include "autosave_file.h"
#include "chart_export.h"
#include "plot_theme.h"
#include "vramlab/deepspeed_config.h"

#include <QMainWindow>
#include <QStringList>

#include <functional>
#include <optional>

class QFrame;
class QLabel;
class QTabWidget;
class QComboBox;
class QMenu;
class QAction;
class QTimer;
class QDockWidget;

namespace vramlab {

class ScenarioDocument;
class ParameterPanel;
class StackedBarChart;
class BreakdownTable;
class SweepChart;
class CompareView;
class ExplainView;
class TimelineChart;
class PlanView;
class ServingPlanView;
class LessonPlayer;
class ProbeView;
class Page;
class BreakdownPage;
class SweepPage;
class ComparePage;
class ExplainPage;
class ServingPage;
class TimelinePage;
class PlanPage;
class ProbePage;

/// The explorer: parameters on the left; the memory picture, a sweep, comparisons and
/// the explanation in tabs; the verdict and the compute figures above them.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    ScenarioDocument* document() const { return m_doc; }
    ParameterPanel* panel() const { return m_panel; }
    /// The tabs, each a Page that follows the document (found by object name: "sweepPage").
    QTabWidget* tabs() const { return m_tabs; }
    const QVector<Page*>& pages() const { return m_pages; }
    Page* page(const QString& objectName) const;
    BreakdownPage* breakdownPage() const { return m_breakdown; }
    SweepPage* sweepPage() const { return m_sweep; }
    ComparePage* comparePage() const { return m_compare; }
    ExplainPage* explainPage() const { return m_explain; }
    ServingPage* servingPage() const { return m_serving; }
    TimelinePage* timelinePage() const { return m_timeline; }
    PlanPage* planPage() const { return m_plan; }
    ProbePage* probePage() const { return m_probe; }
    StackedBarChart* chart() const;
    BreakdownTable* table() const;
    SweepChart* sweepChart() const;
    CompareView* compareView() const;
    ExplainView* explainView() const;
    TimelineChart* timelineChart() const;
    QComboBox* timelineStep() const;
    PlanView* planView() const;
    ServingPlanView* servingPlanView() const;
    ProbeView* probeView() const;
    QLabel* verdictLabel() const { return m_verdict; }
    LessonPlayer* lessonPlayer() const { return m_lessons; }
    /// Starts a lesson file (":/lessons/..." for the shipped ones) in the lesson dock; on
    /// failure the banner names the file, the step and the key.
    bool openLesson(const QString& path);
    /// Closes the lesson dock; the scenario of the last step stays in the explorer.
    void leaveLesson();
    /// The message of the last failed open or save, shown in the window's banner.
    const QString& lastError() const { return m_lastError; }

    /// Opens a scenario or a Hugging Face config.json; on failure the current scenario
    /// stays and the banner says why.
    bool openFile(const QString& path);
    /// Applies a DeepSpeed config to the run (vramlab-cli import-deepspeed), one undoable edit; on a refusal
    /// the scenario stays and the banner names the file and the key. Returns what it mapped and left out.
    std::optional<DeepSpeedImport> applyDeepSpeedFile(const QString& path);
    /// The same for a torchtitan TOML (vramlab-cli import-torchtitan): the model and the run, not the GPUs.
    std::optional<ConfigImport> applyTorchtitanFile(const QString& path);
    std::optional<ConfigImport> applyTrlFile(const QString& path);
    std::optional<ConfigImport> applyAxolotlFile(const QString& path);
    /// Asks to save unsaved (or restored) work first; false when the user cancels.
    bool maybeSave();
    /// A file named on the command line (or dropped): restored unsaved work wins unless the
    /// user says otherwise, so it asks first.
    bool openRequested(const QString& path);
    bool saveTo(const QString& path);
    /// The chart on screen (the current page's) as an export kind, with its scenarios.
    ChartKind currentChart(QVector<Scenario>* scenarios, QStringList* labels) const;
    /// File > Export without the dialog: the current chart (or report, by extension) to `path`.
    bool exportTo(const QString& path, QSize size, bool dark, PdfPage pdfPage = PdfPage::Slide);
    /// Where File > Export proposes to write `kind`: the last export's folder (else home),
    /// named after the scenario file and the chart.
    QString suggestedExportPath(ChartKind kind) const;
    void setDarkTheme(bool dark);
    void setPresenterMode(bool on);
    /// Restores the last session's window and scenario (QSettings). When the last session
    /// ended without closing (a crash) and left unsaved work, offers it back (`ask`: show
    /// the question; tests pass false and call restoreAutosave()).
    void restoreSession(bool ask = true);
    /// This window's unsaved-work file (one per window: see AutosaveFile).
    QString autosavePath() const { return m_autosaveFile.path(); }
    /// This window's unsaved work is on disk, or a window that did not close left some.
    bool hasAutosave() const;
    /// Restores the newest work a window that did not close left behind, and removes its file.
    bool restoreAutosave();
    /// Writes the unsaved scenario now (the timer does it 1.5 s after the last edit).
    void autosaveNow();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    /// applyDeepSpeedFile, applyTorchtitanFile, applyTrlFile and applyAxolotlFile: read, apply to a copy, estimate,
    /// then one undoable edit.
    std::optional<ConfigImport> applyConfigFile(const QString& path, const QString& framework,
        const std::function<ConfigImport(Scenario&, const std::string&)>& apply);
    /// File > Apply … config…: pick the file, apply it, list what it mapped and left out.
    void addApplyConfigAction(QMenu* menu, const QString& label, const QString& framework, const QString& filter,
        std::optional<ConfigImport> (MainWindow::*apply)(const QString&));

    void buildMenus();
    /// The header (verdict, compute figures) and the title; each page follows the document itself.
    void updateHeader();
    /// Shrinks and moves the window into the available area of its screen.
    void fitToScreen();
    void fitLessonLayout(); ///< folds the parameters panel while a lesson needs the room (queued)
    void fitLessonLayoutNow();
    void updateTitle();
    /// A serving scenario's verdict: whether the engine starts, its KV cache and concurrency.
    void updateServingVerdict(const PlotTheme& theme);
    void showBanner(const QString& text);
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    bool save();
    bool saveAs();
    void applyTheme();
    void setResultMasked(bool masked);

    ScenarioDocument* m_doc;
    ParameterPanel* m_panel;
    BreakdownPage* m_breakdown;
    SweepPage* m_sweep;
    ComparePage* m_compare;
    ExplainPage* m_explain;
    ServingPage* m_serving;
    TimelinePage* m_timeline;
    PlanPage* m_plan;
    ProbePage* m_probe;
    QVector<Page*> m_pages;
    QTabWidget* m_tabs;
    QLabel* m_verdict;
    QLabel* m_compute;
    QLabel* m_banner;
    QFrame* m_bannerFrame = nullptr; ///< the banner with its dismiss button
    QMenu* m_recentMenu = nullptr;
    QAction* m_darkAction = nullptr;
    QAction* m_presenterAction = nullptr;
    QStringList m_recent;
    QString m_lastError;
    bool m_dark = false;
    bool m_presenter = false;
    bool m_panelFoldedForLesson = false; ///< fitLessonLayout() folded the parameters panel
    bool m_lessonLayoutQueued = false;
    /// The tab a lesson is about: Breakdown, or Serving for a serving lesson.
    Page* m_lessonPage = nullptr;
    QTimer* m_autosave;
    AutosaveFile m_autosaveFile;
    LessonPlayer* m_lessons;
    QDockWidget* m_lessonDock;
};

} // namespace vramlab
