// SPDX-License-Identifier: MIT
#include "serving_plan_view.h"

#include "plan_table.h"
#include "stable_height_label.h"
#include "vramlab/chart_data.h"
#include "vramlab/errors.h"
#include "vramlab/units.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace vramlab {

namespace {

QString number(Count v)
{
    return QLocale(QLocale::English).toString(qlonglong(v));
}

QString seconds(double s)
{
    return QString::fromStdString(formatSeconds(s, 3));
}

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

enum Column { Tpot, Ttft, TokensPerS, Held, KvTokens, Setup, Why, ColumnCount };

} // namespace

ServingPlanView::ServingPlanView(QWidget* parent)
    : QWidget(parent)
{
    m_syncing = true; // no planning while the widgets are being built
    auto* layout = new QVBoxLayout(this);

    auto* fits = new QGridLayout;
    for (int i = 0; i < 3; ++i) {
        const PlanFitRow r = addPlanFitRow(fits, i, this, [this, i] { applyFit(i); });
        m_fitNames[i] = r.name;
        m_fitLabels[i] = r.answer;
        m_fitLabels[i]->setTextFormat(Qt::PlainText); // engine messages echo values from the file
        m_fitApply[i] = r.apply;
    }
    layout->addLayout(fits);

    // Two targets a row, so the tab stays narrow enough for a 1280-pixel screen beside the panel.
    auto* targets = new QGridLayout;
    struct Spec {
        const char* label;
        int lo, hi;
        const char* tip;
    };
    const Spec specs[ControlCount] = {
        { "GPUs", 1, 4096, "GPUs of the scenario's type: tensor x pipeline x data-parallel replicas" },
        { "Requests", 1, 1000000, "Requests served at once, each up to the context below" },
        { "Context", 1, 10000000, "Tokens per request (the engine's max_model_len / --context-length)" },
        { "Prompt", 1, 10000000, "Prompt tokens of one request, prefilled for the time to first token" },
        { "Max TPOT ms", 0, 1000000, "Longest time per output token a user may see (0: no limit)" },
        { "Max TTFT ms", 0, 1000000, "Longest time to the first token of the prompt (0: no limit)" },
        { "Min tokens/s", 0, 10000000, "Output tokens per second of all replicas together, at least (0: no limit)" },
        { "Show", 1, 200, "How many of the fastest setups that fit to list first" },
    };
    for (int c = 0; c < ControlCount; ++c) {
        auto* s = new QSpinBox(this);
        s->setRange(specs[c].lo, specs[c].hi);
        s->setToolTip(QString::fromLatin1(specs[c].tip));
        s->setKeyboardTracking(false); // plan when the number is complete, not per digit
        s->setGroupSeparatorShown(true);
        if (specs[c].lo == 0)
            s->setSpecialValueText(QStringLiteral("none"));
        const int row = c / 2, col = 2 * (c % 2);
        targets->addWidget(new QLabel(QString::fromLatin1(specs[c].label), this), row, col);
        targets->addWidget(s, row, col + 1);
        // The fit solvers read the scenario, the requests and the context; GPUs, prompt, limits and rows
        // shown change only the plan.
        const bool fitInput = c == Requests || c == Context;
        connect(s, &QSpinBox::valueChanged, this, [this, fitInput] {
            if (m_syncing)
                return;
            if (fitInput)
                refit();
            replan();
        });
        m_controls[c] = s;
    }
    m_controls[Requests]->setValue(1);
    m_controls[Prompt]->setValue(1024);
    m_controls[Show]->setValue(10);
    m_apply = new QPushButton(QStringLiteral("Apply selected setup"), this);
    targets->addWidget(m_apply, ControlCount / 2 - 1, 4);
    targets->setColumnStretch(5, 1);
    layout->addLayout(targets);

    m_summary = new StableHeightLabel(this);
    m_summary->setTextFormat(Qt::PlainText); // errors echo values from the scenario file
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);

    m_table = newPlanTable(
        { QStringLiteral("TPOT"), QStringLiteral("TTFT"), QStringLiteral("Tokens/s"), QStringLiteral("Requests held"),
            QStringLiteral("KV tokens"), QStringLiteral("Setup"), QStringLiteral("Why") },
        m_apply, this, [this](int row) { applyRow(row); });
    m_table->horizontalHeaderItem(TokensPerS)->setToolTip(QStringLiteral("Output tokens per second, all replicas"));
    m_table->horizontalHeaderItem(KvTokens)->setToolTip(QStringLiteral("KV-cache tokens of one replica"));
    layout->addWidget(m_table, 1);
    m_syncing = false;
}

