// SPDX-License-Identifier: MIT
#include "vramlab/lesson.h"

#include "json_reader.h"
#include "vramlab/estimator.h"
#include "vramlab/model_states.h"
#include "vramlab/report_json.h"
#include "vramlab/scenario_fields.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_chart.h"
#include "vramlab/serving_io.h"
#include "vramlab/serving_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <utility>

namespace vramlab {

using json = nlohmann::json;
using detail::JsonObjectReader;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kMaxSteps = 200;
constexpr std::size_t kMaxListItems = 64;

const std::vector<std::pair<std::string, double>>& units()
{
    static const std::vector<std::pair<std::string, double>> table = {
        { "bytes", 1 },
        { "KB", 1e3 },
        { "MB", 1e6 },
        { "GB", 1e9 },
        { "TB", 1e12 },
        { "KiB", 1024.0 },
        { "MiB", 1048576.0 },
        { "GiB", 1073741824.0 },
        { "TiB", 1099511627776.0 },
        { "count", 1 },
        { "million", 1e6 },
        { "billion", 1e9 },
        { "tokens", 1 },
        { "GPUs", 1 },
        { "FLOP", 1 },
        { "GFLOP", 1e9 },
        { "TFLOP", 1e12 },
        { "PFLOP", 1e15 },
        { "TFLOPS", 1e12 },
        { "s", 1 },
        { "ms", 1e-3 },
        { "%", 0.01 },
        { "x", 1 },
    };
    return table;
}

std::string unitNames()
{
    std::string names;
    for (const auto& [name, scale] : units())
        names += (names.empty() ? "" : ", ") + name;
    return names;
}

const std::set<std::string>& textbookQuantities()
{
    static const std::set<std::string> names = { "weights", "master_weights", "gradients", "optimizer_states",
        "model_states", "flops_per_step", "step_seconds", "gpus_needed" };
    return names;
}

/// The dotted paths of every number (and verdict) in the JSON report.
const std::set<std::string>& reportPaths()
{
    static const std::set<std::string> paths = [] {
        std::set<std::string> out;
        const auto walk = [&out](const auto& self, const nlohmann::ordered_json& j, const std::string& prefix) -> void {
            for (auto it = j.begin(); it != j.end(); ++it) {
                const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
                if (it->is_object())
                    self(self, *it, path);
                else if (it->is_number() || it->is_boolean())
                    out.insert(path);
            }
        };
        Report withVerdict; // fits and usable_bytes are null without a GPU: list them too
        withVerdict.hasVerdict = true;
        walk(walk, reportToJson(withVerdict), "");
        return out;
    }();
    return paths;
}

/// Rejects keys a lesson does not define: a typo must not silently drop a step's content.
void requireKnownKeys(const json& obj, const std::string& path, std::initializer_list<const char*> known)
{
    for (auto it = obj.begin(); it != obj.end(); ++it)
        if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; })) {
            std::string names;
            for (const char* k : known)
                names += (names.empty() ? "" : ", ") + std::string(k);
            throw InputError(path.empty() ? it.key() : path + "." + it.key(), "unknown key; expected one of " + names);
        }
}

std::string requiredString(JsonObjectReader& r, const std::string& key)
{
    std::optional<std::string> s = r.string(key);
    if (!s || s->empty())
        throw InputError(r.keyPath(key), "required: a non-empty string");
    return *s;
}

const json& requiredArray(JsonObjectReader& r, const std::string& key, std::size_t minItems, std::size_t maxItems)
{
    if (!r.has(key))
        throw InputError(r.keyPath(key), "required: an array");
    const json& a = r.at(key);
    if (!a.is_array() || a.size() < minItems || a.size() > maxItems)
        throw InputError(r.keyPath(key),
            "expected an array of " + std::to_string(minItems) + " to " + std::to_string(maxItems) + " items, got "
                + JsonObjectReader::describe(a));
    return a;
}

std::string requiredUnit(JsonObjectReader& r, bool required)
{
    const std::optional<std::string> unit = r.string("unit");
    if (!unit) {
        if (required)
            throw InputError(r.keyPath("unit"), "required: one of " + unitNames());
        return {};
    }
    if (!unitScale(*unit))
        throw InputError(r.keyPath("unit"), "expected one of " + unitNames() + ", got \"" + *unit + "\"");
    return *unit;
}

