// SPDX-License-Identifier: MIT
#include "main_window.h"

#include "breakdown_page.h"
#include "breakdown_table.h"
#include "chart_support.h"
#include "compare_page.h"
#include "compare_view.h"
#include "explain_page.h"
#include "explain_view.h"
#include "export_dialog.h"
#include "lesson_player.h"
#include "parameter_panel.h"
#include "plan_page.h"
#include "plan_view.h"
#include "probe_page.h"
#include "probe_view.h"
#include "scenario_document.h"
#include "serving_page.h"
#include "serving_plan_view.h"
#include "stable_height_label.h"
#include "stacked_bar_chart.h"
#include "sweep_chart.h"
#include "sweep_page.h"
#include "timeline_chart.h"
#include "timeline_page.h"
#include "vramlab/axolotl_config.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/report_text.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_chart.h"
#include "vramlab/toml_reader.h"
#include "vramlab/torchtitan_config.h"
#include "vramlab/trl_config.h"
#include "vramlab/yaml_reader.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTextDocument>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>

// Resources of a static library must be registered by name, outside any namespace.
static void initResources()
{
    Q_INIT_RESOURCE(vramlab);
}

namespace vramlab {

namespace {
constexpr int kMaxRecent = 10;

/// Setting a style sheet re-polishes the widget even when it is the same text: the verdict's
/// colour is set on every edit, so only a new colour is set.
void setSheet(QLabel* label, const QString& sheet)
{
    if (label->styleSheet() != sheet)
        label->setStyleSheet(sheet);
}
// The PDF page of the last export, remembered as the export folder is.
const QString kPdfPageKey = QStringLiteral("exportPdfPage");
const QString kFileFilter = QStringLiteral("Scenario or Hugging Face config (*.json);;All files (*)");
} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_doc(new ScenarioDocument(this))
    , m_panel(new ParameterPanel(m_doc))
    , m_breakdown(new BreakdownPage(m_doc))
    , m_sweep(new SweepPage(m_doc))
    , m_compare(new ComparePage(m_doc))
    , m_explain(new ExplainPage(m_doc))
    , m_serving(new ServingPage(m_doc))
    , m_timeline(new TimelinePage(m_doc))
    , m_plan(new PlanPage(m_doc))
    , m_probe(new ProbePage(m_doc))
    , m_pages({ m_breakdown, m_sweep, m_compare, m_explain, m_serving, m_timeline, m_plan, m_probe })
    , m_tabs(new QTabWidget)
    , m_verdict(new StableHeightLabel)
    , m_compute(new StableHeightLabel)
    , m_banner(new QLabel)
    , m_autosave(new QTimer(this))
    , m_lessons(new LessonPlayer(m_doc))
    , m_lessonDock(new QDockWidget(QStringLiteral("Lesson"), this))
{
    initResources();
    setObjectName(QStringLiteral("MainWindow"));
    setAcceptDrops(true);
    setWindowIcon(QIcon(QStringLiteral(":/icons/vramlab.svg")));

    auto* scroll = new QScrollArea;
    scroll->setWidget(m_panel);
    scroll->setWidgetResizable(true);
    // The panel's minimum, not its preferred width, bounds the dock (and the window: issue 16);
    // the dock starts at the preferred width where the screen has room (fitToScreen).
    scroll->setMinimumWidth(m_panel->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 4);
    auto* dock = new QDockWidget(QStringLiteral("Parameters"), this);
    dock->setObjectName(QStringLiteral("ParametersDock"));
    dock->setWidget(scroll);
    // Closable: the View menu folds it away on a small screen and brings it back.
    dock->setFeatures(
        QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    m_lessonDock->setObjectName(QStringLiteral("LessonDock"));
    m_lessonDock->setWidget(m_lessons);
    m_lessonDock->setMinimumWidth(440);
    m_lessonDock->setVisible(false);
    addDockWidget(Qt::RightDockWidgetArea, m_lessonDock);
    connect(
        m_lessons, &LessonPlayer::highlightChanged, this, [this](const QStringList& keys, const QStringList& parts) {
            m_panel->highlight(keys);
            chart()->setEmphasis(parts);
        });
    connect(m_lessons, &LessonPlayer::resultMasked, this, &MainWindow::setResultMasked);
    connect(m_lessons, &LessonPlayer::left, this, &MainWindow::leaveLesson);

    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    // Text from files and processes is never markup: `<img src=/dev/zero>` in a value
    // would otherwise be loaded by the label.
    for (QLabel* l : { m_banner, m_verdict, m_compute })
        l->setTextFormat(Qt::PlainText);
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The error banner: red, selectable, and dismissable (×) once read.
    m_bannerFrame = new QFrame;
    m_bannerFrame->setObjectName(QStringLiteral("errorBanner"));
    m_bannerFrame->setStyleSheet(QStringLiteral(
        "#errorBanner { background: #b8251a; border-radius: 3px; } "
        "#errorBanner QLabel { color: white; padding: 8px; } "
        "#errorBanner QToolButton { color: white; border: none; font-weight: bold; padding: 4px 8px; }"));
    auto* bannerLayout = new QHBoxLayout(m_bannerFrame);
    bannerLayout->setContentsMargins(0, 0, 0, 0);
    bannerLayout->addWidget(m_banner, 1);
    auto* dismiss = new QToolButton;
    dismiss->setObjectName(QStringLiteral("dismissBanner"));
    dismiss->setText(QStringLiteral("×"));
    dismiss->setToolTip(QStringLiteral("Dismiss this message"));
    connect(dismiss, &QToolButton::clicked, this, [this] { m_bannerFrame->setVisible(false); });
    bannerLayout->addWidget(dismiss, 0, Qt::AlignTop);
    m_bannerFrame->setVisible(false);
    layout->addWidget(m_bannerFrame);
    QFont big = m_verdict->font();
    big.setPointSizeF(big.pointSizeF() * 1.5);
    big.setBold(true);
    m_verdict->setFont(big);
    m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_compute->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_compute->setWordWrap(true);
    m_verdict->setWordWrap(true); // a long verdict wraps instead of widening the window (issue 16)
    layout->addWidget(m_verdict);
    layout->addWidget(m_compute);

    // The window wires the pages together; each follows the document itself (Page).
    for (Page* page : std::as_const(m_pages)) {
        m_tabs->addTab(page, page->title());
        connect(page, &Page::failed, this, &MainWindow::showBanner);
    }
    layout->addWidget(m_tabs, 1);
    setCentralWidget(central);
    // Only the page on show bounds the window: a stacked layout otherwise takes the largest
    // minimum of all pages (Compare's width at presenter sizes, Serving's height), which a
    // lesson on a 1280 px projector or a 960x540 screen at 200 % cannot afford (issue 16).
    // Ignored pages report no minimum size.
    const auto sizeByCurrentPage = [this] {
        for (Page* page : std::as_const(m_pages)) {
            const auto policy = page == m_tabs->currentWidget() ? QSizePolicy::Preferred : QSizePolicy::Ignored;
            page->setSizePolicy(policy, policy);
        }
    };
    sizeByCurrentPage();
    connect(m_tabs, &QTabWidget::currentChanged, this, [this, sizeByCurrentPage] {
        sizeByCurrentPage();
        fitLessonLayout();
    });

    connect(m_panel, &ParameterPanel::importConfigRequested, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Import a Hugging Face config.json"),
            QString(), QStringLiteral("config.json (*.json)"));
        if (!path.isEmpty())
            openFile(path);
    });
    connect(m_doc, &ScenarioDocument::changed, this, &MainWindow::updateHeader);
    // Unsaved work survives a crash: written 1.5 s after the last edit, removed on a clean close.
    m_autosave->setSingleShot(true);
    m_autosave->setInterval(1500);
    connect(m_autosave, &QTimer::timeout, this, &MainWindow::autosaveNow);
    // On the undo stack's index, not on changed(): a push emits changed() before the stack
    // turns unclean, so the first edit after opening would never be written.
    connect(m_doc->undoStack(), &QUndoStack::indexChanged, this, [this] { m_autosave->start(); });
    connect(m_doc->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);

