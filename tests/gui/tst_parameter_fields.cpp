// SPDX-License-Identifier: MIT
// Every control of the parameter panel over the core's field table: set through the
// descriptor, read back, saved, opened again, undone — the same value each time; and each
// control's range and choices lie inside what the scenario file accepts.
#include "parameter_descriptors.h"
#include "scenario_document.h"

#include "vramlab/scenario_fields.h"
#include "vramlab/scenario_io.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace vramlab;

namespace {

QString sourcePath(const char* rel)
{
    return QStringLiteral(VRAMLAB_SOURCE_DIR "/") + QLatin1String(rel);
}

/// A value of the control other than `v`.
QVariant otherValue(const ParamDescriptor& d, const QVariant& v)
{
    using K = ParamDescriptor::Kind;
    if (!d.unsetText.isEmpty() && v.toDouble() < d.min) // "auto": the lowest value set
        return d.kind == K::Real ? QVariant(d.min) : QVariant::fromValue<qlonglong>(qlonglong(d.min));
    switch (d.kind) {
    case K::Choice:
        for (const QString& c : d.choices)
            if (c != v.toString() && !c.isEmpty())
                return c;
        break;
    case K::Toggle:
        return !v.toBool();
    case K::Integer:
    case K::LogInteger:
        return QVariant::fromValue<qlonglong>(
            v.toLongLong() < qlonglong(d.max) ? v.toLongLong() + 1 : v.toLongLong() - 1);
    case K::Real:
        return v.toDouble() + 0.125 <= d.max ? v.toDouble() + 0.125 : v.toDouble() - 0.125;
    case K::Text:
        return v.toString() + QStringLiteral(", gate");
    }
    return v;
}

} // namespace

class TestParameterFields : public QObject {
    Q_OBJECT
private slots:
    void controlsLieInsideTheirFields()
    {
        int backed = 0, serving = 0;
        for (const ParamDescriptor& d : parameterDescriptors()) {
            const ScenarioField* f = findField(d.key.toStdString());
            serving += d.key.startsWith(QLatin1String("run.serving.")); // run.serving's own reader (tst_serving_page)
            if (!f)
                continue;
            ++backed;
            if (f->kind == FieldKind::Integer || f->kind == FieldKind::Real) {
                QVERIFY2(d.min >= f->min && d.max <= f->max, qPrintable(d.key));
            }
            if (f->kind == FieldKind::Choice)
                for (const QString& c : d.choices)
                    QVERIFY2(c == QLatin1String("default") || valueNamed<int>(f->choices, c.toStdString()),
                        qPrintable(d.key + ": " + c));
        }
        // Only the derived controls (parameters in billions, the GPU's capacity and figures) and the
        // serving engine's flags (one Custom field, run.serving) stand outside the table.
        const auto gpuFigures = std::count_if(parameterDescriptors().begin(), parameterDescriptors().end(),
            [](const ParamDescriptor& d) { return d.key.startsWith(QLatin1String("run.gpu.")); });
        QCOMPARE(backed, int(parameterDescriptors().size()) - 1 - int(gpuFigures) - serving);
        QVERIFY(serving >= 5);
    }

    void everyControlRoundTrips_data()
    {
        QTest::addColumn<QString>("key");
        for (const ParamDescriptor& d : parameterDescriptors())
            if (findField(d.key.toStdString()))
                QTest::newRow(qPrintable(d.key)) << d.key;
    }
    void everyControlRoundTrips()
    {
        QFETCH(QString, key);
        const ParamDescriptor& d = *findDescriptor(key);
        QTemporaryDir dir;
        ScenarioDocument doc;
        QString error;
        // The first of these scenarios where the control applies (QLoRA's keys are written only with QLoRA).
        for (const char* file :
            { "resources/scenarios/llama-3-8b-8xh100.json", "resources/scenarios/gemma-3-12b-qlora.json",
                "tests/data/published/training/torchtune-llama3.2-3b-full-packed-compile-chunkedce-ac.json" }) {
            const nlohmann::json j = parseJsonText(readTextFile(sourcePath(file).toStdString()), file);
            doc.reset(readScenario(j.contains("scenario") ? j.at("scenario") : j));
            if (d.applies(doc.scenario()))
                break;
        }
        const QVariant before = d.get(doc.scenario());
        const QVariant after = otherValue(d, before);
        QVERIFY2(after != before, qPrintable(key));

        QSignalSpy changed(&doc, &ScenarioDocument::changed);
        doc.setParameter(key, after);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(d.get(doc.scenario()), after);

        const QString file = dir.filePath(QStringLiteral("walk.json"));
        QVERIFY2(doc.save(file, &error), qPrintable(error));
        ScenarioDocument reopened;
        QVERIFY2(reopened.open(file, &error), qPrintable(error));
        QCOMPARE(d.get(reopened.scenario()), after);

        doc.undoStack()->undo();
        QCOMPARE(d.get(doc.scenario()), before);
    }

    // Each checkpointing choice reads back as itself ("first half" is {"layers": n} with n half the layers), and a
    // file's value outside the list reads as its own text, which the panel adds to the list rather than show "None".
    void checkpointingChoicesReadBack()
    {
        const ParamDescriptor& d = *findDescriptor(QStringLiteral("run.checkpointing"));
        const char* file = "resources/scenarios/llama-3-8b-8xh100.json";
        Scenario sc = readScenario(parseJsonText(readTextFile(sourcePath(file).toStdString()), file));
        for (const QString& c : d.choices) {
            d.set(sc, c);
            QCOMPARE(d.get(sc).toString(), c);
        }
        d.set(sc, QStringLiteral("first half"));
        QCOMPARE(sc.run.checkpointing.kind, Checkpointing::Kind::Layers);
        QCOMPARE(sc.run.checkpointing.every, Count(16)); // Llama 3 8B's 32 layers
        sc.run.checkpointing = { Checkpointing::Kind::Every, 3 };
        QCOMPARE(d.get(sc).toString(), QStringLiteral("every 3"));
        sc.run.checkpointing = { Checkpointing::Kind::Layers, 5 };
        QCOMPARE(d.get(sc).toString(), QStringLiteral("first 5"));
        d.set(sc, QStringLiteral("first 5"));
        QCOMPARE(sc.run.checkpointing.every, Count(5));
    }
};

QTEST_MAIN(TestParameterFields)
#include "tst_parameter_fields.moc"