/// `tolerance` (absolute, in the unit) or `relative_tolerance` (a fraction), not both.
Tolerance readTolerance(JsonObjectReader& r, Tolerance fallback)
{
    const std::optional<double> absolute = r.number("tolerance", 0, kInf);
    const std::optional<double> relative = r.number("relative_tolerance", 0, 1);
    if (absolute && relative)
        throw InputError(r.keyPath("relative_tolerance"), "give tolerance (absolute) or relative_tolerance, not both");
    if (absolute)
        return { *absolute, false };
    if (relative)
        return { *relative, true };
    return fallback;
}

LessonQuestion readQuestion(const json& j, const std::string& path)
{
    JsonObjectReader r(j, path);
    requireKnownKeys(
        j, path, { "kind", "prompt", "options", "answer", "tolerance", "relative_tolerance", "unit", "explanation" });
    LessonQuestion q;
    if (!r.has("kind"))
        throw InputError(r.keyPath("kind"), "required: \"choice\" or \"number\"");
    q.kind = *r.choice<LessonQuestion::Kind>(
        "kind", { { "choice", LessonQuestion::Kind::Choice }, { "number", LessonQuestion::Kind::Number } });
    q.prompt = requiredString(r, "prompt");
    q.explanation = r.string("explanation").value_or("");
    if (!r.has("answer"))
        throw InputError(r.keyPath("answer"), "required");
    if (q.kind == LessonQuestion::Kind::Choice) {
        const json& options = requiredArray(r, "options", 2, 8);
        for (std::size_t i = 0; i < options.size(); ++i) {
            if (!options[i].is_string() || options[i].get<std::string>().empty())
                throw InputError(r.keyPath("options") + "[" + std::to_string(i) + "]", "expected a non-empty string");
            q.options.push_back(options[i].get<std::string>());
        }
        const Count last = static_cast<Count>(q.options.size()) - 1;
        const json& answer = r.at("answer");
        if (!answer.is_number_integer() || answer.get<Count>() < 0 || answer.get<Count>() > last)
            throw InputError(r.keyPath("answer"),
                "expected an index into options (0.." + std::to_string(last) + "), got " + answer.dump());
        q.answerIndex = answer.get<int>();
        if (r.has("tolerance") || r.has("relative_tolerance") || r.has("unit"))
            throw InputError(path, "tolerance and unit belong to number questions");
    } else {
        if (r.has("options"))
            throw InputError(r.keyPath("options"), "options belong to choice questions");
        q.answerValue = *r.number("answer", -kInf, kInf);
        q.tolerance = readTolerance(r, { 0.05, true });
        q.unit = requiredUnit(r, false);
    }
    return q;
}

LessonExpectation readExpectation(const json& j, const std::string& path, bool hasTextbook)
{
    JsonObjectReader r(j, path);
    requireKnownKeys(j, path, { "quantity", "value", "unit", "tolerance", "relative_tolerance", "note" });
    LessonExpectation e;
    e.quantity = requiredString(r, "quantity");
    if (e.quantity.rfind("textbook.", 0) == 0) {
        if (!textbookQuantities().count(e.quantity.substr(9)))
            throw InputError(r.keyPath("quantity"), "unknown textbook quantity \"" + e.quantity + "\"");
        if (!hasTextbook)
            throw InputError(r.keyPath("quantity"), "\"" + e.quantity + "\" needs the step's textbook.params");
    } else if (e.quantity != "model_states" && !reportPaths().count(e.quantity)
        && e.quantity.rfind("serving.", 0) != 0) { // serving.*: checked against the step's engine (readStep)
        throw InputError(r.keyPath("quantity"),
            "expected a number of the JSON report (per_gpu_bytes.total, flops.per_step, serving.kv_cache_tokens, ...), "
            "model_states or textbook.*, got \""
                + e.quantity + "\"");
    }
    if (!r.has("value"))
        throw InputError(r.keyPath("value"), "required: the article's number, in unit");
    e.value = *r.number("value", -kInf, kInf);
    e.unit = requiredUnit(r, true);
    e.tolerance = readTolerance(r, { 1e-9, true });
    e.note = r.string("note").value_or("");
    return e;
}

