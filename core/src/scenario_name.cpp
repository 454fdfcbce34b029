// SPDX-License-Identifier: MIT
#include "vramlab/scenario_name.h"

#include "vramlab/parameter_tensors.h"
#include "vramlab/serving_spec.h"
#include "vramlab/units.h"

#include <cctype>

namespace vramlab {

namespace {

/// "meta-llama/Llama-3.1-8B" -> "Llama-3.1-8B": the repository owner says nothing of the model.
std::string modelName(const ModelSpec& m)
{
    std::string name = m.name.substr(m.name.find_last_of('/') + 1);
    if (name.empty())
        name = "custom model";
    // A size in the name ("8B", "A2.7B", "125M") is enough; otherwise say how large it is.
    for (size_t i = 0; i + 1 < name.size(); ++i)
        if (std::isdigit(static_cast<unsigned char>(name[i]))
            && (name[i + 1] == 'B' || name[i + 1] == 'b' || name[i + 1] == 'M' || name[i + 1] == 'm'))
            return name;
    try {
        const double b = static_cast<double>(countParameters(m).total) / 1e9;
        name += " ("
            + (b >= 1 ? formatDouble(b, std::chars_format::fixed, 1) + "B"
                      : formatDouble(b * 1e3, std::chars_format::fixed, 0) + "M")
            + ")";
    } catch (const std::exception&) { // shapes that cannot be counted yet: the window says why
    }
    return name;
}

std::string gpuName(const GpuSpec& g)
{
    std::string name = g.displayName.empty() ? g.name : g.displayName;
    if (name.rfind("NVIDIA ", 0) == 0)
        name.erase(0, 7);
    return name;
}

const char* engineName(ServingEngine e)
{
    switch (e) {
    case ServingEngine::Vllm:
        return "vLLM";
    case ServingEngine::Sglang:
        return "SGLang";
    case ServingEngine::LlamaCpp:
        return "llama.cpp";
    case ServingEngine::HfGenerate:
        return "HF generate";
    }
    return "?";
}

} // namespace

std::string describeScenario(const Scenario& sc)
{
    const RunSpec& r = sc.run;
    std::string s = modelName(sc.model);
    if (r.serving) {
        s += std::string(" served by ") + engineName(r.serving->engine);
    } else if (r.mode == Mode::Inference) {
        s += " inference, " + formatCount(r.inference.contextLength) + " tokens";
    } else {
        switch (r.finetune.method) {
        case FinetuneMethod::Full:
            s += " full fine-tune";
            break;
        case FinetuneMethod::Lora:
            s += " LoRA r" + std::to_string(r.finetune.rank);
            break;
        case FinetuneMethod::Qlora:
            s += " QLoRA r" + std::to_string(r.finetune.rank);
            break;
        }
        s += ", " + formatCount(r.sequenceLength) + " tokens";
    }
    if (r.gpu)
        s += ", on " + std::to_string(r.parallelism.gpus) + "x " + gpuName(*r.gpu);
    return s;
}

void followSettings(const Scenario& before, Scenario& after)
{
    if (after.name != before.name)
        return; // the edit renamed it
    if (before.name.empty() || before.name == describeScenario(before))
        after.name = describeScenario(after);
}

} // namespace vramlab
