// SPDX-License-Identifier: MIT
// The workshop lessons (resources/lessons/*.json): every shipped lesson loads, every number
// a step claims matches the core under the article's conventions, a few headline numbers
// are pinned here explicitly, and malformed lesson files fail naming the step.
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/lesson.h"
#include "vramlab/scenario_io.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <set>

using namespace vramlab;
using json = nlohmann::json;

namespace {

QString lessonDir()
{
    return QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/lessons");
}

QStringList shippedLessonFiles()
{
    QStringList files;
    for (const QString& name : QDir(lessonDir()).entryList({ QStringLiteral("*.json") }, QDir::Files, QDir::Name))
        files << lessonDir() + QLatin1Char('/') + name;
    return files;
}

Lesson shipped(const char* id)
{
    for (const QString& file : shippedLessonFiles()) {
        Lesson l = loadLessonFile(file.toStdString());
        if (l.id == id)
            return l;
    }
    qFatal("no shipped lesson %s", id);
}

/// The value (in its unit) the core gives for the expectation of lesson `id` on `quantity`
/// in the step titled `stepTitle`.
double expected(const Lesson& lesson, const std::string& stepTitle, const std::string& quantity)
{
    for (const LessonStep& step : lesson.steps) {
        if (step.title != stepTitle)
            continue;
        for (const ExpectationResult& r : evaluateStep(step))
            if (r.expectation->quantity == quantity)
                return r.actual;
    }
    qFatal("lesson %s has no step \"%s\" expecting %s", lesson.id.c_str(), stepTitle.c_str(), quantity.c_str());
}

/// A small valid lesson the malformed cases start from.
json validLesson()
{
    return json::parse(R"({
      "format": "vramlab.lesson", "version": 1, "id": "t", "title": "T",
      "scenario": {"format": "vramlab.scenario", "version": 1, "model": {"preset": "llama-2-7b"},
                   "run": {"mode": "training", "sequence_length": 1024}},
      "steps": [
        {"title": "One", "text": "Seven billion parameters.",
         "textbook": {"params": 7000000000},
         "question": {"kind": "choice", "prompt": "Fits?", "options": ["yes", "no"], "answer": 1},
         "expect": [{"quantity": "textbook.weights", "value": 14, "unit": "GB"}]},
        {"title": "Two", "text": "Longer.", "set": {"run": {"sequence_length": 4096}},
         "question": {"kind": "number", "prompt": "GB?", "answer": 2.15, "tolerance": 0.05, "unit": "GB"}}
      ]})");
}

} // namespace