/// The step's scenario: read through the checked scenario reader, where an unknown key
/// is an error, then validated as a whole.
Scenario readStepScenario(const json& doc, const std::string& path)
{
    try {
        Scenario sc = readScenario(doc);
        if (!sc.warnings.empty()) {
            std::string w = sc.warnings.front();
            if (const auto at = w.find(", ignored"); at != std::string::npos)
                w.erase(at);
            throw InputError(path, w);
        }
        validateScenario(sc);
        return sc;
    } catch (const InputError& e) {
        if (e.keyPath().rfind(path, 0) == 0)
            throw;
        throw InputError(e.keyPath().empty() ? path : path + "." + e.keyPath(), e.expected());
    }
}

/// The serving engine's report (`vramlab-cli serve-estimate --json`'s `serving` object) of the step.
nlohmann::json servingReport(const LessonStep& step)
{
    const Scenario& sc = step.scenario;
    const ServingEstimate e = servingEstimate(sc.model, sc.run);
    return servingToJson(e, defaultServingSpeed(sc.model, sc.run, e));
}

/// The number at a dotted path of a JSON report (booleans as 1 and 0, flagged in `yesNo`).
template <typename Json> double numberAt(const Json& root, const std::string& quantity, std::size_t from, bool* yesNo)
{
    const Json* at = &root;
    while (from <= quantity.size()) {
        const std::size_t dot = std::min(quantity.find('.', from), quantity.size());
        const std::string key = quantity.substr(from, dot - from);
        if (!at->is_object() || !at->contains(key))
            throw InputError(quantity, "not a number of the JSON report");
        at = &at->at(key);
        from = dot + 1;
    }
    if (at->is_boolean()) {
        if (yesNo)
            *yesNo = true;
        return at->template get<bool>() ? 1.0 : 0.0;
    }
    if (!at->is_number())
        throw InputError(quantity, "not a number of the JSON report");
    return at->template get<double>();
}

LessonStep readStep(const json& j, const std::string& path, json& scenarioDoc)
{
    JsonObjectReader r(j, path);
    requireKnownKeys(j, path, { "title", "text", "set", "highlight", "question", "textbook", "expect" });
    LessonStep step;
    step.title = requiredString(r, "title");
    step.text = requiredString(r, "text");
    if (r.has("set")) {
        step.set = r.at("set");
        if (!step.set.is_object())
            throw InputError(
                r.keyPath("set"), "expected an object (a scenario patch), got " + JsonObjectReader::describe(step.set));
        scenarioDoc.merge_patch(step.set);
    }
    step.scenario = readStepScenario(scenarioDoc, r.keyPath("set"));
    if (r.has("highlight")) {
        const json& list = requiredArray(r, "highlight", 0, kMaxListItems);
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string at = r.keyPath("highlight") + "[" + std::to_string(i) + "]";
            if (!list[i].is_string())
                throw InputError(at, "expected a string, got " + JsonObjectReader::describe(list[i]));
            const std::string key = list[i].get<std::string>();
            const bool chart = key.rfind("chart.", 0) == 0 && reportPaths().count("per_gpu_bytes." + key.substr(6));
            // A flag of the step's serving engine (the panel's run.serving.* controls).
            const bool servingFlag = key.rfind("run.serving.", 0) == 0 && step.scenario.run.serving
                && isServingFlag(key.substr(12), step.scenario.run.serving->engine);
            // Exactly a key of the scenario field table: a typo would highlight nothing.
            if (!chart && !servingFlag && !findField(key))
                throw InputError(at,
                    "expected a parameter key (a scenario key such as run.sequence_length or "
                    "run.parallelism.zero_stage, or a flag of the serving engine such as run.serving.max_model_len) or "
                    "a chart part (chart.weights, chart.activations, ...), got \""
                        + key + "\"");
            step.highlight.push_back(key);
        }
    }
    if (r.has("textbook")) {
        const std::string tpath = r.keyPath("textbook");
        requireKnownKeys(r.at("textbook"), tpath, { "params", "adapter_params" });
        JsonObjectReader t(r.at("textbook"), tpath);
        const std::optional<Count> params = t.integer("params", 1, 1'000'000'000'000'000);
        if (!params)
            throw InputError(t.keyPath("params"), "required: the article's parameter count");
        step.textbook = TextbookModel { *params, t.integer("adapter_params", 0, *params).value_or(0) };
    }
    if (r.has("question"))
        step.question = readQuestion(r.at("question"), r.keyPath("question"));
    if (r.has("expect")) {
        const json& list = requiredArray(r, "expect", 0, kMaxListItems);
        for (std::size_t i = 0; i < list.size(); ++i)
            step.expect.push_back(readExpectation(
                list[i], r.keyPath("expect") + "[" + std::to_string(i) + "]", step.textbook.has_value()));
        // serving.*: a number of the engine's report for this step's scenario (made once), which must serve.
        std::optional<json> serving;
        for (std::size_t i = 0; i < step.expect.size(); ++i) {
            const std::string& q = step.expect[i].quantity;
            if (q.rfind("serving.", 0) != 0)
                continue;
            const std::string at = r.keyPath("expect") + "[" + std::to_string(i) + "].quantity";
            if (!step.scenario.run.serving)
                throw InputError(at, "serving.* quantities need a serving scenario (run.mode \"serving\")");
            try {
                if (!serving)
                    serving = servingReport(step);
                (void)numberAt(*serving, q, 8, nullptr);
            } catch (const InputError& e) {
                throw InputError(at, std::string(e.what()));
            }
        }
    }
    return step;
}

