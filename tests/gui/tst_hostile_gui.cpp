// SPDX-License-Identifier: MIT
// The real window against hostile files and unlucky users (issue 17, issue 16's lost work):
// text from files is never markup, huge values are cut, a model too large to estimate is
// refused at load, each window owns its autosave, the first edit is autosaved, a stale save
// target is never written, an import keeps the run and never the file, the wheel scrolls.
#include "autosave_file.h"
#include "main_window.h"
#include "parameter_panel.h"
#include "scenario_document.h"
#include "vramlab/scenario_io.h"

#include <QComboBox>
#include <QLabel>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QWheelEvent>
#include <QtTest>

using namespace vramlab;

namespace {

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (f.open(QIODevice::WriteOnly))
        f.write(text);
    return path;
}

QByteArray scenarioWithPrecision(const QByteArray& precision)
{
    return R"({"format":"vramlab.scenario","version":1,"model":{"preset":"gpt2"},"run":{"precision":)" + precision
        + "}}";
}

/// Every label in the window whose text contains `needle` shows it as plain text.
void verifyShownAsText(QWidget* window, const QString& needle)
{
    int seen = 0;
    for (QLabel* l : window->findChildren<QLabel*>()) {
        if (!l->text().contains(needle))
            continue;
        ++seen;
        QVERIFY2(
            l->textFormat() == Qt::PlainText, qPrintable(l->objectName() + QStringLiteral(": ") + l->text().left(80)));
    }
    QVERIFY2(seen > 0, qPrintable(needle));
}

int exportExitCode(const QStringList& args, QByteArray* err)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(VRAMLAB_GUI), args);
    p.waitForFinished(60000);
    *err = p.readAllStandardError();
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

} // namespace

