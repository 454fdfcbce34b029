// SPDX-License-Identifier: MIT
#include "vramlab/serving_report.h"

#include <cstdio>
#include <sstream>

namespace vramlab {

using nlohmann::json;

namespace {

json rankJson(const ServingRank& k)
{
    json j = { { "name", k.name }, { "layers", k.layers }, { "budget_bytes", k.budgetBytes },
        { "weights_bytes", k.weightsBytes }, { "activation_peak_bytes", k.activationPeakBytes },
        { "non_torch_bytes", k.nonTorchBytes }, { "cuda_graph_bytes", k.cudaGraphBytes },
        { "kv_cache_bytes", k.kvCacheBytes }, { "kv_bytes_per_token", k.kvBytesPerToken } };
    if (k.statePerSequenceBytes > 0) { // hybrid state-space models
        j["state_bytes"] = k.stateBytes;
        j["state_bytes_per_sequence"] = k.statePerSequenceBytes;
    }
    return j;
}

json speedJson(const ServingSpeed& s)
{
    if (!s.available)
        return nullptr;
    return { { "batch", s.batch }, { "prompt_tokens", s.promptTokens }, { "context_tokens", s.contextTokens },
        { "ttft_s", s.ttftS }, { "prefill_bound", s.prefillBound }, { "tpot_s", s.tpotS },
        { "decode_bound", s.decodeBound }, { "decode_bytes_per_step", s.decodeBytes },
        { "decode_flops_per_step", s.decodeFlops }, { "tokens_per_s_per_user", s.tokensPerSPerUser },
        { "tokens_per_s_total", s.tokensPerSTotal },
        { "moe_experts_read_per_layer", s.expectedExperts > 0 ? json(s.expectedExperts) : json(nullptr) },
        { "prefill_all_reduce_s", s.prefillAllReduceS }, { "decode_all_reduce_s", s.decodeAllReduceS },
        { "formula", s.formula } };
}

std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

} // namespace

json servingToJson(const ServingEstimate& e, const ServingSpeed& speed)
{
    const bool llama = e.engine == ServingEngine::LlamaCpp;
    const ServingRank none;
    const ServingRank& k = e.ranks.empty() ? none : e.limiting();
    json j = { { "engine", std::string(toString(e.engine)) }, { "engine_version", e.engineVersion }, { "rule", e.rule },
        { "total_gpu_bytes", e.totalGpuBytes }, { "budget_bytes", llama ? json(e.totalGpuBytes) : json(k.budgetBytes) },
        { "weights_bytes", llama ? json(e.devices.front().weightsBytes) : json(k.weightsBytes) },
        { "activation_peak_bytes", llama ? json(nullptr) : json(k.activationPeakBytes) },
        { "non_torch_bytes", llama ? json(nullptr) : json(k.nonTorchBytes) },
        { "cuda_graph_bytes", llama ? json(nullptr) : json(k.cudaGraphBytes) }, { "kv_cache_bytes", e.kvCacheBytes },
        { "kv_cache_tokens", e.kvCacheTokens }, { "gpu_blocks", e.gpuBlocks ? json(*e.gpuBlocks) : json(nullptr) },
        { "cpu_blocks", e.gpuBlocks ? json(e.cpuBlocks) : json(nullptr) }, { "max_model_len", e.maxModelLen },
        { "max_num_seqs", e.maxNumSeqs },
        { "max_num_batched_tokens", e.maxNumBatchedTokens > 0 ? json(e.maxNumBatchedTokens) : json(nullptr) },
        { "max_concurrency", e.maxConcurrency }, { "data_parallel_replicas", e.replicas },
        { "startup_fails", e.startupFails }, { "failure", e.startupFails ? json(e.failure) : json(nullptr) },
        { "log_lines", e.logLines }, { "warnings", e.warnings }, { "speed", speedJson(speed) } };
    json ranks = json::array();
    for (const ServingRank& r : e.ranks)
        ranks.push_back(rankJson(r));
    j["ranks"] = ranks;
    if (llama) {
        json devs = json::array();
        for (const LlamaCppDevice& d : e.devices)
            devs.push_back({ { "name", d.name }, { "layers", d.layers }, { "weights_bytes", d.weightsBytes },
                { "kv_buffer_bytes", d.kvBufferBytes },
                { "compute_buffer_bytes", d.computeBufferBytes ? json(*d.computeBufferBytes) : json(nullptr) } });
        j["devices"] = devs;
        j["n_ctx_padded"] = e.nCtxPadded;
        j["k_bytes"] = e.kBytes;
        j["v_bytes"] = e.vBytes;
        j["output_buffer_bytes"] = e.outputBufferBytes;
    }
    return j;
}

std::string servingText(const std::string& name, const ServingEstimate& e, const ServingSpeed& s)
{
    std::ostringstream o;
    o << name << " - served by " << toString(e.engine) << " " << e.engineVersion << "\n";
    o << "rule: " << e.rule << "\n\n";
    for (const ServingRank& k : e.ranks) {
        o << k.name << ":\n"
          << "  budget          " << formatBytes(k.budgetBytes) << "\n"
          << "  weights         " << formatBytes(k.weightsBytes) << "\n"
          << "  activation peak " << formatBytes(k.activationPeakBytes) << "\n"
          << "  non-torch       " << formatBytes(k.nonTorchBytes) << "\n";
        if (k.cudaGraphBytes > 0)
            o << "  CUDA graphs     " << formatBytes(k.cudaGraphBytes) << "\n";
        o << "  KV cache        "
          << (k.kvCacheBytes < 0 ? "-" + formatBytes(-k.kvCacheBytes) : formatBytes(k.kvCacheBytes)) << " ("
          << formatCount(k.kvBytesPerToken) << " B a token)\n";
        if (k.statePerSequenceBytes > 0)
            o << "    of which " << e.stateKind << " states " << formatBytes(k.stateBytes) << " ("
              << formatBytes(k.statePerSequenceBytes) << " a sequence)\n";
    }
    for (const LlamaCppDevice& d : e.devices)
        o << d.name << ": " << d.layers << " layers, weights " << formatBytes(d.weightsBytes) << ", KV "
          << formatBytes(d.kvBufferBytes) << ", compute buffer "
          << (d.computeBufferBytes ? formatBytes(*d.computeBufferBytes) : std::string("not modelled")) << "\n";
    o << "\nKV cache: " << formatCount(e.kvCacheTokens) << " tokens";
    if (e.gpuBlocks)
        o << " (" << formatCount(*e.gpuBlocks) << " blocks)";
    o << "; max concurrency at " << formatCount(e.maxModelLen) << " tokens: " << fixed(e.maxConcurrency, 2) << "x\n";
    if (e.replicas > 1)
        o << e.replicas << " data-parallel replicas (run.parallelism.gpus / (tensor x pipeline)), each as above\n";
    if (e.startupFails)
        o << "STARTUP FAILS: " << e.failure << "\n";
    o << "\nwhat the engine prints at startup:\n";
    for (const std::string& l : e.logLines)
        o << "  " << l << "\n";
    if (s.available) {
        o << "\nspeed (roofline at peak: an upper bound), " << s.batch << " sequences at "
          << formatCount(s.contextTokens) << " tokens:\n"
          << "  TTFT (" << formatCount(s.promptTokens) << "-token prompt) " << formatSeconds(s.ttftS, 3) << ", "
          << s.prefillBound << "\n"
          << "  TPOT " << formatSeconds(s.tpotS, 3) << ", " << s.decodeBound << "; " << fixed(s.tokensPerSPerUser, 1)
          << " tokens/s per user, " << fixed(s.tokensPerSTotal, 1) << " tokens/s in total"
          << (e.replicas > 1 ? " per replica" : "") << "\n"
          << "  " << s.formula << "\n";
    }
    for (const std::string& w : e.warnings)
        o << "warning: " << w << "\n";
    return o.str();
}

} // namespace vramlab
