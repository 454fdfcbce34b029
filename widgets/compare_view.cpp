// SPDX-License-Identifier: MIT
#include "compare_view.h"

#include "chart_support.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

namespace vramlab {

namespace {

StackedBarChart::Column column(const QString& label, const Scenario& sc)
{
    try {
        return { label, estimate(sc), {} };
    } catch (const std::exception& e) {
        return { label, std::nullopt, QString::fromUtf8(e.what()) };
    }
}

} // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent)
    , m_tabs(new QTabWidget(this))
    , m_methods(new StackedBarChart)
    , m_zero(new StackedBarChart)
    , m_ab(new StackedBarChart)
    , m_abTable(new QTableWidget(0, 4))
    , m_abHint(new QLabel)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tabs);
    m_tabs->addTab(m_methods, QStringLiteral("Inference vs training vs LoRA vs QLoRA"));
    m_tabs->addTab(m_zero, QStringLiteral("ZeRO stages"));

    auto* ab = new QWidget;
    auto* abLayout = new QVBoxLayout(ab);
    auto* buttons = new QHBoxLayout;
    for (int side = 0; side < 2; ++side) {
        const QString name = side == 0 ? QStringLiteral("A") : QStringLiteral("B");
        auto* open = new QPushButton(QStringLiteral("Open %1…").arg(name));
        open->setToolTip(QStringLiteral("Choose a scenario file for side %1").arg(name));
        auto* current = new QPushButton(QStringLiteral("Current as %1").arg(name));
        current->setToolTip(QStringLiteral("Put the scenario being edited on side %1").arg(name));
        connect(open, &QPushButton::clicked, this, [this, side] { emit openSideRequested(side); });
        connect(current, &QPushButton::clicked, this, [this, side] { emit useCurrentRequested(side); });
        buttons->addWidget(open);
        buttons->addWidget(current);
    }
    buttons->addStretch();
    abLayout->addLayout(buttons);
    abLayout->addWidget(m_abHint);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_ab);
    split->addWidget(m_abTable);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    abLayout->addWidget(split, 1);
    m_abTable->setHorizontalHeaderLabels(
        { QStringLiteral("Component"), QStringLiteral("A"), QStringLiteral("B"), QStringLiteral("B - A") });
    m_abTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_abTable->verticalHeader()->setVisible(false);
    m_abTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_tabs->addTab(ab, QStringLiteral("Two scenarios (A/B)"));
    rebuildAb();
}

int CompareView::currentView() const
{
    return m_tabs->currentIndex();
}

QVector<Scenario> CompareView::sides(QStringList* labels) const
{
    QVector<Scenario> out;
    for (int side = 0; side < 2; ++side)
        if (m_sides[side]) {
            out << *m_sides[side];
            if (labels)
                *labels << m_labels[side];
        }
    return out;
}

void CompareView::setTheme(const PlotTheme& theme)
{
    for (StackedBarChart* c : { m_methods, m_zero, m_ab })
        c->setTheme(theme);
}

QVector<StackedBarChart::Column> CompareView::methodColumns(const Scenario& base)
{
    Scenario inf = base, full = base, lora = base, qlora = base;
    inf.run.mode = Mode::Inference;
    inf.run.inference.batchSize = 1;
    inf.run.inference.contextLength = base.run.sequenceLength;
    for (Scenario* s : { &full, &lora, &qlora })
        s->run.mode = Mode::Training;
    full.run.finetune.method = FinetuneMethod::Full;
    lora.run.finetune.method = FinetuneMethod::Lora;
    qlora.run.finetune.method = FinetuneMethod::Qlora;
    if (qlora.run.precision == Precision::Fp32)
        qlora.run.precision = Precision::MixedBf16;
    const QString rank = QString::number(base.run.finetune.rank);
    return { column(QStringLiteral("Inference"), inf), column(QStringLiteral("Full training"), full),
        column(QStringLiteral("LoRA r=%1").arg(rank), lora), column(QStringLiteral("QLoRA r=%1").arg(rank), qlora) };
}

QVector<StackedBarChart::Column> CompareView::zeroColumns(const Scenario& base)
{
    QVector<StackedBarChart::Column> cols;
    Scenario sc = base;
    sc.run.mode = Mode::Training;
    sc.run.parallelism.offloadParams = false;
    if (sc.run.parallelism.dataParallel() <= 1)
        sc.run.parallelism.gpus = 8 * sc.run.parallelism.tensorParallel * sc.run.parallelism.pipelineParallel;
    const QString gpus = QString::number(sc.run.parallelism.gpus);
    for (int stage = 0; stage <= 3; ++stage) {
        sc.run.parallelism.zeroStage = stage;
        cols << column(
            stage == 0 ? QStringLiteral("DP (no ZeRO), %1 GPUs").arg(gpus) : QStringLiteral("ZeRO-%1").arg(stage), sc);
    }
    return cols;
}

void CompareView::setScenario(const Scenario& scenario)
{
    m_methods->setColumns(methodColumns(scenario));
    m_zero->setColumns(zeroColumns(scenario));
}

void CompareView::setSide(int side, const Scenario& scenario, const QString& label)
{
    m_sides[side] = scenario;
    m_labels[side] = label;
    rebuildAb();
}

void CompareView::rebuildAb()
{
    QVector<StackedBarChart::Column> cols;
    for (int side = 0; side < 2; ++side)
        if (m_sides[side])
            cols << column(
                QStringLiteral("%1: %2").arg(side == 0 ? QStringLiteral("A") : QStringLiteral("B"), m_labels[side]),
                *m_sides[side]);
    m_ab->setColumns(cols);
    m_abHint->setText(
        cols.size() < 2 ? QStringLiteral("Choose two scenarios to compare them component by component.") : QString());
    m_abTable->setRowCount(0);
    if (cols.size() < 2 || !cols[0].report || !cols[1].report)
        return;
    const Report &a = *cols[0].report, &b = *cols[1].report;
    const QLocale en(QLocale::English);
    QStringList keys;
    for (const char* k : kComponentKeys)
        keys << QString::fromLatin1(k);
    keys << QStringLiteral("total");
    for (const QString& key : keys) {
        const Bytes va = key == QLatin1String("total") ? a.peak : a.bytesOf(key.toStdString());
        const Bytes vb = key == QLatin1String("total") ? b.peak : b.bytesOf(key.toStdString());
        const int row = m_abTable->rowCount();
        m_abTable->insertRow(row);
        const Bytes diff = vb - va;
        const QString sign = diff > 0 ? QStringLiteral("+") : diff < 0 ? QStringLiteral("-") : QString();
        const QStringList cells = { key == QLatin1String("total") ? QStringLiteral("Peak") : componentLabel(key),
            bytesText(va), bytesText(vb), diff == 0 ? QStringLiteral("=") : sign + bytesText(diff < 0 ? -diff : diff) };
        for (int c = 0; c < 4; ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c > 0)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (diff != 0) { // highlight what differs: more memory red, less green
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
                if (c == 3)
                    item->setForeground(diff > 0 ? QColor(190, 30, 20) : QColor(0, 130, 60));
            }
            item->setToolTip(
                QStringLiteral("A: %1 bytes, B: %2 bytes").arg(en.toString(qlonglong(va)), en.toString(qlonglong(vb))));
            m_abTable->setItem(row, c, item);
        }
    }
}

} // namespace vramlab