class TestHostileGui : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("VRAM Lab tests"));
        QApplication::setApplicationName(QStringLiteral("tst_hostile_gui"));
        QDir(AutosaveFile::folder()).removeRecursively();
        QSettings().clear();
    }

    void init()
    {
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1400, 900);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
    void cleanup()
    {
        if (m_window)
            m_window->document()->undoStack()->setClean();
        m_window.reset();
        QDir(AutosaveFile::folder()).removeRecursively();
    }

    void fileTextIsNeverMarkup_data()
    {
        QTest::addColumn<QByteArray>("precision");
        QTest::addColumn<QString>("shown");
        // Loaded as rich text, /dev/zero is read until bad_alloc; a FIFO blocks the main thread.
        QTest::newRow("img /dev/zero") << QByteArray("\"<img src=\\\"/dev/zero\\\">\"")
                                       << QStringLiteral("<img src=\"/dev/zero\">");
        QTest::newRow("bold") << QByteArray("\"<b>big</b><img width=3000 src=x>\"") << QStringLiteral("<b>big</b>");
        QTest::newRow("%1") << QByteArray("\"%1 %2 <i>x</i>\"") << QStringLiteral("%1 %2 <i>x</i>");
    }
    void fileTextIsNeverMarkup()
    {
        QFETCH(QByteArray, precision);
        QFETCH(QString, shown);
        QTemporaryDir dir;
        const QString path = writeFile(dir, QStringLiteral("hostile.json"), scenarioWithPrecision(precision));
        QVERIFY(!m_window->openFile(path));
        QVERIFY(m_window->lastError().contains(shown));
        verifyShownAsText(m_window.get(), shown);
        const QImage shot = m_window->grab().toImage(); // lays out and paints every label: no crash, no hang
        QVERIFY(!shot.isNull());
    }

    void errorBannerCanBeDismissed()
    {
        QTemporaryDir dir;
        QVERIFY(!m_window->openFile(writeFile(dir, QStringLiteral("bad.json"), scenarioWithPrecision("\"fp3\""))));
        auto* banner = m_window->findChild<QWidget*>(QStringLiteral("errorBanner"));
        QVERIFY(banner && banner->isVisible());
        auto* dismiss = m_window->findChild<QToolButton*>(QStringLiteral("dismissBanner"));
        QVERIFY(dismiss);
        dismiss->click();
        QVERIFY(!banner->isVisible());
        QVERIFY(!m_window->lastError().isEmpty()); // the message is still there to ask for
    }

    void hugeValuesAreCut()
    {
        QTemporaryDir dir;
        const QString path = writeFile(
            dir, QStringLiteral("huge.json"), scenarioWithPrecision('"' + QByteArray(1'000'000, 'x') + '"'));
        QVERIFY(!m_window->openFile(path));
        QVERIFY(m_window->lastError().size() < 2000);
        QVERIFY(m_window->lastError().endsWith(QStringLiteral("…")));
        QVERIFY(!m_window->grab().toImage().isNull());
    }

    void modelTooLargeIsRefusedAtLoad()
    {
        // 100,000 experts x FFN 10^7 x hidden 10^6: every number is in range, the product is not.
        QTemporaryDir dir;
        const QString path = writeFile(dir, QStringLiteral("moe.json"), R"({"format":"vramlab.scenario","version":1,
            "model":{"preset":"mixtral-8x7b","hidden_size":1000000,"moe":{"num_experts":100000,"expert_ffn_hidden_size":10000000}},
            "run":{"gpu":"h100-sxm-80gb"}})");
        const Scenario before = m_window->document()->scenario();
        const QString fileBefore = m_window->document()->filePath();
        QVERIFY(!m_window->openFile(path));
        QVERIFY2(m_window->lastError().contains(QStringLiteral("too large")), qPrintable(m_window->lastError()));
        QCOMPARE(m_window->document()->filePath(), fileBefore); // never the save target
        QCOMPARE(m_window->document()->scenario().run.sequenceLength, before.run.sequenceLength);
        // The controls still answer.
        m_window->document()->setParameter(QStringLiteral("run.sequence_length"), QVariant::fromValue<qlonglong>(2048));
        auto* spin = m_window->panel()->editor(QStringLiteral("run.sequence_length"));
        QVERIFY(spin);
        QCOMPARE(spin->property("value").toLongLong(), 2048LL);
    }

    void eachWindowOwnsItsAutosave()
    {
        m_window->document()->setParameter(QStringLiteral("run.micro_batch_size"), QVariant::fromValue<qlonglong>(5));
        m_window->autosaveNow();
        QVERIFY(QFileInfo::exists(m_window->autosavePath()));
        // A second window while the first one lives: nothing to restore, and declining deletes nothing.
        auto second = std::make_unique<MainWindow>();
        QVERIFY(second->autosavePath() != m_window->autosavePath());
        QVERIFY(!AutosaveFile::newestOrphan());
        QVERIFY(!second->hasAutosave());
        QVERIFY(!second->restoreAutosave());
        QVERIFY(QFileInfo::exists(m_window->autosavePath()));
        // The first window goes away without closing (as in a crash): its work is offered.
        const QString first = m_window->autosavePath();
        m_window.reset();
        QCOMPARE(AutosaveFile::newestOrphan().value_or(QString()), first);
        QVERIFY(second->restoreAutosave());
        QCOMPARE(second->document()->scenario().run.microBatchSize, Count(5));
        QVERIFY(!QFileInfo::exists(first));
        second->document()->undoStack()->setClean();
    }

    void restoredWorkIsNotReplacedUnasked()
    {
        // `vramlab B.json` after a crash: Yes restored the work, then B replaced it without a word.
        m_window->document()->setParameter(QStringLiteral("run.micro_batch_size"), QVariant::fromValue<qlonglong>(9));
        m_window->autosaveNow();
        QVERIFY(QFile::copy(m_window->autosavePath(), AutosaveFile::pathFor(4'194'998, 1)));
        auto next = std::make_unique<MainWindow>();
        next->restoreSession(false);
        QVERIFY(next->restoreAutosave());
        QTemporaryDir dir;
        const QString b = dir.filePath(QStringLiteral("B.json"));
        QVERIFY(m_window->document()->save(b, nullptr));
        bool asked = false;
        QTimer::singleShot(0, this, [&] { // the question is modal: answer Cancel
            for (QWidget* w : QApplication::topLevelWidgets())
                if (auto* box = qobject_cast<QMessageBox*>(w); box && box->isVisible()) {
                    asked = true;
                    box->button(QMessageBox::Cancel)->click();
                }
        });
        QVERIFY(!next->openRequested(b));
        QVERIFY(asked);
        QCOMPARE(next->document()->scenario().run.microBatchSize, Count(9)); // the restored work stays
        QVERIFY(next->document()->isModified());
        next->document()->undoStack()->setClean();
    }

    void firstEditIsAutosaved()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("plan.json"));
        QVERIFY(m_window->document()->save(path, nullptr));
        QVERIFY(m_window->openFile(path));
        QVERIFY(!m_window->document()->isModified());
        m_window->document()->setParameter(QStringLiteral("run.micro_batch_size"), QVariant::fromValue<qlonglong>(7));
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(m_window->autosavePath()), 4000); // 1.5 s after the edit
        QVERIFY(loadScenarioFile(m_window->autosavePath().toStdString()).run.microBatchSize == 7);
    }

    void staleSaveTargetIsNeverWritten()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("plan.json"));
        QVERIFY(m_window->document()->save(path, nullptr));
        QVERIFY(QFileInfo(m_window->document()->filePath()).isAbsolute());
        QVERIFY(m_window->document()->fileUnchanged());
        // Someone replaces the file: Save must not overwrite it unasked.
        QTest::qWait(20);
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("{\"other\": \"work, 17 bytes more\"}");
        f.close();
        QVERIFY(!m_window->document()->fileUnchanged());
        // A relative lastFile (the old `cd A; vramlab plan.json` bug) never becomes the save target.
        QSettings s;
        s.setValue(QStringLiteral("lastScenario"),
            QString::fromStdString(scenarioToJson(m_window->document()->scenario()).dump()));
        s.setValue(QStringLiteral("lastFile"), QStringLiteral("plan.json"));
        auto again = std::make_unique<MainWindow>();
        again->restoreSession(false);
        QVERIFY(again->document()->filePath().isEmpty());
        // An absolute lastFile that no longer holds the scenario does not either.
        s.setValue(QStringLiteral("lastFile"), path);
        auto third = std::make_unique<MainWindow>();
        third->restoreSession(false);
        QVERIFY(third->document()->filePath().isEmpty());
        s.clear();
    }

    void importKeepsTheRunAndNeverTheFile()
    {
        QTemporaryDir dir;
        const QString mine = dir.filePath(QStringLiteral("qlora-4090.json"));
        QVERIFY(m_window->document()->save(mine, nullptr));
        const RunSpec before = m_window->document()->scenario().run; // Llama-3-8B, 8 GPUs, ZeRO-3, 4,096 tokens
        QVERIFY(m_window->openFile(QStringLiteral(VRAMLAB_TEST_DATA_DIR "/hf/gpt2.json")));
        ScenarioDocument* doc = m_window->document();
        QVERIFY(doc->filePath().isEmpty()); // Save asks where: qlora-4090.json is safe
        QVERIFY(doc->isModified());
        QCOMPARE(doc->scenario().model.numLayers, Count(12));
        QCOMPARE(doc->scenario().run.parallelism.gpus, before.parallelism.gpus);
        QCOMPARE(doc->scenario().run.parallelism.zeroStage, before.parallelism.zeroStage);
        QCOMPARE(doc->scenario().run.gradientAccumulationSteps, before.gradientAccumulationSteps);
        QCOMPARE(doc->scenario().run.sequenceLength, Count(1024)); // GPT-2's 1,024 positions: changed, and said
        QVERIFY(doc->report());
    }

    void wheelScrollsAndNeverEdits()
    {
        auto* combo = qobject_cast<QComboBox*>(m_window->panel()->editor(QStringLiteral("run.optimizer")));
        QVERIFY(combo);
        const QString before = combo->currentData().toString();
        const QPointF at(combo->width() / 2.0, combo->height() / 2.0);
        for (int i = 0; i < 5; ++i) {
            QWheelEvent wheel(at, combo->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                Qt::NoScrollPhase, false);
            QApplication::sendEvent(combo, &wheel);
        }
        QCOMPARE(combo->currentData().toString(), before);
        QCOMPARE(m_window->document()->undoStack()->count(), 0);
        // Focused (clicked or tabbed to), the wheel is the control's again.
        combo->setFocus();
        QTRY_VERIFY(combo->hasFocus());
        QWheelEvent wheel(at, combo->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
            Qt::NoScrollPhase, false);
        QApplication::sendEvent(combo, &wheel);
        QVERIFY(combo->currentData().toString() != before);
    }

    void invalidScenarioExportFails()
    {
        QTemporaryDir dir;
        const QString tp3 = writeFile(dir, QStringLiteral("tp3.json"), R"({"format":"vramlab.scenario","version":1,
            "model":{"preset":"llama-3-8b"},"run":{"parallelism":{"gpus":3,"tensor_parallel":3},"gpu":"h100-sxm-80gb"}})");
        QByteArray err;
        const QString out = dir.filePath(QStringLiteral("a.png"));
        QCOMPARE(exportExitCode({ QStringLiteral("--export"), out, tp3 }, &err), 2);
        QVERIFY2(err.contains("run.parallelism.tensor_parallel"), err.constData());
        QVERIFY(!QFileInfo::exists(out));
        QCOMPARE(exportExitCode({ QStringLiteral("--export"), out, QStringLiteral("--width"), QStringLiteral("10000"),
                                    QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/llama-3-8b-8xh100.json") },
                     &err),
            2);
        QVERIFY(err.contains("--width: expected pixels from 100 to 4096"));
    }

    void timelineTabRefusesPastItsEventLimit()
    {
        // A 100,000-layer model: 6 s per edit on the Timeline tab before; now its recording is
        // refused at once (the peak still shows in the header).
        Scenario sc = m_window->document()->scenario();
        sc.model.numLayers = 100'000;
        m_window->document()->replaceScenario(sc, QStringLiteral("deep"));
        QVERIFY(m_window->document()->report());
        m_window->tabs()->setCurrentIndex(4);
        QCOMPARE(m_window->tabs()->tabText(4), QStringLiteral("Timeline"));
        bool said = false;
        for (QLabel* l : m_window->findChildren<QLabel*>())
            said = said || l->text().contains(QStringLiteral("the timeline records at most 200,000 events"));
        QVERIFY(said); // before, the tab recorded all 600,000 events: 6 s per edit
    }

    void windowComesBackOnItsScreen()
    {
        // A 2125-px window at x = -459 saved on another screen must not come back as it was.
        auto big = std::make_unique<MainWindow>();
        big->setGeometry(-459, -300, 2125, 1400);
        QSettings().setValue(QStringLiteral("MainWindow/geometry"), big->saveGeometry());
        big.reset();
        auto again = std::make_unique<MainWindow>();
        again->restoreSession(false);
        const QRect avail = again->screen()->availableGeometry();
        QVERIFY2(again->geometry().left() >= avail.left() && again->geometry().top() >= avail.top(),
            qPrintable(QStringLiteral("%1,%2").arg(
                QString::number(again->geometry().left()), QString::number(again->geometry().top()))));
        QVERIFY(again->geometry().width() <= std::max(avail.width(), again->minimumSizeHint().width()));
        QSettings().clear();
    }

    void unknownOptionWithoutADisplay()
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char* var : { "DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM" })
            env.remove(QString::fromLatin1(var));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(VRAMLAB_GUI), { QStringLiteral("--bogus") });
        QVERIFY(p.waitForFinished(20000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit); // not a Qt platform abort
        QCOMPARE(p.exitCode(), 2);
        QCOMPARE(p.readAllStandardError(), QByteArray("vramlab: unknown option \"--bogus\" (see vramlab --help)\n"));
    }

private:
    std::unique_ptr<MainWindow> m_window;
};

QTEST_MAIN(TestHostileGui)
#include "tst_hostile_gui.moc"
