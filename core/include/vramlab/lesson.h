// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"
#include "vramlab/scenario.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace vramlab {

/// Largest lesson file read (a lesson is tens of kilobytes).
inline constexpr std::size_t kMaxLessonFileBytes = 1024 * 1024;

/// How close a number must be: absolute (in the display unit) or relative.
struct Tolerance {
    double value = 0;
    bool relative = false;
    bool accepts(double got, double want) const;
};

/// A predict-before-reveal question: pick an option, or type a number.
struct LessonQuestion {
    enum class Kind { Choice, Number };
    Kind kind = Kind::Choice;
    std::string prompt;
    std::vector<std::string> options; ///< Choice
    int answerIndex = 0; ///< Choice: index into options
    double answerValue = 0; ///< Number, in `unit`
    Tolerance tolerance; ///< Number
    std::string unit;
    std::string explanation; ///< shown with the verdict
};

/// A number the step claims, checked against the core: `quantity` is a dotted path into
/// the JSON report ("per_gpu_bytes.kv_cache", "flops.per_step"), "model_states" (weights
/// + master + gradients + optimizer states per GPU), or "textbook.*": the article's own
/// convention of a model of exactly `textbook.params` parameters in one tensor, no
/// activations, no overheads, run with the step's precision, optimizer and parallelism.
struct LessonExpectation {
    std::string quantity;
    double value = 0; ///< in `unit`
    Tolerance tolerance;
    std::string unit; ///< GB, GiB, MB, TB, bytes, billion, million, count, TFLOP, s, ...
    std::string note; ///< where it comes from ("seed 001, section 3.1")
};

/// The article's "P parameters" model (see LessonExpectation).
struct TextbookModel {
    Count params = 0; ///< total
    Count adapterParams = 0; ///< trainable adapters added to a frozen base of `params` (LoRA); 0: all trainable
};

struct LessonStep {
    std::string title;
    std::string text;
    nlohmann::json set
        = nlohmann::json::object(); ///< scenario patch (RFC 7386 merge) onto the previous step's scenario
    std::vector<std::string> highlight; ///< panel keys ("run.precision") and chart parts ("chart.activations")
    std::optional<LessonQuestion> question;
    std::optional<TextbookModel> textbook;
    std::vector<LessonExpectation> expect;
    Scenario scenario; ///< the scenario once this step's patch is applied (checked at load)
};

struct Lesson {
    std::string id;
    std::string title;
    std::string summary;
    std::string seed; ///< the article it is built from (file name under shared/seeds)
    std::vector<LessonStep> steps;
};

/// Reads a lesson document ("format": "vramlab.lesson", "version": 1). Every step's
/// scenario is read through the checked scenario reader and validated; an unknown key
/// anywhere (lesson, step or scenario) is an error, since a teacher's typo would
/// otherwise silently teach the wrong thing. Throws InputError whose key path names the
/// step: "steps[3].question.answer".
Lesson readLesson(const nlohmann::json& doc);
/// Parses and reads lesson text (a file read elsewhere, e.g. from Qt resources); errors name `file`.
Lesson parseLessonText(const std::string& text, const std::string& file);
/// Reads a lesson file; errors name the file.
Lesson loadLessonFile(const std::string& path);

/// The value of `quantity` for a step's scenario and report, in base units (bytes,
/// parameters, FLOPs, seconds). Throws InputError for an unknown quantity.
double lessonQuantity(const std::string& quantity, const LessonStep& step, const Report& report);

/// A unit's size in base units ("GB" -> 1e9), or nullopt if unknown.
std::optional<double> unitScale(const std::string& unit);

struct ExpectationResult {
    const LessonExpectation* expectation = nullptr;
    double actual = 0; ///< in the expectation's unit
    bool ok = false;
    bool yesNo = false; ///< the report's value is a boolean (fits): say yes/no, not 1/0
};

/// Every expectation of `step` against the core's estimate of its scenario: what the
/// tests assert and what the player shows next to the chart.
std::vector<ExpectationResult> evaluateStep(const LessonStep& step);
/// Same, with the step's report already computed.
std::vector<ExpectationResult> evaluateStep(const LessonStep& step, const Report& report);

/// Whether a number answer is right (within the question's tolerance).
bool acceptsAnswer(const LessonQuestion& question, double answer);

/// "112 GB", "2.15 GB", "91 %": a value in its unit with at most `decimals` decimals.
std::string formatQuantity(double value, const std::string& unit, int decimals = 3);

} // namespace vramlab
