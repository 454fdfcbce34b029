// SPDX-License-Identifier: MIT
#include "probe_view.h"

#include "chart_support.h"
#include "probe_chart.h"
#include "probe_runner.h"
#include "vramlab/errors.h"
#include "vramlab/scenario_io.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QVBoxLayout>

#include <utility>

namespace vramlab {

namespace {

const QString kProgramSetting = QStringLiteral("probe/program");
/// QProgressBar::setValue repaints at once: a probe printing thousands of progress lines
/// a second would repaint for each, so the bar shows the latest one per interval.
constexpr int kProgressIntervalMs = 50;

/// One arg() call: text from the report is never searched for further %N markers.
QString deviceText(const ProbeDevice& d)
{
    return QStringLiteral(
        "%1%2, compute capability %3.%4, %5 SMs, %6 total, %7 free; CUDA driver %8.%9, runtime %10.%11; catalog: %12")
        .arg(QString::fromStdString(d.name), d.mig ? QStringLiteral(" (MIG)") : QString(), QString::number(d.ccMajor),
            QString::number(d.ccMinor), QString::number(d.sms), bytesText(d.totalBytes), bytesText(d.freeBytes),
            QString::number(d.driverVersion / 1000), QString::number(d.driverVersion % 1000 / 10),
            QString::number(d.runtimeVersion / 1000), QString::number(d.runtimeVersion % 1000 / 10),
            d.catalogGpu.empty() ? QStringLiteral("no entry") : QString::fromStdString(d.catalogGpu));
}

} // namespace

ProbeView::ProbeView(QWidget* parent)
    : QWidget(parent)
    , m_runner(new ProbeRunner(this))
    , m_command(new QComboBox)
    , m_run(new QPushButton(tr("Run")))
    , m_cancel(new QPushButton(tr("Cancel")))
    , m_import(new QPushButton(tr("Import report…")))
    , m_choose(new QPushButton(tr("Probe program…")))
    , m_programLabel(new QLabel)
    , m_progress(new QProgressBar)
    , m_message(new QLabel)
    , m_summary(new QPlainTextEdit)
    , m_chart(new ProbeChart)
    , m_program(ProbeRunner::defaultProgram())
{
    m_command->addItem(tr("fit: allocate the predicted tensors"), QStringLiteral("fit"));
    m_command->addItem(tr("bench: time the GEMM shapes"), QStringLiteral("bench"));
    m_command->addItem(tr("info: the GPU and driver"), QStringLiteral("info"));
    // The message and the program quote the probe's stderr, report files and paths: text, never markup.
    m_message->setTextFormat(Qt::PlainText);
    m_programLabel->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setReadOnly(true);
    m_summary->setMaximumBlockCount(500);
    // Two lines at least, not the text edit's default: on a 960x540 screen (1920x1080 at
    // 200 %) the page must fit under the header (issue 16); the splitter gives it more.
    m_summary->setMinimumHeight(2 * m_summary->fontMetrics().lineSpacing() + 2 * m_summary->frameWidth() + 8);
    m_progress->setVisible(false);
    m_programLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A long path must not set the window's minimum width (issue 16): the label gives way
    // and its tooltip holds the whole path. The command list elides; its popup shows all.
    m_programLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_command->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_command->setMinimumContentsLength(16);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_command);
    bar->addWidget(m_run);
    bar->addWidget(m_cancel);
    bar->addWidget(m_import);
    bar->addStretch(1);
    auto* programBar = new QHBoxLayout; // a row of its own: the path is long, screens are not
    programBar->addWidget(m_programLabel, 1);
    programBar->addWidget(m_choose);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_chart);
    split->addWidget(m_summary);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addLayout(programBar);
    layout->addWidget(m_progress);
    layout->addWidget(m_message);
    layout->addWidget(split, 1);

    connect(m_run, &QPushButton::clicked, this, [this] { run(m_command->currentData().toString()); });
    connect(m_cancel, &QPushButton::clicked, this, &ProbeView::cancel);
    connect(m_import, &QPushButton::clicked, this, [this] {
        const QString path
            = QFileDialog::getOpenFileName(this, tr("Import probe report"), QString(), tr("Probe reports (*.json)"));
        if (!path.isEmpty())
            importReport(path);
    });
    connect(m_choose, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("vramlab-probe program"), m_program);
        if (!path.isEmpty()) {
            setProgram(path);
            QSettings().setValue(kProgramSetting, path); // the user's choice wins next time
        }
    });
    m_progressThrottle.setSingleShot(true);
    m_progressThrottle.setInterval(kProgressIntervalMs);
    connect(&m_progressThrottle, &QTimer::timeout, this, &ProbeView::showPendingProgress);
    connect(m_runner, &ProbeRunner::progressed, this, [this](const QString& phase, qint64 done, qint64 total) {
        if (m_progressThrottle.isActive()) {
            m_pendingProgress = Progress { phase, done, total };
        } else {
            showProgress(phase, done, total);
            m_progressThrottle.start();
        }
    });
    connect(m_runner, &ProbeRunner::finished, this, [this](bool ok, const QString& message) {
        m_progressThrottle.stop();
        m_pendingProgress.reset();
        m_progress->setVisible(false);
        if (ok && m_runner->report()) {
            showReport(*m_runner->report());
            setMessage(message.isEmpty() ? tr("Measured on this machine.") : message, !message.isEmpty());
        } else {
            setMessage(message, true);
        }
        updateButtons();
        emit runFinished(ok);
    });
    const QString chosen = QSettings().value(kProgramSetting).toString();
    setProgram(QFileInfo(chosen).isExecutable() ? chosen : m_program);
    setMessage(tr("Run the probe on this machine's GPU, or import a report made with vramlab-probe --json on another."),
        false);
    updateButtons();
}

