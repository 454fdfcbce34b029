// SPDX-License-Identifier: MIT
// The document alone (vramlab_document: no widget, no window): one `changed` per edit, a
// slider drag merged into one undo step, undo and redo restoring scenario and report.
#include "parameter_descriptors.h"
#include "scenario_document.h"
#include "vramlab/estimator.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

using namespace vramlab;

class TestScenarioDocument : public QObject {
    Q_OBJECT
private slots:
    void startsOnTheDefaultScenario()
    {
        ScenarioDocument doc;
        QCOMPARE(doc.scenario().run.parallelism.gpus, Count(8));
        QVERIFY(doc.report());
        QCOMPARE(doc.report()->peak, estimate(ScenarioDocument::defaultScenario()).peak);
        QVERIFY(doc.error().isEmpty());
        QVERIFY(!doc.isModified());
        QCOMPARE(doc.undoStack()->count(), 0);
    }

    void oneChangedPerEdit()
    {
        ScenarioDocument doc;
        QSignalSpy changed(&doc, &ScenarioDocument::changed);
        doc.setParameter(QStringLiteral("run.micro_batch_size"), 2);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(doc.scenario().run.microBatchSize, Count(2));
        QCOMPARE(doc.parameter(QStringLiteral("run.micro_batch_size")).toLongLong(), 2);
        QCOMPARE(doc.report()->peak, estimate(doc.scenario()).peak); // recomputed once, before the signal
        QVERIFY(doc.isModified());
        // The same value again is no edit: no signal, no undo step.
        doc.setParameter(QStringLiteral("run.micro_batch_size"), 2);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(doc.undoStack()->count(), 1);
        // An unknown key changes nothing.
        doc.setParameter(QStringLiteral("run.no_such_key"), 3);
        QCOMPARE(changed.count(), 1);
        // A whole scenario is one edit too.
        Scenario sc = doc.scenario();
        sc.run.sequenceLength = 1024;
        doc.replaceScenario(sc, QStringLiteral("shorter"));
        QCOMPARE(changed.count(), 2);
        QCOMPARE(doc.undoStack()->count(), 2);
        QCOMPARE(doc.undoStack()->undoText(), QStringLiteral("shorter"));
    }

    void sliderDragIsOneUndoStep()
    {
        ScenarioDocument doc;
        const Count before = doc.scenario().run.sequenceLength;
        QSignalSpy changed(&doc, &ScenarioDocument::changed);
        for (int v : { 1024, 2048, 3072, 8192 }) // one drag: merged by the key's merge id
            doc.setParameter(QStringLiteral("run.sequence_length"), v, true);
        QCOMPARE(changed.count(), 4); // every position still updates the views
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(doc.scenario().run.sequenceLength, Count(8192));
        // A drag of another key is another step; a discrete edit never merges.
        doc.setParameter(QStringLiteral("run.micro_batch_size"), 2, true);
        doc.setParameter(QStringLiteral("run.micro_batch_size"), 3, true);
        QCOMPARE(doc.undoStack()->count(), 2);
        doc.setParameter(QStringLiteral("run.micro_batch_size"), 4);
        doc.setParameter(QStringLiteral("run.micro_batch_size"), 5);
        QCOMPARE(doc.undoStack()->count(), 4);
        doc.undoStack()->undo();
        doc.undoStack()->undo();
        doc.undoStack()->undo();
        QCOMPARE(doc.scenario().run.microBatchSize, Count(1));
        QCOMPARE(doc.scenario().run.sequenceLength, Count(8192));
        doc.undoStack()->undo(); // the whole drag at once
        QCOMPARE(doc.scenario().run.sequenceLength, before);
        QVERIFY(!doc.isModified());
    }

