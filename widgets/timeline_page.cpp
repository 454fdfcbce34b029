// SPDX-License-Identifier: MIT
#include "timeline_page.h"

#include "chart_support.h"
#include "scenario_document.h"
#include "stable_height_label.h"
#include "timeline_chart.h"
#include "vramlab/errors.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace vramlab {

TimelinePage::TimelinePage(ScenarioDocument* document, QWidget* parent)
    : Page(document, parent)
    , m_chart(new TimelineChart)
    , m_step(new QComboBox)
    , m_info(new StableHeightLabel)
{
    setObjectName(QStringLiteral("timelinePage"));
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_step->addItem(QStringLiteral("Step 2 and later: optimizer states from the start"), 2);
    m_step->addItem(QStringLiteral("Step 1: optimizer states created at the end"), 1);
    m_step->setToolTip(QStringLiteral(
        "PyTorch creates Adam's states in the first optimizer.step(): step 1 can fit where step 2 does not"));
    bar->addWidget(m_step);
    // Plain text: values are never markup, and a rich-text label lays out a whole text
    // document each time it is measured (on every slider move).
    m_info->setTextFormat(Qt::PlainText);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bar->addWidget(m_info, 1);
    layout->addLayout(bar);
    layout->addWidget(m_chart, 1);
    connect(m_step, &QComboBox::activated, this, &TimelinePage::recompute);
}

void TimelinePage::setTheme(const PlotTheme& theme)
{
    m_chart->setTheme(theme);
}

void TimelinePage::recompute()
{
    const std::optional<Report>& r = document()->report();
    if (!r || !r->stepInputs.training) {
        m_chart->setTimeline({}, {}, 0);
        m_info->setText(r ? QStringLiteral("The timeline simulates a training step; this scenario serves (inference).")
                          : document()->error());
        return;
    }
    StepTimeline t;
    try {
        t = timelineSeries(*r, m_step->currentData().toInt()); // step 2: the estimate's own, not simulated again
    } catch (const InputError& e) { // beyond the events a timeline records
        m_chart->setTimeline({}, {}, 0);
        m_info->setText(QString::fromUtf8(e.what()));
        return;
    }
    QString info
        = QStringLiteral("Peak %1 at %2.").arg(bytesText(t.peak), QString::fromStdString(t.peakWhere(r->stepInputs)));
    if (t.simulatedMicroBatches < r->stepInputs.microBatches)
        info += QStringLiteral(" Micro-batches %1 to %2 repeat micro-batch %3 exactly and are not drawn.")
                    .arg(QString::number(t.simulatedMicroBatches + 1), QString::number(r->stepInputs.microBatches),
                        QString::number(t.simulatedMicroBatches));
    m_chart->setTimeline(t, r->stepInputs, r->usableBytes);
    m_info->setText(info);
}

} // namespace vramlab
