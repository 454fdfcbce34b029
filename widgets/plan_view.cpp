// SPDX-License-Identifier: MIT
#include "plan_view.h"

#include "chart_support.h"
#include "plan_table.h"
#include "stable_height_label.h"
#include "vramlab/fit.h"

#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace vramlab {

namespace {

const char* const kFitNames[3] = { "Largest micro-batch", "Longest sequence", "Fewest GPUs" };

QString number(Count v)
{
    return QLocale(QLocale::English).toString(qlonglong(v));
}

QString seconds(double s)
{
    return QString::fromStdString(formatSeconds(s, 3));
}

} // namespace

PlanView::PlanView(QWidget* parent)
    : QWidget(parent)
{
    m_syncing = true; // no planning while the widgets are being built
    auto* layout = new QVBoxLayout(this);

    auto* fits = new QGridLayout;
    for (int i = 0; i < 3; ++i) {
        const PlanFitRow r = addPlanFitRow(fits, i, this, [this, i] { applyFit(i); });
        r.name->setText(QString::fromLatin1(kFitNames[i]) + QLatin1Char(':'));
        m_fitLabels[i] = r.answer;
        m_fitApply[i] = r.apply;
    }
    layout->addLayout(fits);

    auto* controls = new QHBoxLayout;
    auto spin = [&](const QString& label, int lo, int hi, const QString& tip) {
        auto* s = new QSpinBox(this);
        s->setRange(lo, hi);
        s->setToolTip(tip);
        s->setKeyboardTracking(false); // plan when the number is complete, not per digit
        controls->addWidget(new QLabel(label, this));
        controls->addWidget(s);
        connect(s, &QSpinBox::valueChanged, this, [this] {
            if (!m_syncing)
                replan();
        });
        return s;
    };
    m_gpus = spin(QStringLiteral("GPUs"), 1, 100000, QStringLiteral("GPUs of the scenario's type to plan for"));
    m_globalBatch = spin(QStringLiteral("Global batch"), 1, 10000000,
        QStringLiteral("Sequences per optimizer step: micro-batch x accumulation x data-parallel size"));
    m_topK = spin(QStringLiteral("Show"), 1, 200, QStringLiteral("How many of the fastest setups to list"));
    m_topK->setValue(10);
    controls->addStretch(1);
    m_apply = new QPushButton(QStringLiteral("Apply selected setup"), this);
    controls->addWidget(m_apply);
    layout->addLayout(controls);

    m_summary = new StableHeightLabel(this);
    m_summary->setTextFormat(Qt::PlainText); // errors echo values from the scenario file
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);

    m_table = newPlanTable({ QStringLiteral("Step"), QStringLiteral("Tokens/s"), QStringLiteral("Peak per GPU"),
                               QStringLiteral("Setup"), QStringLiteral("Why (hover a row for the time by cause)") },
        m_apply, this, [this](int row) { applyRow(row); });
    layout->addWidget(m_table, 1);
    m_syncing = false;
}

void PlanView::setScenario(const Scenario& sc)
{
    m_scenario = sc;
    m_syncing = true;
    m_gpus->setValue(int(std::min<Count>(sc.run.parallelism.gpus, 100000)));
    m_globalBatch->setValue(int(std::min<Count>(sc.run.microBatchSize * sc.run.gradientAccumulationSteps
            * std::max<Count>(1, sc.run.parallelism.dataParallel()),
        10000000)));
    m_syncing = false;

    // The fit solvers on the scenario as it is.
    const SweepParam params[3] = { SweepParam::MicroBatchSize, SweepParam::SequenceLength, SweepParam::Gpus };
    for (int i = 0; i < 3; ++i) {
        m_fitValues[i].reset();
        QString text;
        if (!sc.run.gpu) {
            text = QStringLiteral("choose a GPU to search for the boundary");
        } else if (sc.run.mode != Mode::Training) {
            text = QStringLiteral("for training scenarios");
        } else {
            try {
                const FitResult f = i == 2 ? fitMinGpus(sc) : fitMax(sc, params[i]);
                if (!f.value && i == 2) {
                    text = f.nextReport ? QStringLiteral("nothing fits: even %1 GPUs leave %2 per GPU")
                                              .arg(number(f.nextValue), bytesText(f.nextReport->peak))
                                        : QStringLiteral("nothing fits at any GPU count with this setup");
                } else if (!f.value) {
                    text = QStringLiteral("nothing fits: %1 already needs %2 at its peak")
                               .arg(number(f.nextValue), f.nextReport ? bytesText(f.nextReport->peak) : QString());
                } else {
                    m_fitValues[i] = f.value;
                    const Bytes peak = f.report->peak, next = f.nextReport ? f.nextReport->peak : peak;
                    text = QStringLiteral("<b>%1</b> (peak %2 of %3)")
                               .arg(number(*f.value), QString::fromStdString(formatBytesApart(peak, next)),
                                   bytesText(f.report->usableBytes));
                    if (f.nextReport)
                        text += QStringLiteral("; %1 needs %2")
                                    .arg(number(f.nextValue), QString::fromStdString(formatBytesApart(next, peak)));
                }
            } catch (const std::exception& e) {
                text = QString::fromUtf8(e.what()).toHtmlEscaped(); // the label is rich text; errors echo the file
            }
        }
        m_fitLabels[i]->setText(text);
        m_fitApply[i]->setEnabled(m_fitValues[i].has_value());
    }
    replan();
}