double textbookQuantity(const std::string& name, const LessonStep& step, const Report& report)
{
    const TextbookModel& tb = *step.textbook;
    const RunSpec& run = step.scenario.run;
    std::vector<LocalParam> params;
    if (tb.adapterParams > 0) {
        params = { { "base", 1, tb.params, 1, false }, { "adapters", 1, tb.adapterParams, 1, true } };
        if (run.finetune.method == FinetuneMethod::Qlora)
            params[0].frozenStorage = DType::Nf4;
    } else {
        params = { { "P", 1, tb.params, 1, true } };
    }
    const ModelStateBytes s = modelStates(params, run, false);
    // The articles' "6 x P x tokens" and "FLOPs / (GPUs x peak x MFU)".
    const double flops = 6.0 * double(tb.params) * double(report.flops.tokensPerStep);
    if (name == componentKey(ComponentKind::Weights))
        return double(s.weights);
    if (name == componentKey(ComponentKind::MasterWeights))
        return double(s.master);
    if (name == componentKey(ComponentKind::Gradients))
        return double(s.gradients);
    if (name == componentKey(ComponentKind::OptimizerStates))
        return double(s.optimizer);
    if (name == "model_states")
        return double(s.total());
    if (name == "flops_per_step")
        return flops;
    if (name == "step_seconds")
        return flops / (double(run.parallelism.gpus) * report.flops.peakTflops * 1e12 * report.flops.efficiency);
    if (name == "gpus_needed") {
        if (report.usableBytes <= 0)
            throw InputError("textbook.gpus_needed", "the step's scenario names no GPU");
        return double(ceilDiv(s.total(), report.usableBytes));
    }
    throw InputError("textbook." + name, "unknown textbook quantity");
}

double quantityIn(const std::string& quantity, const LessonStep& step, const Report& report,
    const nlohmann::ordered_json& reportJson, bool* yesNo = nullptr, const nlohmann::json* serving = nullptr)
{
    if (quantity.rfind("serving.", 0) == 0) {
        if (!step.scenario.run.serving)
            throw InputError(quantity, "needs a serving scenario");
        return serving ? numberAt(*serving, quantity, 8, yesNo) : numberAt(servingReport(step), quantity, 8, yesNo);
    }
    if (quantity.rfind("textbook.", 0) == 0) {
        if (!step.textbook)
            throw InputError(quantity, "needs the step's textbook.params");
        return textbookQuantity(quantity.substr(9), step, report);
    }
    if (quantity == "model_states")
        return double(report.bytes(ComponentKind::Weights) + report.bytes(ComponentKind::MasterWeights)
            + report.bytes(ComponentKind::Gradients) + report.bytes(ComponentKind::OptimizerStates));
    return numberAt(reportJson, quantity, 0, yesNo);
}

} // namespace