void ServingPlanView::setScenario(const Scenario& sc)
{
    m_scenario = sc;
    m_syncing = true;
    m_controls[Gpus]->setValue(int(std::min<Count>(sc.run.parallelism.gpus, 4096)));
    try { // the context follows the engine's max_model_len as it resolves it
        m_controls[Context]->setValue(int(std::min<Count>(defaultServingPlanRequest(sc).context, 10000000)));
    } catch (const std::exception&) {
        // the summary says why once replan() meets the same error
    }
    m_syncing = false;
    refit();
    replan();
}

QString ServingPlanView::fitText(int row) const
{
    return m_fitLabels[row]->text();
}

QString ServingPlanView::summaryText() const
{
    return m_summary->text();
}

void ServingPlanView::refit()
{
    const ModelSpec& m = m_scenario.model;
    const RunSpec& run = m_scenario.run;
    const Count requests = m_controls[Requests]->value(), context = m_controls[Context]->value();
    const bool llama = run.serving && run.serving->engine == ServingEngine::LlamaCpp;
    const char* const names[3] = { llama ? "Layers on the GPU" : "Most requests", "Longest context", "Fewest GPUs" };
    for (int i = 0; i < 3; ++i) {
        m_fitNames[i]->setText(QString::fromLatin1(names[i]) + QLatin1Char(':'));
        m_fitRuns[i].reset();
        m_fitWhat[i].clear();
        QString answer;
        try {
            if (!run.serving)
                throw InputError("run.mode", "expected \"serving\"");
            ServingFit f;
            std::optional<RunSpec> applied;
            if (i == 0 && llama) {
                f = mostGpuLayers(m, run);
                if (f.value) {
                    applied = run;
                    applied->serving->nGpuLayers = *f.value;
                    m_fitWhat[i] = QStringLiteral("n_gpu_layers %1").arg(number(*f.value));
                }
            } else if (i == 0) {
                f = maxConcurrency(m, run, context); // a count, not a setting: nothing to apply
            } else if (i == 1) {
                f = longestContext(m, run, llama ? 1 : requests);
                if (f.value) {
                    applied = withContext(run, *f.value);
                    m_fitWhat[i] = QStringLiteral("context %1").arg(number(*f.value));
                }
            } else {
                f = fewestGpus(m, run, requests);
                if (f.value) {
                    applied = run; // as fewestGpus found it: one replica of tensor x the scenario's pipeline
                    applied->parallelism.gpus = *f.value;
                    applied->parallelism.tensorParallel = *f.value / run.parallelism.pipelineParallel;
                    m_fitWhat[i] = QStringLiteral("%1 GPUs").arg(number(*f.value));
                }
            }
            answer = f.value ? QStringLiteral("%1: %2").arg(number(*f.value), text(f.explanation))
                             : QStringLiteral("nothing fits: %1").arg(text(f.explanation));
            m_fitRuns[i] = applied;
        } catch (const std::exception& e) {
            answer = QString::fromUtf8(e.what());
        }
        m_fitLabels[i]->setText(answer);
        m_fitApply[i]->setEnabled(m_fitRuns[i].has_value());
        m_fitApply[i]->setToolTip(i == 0 && !llama ? QStringLiteral("A count, not a setting: the engine admits what "
                                                                    "its KV cache holds")
                                                   : QStringLiteral("Set this value in the scenario (undoable)"));
    }
}