    void undoRedoRestoreScenarioAndReport()
    {
        ScenarioDocument doc;
        const Bytes peak = doc.report()->peak;
        doc.setParameter(QStringLiteral("run.parallelism.zero_stage"), 1);
        const Bytes zero1 = doc.report()->peak;
        QVERIFY(zero1 != peak);
        QSignalSpy changed(&doc, &ScenarioDocument::changed);
        doc.undoStack()->undo();
        QCOMPARE(changed.count(), 1);
        QCOMPARE(doc.scenario().run.parallelism.zeroStage, 3);
        QCOMPARE(doc.report()->peak, peak);
        doc.undoStack()->redo();
        QCOMPARE(changed.count(), 2);
        QCOMPARE(doc.scenario().run.parallelism.zeroStage, 1);
        QCOMPARE(doc.report()->peak, zero1);
    }

    void invalidCombinationKeepsTheScenarioAndSaysWhy()
    {
        ScenarioDocument doc;
        QSignalSpy changed(&doc, &ScenarioDocument::changed);
        doc.setParameter(
            QStringLiteral("run.parallelism.gpus"), 3); // 3 GPUs alone run; with tensor parallel 2 they cannot
        doc.setParameter(QStringLiteral("run.parallelism.tensor_parallel"), 2);
        QCOMPARE(changed.count(), 2);
        QCOMPARE(doc.scenario().run.parallelism.gpus, Count(3));
        QVERIFY(!doc.report());
        QVERIFY2(doc.error().contains(QStringLiteral("run.parallelism.")), qPrintable(doc.error()));
        doc.undoStack()->undo();
        QVERIFY(doc.report());
        QVERIFY(doc.error().isEmpty());
    }

    void saveAndResetEndTheHistory()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("s.json"));
        ScenarioDocument doc;
        doc.setParameter(QStringLiteral("run.micro_batch_size"), 2);
        QString error;
        QVERIFY2(doc.save(path, &error), qPrintable(error));
        QVERIFY(!doc.isModified());
        QCOMPARE(doc.filePath(), path);
        QVERIFY(doc.fileUnchanged());
        QSignalSpy changed(&doc, &ScenarioDocument::changed);
        doc.reset(ScenarioDocument::defaultScenario());
        QCOMPARE(changed.count(), 1);
        QCOMPARE(doc.undoStack()->count(), 0);
        QVERIFY(doc.filePath().isEmpty());
        QVERIFY(doc.open(path, &error));
        QCOMPARE(changed.count(), 2);
        QCOMPARE(doc.scenario().run.microBatchSize, Count(2));
        QVERIFY(!doc.isModified());
    }

    // Issue 16: after switching to QLoRA on one RTX 4090 the name says so; a name the user
    // chose stays; renaming is one undo step, and an empty name follows the settings again.
    void theNameFollowsTheSettingsUntilRenamed()
    {
        ScenarioDocument doc;
        QCOMPARE(doc.scenario().name, std::string("Llama 3 8B full fine-tune, 4,096 tokens, on 8x H100 SXM5 80GB"));
        doc.setParameter(QStringLiteral("run.finetune.method"), QStringLiteral("qlora"));
        doc.setParameter(QStringLiteral("run.parallelism.gpus"), 1);
        QCOMPARE(doc.scenario().name, std::string("Llama 3 8B QLoRA r16, 4,096 tokens, on 1x H100 SXM5 80GB"));
        doc.rename(QStringLiteral("  qlora-4090 "));
        QCOMPARE(doc.scenario().name, std::string("qlora-4090"));
        doc.setParameter(QStringLiteral("run.sequence_length"), 8192);
        QCOMPARE(doc.scenario().name, std::string("qlora-4090"));
        doc.undoStack()->undo(); // the length
        doc.undoStack()->undo(); // the rename
        QCOMPARE(doc.scenario().name, std::string("Llama 3 8B QLoRA r16, 4,096 tokens, on 1x H100 SXM5 80GB"));
        doc.rename(QStringLiteral("mine"));
        doc.rename(QString());
        QCOMPARE(doc.scenario().name, std::string("Llama 3 8B QLoRA r16, 4,096 tokens, on 1x H100 SXM5 80GB"));
    }
};

QTEST_GUILESS_MAIN(TestScenarioDocument)
#include "tst_scenario_document.moc"
