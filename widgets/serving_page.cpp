// SPDX-License-Identifier: MIT
#include "serving_page.h"

#include "chart_support.h"
#include "concurrency_chart.h"
#include "figure_strip.h"
#include "scenario_document.h"
#include "serving_bar_chart.h"
#include "stable_height_label.h"
#include "stacking_splitter.h"
#include "vramlab/serving_chart.h"

#include <QApplication>
#include <QFontDatabase>
#include <QFontMetrics>
#include <QGridLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>

#include <string_view>

namespace vramlab {

namespace {

const char* const kNumbers[][2] = { { "kvTokens", "KV cache tokens" }, { "kvBytes", "KV cache" },
    { "gpuBlocks", "GPU blocks" }, { "maxConcurrency", "Max concurrency" }, { "ttft", "TTFT" }, { "tpot", "TPOT" },
    { "throughput", "Throughput" } };

/// The speed figures, which presenter mode leaves to the header.
bool isSpeedFigure(int index)
{
    const std::string_view name = kNumbers[index][0];
    return name == "ttft" || name == "tpot" || name == "throughput";
}

QString count(Count n)
{
    return QLocale(QLocale::English).toString(qlonglong(n));
}

/// Seconds as ms below one second ("42.1 ms"), else "1.23 s".
QString seconds(double s)
{
    return s < 1 ? QStringLiteral("%1 ms").arg(s * 1e3, 0, 'f', 1) : QStringLiteral("%1 s").arg(s, 0, 'f', 2);
}

QLabel* plainLabel(QWidget* parent)
{
    auto* l = new StableHeightLabel(parent);
    l->setTextFormat(Qt::PlainText); // engine messages quote the user's values: never markup
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}

} // namespace

ServingPage::ServingPage(ScenarioDocument* document, QWidget* parent)
    : Page(document, parent)
    , m_message(plainLabel(this))
    , m_failure(nullptr)
    , m_notes(nullptr)
    , m_content(new QWidget(this))
    , m_budget(new ServingBarChart)
    , m_concurrency(new ConcurrencyChart)
    , m_log(new QPlainTextEdit)
{
    setObjectName(QStringLiteral("servingPage"));
    auto* layout = new QVBoxLayout(this);
    m_message->setObjectName(QStringLiteral("servingMessage"));
    layout->addWidget(m_message);
    // Where the screen is too small for the figures, the charts and the log together (960x540 at
    // QT_SCALE_FACTOR=2 beside a lesson), the page scrolls instead of pushing the window off the screen.
    m_scroll = new QScrollArea(this);
    m_scroll->setObjectName(QStringLiteral("servingScroll"));
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setWidgetResizable(true);
    m_scroll->setWidget(m_content);
    layout->addWidget(m_scroll, 1);

    auto* content = new QVBoxLayout(m_content);
    content->setContentsMargins(0, 0, 0, 0);
    m_failure = plainLabel(m_content);
    m_failure->setObjectName(QStringLiteral("servingFailure"));
    QFont bold = m_failure->font();
    bold.setBold(true);
    m_failure->setFont(bold);
    content->addWidget(m_failure);

    // The engine's figures, a caption over each value: in one row, or two where the tab is narrow.
    m_figures = new FigureStrip(m_content);
    for (const auto& [name, caption] : kNumbers) {
        auto* captionLabel = new QLabel(QString::fromLatin1(caption));
        captionLabel->setObjectName(QString::fromLatin1(name) + QStringLiteral("Caption"));
        captionLabel->setWordWrap(true);
        QLabel* value = plainLabel(m_content);
        value->setObjectName(QString::fromLatin1(name));
        m_figures->addFigure(captionLabel, value);
    }
    content->addWidget(m_figures);
    m_notes = plainLabel(m_content);
    m_notes->setObjectName(QStringLiteral("servingNotes"));
    content->addWidget(m_notes);

    // The budget and the concurrency curve side by side, one above the other where the tab is narrow.
    m_charts = new StackingSplitter;
    m_charts->setObjectName(QStringLiteral("servingCharts"));
    // Under 360 px the budget's legend needs the width: a 720 px projector in presenter mode shows the budget alone.
    m_charts->setFoldBelowHeight(360);
    auto* charts = m_charts;
    charts->addWidget(m_budget);
    charts->addWidget(m_concurrency);
    charts->setStretchFactor(0, 1);
    charts->setStretchFactor(1, 1);
    m_log->setObjectName(QStringLiteral("servingLog"));
    m_log->setReadOnly(true);
    m_log->setLineWrapMode(QPlainTextEdit::NoWrap); // as a terminal shows the engine's lines
    m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_log->setMinimumHeight(QFontMetrics(m_log->font()).lineSpacing() * 4 + 16); // vLLM prints four to six lines
    m_log->setToolTip(QStringLiteral("What the engine prints at startup: compare with your server's log"));
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(charts);
    split->addWidget(m_log);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    content->addWidget(split, 1);
}

QLabel* ServingPage::number(const QString& name) const
{
    return m_content->findChild<QLabel*>(name);
}

QLabel* ServingPage::caption(const QString& name) const
{
    return m_content->findChild<QLabel*>(name + QStringLiteral("Caption"));
}

void ServingPage::setTheme(const PlotTheme& theme)
{
    m_failure->setStyleSheet(QStringLiteral("QLabel { color: %1; }").arg(theme.overflow.name()));
    m_budget->setTheme(theme);
    m_concurrency->setTheme(theme);
    // The figures a size above the application's font, which presenter mode enlarges after construction.
    QFont big = QApplication::font();
    big.setPointSizeF(big.pointSizeF() * 1.2);
    big.setBold(true);
    for (const auto& [name, caption] : kNumbers)
        number(QString::fromLatin1(name))->setFont(big);
    // On a projector the memory is the point: the rule's text, the log and the speed figures (the header's
    // second line gives the decode speed) step aside, so the budget chart keeps its height on a 720 px screen.
    const bool presenter = theme.fontPointSize > 12;
    m_notes->setVisible(!presenter);
    m_log->setVisible(!presenter);
    for (int i = 0; i < int(std::size(kNumbers)); ++i)
        if (isSpeedFigure(i))
            m_figures->setFigureShown(i, !presenter);
}

void ServingPage::showOnly(const QString& message)
{
    m_message->setText(message);
    m_message->setVisible(true);
    m_scroll->setVisible(false);
    m_budget->setChart({});
    m_concurrency->setCurve({});
    m_log->clear();
}

void ServingPage::setMasked(bool masked, const QString& message)
{
    m_masked = masked;
    m_maskMessage = message;
    recompute();
}

void ServingPage::recompute()
{
    if (m_masked) // no number may show before the answer
        return showOnly(m_maskMessage);
    const Scenario& sc = document()->scenario();
    if (!sc.run.serving)
        return showOnly(QStringLiteral("The Serving page applies to run.mode: \"serving\" scenarios (vLLM, SGLang, "
                                       "llama.cpp): choose Serving as the mode in the parameters, or open a serving "
                                       "scenario."));
    if (!document()->servingEstimate())
        return showOnly(document()->servingError());
    const ServingEstimate& e = *document()->servingEstimate();
    ServingBudgetChart budget;
    ConcurrencyCurve curve;
    ServingSpeed speed;
    try {
        budget = servingBudgetChart(sc.run, e);
        curve = concurrencyCurve(sc.model, sc.run, e);
        speed = defaultServingSpeed(sc.model, sc.run, e);
    } catch (const std::exception& error) { // InputError or SizeOverflow: said here, never a crash
        return showOnly(QString::fromUtf8(error.what()));
    }
    m_message->setVisible(false);
    m_scroll->setVisible(true);
    m_failure->setText(
        e.startupFails ? QStringLiteral("Startup fails: ") + QString::fromStdString(e.failure) : QString());
    m_failure->setVisible(e.startupFails);

    number(QStringLiteral("kvTokens"))->setText(count(e.kvCacheTokens));
    number(QStringLiteral("kvBytes"))->setText(bytesText(e.kvCacheBytes));
    number(QStringLiteral("gpuBlocks"))->setText(e.gpuBlocks ? count(*e.gpuBlocks) : QStringLiteral("—"));
    number(QStringLiteral("maxConcurrency"))->setText(QString::number(e.maxConcurrency, 'f', 2) + QStringLiteral("×"));
    caption(QStringLiteral("maxConcurrency"))
        ->setText(QStringLiteral("Max concurrency at %1").arg(count(e.maxModelLen)));
    if (speed.available) {
        number(QStringLiteral("ttft"))->setText(seconds(speed.ttftS));
        number(QStringLiteral("ttft"))
            ->setToolTip(QStringLiteral("Prefill of %1 tokens, %2 (a roofline: an upper bound on speed)")
                             .arg(count(speed.promptTokens), QString::fromStdString(speed.prefillBound)));
        number(QStringLiteral("tpot"))->setText(seconds(speed.tpotS));
        number(QStringLiteral("tpot"))
            ->setToolTip(
                QStringLiteral("One decode step of %1 sequences at %2 tokens, %3")
                    .arg(count(speed.batch), count(speed.contextTokens), QString::fromStdString(speed.decodeBound)));
        number(QStringLiteral("throughput"))
            ->setText(QStringLiteral("%1 tok/s").arg(count(Count(speed.tokensPerSTotal))));
        caption(QStringLiteral("throughput"))->setText(QStringLiteral("Throughput, batch %1").arg(count(speed.batch)));
        number(QStringLiteral("throughput"))
            ->setToolTip(
                QStringLiteral("%1 tokens per second per user × batch %2 (decode %3; prefill %4)")
                    .arg(QString::number(speed.tokensPerSPerUser, 'f', 1), count(speed.batch),
                        QString::fromStdString(speed.decodeBound), QString::fromStdString(speed.prefillBound)));
    } else {
        for (const char* name : { "ttft", "tpot", "throughput" }) {
            number(QString::fromLatin1(name))->setText(QStringLiteral("—"));
            number(QString::fromLatin1(name))->setToolTip(QStringLiteral("Speed needs the GPU's peak and bandwidth"));
        }
    }
    QStringList notes { QString::fromStdString(e.rule) };
    for (const std::string& w : e.warnings)
        notes << QString::fromStdString(w);
    m_notes->setText(notes.join(QLatin1Char('\n')));

    m_budget->setChart(std::move(budget));
    m_concurrency->setCurve(std::move(curve));
    QStringList lines;
    for (const std::string& l : e.logLines)
        lines << QString::fromStdString(l);
    m_log->setPlainText(lines.join(QLatin1Char('\n')));
}

} // namespace vramlab