void ServingPlanView::replan()
{
    m_result = {};
    m_table->setRowCount(0);
    m_apply->setEnabled(false);
    ServingPlanRequest& req = m_request;
    req.gpus = m_controls[Gpus]->value();
    req.concurrency = m_controls[Requests]->value();
    req.context = m_controls[Context]->value();
    req.promptTokens = std::min<Count>(m_controls[Prompt]->value(), req.context);
    auto limit = [](int v, double scale) { return v > 0 ? std::optional<double>(v * scale) : std::nullopt; };
    req.maxTpotS = limit(m_controls[MaxTpotMs]->value(), 1e-3);
    req.maxTtftS = limit(m_controls[MaxTtftMs]->value(), 1e-3);
    req.minTokensPerS = limit(m_controls[MinTokensPerS]->value(), 1.0);
    req.topK = m_controls[Show]->value();
    try {
        m_result = servingPlan(m_scenario.model, m_scenario.run, req);
    } catch (const std::exception& e) {
        m_summary->setText(QStringLiteral("No plan: %1").arg(QString::fromUtf8(e.what())));
        return;
    }
    QString summary = QStringLiteral("%1 deployments of %2 GPUs estimated for %3 requests of %4 tokens; %5 fit. "
                                     "Speed is a roofline (an upper bound; tensor-parallel all-reduces at the link "
                                     "bandwidth, their latency not counted).")
                          .arg(number(m_result.evaluated), number(req.gpus), number(req.concurrency),
                              number(req.context), number(Count(m_result.top.size())));
    if (m_result.top.empty())
        summary += QStringLiteral(" Nothing fits: the rows below say why.");
    m_summary->setText(summary);

    const int fitting = int(m_result.top.size());
    m_table->setRowCount(fitting + int(m_result.unfit.size()));
    QStringList ranks;
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const bool fits = row < fitting;
        const ServingPlanCandidate& c = fits ? m_result.top[size_t(row)] : m_result.unfit[size_t(row - fitting)];
        const bool timed = c.speed.available;
        const bool started = !c.estimate.ranks.empty() || !c.estimate.devices.empty();
        const QStringList cells
            = { timed ? seconds(c.speed.tpotS) : QString(), timed ? seconds(c.speed.ttftS) : QString(),
                  timed ? number(Count(std::llround(c.tokensPerSAll()))) : QString(),
                  started ? number(c.requestsHeld) : QString(), started ? number(c.estimate.kvCacheTokens) : QString(),
                  text(c.summary()), text(c.why) };
        const QString tip = QStringLiteral("%1\n%2").arg(cells[Setup], cells[Why])
            + (timed ? QStringLiteral("\n%1").arg(text(c.speed.formula)) : QString());
        for (int col = 0; col < ColumnCount; ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col < Setup)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            item->setToolTip(tip);
            if (!fits)
                item->setFlags(Qt::ItemIsEnabled); // shown with its reason, never applied
            m_table->setItem(row, col, item);
        }
        ranks << (fits ? QStringLiteral("#%1").arg(row + 1) : QStringLiteral("no"));
    }
    m_table->setVerticalHeaderLabels(ranks);
}

void ServingPlanView::applyRow(int row)
{
    if (row < 0 || row >= int(m_result.top.size()))
        return;
    const ServingPlanCandidate& c = m_result.top[size_t(row)];
    emit applyRun(applyServingCandidate(m_scenario.run, c, m_request.context),
        QStringLiteral("Apply serving plan #%1 (%2)").arg(QString::number(row + 1), text(c.summary())));
}

void ServingPlanView::applyFit(int row)
{
    if (row < 0 || row > 2 || !m_fitRuns[row])
        return;
    emit applyRun(*m_fitRuns[row], QStringLiteral("%1 %2").arg(m_fitNames[row]->text(), m_fitWhat[row]));
}

} // namespace vramlab