void PlanView::setGpus(Count gpus)
{
    m_gpus->setValue(int(gpus));
}
void PlanView::setGlobalBatch(Count sequences)
{
    m_globalBatch->setValue(int(sequences));
}

QString PlanView::fitText(int row) const
{
    return m_fitLabels[row]->text();
}

void PlanView::replan()
{
    m_result = {};
    m_table->setRowCount(0);
    m_apply->setEnabled(false);
    PlanRequest req;
    req.gpus = m_gpus->value();
    req.globalBatch = m_globalBatch->value();
    req.topK = m_topK->value();
    try {
        m_result = plan(m_scenario, req);
    } catch (const std::exception& e) {
        m_summary->setText(QStringLiteral("No plan: %1").arg(QString::fromUtf8(e.what())));
        return;
    }
    QString summary = QStringLiteral("%1 setups estimated on %2 GPUs for %3 sequences per step; %4 fit at their peak.")
                          .arg(number(m_result.evaluated), number(m_result.gpus), number(m_result.globalBatch),
                              number(m_result.fitting));
    for (const std::string& note : m_result.notes)
        summary += QLatin1Char(' ') + QString::fromStdString(note) + QLatin1Char('.');
    if (m_result.top.empty())
        summary += QStringLiteral(" Nothing fits: more GPUs, a shorter sequence or a smaller model.");
    if (m_result.fastestUnfit)
        summary += QStringLiteral(" Faster but over the memory: %1, %2.")
                       .arg(QString::fromStdString(m_result.fastestUnfit->summary()),
                           QString::fromStdString(m_result.fastestUnfit->why));
    m_summary->setText(summary);

    m_table->setRowCount(int(m_result.top.size()));
    for (int row = 0; row < int(m_result.top.size()); ++row) {
        const PlanCandidate& c = m_result.top[size_t(row)];
        const StepTimeParts& t = c.time;
        const QString parts = QStringLiteral("compute %1, recompute %2, DP %3, TP %4, pipeline %5, offload %6")
                                  .arg(seconds(t.computeS), seconds(t.recomputeS), seconds(t.dataParallelS),
                                      seconds(t.tensorParallelS), seconds(t.pipelineS), seconds(t.offloadS));
        const QStringList cells = { seconds(t.total()), number(Count(c.tokensPerS)),
            (c.lowerBound ? QStringLiteral(">= ") : QString()) + bytesText(c.peak), // a lower bound: at least
            QString::fromStdString(c.summary()), QString::fromStdString(c.why) };
        const QString tip = QStringLiteral("%1\n%2\n%3").arg(cells[3], cells[4], parts);
        for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col < 3)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            item->setToolTip(tip);
            m_table->setItem(row, col, item);
        }
    }
    m_table->setVerticalHeaderLabels([&] {
        QStringList ranks;
        for (int row = 0; row < int(m_result.top.size()); ++row)
            ranks << QStringLiteral("#%1").arg(row + 1);
        return ranks;
    }());
}

void PlanView::applyRow(int row)
{
    if (row < 0 || row >= int(m_result.top.size()))
        return;
    const PlanCandidate& c = m_result.top[size_t(row)];
    emit applyRun(applyCandidate(m_scenario.run, c, m_result.gpus),
        QStringLiteral("Apply plan #%1 (%2)").arg(QString::number(row + 1), QString::fromStdString(c.summary())));
}

void PlanView::applyFit(int row)
{
    if (row < 0 || row > 2 || !m_fitValues[row])
        return;
    RunSpec run = m_scenario.run;
    const SweepParam params[3] = { SweepParam::MicroBatchSize, SweepParam::SequenceLength, SweepParam::Gpus };
    setValue(run, params[row], *m_fitValues[row]);
    emit applyRun(run, QStringLiteral("%1: %2").arg(QString::fromLatin1(kFitNames[row]), number(*m_fitValues[row])));
}

} // namespace vramlab