ProbeView::~ProbeView() = default;

void ProbeView::setScenario(const Scenario& scenario)
{
    m_scenario = scenario;
}

void ProbeView::setProgram(const QString& path)
{
    m_program = path;
    m_programLabel->setText(tr("Probe: %1").arg(path));
    m_programLabel->setToolTip(path);
}

void ProbeView::setTimeoutMs(int ms)
{
    m_runner->setTimeoutMs(ms);
}

bool ProbeView::isRunning() const
{
    return m_runner->isRunning();
}

void ProbeView::run(const QString& command)
{
    QStringList args { command };
    if (command != QLatin1String("info")) {
        const QString path = m_tempDir.filePath(QStringLiteral("scenario.json"));
        try {
            saveScenarioFile(path.toStdString(), m_scenario);
        } catch (const InputError& e) {
            setMessage(
                tr("The scenario could not be written for the probe: %1").arg(QString::fromStdString(e.what())), true);
            return;
        }
        args << path;
    }
    m_progress->setRange(0, 0); // busy until the first progress line
    m_progress->setFormat(tr("starting %1").arg(command));
    m_progress->setVisible(true);
    setMessage(tr("Running vramlab-probe %1…").arg(command), false);
    m_runner->start(m_program, args);
    updateButtons();
}

void ProbeView::cancel()
{
    m_runner->cancel();
}

bool ProbeView::importReport(const QString& path)
{
    try {
        showReport(loadProbeReportFile(path.toStdString()));
        setMessage(tr("Imported %1.").arg(path), false);
        return true;
    } catch (const InputError& e) {
        setMessage(tr("Not a probe report: %1").arg(QString::fromStdString(e.what())), true);
        return false;
    }
}

void ProbeView::showProgress(const QString& phase, qint64 done, qint64 total)
{
    m_progress->setRange(0, int(std::min<qint64>(total, 1'000'000)));
    m_progress->setValue(int(std::min(done, total)));
    m_progress->setFormat(phase + QStringLiteral(" (%v/%m)"));
}

void ProbeView::showPendingProgress()
{
    if (!m_pendingProgress)
        return;
    const Progress p = *std::exchange(m_pendingProgress, std::nullopt);
    showProgress(p.phase, p.done, p.total);
    m_progressThrottle.start(); // the next one waits its interval too
}

QString ProbeView::message() const
{
    return m_message->text();
}

QString ProbeView::summaryText() const
{
    return m_summary->toPlainText();
}

void ProbeView::showReport(const ProbeReport& report)
{
    m_report = report;
    m_chart->setReport(report);
    QStringList lines { deviceText(report.device) };
    if (!report.scenario.empty())
        lines << tr("Scenario: %1").arg(QString::fromStdString(report.scenario));
    if (const auto& f = report.fit) {
        lines << (f->fits ? tr("FITS: every predicted buffer was allocated and touched.")
                          : tr("DID NOT FIT: stopped at %1.").arg(QString::fromStdString(f->stoppedAt)))
              << tr("The estimate said: %1.").arg(f->predictedFits ? tr("fits") : tr("does not fit"))
              << tr("Allocation granularity %1, safety margin %2.")
                     .arg(bytesText(f->granularityBytes), bytesText(f->safetyMarginBytes));
        for (const ProbeFitComponent& c : f->components)
            lines << tr("  %1: predicted %2, requested %3, measured %4 (%5 of %6 buffers)")
                         .arg(QString::fromStdString(c.label), bytesText(c.predictedBytes), bytesText(c.requestedBytes),
                             bytesText(c.measuredBytes), QString::number(c.allocatedBuffers),
                             QString::number(c.buffers));
    }
    if (const auto& b = report.bench) {
        if (!b->gemmError.empty())
            lines << tr("GEMMs not timed: %1").arg(QString::fromStdString(b->gemmError));
        lines << tr("%1 GEMMs: linear layers take %2 s per step (estimate: %3 s for the whole step); MFU ceiling %4% "
                    "of the %5 TFLOP/s peak.")
                     .arg(QString::fromStdString(b->dtype), QString::number(b->gemmStepTimeS, 'g', 4),
                         QString::number(b->predictedStepTimeS, 'g', 4), QString::number(100 * b->mfuCeiling, 'f', 1),
                         QString::number(b->peakTflops, 'f', 1))
              << tr("Device-to-device copy of %1: %2 GB/s (catalog %3 GB/s).")
                     .arg(bytesText(b->copyBytes), QString::number(b->copyGBs, 'f', 1),
                         QString::number(b->catalogBandwidthGBs, 'f', 0));
        for (const std::string& n : b->notes)
            lines << tr("Note: %1").arg(QString::fromStdString(n));
    }
    m_summary->setPlainText(lines.join(QLatin1Char('\n')));
}

void ProbeView::setMessage(const QString& text, bool error)
{
    m_message->setText(text);
    m_message->setStyleSheet(error ? QStringLiteral("color: #D55E00; font-weight: bold;") : QString());
}

void ProbeView::updateButtons()
{
    const bool running = m_runner->isRunning();
    m_run->setEnabled(!running);
    m_command->setEnabled(!running);
    m_import->setEnabled(!running);
    m_choose->setEnabled(!running);
    m_cancel->setEnabled(running);
}

} // namespace vramlab
