// SPDX-License-Identifier: MIT
// The breakdown model on its own: a valid Qt item model (QAbstractItemModelTester) whose
// rows are found by key and carry the core's bytes.
#include "breakdown_model.h"
#include "scenario_document.h"
#include "vramlab/estimator.h"

#include <QAbstractItemModelTester>
#include <QtTest>

using namespace vramlab;

class TestBreakdownModel : public QObject {
    Q_OBJECT
private slots:
    void isAValidItemModel()
    {
        BreakdownModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Report r = estimate(ScenarioDocument::defaultScenario());
        model.setReport(&r);
        model.setReport(nullptr);
        QCOMPARE(model.rowCount(), 0);
        model.setReport(&r);
        QCOMPARE(model.rowCount(), int(r.components.size()) + 1); // and the total
    }

    void rowsByKeyCarryTheCoresBytes()
    {
        BreakdownModel model;
        const Report r = estimate(ScenarioDocument::defaultScenario());
        model.setReport(&r);
        for (const Component& c : r.components) {
            const QModelIndex i = model.indexOfKey(QString::fromUtf8(c.key.data(), qsizetype(c.key.size())));
            QVERIFY(i.isValid());
            QCOMPARE(i.data(BreakdownModel::BytesRole).toLongLong(), qlonglong(c.bytes));
            QCOMPARE(i.data().toString(), QString::fromUtf8(c.label.data(), qsizetype(c.label.size())));
        }
        const QModelIndex acts = model.indexOfKey(QStringLiteral("activations"));
        QCOMPARE(model.rowCount(acts), int(r.activations.tensors.size()));
        const QModelIndex first = model.index(0, BreakdownModel::BytesColumn, acts);
        QCOMPARE(first.data(BreakdownModel::BytesRole).toLongLong(), qlonglong(r.activations.tensors.front().total()));
        QCOMPARE(model.parent(first), acts);
        QCOMPARE(model.rowCount(model.indexOfKey(QStringLiteral("overhead"))), int(r.overheadParts.size()));
        const QModelIndex total = model.indexOfKey(QStringLiteral("total"));
        QCOMPARE(total.data(BreakdownModel::BytesRole).toLongLong(), qlonglong(r.total));
        QCOMPARE(model.index(total.row(), BreakdownModel::ShareColumn).data().toString(), QStringLiteral("100%"));
        QVERIFY(!model.indexOfKey(QStringLiteral("no_such_component")).isValid());
    }
};

QTEST_MAIN(TestBreakdownModel)
#include "tst_breakdown_model.moc"
