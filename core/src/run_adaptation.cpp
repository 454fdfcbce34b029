// SPDX-License-Identifier: MIT
#include "vramlab/run_adaptation.h"

#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/serving_io.h"

#include <algorithm>

namespace vramlab {

Serving vllmServingFor(const ModelSpec& model)
{
    Serving s;
    // Qwen3-Next's Gated DeltaNet arrived in vLLM 0.10.2, after the default version; Qwen3.5 (its vision tower
    // beside those layers) is served as its language model, --language-model-only, from 0.17.0.
    // Llama 4's tower likewise (--language-model-only, PR #34120 of February 2026: 0.17.0 is the earliest release
    // VRAM Lab confirmed the flag in).
    // Qwen2.5-VL's tower likewise, from 0.17.0 by that flag (0.10.1 by --limit-mm-per-prompt with images and videos 0).
    const bool dropTower = model.vision.qwen() || model.vision.kind == VisionKind::Llama4 || model.vision.qwen25();
    s.engineVersion = dropTower ? std::string("0.17.0")
        : model.ssm.deltaNet()  ? std::string("0.10.2")
                                : defaultEngineVersion(ServingEngine::Vllm);
    s.languageModelOnly = dropTower && model.vision.enabled();
    return s;
}

std::vector<std::string> adaptRunToModel(const ModelSpec& model, RunSpec& run)
{
    std::vector<std::string> changes;
    const RunSpec defaults;
    auto note = [&](const InputError& e, const std::string& from, const std::string& to) {
        changes.push_back(e.keyPath() + ": " + from + " -> " + to + " (" + e.expected() + ")");
    };
    // validateRun() names the first key it refuses; fix that one and ask again. Each fix
    // moves a key to its default, so the loop ends after at most one pass per key.
    for (int attempt = 0; attempt < 16; ++attempt) {
        try {
            validateRun(model, run);
            return changes;
        } catch (const InputError& e) {
            const std::string& key = e.keyPath();
            Parallelism& p = run.parallelism;
            if (key == "run.sequence_length") {
                const Count to = std::min(run.sequenceLength, model.maxPositionEmbeddings);
                note(e, std::to_string(run.sequenceLength), std::to_string(to));
                run.sequenceLength = to;
            } else if (key == "run.parallelism.tensor_parallel" && p.tensorParallel != 1) {
                note(e, std::to_string(p.tensorParallel), "1");
                p.tensorParallel = 1;
                p.sequenceParallel = false;
            } else if (key == "run.parallelism.pipeline_parallel" && p.pipelineParallel != 1) {
                note(e, std::to_string(p.pipelineParallel), "1");
                p.pipelineParallel = 1;
            } else if (key == "run.parallelism.expert_parallel" && p.expertParallel != 1) {
                note(e, std::to_string(p.expertParallel), "1");
                p.expertParallel = 1;
            } else if (key.rfind("run.finetune.targets", 0) == 0 && run.finetune.targets != defaults.finetune.targets) {
                note(e, "the old targets", "q, k, v, o");
                run.finetune.targets = defaults.finetune.targets;
            } else if (key == "model.clamped_swiglu" && (run.mode == Mode::Training || run.serving)) {
                // gpt-oss: its training and its engines' MXFP4 experts are not modelled, its inference is.
                note(e, run.serving ? "mode serving" : "mode training", "inference");
                run.mode = Mode::Inference;
                run.serving.reset();
            } else if ((key == "model.vision"
                           && (model.vision.qwen() || model.vision.kind == VisionKind::Llama4
                               || (model.vision.qwen25() && run.serving
                                   && run.serving->engine != ServingEngine::HfGenerate))
                           && !(run.serving && run.serving->dropsVisionTower()))
                || ((key == "model.moe.every_expert_every_token" || key == "model.chunked_local_attention")
                    && (!run.serving || run.serving->engine == ServingEngine::HfGenerate))
                || ((key == "model.ssm" || key == "model.attention_output_gate")
                    && (!run.serving || run.serving->engine == ServingEngine::HfGenerate
                        || run.serving->engine == ServingEngine::LlamaCpp))) {
                // Hybrid state-space models and gated attention: vLLM's and SGLang's budgets are modelled,
                // training, generate() and llama.cpp are not; Qwen3.5's and Llama 4's towers only as vLLM leaves
                // them out (Qwen2.5-VL's in the engines); Llama 4 only in the engines (transformers runs every expert
                // on every token).
                const std::string from = run.serving ? std::string(toString(run.serving->engine))
                    : run.mode == Mode::Training     ? "mode training"
                                                     : "mode inference";
                note(e, from, "serving with vllm");
                run.mode = Mode::Inference;
                run.serving = vllmServingFor(model);
            } else if (key == "run.serving.language_model_only" && run.serving && run.serving->languageModelOnly) {
                // A model without a tower (or one vLLM cannot leave out) after one that had it.
                note(e, "true", "false");
                run.serving->languageModelOnly = false;
            } else if (key == "model.moe.sparse_mixer" && run.mode == Mode::Training) {
                // Phi-3.5-MoE: its SparseMixer training is not modelled; inference and its engines are.
                note(e, "mode training", "inference");
                run.mode = Mode::Inference;
            } else if ((key == "run.checkpointing.every" || key == "run.checkpointing.layers")
                && run.checkpointing.kind != defaults.checkpointing.kind) {
                note(e, toString(run.checkpointing), "none");
                run.checkpointing = defaults.checkpointing;
            } else {
                throw; // the model itself, or a run no default repairs: say so
            }
        }
    }
    return changes;
}

} // namespace vramlab