bool Tolerance::accepts(double got, double want) const
{
    const double allowed = relative ? value * std::fabs(want) : value;
    return std::fabs(got - want) <= allowed * (1 + 1e-12) + 1e-12 * std::fabs(want);
}

std::optional<double> unitScale(const std::string& unit)
{
    for (const auto& [name, scale] : units())
        if (name == unit)
            return scale;
    return std::nullopt;
}

Lesson readLesson(const json& doc)
{
    JsonObjectReader top(doc, "");
    requireKnownKeys(doc, "", { "format", "version", "id", "title", "summary", "seed", "scenario", "steps" });
    if (top.string("format").value_or("") != "vramlab.lesson")
        throw InputError("format", "expected \"vramlab.lesson\"");
    if (auto version = top.integer("version", 0, 1'000'000); !version || *version != 1)
        throw InputError("version", "expected 1 (this VRAM Lab reads lesson version 1)");
    Lesson lesson;
    lesson.id = requiredString(top, "id");
    lesson.title = requiredString(top, "title");
    lesson.summary = top.string("summary").value_or("");
    lesson.seed = top.string("seed").value_or("");
    if (!top.has("scenario") || !doc.at("scenario").is_object())
        throw InputError("scenario", "required: the scenario the lesson starts from (a scenario document)");
    json scenarioDoc = doc.at("scenario");
    readStepScenario(scenarioDoc, "scenario");
    const json& steps = requiredArray(top, "steps", 1, kMaxSteps);
    for (std::size_t i = 0; i < steps.size(); ++i)
        lesson.steps.push_back(readStep(steps[i], "steps[" + std::to_string(i) + "]", scenarioDoc));
    return lesson;
}

Lesson parseLessonText(const std::string& text, const std::string& file)
{
    try {
        if (text.size() > kMaxLessonFileBytes)
            throw InputError("", "larger than " + formatBytes(Bytes(kMaxLessonFileBytes)) + "; not a lesson");
        return readLesson(parseJsonText(text, file));
    } catch (const InputError& e) {
        throw e.withFile(file);
    }
}

Lesson loadLessonFile(const std::string& path)
{
    try {
        return parseLessonText(readTextFile(path, kMaxLessonFileBytes), path);
    } catch (const InputError& e) {
        throw e.withFile(path);
    }
}

double lessonQuantity(const std::string& quantity, const LessonStep& step, const Report& report)
{
    if (quantity.rfind("serving.", 0) == 0)
        return quantityIn(quantity, step, report, {});
    return quantityIn(quantity, step, report, reportToJson(report));
}

std::vector<ExpectationResult> evaluateStep(const LessonStep& step, const Report& report)
{
    std::vector<ExpectationResult> out;
    if (step.expect.empty())
        return out;
    const nlohmann::ordered_json reportJson = reportToJson(report);
    const bool serves = std::any_of(step.expect.begin(), step.expect.end(),
        [](const LessonExpectation& e) { return e.quantity.rfind("serving.", 0) == 0; });
    const nlohmann::json serving = serves ? servingReport(step) : nlohmann::json();
    for (const LessonExpectation& e : step.expect) {
        bool yesNo = false;
        const double actual = quantityIn(e.quantity, step, report, reportJson, &yesNo, serves ? &serving : nullptr)
            / *unitScale(e.unit);
        out.push_back({ &e, actual, e.tolerance.accepts(actual, e.value), yesNo });
    }
    return out;
}

std::vector<ExpectationResult> evaluateStep(const LessonStep& step)
{
    return evaluateStep(step, estimate(step.scenario));
}

bool acceptsAnswer(const LessonQuestion& question, double answer)
{
    return question.kind == LessonQuestion::Kind::Number && question.tolerance.accepts(answer, question.answerValue);
}

std::string formatQuantity(double value, const std::string& unit, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    std::string s = buf;
    if (s.find('.') != std::string::npos) {
        s.erase(s.find_last_not_of('0') + 1);
        if (s.back() == '.')
            s.pop_back();
    }
    if (unit.empty() || unit == "count")
        return s;
    return s + (unit == "%" || unit == "x" ? "" : " ") + unit;
}

} // namespace vramlab
