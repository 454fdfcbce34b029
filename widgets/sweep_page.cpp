// SPDX-License-Identifier: MIT
#include "sweep_page.h"

#include "scenario_document.h"
#include "sweep_chart.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

namespace vramlab {

SweepPage::SweepPage(ScenarioDocument* document, QWidget* parent)
    : Page(document, parent)
    , m_chart(new SweepChart)
    , m_param(new QComboBox)
    , m_error(new QLabel)
{
    setObjectName(QStringLiteral("sweepPage"));
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(QStringLiteral("Memory against")));
    m_param->setToolTip(QStringLiteral("The size the sweep varies; everything else stays as set"));
    bar->addWidget(m_param);
    bar->addStretch();
    layout->addLayout(bar);
    m_error->setObjectName(QStringLiteral("sweepError"));
    m_error->setTextFormat(Qt::PlainText); // messages quote the user's values
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setVisible(false);
    layout->addWidget(m_error);
    layout->addWidget(m_chart, 1);
    connect(m_param, &QComboBox::activated, this, &SweepPage::recompute);
}

ChartKind SweepPage::chartKind() const
{
    return m_param->currentIndex() >= 0 ? ChartKind(m_param->currentData().toInt()) : ChartKind::SweepSequence;
}

void SweepPage::setTheme(const PlotTheme& theme)
{
    m_chart->setTheme(theme);
}

QString SweepPage::errorText() const
{
    return m_error->text();
}

void SweepPage::recompute()
{
    const Scenario& sc = document()->scenario();
    const bool training = sc.run.mode == Mode::Training;
    const int wanted = m_param->currentIndex() >= 0 ? m_param->currentData().toInt() : int(ChartKind::SweepSequence);
    m_param->clear();
    m_param->addItem(
        training ? QStringLiteral("sequence length") : QStringLiteral("context length"), int(ChartKind::SweepSequence));
    m_param->addItem(training ? QStringLiteral("micro-batch") : QStringLiteral("batch"), int(ChartKind::SweepBatch));
    m_param->setCurrentIndex(std::max(0, m_param->findData(wanted)));

    QString error = document()->error();
    SweepSeries series;
    if (document()->report()) {
        try {
            series = sweepSeries(sc, sweepParamFor(chartKind(), sc));
        } catch (const std::exception& e) { // shown above the chart, never as its axis label
            error = QString::fromUtf8(e.what());
        }
    }
    m_chart->setSeries(std::move(series), m_param->currentText());
    m_error->setText(error);
    m_error->setVisible(!error.isEmpty());
}

} // namespace vramlab
