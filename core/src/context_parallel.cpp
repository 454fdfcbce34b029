// SPDX-License-Identifier: MIT
#include "vramlab/context_parallel.h"

#include "vramlab/errors.h"
#include "vramlab/framework_profile.h"

#include <string>

namespace vramlab {

void validateContextParallel(const ModelSpec& m, const RunSpec& r)
{
    const Parallelism& p = r.parallelism;
    const Count cp = p.contextParallel;
    // cp 1: train.py@9dec370 enters no context_parallel context, the step is the plain one. Inference and
    // serving ignore the key, as they ignore the other training keys (the mode can be switched back).
    if (cp == 1 || r.mode != Mode::Training)
        return;
    const std::string key = "run.parallelism.context_parallel";
    const std::string n = std::to_string(cp);
    if (!frameworkProfile(r.framework).contextParallel)
        throw InputError(key,
            "modelled for run.framework torchtitan only (PyTorch's context_parallel with the allgather ring "
            "attention, as torchtitan@9dec370 applies it); "
                + std::string(toString(r.framework))
                + " does not shard the sequence this way, expected 1 or no key, got " + n);
    // torchtitan/utils.py@9dec370 get_train_context: with CP, sdpa_kernel([FLASH_ATTENTION, EFFICIENT_ATTENTION]).
    if (r.attention != AttentionImpl::Flash)
        throw InputError("run.attention",
            "expected flash with context_parallel " + n
                + " (torchtitan restricts SDPA to the flash and memory-efficient kernels)");
    // parallel_dims.py@9dec370 _validate: dp_replicate x dp_shard x cp x tp x pp == world size.
    if (p.dataParallel() % cp != 0)
        throw InputError(key,
            "expected a divisor of gpus / (tensor_parallel x pipeline_parallel) (" + std::to_string(p.dataParallel())
                + "), got " + n);
    // torch/distributed/tensor/experimental/_attention.py: the load-balanced (head-tail) sharding cuts
    // the sequence into 2 x cp chunks, rank r keeping chunks r and 2cp - 1 - r
    // (_generate_round_robin_indices asserts seq_length % (cp_world_size * 2) == 0).
    if (r.sequenceLength % (2 * cp) != 0)
        throw InputError(key,
            "expected run.sequence_length (" + std::to_string(r.sequenceLength)
                + ") to be a multiple of 2 x context_parallel (load-balanced sharding into 2 x " + n + " chunks), got "
                + n);
    // The ring runs SDPA with is_causal only (torchtitan's Llama): no MLA, no sliding window.
    if (m.attentionType == AttentionType::Mla || m.slidingWindow > 0)
        throw InputError(key,
            "modelled for causal multi-head and grouped-query attention (no MLA, no sliding window); expected 1, got "
                + n);
}

} // namespace vramlab