class TestLessons : public QObject {
    Q_OBJECT
private slots:
    void shippedLessons_data()
    {
        QTest::addColumn<QString>("file");
        const QStringList files = shippedLessonFiles();
        QVERIFY(files.size() >= 8);
        for (const QString& f : files)
            QTest::newRow(qPrintable(QFileInfo(f).fileName())) << f;
    }
    // Every step of every shipped lesson: loads, and each number it claims is the core's.
    void shippedLessons()
    {
        QFETCH(QString, file);
        const Lesson lesson = loadLessonFile(file.toStdString());
        QVERIFY(!lesson.title.empty());
        QVERIFY(lesson.steps.size() >= 3);
        // The seeds live beside the repository in the workshop checkout; check the names where they are.
        const QDir seeds(QStringLiteral(VRAMLAB_SOURCE_DIR "/../shared/seeds"));
        if (seeds.exists())
            for (const QString& seed : QString::fromStdString(lesson.seed).split(QLatin1Char(','), Qt::SkipEmptyParts))
                QVERIFY2(seeds.exists(seed.trimmed()), qPrintable(seed));
        int checked = 0;
        for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
            const LessonStep& step = lesson.steps[i];
            QVERIFY2(step.text.size() <= 600, step.title.c_str()); // a projector shows a short paragraph
            for (const ExpectationResult& r : evaluateStep(step)) {
                const LessonExpectation& e = *r.expectation;
                const QByteArray what = QByteArray("steps[") + QByteArray::number(int(i)) + "] \"" + step.title.c_str()
                    + "\" " + e.quantity.c_str() + ": got " + QByteArray::number(r.actual, 'g', 12) + " "
                    + e.unit.c_str() + ", lesson says " + QByteArray::number(e.value, 'g', 12);
                QVERIFY2(r.ok, what.constData());
                ++checked;
            }
        }
        QVERIFY2(checked >= 4, "a lesson reproduces at least four of its article's numbers");
    }

    // Together the lessons cover the five seeds and the issue's ten topics.
    void coverage()
    {
        std::set<std::string> seeds, ids;
        int questions = 0, steps = 0;
        for (const QString& file : shippedLessonFiles()) {
            const Lesson l = loadLessonFile(file.toStdString());
            for (std::size_t at = 0; at < l.seed.size();) {
                const std::size_t comma = std::min(l.seed.find(',', at), l.seed.size());
                std::string s = l.seed.substr(at, comma - at);
                s.erase(0, s.find_first_not_of(' '));
                seeds.insert(s.substr(0, 3));
                at = comma + 1;
            }
            ids.insert(l.id);
            for (const LessonStep& s : l.steps) {
                ++steps;
                questions += s.question.has_value();
            }
        }
        QCOMPARE(seeds, (std::set<std::string> { "000", "001", "002", "003", "004" }));
        for (const char* id : { "four-things", "7b-does-not-fit", "mixed-precision", "activations", "checkpointing",
                 "gradient-accumulation", "zero-fsdp", "lora-qlora", "inference-kv-cache", "flops-mfu" })
            QVERIFY2(ids.count(id), id);
        QVERIFY(questions * 3 >= steps); // predict before reveal on at least a third of the steps
    }

    // Headline numbers, pinned here so a lesson edit cannot quietly change them.
    void headlineNumbers()
    {
        const Lesson four = shipped("four-things");
        QCOMPARE(expected(four, "Sixteen bytes a parameter", "textbook.model_states"), 112.0); // 7B x 16 B
        const Lesson fit = shipped("7b-does-not-fit");
        QCOMPARE(expected(fit, "Training: add gradients and Adam", "textbook.model_states"), 84.0); // 14 + 14 + 56
        QCOMPARE(expected(fit, "70B: count the GPUs", "textbook.gpus_needed"), 14.0);
        const Lesson mixed = shipped("mixed-precision");
        QCOMPARE(qRound(expected(mixed, "All fp32", "textbook.model_states") * 10), 1856); // 185.6, article "185"
        QCOMPARE(qRound(expected(mixed, "Mixed precision", "textbook.model_states") * 10), 2088); // 208.8
        const Lesson kv = shipped("inference-kv-cache");
        QCOMPARE(expected(kv, "One request, 4096 tokens", "per_gpu_bytes.kv_cache"),
            2.147483648); // 2 x 32 x 4096 x 4096 x 2
        QCOMPARE(expected(kv, "Eight requests", "per_gpu_bytes.kv_cache"), 17.179869184);
        QCOMPARE(expected(kv, "Grouped-query attention", "per_gpu_bytes.kv_cache"), 0.536870912);
        QCOMPARE(expected(kv, "Multi-query attention", "per_gpu_bytes.kv_cache"), 0.067108864);
        const Lesson zero = shipped("zero-fsdp");
        QCOMPARE(qRound(expected(zero, "ZeRO-3", "textbook.model_states") * 10), 406); // "~40 GB" is 40.6
        QCOMPARE(expected(zero, "Eight GPUs, as in the “Memory Considerations” guide", "textbook.model_states"), 10.5);
        // The serving lesson reproduces the user's vLLM 0.6.4 log (tests/data/published/serving/vllm-i10517-*).
        const Lesson serving = shipped("serving-vllm");
        QCOMPARE(expected(serving, "The rest becomes the KV cache", "serving.kv_cache_tokens"), 33184.0);
        QCOMPARE(expected(serving, "The rest becomes the KV cache", "serving.gpu_blocks"), 2074.0);
        QCOMPARE(expected(serving, "An 8-bit KV cache", "serving.kv_cache_tokens"), 66368.0);
        const Lesson flops = shipped("flops-mfu");
        QCOMPARE(qRound(expected(flops, "Six FLOPs per parameter per token", "textbook.flops_per_step")), 570);
    }

    // An expectation that does not hold is reported as failed, with the core's value.
    void wrongExpectationFails()
    {
        json doc = validLesson();
        doc["steps"][0]["expect"][0]["value"] = 15;
        const Lesson l = readLesson(doc);
        const auto results = evaluateStep(l.steps[0]);
        QCOMPARE(results.size(), std::size_t(1));
        QVERIFY(!results[0].ok);
        QCOMPARE(results[0].actual, 14.0);
        // The second step's scenario carries the first step's and its own patch.
        QCOMPARE(l.steps[1].scenario.run.sequenceLength, Count(4096));
        QCOMPARE(l.steps[0].scenario.run.sequenceLength, Count(1024));
        QVERIFY(acceptsAnswer(*l.steps[1].question, 2.19));
        QVERIFY(!acceptsAnswer(*l.steps[1].question, 2.21));
    }

    // The README's example lesson is a working lesson, so teachers can start from it.
    void readmeExample()
    {
        QFile readme(QStringLiteral(VRAMLAB_SOURCE_DIR "/README.md"));
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(readme.readAll());
        const qsizetype section = text.indexOf(QStringLiteral("## Workshop lessons"));
        QVERIFY(section >= 0);
        const qsizetype from = text.indexOf(QStringLiteral("```json\n"), section) + 8;
        const qsizetype to = text.indexOf(QStringLiteral("```"), from);
        QVERIFY(from > 8 && to > from);
        const Lesson l = parseLessonText(text.mid(from, to - from).toStdString(), "README.md");
        QCOMPARE(l.steps.size(), std::size_t(2));
        QCOMPARE(l.steps[1].scenario.model.numKvHeads, Count(8));
        const auto results = evaluateStep(l.steps[0]);
        QCOMPARE(results.size(), std::size_t(1));
        QVERIFY(results[0].ok);
        QCOMPARE(l.steps[1].question->answerIndex, 1);
    }

    void malformed_data()
    {
        QTest::addColumn<QString>("patch"); // a JSON merge patch with `steps` replaced whole, or "@text"
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown step key") << R"({"steps": [{"title": "A", "text": "x", "titel": "B"}]})"
                                          << "steps[0].titel: unknown key";
        QTest::newRow("answer out of range")
            << R"({"steps": [{"title": "A", "text": "x"}, {"title": "B", "text": "y", "question": {"kind": "choice", "prompt": "?", "options": ["a", "b", "c"], "answer": 3}}]})"
            << "steps[1].question.answer: expected an index into options (0..2), got 3";
        QTest::newRow("bad scenario key")
            << R"({"steps": [{"title": "A", "text": "x", "set": {"run": {"sequnce_length": 8}}}]})"
            << "steps[0].set: run.sequnce_length: unknown key";
        QTest::newRow("bad scenario value")
            << R"({"steps": [{"title": "A", "text": "x", "set": {"run": {"sequence_length": -8}}}]})"
            << "steps[0].set.run.sequence_length: expected an integer";
        QTest::newRow("inconsistent scenario")
            << R"({"steps": [{"title": "A", "text": "x", "set": {"run": {"parallelism": {"gpus": 8, "tensor_parallel": 3}}}}]})"
            << "steps[0].set.run.parallelism";
        QTest::newRow("negative tolerance")
            << R"({"steps": [{"title": "A", "text": "x", "expect": [{"quantity": "per_gpu_bytes.total", "value": 1, "unit": "GB", "tolerance": -0.1}]}]})"
            << "steps[0].expect[0].tolerance: expected a number from 0";
        QTest::newRow("unknown quantity")
            << R"({"steps": [{"title": "A", "text": "x", "expect": [{"quantity": "per_gpu_bytes.weight", "value": 1, "unit": "GB"}]}]})"
            << "steps[0].expect[0].quantity: expected a number of the JSON report";
        QTest::newRow("textbook without params")
            << R"({"steps": [{"title": "A", "text": "x", "expect": [{"quantity": "textbook.weights", "value": 1, "unit": "GB"}]}]})"
            << "steps[0].expect[0].quantity: \"textbook.weights\" needs the step's textbook.params";
        QTest::newRow("unknown unit")
            << R"({"steps": [{"title": "A", "text": "x", "expect": [{"quantity": "peak_bytes", "value": 1, "unit": "gigs"}]}]})"
            << "steps[0].expect[0].unit: expected one of bytes";
        QTest::newRow("missing text") << R"({"steps": [{"title": "A"}]})"
                                      << "steps[0].text: required";
        QTest::newRow("bad highlight") << R"({"steps": [{"title": "A", "text": "x", "highlight": ["chart.pizza"]}]})"
                                       << "steps[0].highlight[0]: expected a parameter key";
        QTest::newRow("serving quantity without serving")
            << R"({"steps": [{"title": "A", "text": "x", "expect": [{"quantity": "serving.kv_cache_tokens", "value": 1, "unit": "tokens"}]}]})"
            << "steps[0].expect[0].quantity: serving.* quantities need a serving scenario";
        QTest::newRow("unknown serving quantity")
            << R"({"scenario": {"run": {"mode": "serving", "sequence_length": null, "serving": {"engine": "vllm"}, "gpu": "h100-sxm-80gb"}},
                   "steps": [{"title": "A", "text": "x", "expect": [{"quantity": "serving.kv_tokens", "value": 1, "unit": "tokens"}]}]})"
            << "steps[0].expect[0].quantity: serving.kv_tokens: not a number of the JSON report";
        QTest::newRow("another engine's flag")
            << R"({"scenario": {"run": {"mode": "serving", "sequence_length": null, "serving": {"engine": "vllm"}, "gpu": "h100-sxm-80gb"}},
                   "steps": [{"title": "A", "text": "x", "highlight": ["run.serving.n_gpu_layers"]}]})"
            << "steps[0].highlight[0]: expected a parameter key";
        QTest::newRow("no steps") << R"({"steps": []})"
                                  << "steps: expected an array of 1 to 200 items";
        QTest::newRow("number question without answer")
            << R"({"steps": [{"title": "A", "text": "x", "question": {"kind": "number", "prompt": "?"}}]})"
            << "steps[0].question.answer: required";
        QTest::newRow("broken JSON") << "@{\"format\": \"vramlab.lesson\",\n \"steps\": [}"
                                     << "lesson.json: not valid JSON at line 2";
        QTest::newRow("not a lesson") << R"({"format": "vramlab.scenario"})"
                                      << "format: expected \"vramlab.lesson\"";
    }
    // Each mistake a teacher may make is one clear line naming the file, the step and the key.
    void malformed()
    {
        QFETCH(QString, patch);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string path = (dir.path() + QStringLiteral("/lesson.json")).toStdString();
        std::string text;
        if (patch.startsWith(QLatin1Char('@'))) {
            text = patch.mid(1).toStdString();
        } else {
            json doc = validLesson();
            doc.merge_patch(json::parse(patch.toStdString()));
            text = doc.dump(2);
        }
        std::ofstream(path) << text;
        try {
            loadLessonFile(path);
            QFAIL("no error");
        } catch (const InputError& e) {
            const QString what = QString::fromStdString(e.what());
            QVERIFY2(what.contains(message), qPrintable(what));
            QVERIFY2(what.startsWith(QString::fromStdString(path) + QStringLiteral(": ")), qPrintable(what));
        }
    }
};

QTEST_APPLESS_MAIN(TestLessons)
#include "tst_lessons.moc"