    buildMenus();
    applyTheme();
    statusBar()->showMessage(
        QStringLiteral("Move any control: the memory picture answers at once. Hover a bar for its formula."));
    resize(1400, 900);
    fitToScreen();
    updateHeader();
}

MainWindow::~MainWindow()
{
    // Children die after this body: keep their last signals from reaching a half-destroyed window.
    m_doc->undoStack()->disconnect(this);
    m_doc->disconnect(this);
    m_tabs->disconnect(this);
    m_lessons->disconnect(this);
}

Page* MainWindow::page(const QString& objectName) const
{
    for (Page* p : m_pages)
        if (p->objectName() == objectName)
            return p;
    return nullptr;
}

StackedBarChart* MainWindow::chart() const
{
    return m_breakdown->chart();
}
BreakdownTable* MainWindow::table() const
{
    return m_breakdown->table();
}
SweepChart* MainWindow::sweepChart() const
{
    return m_sweep->chart();
}
CompareView* MainWindow::compareView() const
{
    return m_compare->view();
}
ExplainView* MainWindow::explainView() const
{
    return m_explain->view();
}
TimelineChart* MainWindow::timelineChart() const
{
    return m_timeline->chart();
}
QComboBox* MainWindow::timelineStep() const
{
    return m_timeline->step();
}
PlanView* MainWindow::planView() const
{
    return m_plan->view();
}
ServingPlanView* MainWindow::servingPlanView() const
{
    return m_plan->servingView();
}
ProbeView* MainWindow::probeView() const
{
    return m_probe->view();
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    QAction* newAct = file->addAction(QStringLiteral("&New"), this, [this] {
        if (maybeSave())
            m_doc->reset(ScenarioDocument::defaultScenario());
    });
    newAct->setShortcut(QKeySequence::New);
    QAction* open = file->addAction(QStringLiteral("&Open…"), this, [this] {
        if (!maybeSave())
            return;
        const QString path = QFileDialog::getOpenFileName(
            this, QStringLiteral("Open scenario or config.json"), QString(), kFileFilter);
        if (!path.isEmpty())
            openFile(path);
    });
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(QStringLiteral("Open &Recent"));
    addApplyConfigAction(file, QStringLiteral("Apply &DeepSpeed config…"), QStringLiteral("DeepSpeed"),
        QStringLiteral("DeepSpeed config (*.json)"), &MainWindow::applyDeepSpeedFile);
    addApplyConfigAction(file, QStringLiteral("Apply &torchtitan config…"), QStringLiteral("torchtitan"),
        QStringLiteral("torchtitan config (*.toml)"), &MainWindow::applyTorchtitanFile);
    addApplyConfigAction(file, QStringLiteral("Apply TR&L config…"), QStringLiteral("TRL"),
        QStringLiteral("TRL config (*.yaml *.yml)"), &MainWindow::applyTrlFile);
    addApplyConfigAction(file, QStringLiteral("Apply a&xolotl config…"), QStringLiteral("axolotl"),
        QStringLiteral("axolotl config (*.yml *.yaml)"), &MainWindow::applyAxolotlFile);
    file->addSeparator();
    QAction* saveAct = file->addAction(QStringLiteral("&Save"), this, [this] { save(); });
    saveAct->setShortcut(QKeySequence::Save);
    QAction* saveAsAct = file->addAction(QStringLiteral("Save &As…"), this, [this] { saveAs(); });
    saveAsAct->setShortcut(QKeySequence::SaveAs);
    QAction* exportAct = file->addAction(QStringLiteral("&Export…"), this, [this] {
        QVector<Scenario> scenarios;
        const ChartKind kind = currentChart(&scenarios, nullptr);
        const bool table = kind == ChartKind::Plan; // a table: CSV or Markdown, no picture
        ExportDialog dialog(chartName(kind), suggestedExportPath(kind), m_dark,
            parsePdfPage(QSettings().value(kPdfPageKey).toString()).value_or(PdfPage::Slide), this);
        if (table)
            dialog.setFormatsNote(
                QStringLiteral(".csv: the plan's ranked setups as data; .md: the same as a Markdown table"));
        if (dialog.exec() == QDialog::Accepted
            && exportTo(dialog.path(), dialog.size(), dialog.dark(), dialog.pdfPage()))
            statusBar()->showMessage(QStringLiteral("Exported %1").arg(dialog.path()), 5000);
    });
    exportAct->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportAct->setToolTip(
        QStringLiteral("The chart on screen as PNG, SVG or PDF; its data as CSV; a review report as Markdown or HTML"));
    file->addSeparator();
    QAction* quit = file->addAction(QStringLiteral("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(QStringLiteral("&Edit"));
    QAction* undo = m_doc->undoStack()->createUndoAction(this, QStringLiteral("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_doc->undoStack()->createRedoAction(this, QStringLiteral("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addAction(QStringLiteral("Re&name scenario…"), this, [this] {
        bool ok = false;
        const QString name = QInputDialog::getText(this, QStringLiteral("Rename scenario"),
            QStringLiteral("Name (empty: follow the settings):"), QLineEdit::Normal,
            QString::fromStdString(m_doc->scenario().name), &ok);
        if (ok)
            m_doc->rename(name);
    });
    QAction* copy = edit->addAction(QStringLiteral("&Copy breakdown as CSV"), this, [this] {
        if (m_doc->report()) // the core's writer, as File > Export writes it
            QApplication::clipboard()->setText(QString::fromStdString(breakdownCsv(*m_doc->report())));
    });
    copy->setShortcut(QKeySequence::Copy);
    edit->addAction(QStringLiteral("Copy breakdown as &Markdown"), this, [this] {
        if (m_doc->report())
            QApplication::clipboard()->setText(QString::fromStdString(breakdownMarkdown(*m_doc->report())));
    });
    QAction* copyChart = edit->addAction(QStringLiteral("Copy c&hart as image"), this, [this] {
        QVector<Scenario> scenarios;
        QStringList labels;
        const ChartKind kind = currentChart(&scenarios, &labels);
        if (scenarios.isEmpty())
            return;
        const ExportedChart chart(kind, scenarios, labels, QSize(1600, 900), exportTheme(m_dark, QSize(1600, 900)));
        QApplication::clipboard()->setImage(QImage::fromData(chart.png(2.0), "PNG"));
    });
    copyChart->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));

    QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
    m_darkAction = view->addAction(QStringLiteral("&Dark theme"), this, [this](bool on) { setDarkTheme(on); });
    m_darkAction->setCheckable(true);
    m_darkAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    m_presenterAction
        = view->addAction(QStringLiteral("&Presenter mode"), this, [this](bool on) { setPresenterMode(on); });
    m_presenterAction->setCheckable(true);
    m_presenterAction->setShortcut(QKeySequence(Qt::Key_F5));
    m_presenterAction->setToolTip(QStringLiteral("Large fonts, thick lines, full screen: for projectors (F5)"));
    QAction* full = view->addAction(
        QStringLiteral("&Full screen"), this, [this](bool on) { on ? showFullScreen() : showNormal(); });
    full->setCheckable(true);
    full->setShortcut(QKeySequence::FullScreen);
    // The panel folds away on a small screen or a projector, and comes back from here.
    if (auto* params = findChild<QDockWidget*>(QStringLiteral("ParametersDock"))) {
        QAction* panel = params->toggleViewAction();
        panel->setText(QStringLiteral("&Parameters panel"));
        panel->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
        view->addAction(panel);
    }
    view->addSeparator();
    for (int i = 0; i < 4; ++i) { // Ctrl+1..4: Breakdown, Sweep, Compare, Explain
        Page* page = m_pages[i];
        QAction* tab = view->addAction(page->title(), this, [this, page] { m_tabs->setCurrentWidget(page); });
        tab->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
    }

    QMenu* lessons = menuBar()->addMenu(QStringLiteral("&Lessons"));
    for (const QFileInfo& info :
        QDir(QStringLiteral(":/lessons")).entryInfoList({ QStringLiteral("*.json") }, QDir::Files, QDir::Name)) {
        const QString path = info.filePath();
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            continue;
        try { // tst_lessons checks every shipped lesson; a broken one is left out, not fatal
            const Lesson l = parseLessonText(f.readAll().toStdString(), path.toStdString());
            lessons->addAction(QString::fromStdString(l.title), this, [this, path] { openLesson(path); })
                ->setToolTip(Qt::convertFromPlainText(QString::fromStdString(l.summary)));
        } catch (const InputError&) {
        }
    }
    lessons->addSeparator();
    lessons->addAction(QStringLiteral("Open &lesson file…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, QStringLiteral("Open lesson"), QString(), QStringLiteral("Lesson (*.json);;All files (*)"));
        if (!path.isEmpty())
            openLesson(path);
    });

    QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
    help->addAction(QStringLiteral("&About VRAM Lab"), this, [this] {
        QMessageBox::about(this, QStringLiteral("About VRAM Lab"),
            QStringLiteral("<h3>VRAM Lab %1</h3><p>Where GPU memory and compute go when a large language "
                           "model is trained, fine-tuned or served.</p>")
                .arg(QApplication::applicationVersion()));
    });
    rebuildRecentMenu();
}

void MainWindow::fitToScreen()
{
    if (isFullScreen() || isMaximized())
        return;
    const QScreen* s = screen() ? screen() : QGuiApplication::primaryScreen();
    if (!s)
        return;
    const QRect avail = s->availableGeometry();
    if (layout())
        layout()->activate(); // the window's minimum as the docks are now (a folded panel)
    const QSize frame = frameGeometry().size() - geometry().size(); // the title bar and borders
    const QSize size = geometry().size().boundedTo(avail.size() - frame);
    QRect r(geometry().topLeft(), size);
    r.moveLeft(std::clamp(r.left(), avail.left(), avail.right() - size.width() - frame.width() + 1));
    r.moveTop(std::clamp(r.top(), avail.top(), avail.bottom() - size.height() - frame.height() + 1));
    setGeometry(r);
}

void MainWindow::updateHeader()
{
    const std::optional<Report>& r = m_doc->report();
    // The theme chosen, not the window's palette: a theme switch reaches the window's palette
    // only with the palette-change event, after this has run.
    const PlotTheme theme = PlotTheme::fromPalette(m_dark ? darkPalette() : lightPalette(), m_presenter);
    if (r) {
        m_verdict->setText(verdictText(*r));
        m_verdict->setToolTip(r->lowerBound.empty() ? QString()
                                                    : QStringLiteral("A lower bound: %1 (the Explain tab says more)")
                                                          .arg(QString::fromStdString(r->lowerBound)));
        setSheet(m_verdict, QStringLiteral("QLabel { color: %1; }").arg(verdictColor(*r, theme).name()));
        QString compute = computeText(*r);
        if (r->peak != r->total)
            compute += QStringLiteral("\nPeak of the step %1 (components add up to %2): %3")
                           .arg(bytesText(r->peak), bytesText(r->total), QString::fromStdString(r->peakWhere));
        m_compute->setText(compute);
        if (m_doc->scenario().run.serving) // the engine's answer, not one request's memory
            updateServingVerdict(theme);
    } else if (m_doc->servingEstimate()) { // a hybrid state-space model: only the engine's budget is modelled
        updateServingVerdict(theme);
        m_compute->setText(m_doc->error());
    } else {
        m_verdict->setText(QStringLiteral("Not a valid configuration"));
        setSheet(m_verdict, QStringLiteral("QLabel { color: %1; }").arg(theme.overflow.name()));
        m_compute->setText(m_doc->error());
    }
    updateTitle();
}

void MainWindow::updateServingVerdict(const PlotTheme& theme)
{
    if (const std::optional<ServingEstimate>& e = m_doc->servingEstimate()) {
        m_verdict->setText(QString::fromStdString(servingVerdict(*e)));
        setSheet(m_verdict,
            QStringLiteral("QLabel { color: %1; }").arg((e->startupFails ? theme.overflow : theme.fits).name()));
    } else { // the Serving tab says why
        m_verdict->setText(QStringLiteral("The engine cannot be modelled: ") + m_doc->servingError());
        setSheet(m_verdict, QStringLiteral("QLabel { color: %1; }").arg(theme.overflow.name()));
    }
}

void MainWindow::updateTitle()
{
    const QString name = m_doc->filePath().isEmpty() ? QString::fromStdString(m_doc->scenario().name)
                                                     : QFileInfo(m_doc->filePath()).fileName();
    setWindowTitle(QStringLiteral("%1[*] — VRAM Lab").arg(name));
    setWindowModified(m_doc->isModified());
}

void MainWindow::showBanner(const QString& text)
{
    m_lastError = text;
    m_banner->setText(text);
    m_bannerFrame->setVisible(!text.isEmpty());
}

void MainWindow::addApplyConfigAction(QMenu* menu, const QString& label, const QString& framework,
    const QString& filter, std::optional<ConfigImport> (MainWindow::*apply)(const QString&))
{
    menu->addAction(label, this, [this, framework, filter, apply] {
        const QString path = QFileDialog::getOpenFileName(
            this, QStringLiteral("Apply a %1 config to the run").arg(framework), QString(), filter);
        if (path.isEmpty())
            return;
        if (const std::optional<ConfigImport> done = (this->*apply)(path)) {
            QString text = QStringLiteral("Applied (Edit > Undo takes it back):\n");
            for (const std::string& line : done->applied)
                text += QStringLiteral("  ") + QString::fromStdString(line) + QLatin1Char('\n');
            text += QStringLiteral("\nLeft out:\n");
            for (const std::string& line : done->ignored)
                text += QStringLiteral("  ") + QString::fromStdString(line) + QLatin1Char('\n');
            QMessageBox box(QMessageBox::Information, QStringLiteral("%1 config applied").arg(framework),
                QStringLiteral("%1 set the run's %2 settings.").arg(QFileInfo(path).fileName(), framework),
                QMessageBox::Ok, this);
            box.setTextFormat(Qt::PlainText); // a file's text is never markup
            box.setDetailedText(text);
            box.exec();
        }
    });
}

std::optional<ConfigImport> MainWindow::applyConfigFile(const QString& path, const QString& framework,
    const std::function<ConfigImport(Scenario&, const std::string&)>& apply)
{
    const std::string file = path.toStdString();
    try {
        Scenario sc = m_doc->scenario();
        ConfigImport done = apply(sc, file);
        (void)estimate(sc); // a config the run cannot take is refused before it becomes an edit
        m_doc->replaceScenario(sc, QStringLiteral("Apply %1 config %2").arg(framework, QFileInfo(path).fileName()));
        showBanner(QString());
        return done;
    } catch (const InputError& e) { // "FILE: key: expected ...": the file and the key it refused
        showBanner(QStringLiteral("Not applied: ") + QString::fromUtf8(e.withFile(file).what()));
    } catch (const SizeOverflow& e) {
        showBanner(QStringLiteral("Not applied: %1: %2").arg(path, QString::fromUtf8(e.what())));
    }
    return std::nullopt;
}

std::optional<DeepSpeedImport> MainWindow::applyDeepSpeedFile(const QString& path)
{
    return applyConfigFile(path, QStringLiteral("DeepSpeed"), [](Scenario& sc, const std::string& file) {
        return applyDeepSpeedConfig(sc, parseJsonText(readTextFile(file), file));
    });
}

std::optional<ConfigImport> MainWindow::applyTorchtitanFile(const QString& path)
{
    return applyConfigFile(path, QStringLiteral("torchtitan"), [](Scenario& sc, const std::string& file) {
        return applyTorchtitanConfig(sc, parseTomlText(readTextFile(file, kMaxTomlFileBytes), file));
    });
}

std::optional<ConfigImport> MainWindow::applyTrlFile(const QString& path)
{
    return applyConfigFile(path, QStringLiteral("TRL"), [](Scenario& sc, const std::string& file) {
        return applyTrlConfig(sc, parseYamlText(readTextFile(file, kMaxYamlFileBytes), file));
    });
}

std::optional<ConfigImport> MainWindow::applyAxolotlFile(const QString& path)
{
    return applyConfigFile(path, QStringLiteral("axolotl"), [](Scenario& sc, const std::string& file) {
        return applyAxolotlConfig(sc, parseYamlText(readTextFile(file, kMaxYamlFileBytes), file));
    });
}

bool MainWindow::openRequested(const QString& path)
{
    return maybeSave() && openFile(path);
}

bool MainWindow::openFile(const QString& path)
{
    QString error, notice;
    if (!m_doc->open(path, &error, &notice)) {
        showBanner(error);
        return false;
    }
    showBanner(QString());
    if (!notice.isEmpty()) // an imported model (a new untitled document), or a serving scenario
        statusBar()->showMessage(notice, 15000);
    if (m_doc->scenario().run.serving) // its engine's budget is what the file is about
        m_tabs->setCurrentWidget(m_serving);
    addRecent(path);
    return true;
}

bool MainWindow::saveTo(const QString& path)
{
    QString error;
    if (!m_doc->save(path, &error)) {
        showBanner(QStringLiteral("Not saved: ") + error);
        return false;
    }
    showBanner(QString());
    addRecent(path);
    m_autosave->stop();
    QFile::remove(autosavePath());
    statusBar()->showMessage(QStringLiteral("Saved %1").arg(path), 4000);
    return true;
}

ChartKind MainWindow::currentChart(QVector<Scenario>* scenarios, QStringList* labels) const
{
    const Page* page = qobject_cast<const Page*>(m_tabs->currentWidget());
    if (!page)
        page = m_breakdown;
    if (scenarios)
        *scenarios = page->chartScenarios(labels);
    return page->chartKind();
}

bool MainWindow::exportTo(const QString& path, QSize size, bool dark, PdfPage pdfPage)
{
    QVector<Scenario> scenarios;
    QStringList labels;
    const ChartKind kind = currentChart(&scenarios, &labels);
    QString error;
    if (const Page* page = qobject_cast<const Page*>(m_tabs->currentWidget())) {
        const QString why = page->exportRefusal(QFileInfo(path).suffix().toLower());
        if (!why.isEmpty()) {
            showBanner(QStringLiteral("Not exported: %1: %2").arg(path, why));
            return false;
        }
    }
    if (kind == ChartKind::Plan && !m_plan->hasTable()) {
        showBanner(QStringLiteral("Not exported: the Plan tab shows no plan for this scenario"));
        return false;
    }
    const bool written = kind == ChartKind::Plan // the table as shown, with the tab's GPU count and batch
        ? m_plan->exportTable(path, &error)
        : exportScenario(kind, scenarios, labels, path, size, exportTheme(dark, size), &error, pdfPage);
    if (!written) {
        showBanner(QStringLiteral("Not exported: ") + error);
        return false;
    }
    showBanner(QString());
    QSettings().setValue(QStringLiteral("exportFolder"), QFileInfo(path).absolutePath());
    if (QFileInfo(path).suffix().toLower() == QLatin1String("pdf"))
        QSettings().setValue(kPdfPageKey, pdfPageName(pdfPage));
    return true;
}

QString MainWindow::suggestedExportPath(ChartKind kind) const
{
    // The folder of the last export (slides go to one folder), else the home folder.
    const QString last = QSettings().value(QStringLiteral("exportFolder")).toString();
    const QDir folder = !last.isEmpty() && QFileInfo(last).isDir() ? QDir(last) : QDir::home();
    const QString base
        = m_doc->filePath().isEmpty() ? QStringLiteral("vramlab") : QFileInfo(m_doc->filePath()).completeBaseName();
    return folder.filePath(base + QLatin1Char('-') + chartName(kind)
        + (kind == ChartKind::Plan ? QStringLiteral(".csv") : QStringLiteral(".png")));
}

bool MainWindow::save()
{
    if (m_doc->filePath().isEmpty())
        return saveAs();
    if (!m_doc->fileUnchanged()) { // moved, replaced or edited elsewhere: never overwrite it unasked
        showBanner(QStringLiteral("%1 changed on disk since it was opened or saved: choose where to save.")
                       .arg(m_doc->filePath()));
        return saveAs();
    }
    return saveTo(m_doc->filePath());
}

bool MainWindow::saveAs()
{
    QString path = QFileDialog::getSaveFileName(
        this, QStringLiteral("Save scenario"), m_doc->filePath(), QStringLiteral("Scenario (*.json)"));
    if (path.isEmpty())
        return false;
    if (!path.endsWith(QLatin1String(".json")))
        path += QStringLiteral(".json");
    return saveTo(path);
}

bool MainWindow::maybeSave()
{
    if (!m_doc->isModified())
        return true;
    const auto answer = QMessageBox::question(this, QStringLiteral("Unsaved changes"),
        QStringLiteral("Save the changes to this scenario first?"),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

void MainWindow::addRecent(const QString& path)
{
    const QString abs = QFileInfo(path).absoluteFilePath();
    m_recent.removeAll(abs);
    m_recent.prepend(abs);
    while (m_recent.size() > kMaxRecent)
        m_recent.removeLast();
    QSettings().setValue(QStringLiteral("recentFiles"), m_recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    if (!m_recentMenu)
        return;
    m_recentMenu->clear();
    QStringList kept;
    for (const QString& path : std::as_const(m_recent))
        if (QFileInfo::exists(path))
            kept << path;
    m_recent = kept;
    for (const QString& path : std::as_const(m_recent))
        m_recentMenu
            ->addAction(QFileInfo(path).fileName(), this,
                [this, path] {
                    if (maybeSave())
                        openFile(path);
                })
            ->setToolTip(Qt::convertFromPlainText(path)); // a file name is not markup
    if (!m_recent.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(QStringLiteral("Clear"), this, [this] {
            m_recent.clear();
            QSettings().setValue(QStringLiteral("recentFiles"), m_recent);
            rebuildRecentMenu();
        });
    }
    m_recentMenu->setEnabled(!m_recent.isEmpty());
}

void MainWindow::setDarkTheme(bool dark)
{
    m_dark = dark;
    if (m_darkAction)
        m_darkAction->setChecked(dark);
    applyTheme();
}

void MainWindow::setPresenterMode(bool on)
{
    m_presenter = on;
    if (m_presenterAction)
        m_presenterAction->setChecked(on);
    QFont f = QApplication::font();
    f.setPointSize(on ? 16 : 10);
    QApplication::setFont(f);
    QFont verdict = f;
    verdict.setPointSize(on ? 26 : 15);
    verdict.setBold(true);
    m_verdict->setFont(verdict);
    // On a projector the chart is the point: the table steps aside (Explain has every number).
    table()->setVisible(!on && !m_lessonDock->isVisible());
    m_lessons->setPresenter(on);
    applyTheme();
    if (on)
        showFullScreen();
    else if (isFullScreen())
        showNormal();
    fitLessonLayout();
}

void MainWindow::fitLessonLayout()
{
    // After the layout requests of what just changed (a dock shown, the table hidden): the
    // minimum sizes are only current once the event loop has processed them.
    if (!m_lessonLayoutQueued) {
        m_lessonLayoutQueued = true;
        QMetaObject::invokeMethod(this, &MainWindow::fitLessonLayoutNow, Qt::QueuedConnection);
    }
}

void MainWindow::fitLessonLayoutNow()
{
    m_lessonLayoutQueued = false;
    auto* params = findChild<QDockWidget*>(QStringLiteral("ParametersDock"));
    if (!params)
        return;
    if (!m_lessonDock->isVisible()) {
        if (m_panelFoldedForLesson)
            params->setVisible(true);
        m_panelFoldedForLesson = false;
        return;
    }
    const QScreen* s = screen() ? screen() : QGuiApplication::primaryScreen();
    if (!s)
        return;
    const int room = s->availableGeometry().width() - (frameGeometry().width() - geometry().width());
    // A lesson is about the chart: it keeps a third of the screen at least, beside the
    // lesson's column. Where the parameters panel would squeeze it (1280 px in presenter
    // mode), the panel steps aside (View › Parameters panel brings it back), and returns
    // when the lesson ends or the room comes back (presenter mode off).
    const int centralMin = centralWidget()->minimumSizeHint().width();
    // The third is the tabs' (the chart's), inside the central widget's margins.
    const QMargins margins = centralWidget()->layout()->contentsMargins();
    const int chartRoom = std::max(centralMin, room / 3 + margins.left() + margins.right());
    const int docks = minimumSizeHint().width() - centralMin; // the docks as they are, separators included
    if (params->isVisible() && docks + chartRoom > room) {
        params->setVisible(false);
        m_panelFoldedForLesson = true;
        statusBar()->showMessage(QStringLiteral("The parameters panel is folded while the lesson needs the room: "
                                                "View › Parameters panel brings it back."),
            8000);
        // The window grew for the dock before the panel folded: fit it once that settles.
        QMetaObject::invokeMethod(this, &MainWindow::fitToScreen, Qt::QueuedConnection);
    } else if (m_panelFoldedForLesson && !params->isVisible()
        && docks + params->minimumSizeHint().width()
                + style()->pixelMetric(QStyle::PM_DockWidgetSeparatorExtent, nullptr, this) + chartRoom
            <= room) {
        params->setVisible(true);
        m_panelFoldedForLesson = false;
    }
    // The docks start at their preferred widths; where that leaves the chart less than its
    // share, they give way down to their minimums.
    if (params->isVisible() && centralWidget()->width() < chartRoom)
        resizeDocks({ m_lessonDock, params }, { m_lessonDock->minimumWidth(), params->minimumSizeHint().width() },
            Qt::Horizontal);
    fitToScreen();
}

void MainWindow::applyTheme()
{
    // A new style or palette re-polishes every widget of the window: at start-up this ran
    // twice (the constructor, then the restored session) for the same style and palette.
    if (QApplication::style()->name().compare(QLatin1String("fusion"), Qt::CaseInsensitive) != 0)
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    const QPalette pal = m_dark ? darkPalette() : lightPalette();
    if (QApplication::palette() != pal)
        QApplication::setPalette(pal);
    const PlotTheme theme = PlotTheme::fromPalette(pal, m_presenter);
    for (Page* page : std::as_const(m_pages))
        page->setTheme(theme);
    updateHeader(); // the verdict's colour
}

bool MainWindow::openLesson(const QString& path)
{
    QFile f(path);
    std::optional<Lesson> lesson;
    try {
        if (!f.open(QIODevice::ReadOnly))
            throw InputError("", "cannot open the file: " + f.errorString().toStdString(), path.toStdString());
        lesson = parseLessonText(f.read(qint64(kMaxLessonFileBytes) + 1).toStdString(), path.toStdString());
    } catch (const InputError& e) {
        showBanner(QString::fromUtf8(e.what()));
        return false;
    }
    m_bannerFrame->setVisible(false);
    // Lessons point at the breakdown chart, or at the engine's budget when they serve.
    m_lessonPage = lesson->steps.front().scenario.run.serving ? static_cast<Page*>(m_serving) : m_breakdown;
    m_tabs->setCurrentWidget(m_lessonPage);
    table()->setVisible(false); // before the dock: the window must not grow for both at once
    m_lessonDock->setVisible(true);
    m_lessons->setLesson(*lesson);
    fitLessonLayout();
    return true;
}

void MainWindow::leaveLesson()
{
    m_lessonDock->setVisible(false);
    fitLessonLayout();
    m_panel->highlight({});
    chart()->setEmphasis({});
    setResultMasked(false);
    m_lessonPage = nullptr;
}

void MainWindow::setResultMasked(bool masked)
{
    // Predict before reveal: the bar, the verdict and the numbers wait for the answer.
    Page* lessonPage = m_lessonPage ? m_lessonPage : m_breakdown;
    chart()->setMasked(
        masked && lessonPage == m_breakdown, QStringLiteral("Predict first…\nthe chart shows after the answer"));
    if (const bool servingMasked = masked && lessonPage == m_serving; servingMasked != m_serving->isMasked())
        m_serving->setMasked(
            servingMasked, QStringLiteral("Predict first… the engine's budget shows after the answer"));
    m_verdict->setVisible(!masked);
    m_compute->setVisible(!masked);
    table()->setVisible(!m_presenter && !m_lessonDock->isVisible()); // a lesson is about the chart
    // The other tabs would show the numbers too: the lesson's tab alone until the answer.
    if (masked)
        m_tabs->setCurrentWidget(lessonPage);
    for (Page* page : std::as_const(m_pages))
        if (page != lessonPage)
            m_tabs->setTabEnabled(m_tabs->indexOf(page), !masked);
}

bool MainWindow::hasAutosave() const
{
    return QFileInfo::exists(autosavePath()) || AutosaveFile::newestOrphan();
}

void MainWindow::autosaveNow()
{
    if (!m_doc->isModified())
        return QFile::remove(autosavePath()), void();
    QDir().mkpath(QFileInfo(autosavePath()).absolutePath());
    try { // the same text as a save, so the autosave always opens again
        writeFileAtomic(autosavePath(), QByteArray::fromStdString(scenarioFileText(m_doc->scenario())), nullptr);
    } catch (const InputError&) {
        // too large to be a scenario file: nothing to offer back
    }
}

bool MainWindow::restoreAutosave()
{
    const std::optional<QString> orphan = AutosaveFile::newestOrphan();
    if (!orphan)
        return false;
    try {
        const Scenario sc = loadScenarioFile(orphan->toStdString());
        m_doc->replaceScenario(sc, QStringLiteral("Restore unsaved work"));
        QFile::remove(*orphan); // the work is this window's now: its own autosave keeps it
        return true;
    } catch (const std::exception& e) {
        showBanner(
            QStringLiteral("The unsaved work of the last session could not be read: ") + QString::fromUtf8(e.what()));
        return false;
    }
}

void MainWindow::restoreSession(bool ask)
{
    QSettings s;
    m_recent = s.value(QStringLiteral("recentFiles")).toStringList();
    rebuildRecentMenu();
    restoreGeometry(s.value(QStringLiteral("MainWindow/geometry")).toByteArray());
    fitToScreen(); // a geometry saved on a larger screen (or at x = -459) never comes back as it was
    restoreState(s.value(QStringLiteral("MainWindow/state")).toByteArray());
    m_lessonDock->setVisible(false); // a lesson is not part of the session: its dock would come back empty
    fitToScreen(); // again: the docks' restored widths can widen the window past the screen
    setDarkTheme(s.value(QStringLiteral("darkTheme"), false).toBool());
    const QString last = s.value(QStringLiteral("lastScenario")).toString();
    if (!last.isEmpty()) {
        try {
            const Scenario sc = readScenario(nlohmann::json::parse(last.toStdString()));
            // The file becomes the save target only while it still holds this very scenario.
            QString file = s.value(QStringLiteral("lastFile")).toString();
            try {
                if (!QFileInfo(file).isAbsolute()
                    || scenarioToJson(loadScenarioFile(file.toStdString())) != scenarioToJson(sc))
                    file.clear();
            } catch (const std::exception&) {
                file.clear();
            }
            m_doc->reset(sc, file);
        } catch (const std::exception&) {
            // A last scenario from an older build that no longer reads: start from the default.
        }
    }
    if (ask && AutosaveFile::newestOrphan()) {
        const auto answer = QMessageBox::question(this, QStringLiteral("Restore unsaved work?"),
            QStringLiteral("VRAM Lab did not close normally last time. Restore the "
                           "scenario you were editing?"),
            QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes);
        if (answer == QMessageBox::Yes)
            restoreAutosave();
        else if (const std::optional<QString> orphan = AutosaveFile::newestOrphan())
            QFile::remove(*orphan); // its window is gone: declined, nobody else will offer it
    }
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    QSettings s;
    s.setValue(QStringLiteral("MainWindow/geometry"), saveGeometry());
    s.setValue(QStringLiteral("MainWindow/state"), saveState());
    s.setValue(QStringLiteral("darkTheme"), m_dark);
    s.setValue(QStringLiteral("lastScenario"), QString::fromStdString(scenarioToJson(m_doc->scenario()).dump()));
    s.setValue(QStringLiteral("lastFile"), m_doc->filePath());
    m_autosave->stop();
    QFile::remove(autosavePath()); // a clean close: nothing to restore next time
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile() && url.toLocalFile().endsWith(QLatin1String(".json"), Qt::CaseInsensitive))
            return event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile()) {
            openRequested(url.toLocalFile());
            break;
        }
}

} // namespace vramlab
