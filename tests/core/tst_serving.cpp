// SPDX-License-Identifier: MIT
// The serving model's rules, each with numbers worked from the engine's source.
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/presets.h"
#include "vramlab/scenario_io.h"
#include "vramlab/serving_chart.h"
#include "vramlab/serving_fit.h"
#include "vramlab/serving_model.h"
#include "vramlab/serving_plan.h"
#include "vramlab/serving_report.h"
#include "vramlab/serving_speed.h"

#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace vramlab;
using nlohmann::json;

class TstServing : public QObject {
    Q_OBJECT
private slots:
    void ggmlBlockSizes();
    void ggufMixes();
    void quantizedLinearBytes_data();
    void quantizedLinearBytes();
    void vllmRule3Llama31();
    void vllmFailures();
    void vllmPipelineStages();
    void sglangCellAndDefaults();
    void llamaCppKvAndPadding();
    void llamaCppRefusesQuantizedVWithoutFlash();
    void scenarioKeys();
    void moeDecodeReadsRoutedExperts();
    void fits();
    void hfGenerateIsTodaysInference();
    void llamaCppSlidingWindowCache();
    void servingPlanner();
    void hybridMambaVllm();
    void hybridMambaSglang();
    void hybridDeltaNet();
    void tensorParallelAllReduces();
    void vllmSlidingWindowGroups();
    void llama4Engines();
    void sglangMultimodalFactor();
    void sglangDefaultMemFraction();
};

namespace {

json llama31Vllm(const std::string& version, Count maxModelLen, double gmu = 0.9)
{
    return { { "model", { { "preset", "llama-3-8b" }, { "max_position_embeddings", 131072 } } },
        { "run",
            { { "mode", "serving" }, { "gpu", { { "base", "rtx-3090-24gb" }, { "memory_gib", 23.58 } } },
                { "serving",
                    { { "engine", "vllm" }, { "engine_version", version }, { "max_model_len", maxModelLen },
                        { "gpu_memory_utilization", gmu }, { "non_torch_gib", 0.35 } } } } } };
}

ServingEstimate run(const json& doc)
{
    const Scenario sc = readScenario(doc);
    return servingEstimate(sc.model, sc.run);
}

/// The key run() refuses `doc` naming, or "accepted".
std::string refusedKey(const json& doc)
{
    try {
        run(doc);
    } catch (const InputError& err) {
        return err.keyPath();
    }
    return "accepted";
}

json qwen32bLlamaCpp(json serving)
{
    serving["engine"] = "llama.cpp";
    return { { "model",
                 { { "vocab_size", 152064 }, { "hidden_size", 5120 }, { "num_layers", 64 }, { "num_heads", 40 },
                     { "num_kv_heads", 8 }, { "head_dim", 128 }, { "ffn_hidden_size", 27648 }, { "qkv_bias", true },
                     { "max_position_embeddings", 32768 } } },
        { "run", { { "mode", "serving" }, { "gpu", "rtx-3090-ti-24gb" }, { "serving", serving } } } };
}

/// NVIDIA-Nemotron-Nano-9B-v2 (tests/data/hf/nemotron-nano-9b-v2.json as import-hf writes it): 56 blocks, 27
/// Mamba-2 (128 heads of 80, 8 groups, state 128, conv 4), 4 attention (8 KV heads of 128), 25 MLP.
json nemotronNano(json serving, const std::string& gpu = "h100-sxm-80gb")
{
    return { { "model",
                 { { "vocab_size", 131072 }, { "hidden_size", 4480 }, { "num_layers", 56 }, { "num_heads", 40 },
                     { "num_kv_heads", 8 }, { "head_dim", 128 }, { "ffn_hidden_size", 15680 }, { "mlp", "gelu" },
                     { "max_position_embeddings", 131072 }, { "attention_layers", 4 }, { "mlp_layers", 25 },
                     { "position", "none" },
                     { "ssm",
                         { { "layers", 27 }, { "num_heads", 128 }, { "head_dim", 80 }, { "state_size", 128 },
                             { "groups", 8 }, { "conv_kernel", 4 } } } } },
        { "run", { { "mode", "serving" }, { "gpu", gpu }, { "serving", serving } } } };
}

/// Qwen3.5-27B's language model (tests/data/hf/SOURCES.md): 64 layers, every 4th gated full attention (24 heads,
/// 4 KV heads of 256, RoPE on 64 channels), 48 Gated DeltaNet layers (48 value heads of 128, 16 key heads of 128,
/// conv 4), a dense SwiGLU MLP of 17,408, and its config's mamba_ssm_dtype float32.
json qwen35_27b(json serving)
{
    return { { "model",
                 { { "vocab_size", 248320 }, { "hidden_size", 5120 }, { "num_layers", 64 }, { "num_heads", 24 },
                     { "num_kv_heads", 4 }, { "head_dim", 256 }, { "ffn_hidden_size", 17408 },
                     { "max_position_embeddings", 262144 }, { "qk_norm", true }, { "tied_embeddings", false },
                     { "rotary_dim", 64 }, { "attention_output_gate", true }, { "attention_layers", 16 },
                     { "ssm",
                         { { "kind", "gated-deltanet" }, { "layers", 48 }, { "num_heads", 48 }, { "head_dim", 128 },
                             { "state_size", 128 }, { "groups", 16 }, { "conv_kernel", 4 }, { "conv_bias", false },
                             { "state_dtype", "fp32" } } } } },
        { "run", { { "mode", "serving" }, { "gpu", "h200-141gb" }, { "serving", serving } } } };
}

} // namespace

void TstServing::ggmlBlockSizes()
{
    // ggml-common.h: block_q8_0 34 B / 32, block_q4_0 18 / 32, block_q4_K 144 / 256,
    // block_q6_K 210 / 256, block_iq4_xs 136 / 256, block_q2_K 84 / 256.
    QCOMPARE(ggmlBytes(GgmlType::Q8_0, 1024), Bytes(1088));
    QCOMPARE(ggmlBytes(GgmlType::Q4_0, 4096), Bytes(2304));
    QCOMPARE(ggmlBytes(GgmlType::Q4_K, 4096), Bytes(2304));
    QCOMPARE(ggmlBytes(GgmlType::Q6_K, 256), Bytes(210));
    QCOMPARE(ggmlBytes(GgmlType::IQ4_XS, 256), Bytes(136));
    QCOMPARE(ggmlBytes(GgmlType::Q2_K, 512), Bytes(168));
    QCOMPARE(ggmlBytes(GgmlType::F16, 100), Bytes(200));
    QCOMPARE(parseGgmlType("Q5_K").value(), GgmlType::Q5_K);
    QVERIFY(!parseGgmlType("q9_0"));
}

void TstServing::ggufMixes()
{
    // llama-quant.cpp use_more_bits for 32 layers: i < 4, i >= 28, (i - 4) % 3 == 2.
    QCOMPARE(ggufTensorType("Q4_K_M", "attn_v", 0, 32, 4096), GgmlType::Q6_K);
    QCOMPARE(ggufTensorType("Q4_K_M", "attn_v", 4, 32, 4096), GgmlType::Q4_K);
    QCOMPARE(ggufTensorType("Q4_K_M", "ffn_down", 6, 32, 14336), GgmlType::Q6_K);
    QCOMPARE(ggufTensorType("Q4_K_M", "attn_q", 0, 32, 4096), GgmlType::Q4_K);
    QCOMPARE(ggufTensorType("Q4_K_M", "output", 0, 32, 4096), GgmlType::Q6_K);
    QCOMPARE(ggufTensorType("Q8_0", "output", 0, 32, 4096), GgmlType::Q8_0);
    QCOMPARE(ggufTensorType("F16", "ffn_down", 0, 32, 4096), GgmlType::F16);
    // Rows that are not a multiple of 256 fall back: Q4_K -> Q5_0, Q6_K -> Q8_0.
    QCOMPARE(ggufTensorType("Q4_K_M", "attn_q", 5, 32, 2560 + 64), GgmlType::Q5_0);
    QCOMPARE(ggufTensorType("Q5_K_M", "output", 0, 32, 100), GgmlType::Q8_0);
}

void TstServing::quantizedLinearBytes_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<qlonglong>("bytes");
    // A 4096 x 4096 linear layer, group 128: 8,388,608 B of 4-bit weights plus, per method,
    // AWQ qzeros 512 x 4 + fp16 scales 4096 x 2 per group; GPTQ the same + g_idx 4096 x 4;
    // Marlin scales only; fp8 1 B + fp32 scales per tensor or per 128 x 128 block; nf4 uint8
    // absmax per 64 + fp32 per 256 blocks; LLM.int8 fp32 per output row.
    QTest::newRow("awq") << int(QuantKind::Awq) << 8716288LL;
    QTest::newRow("gptq") << int(QuantKind::Gptq) << 8732672LL;
    QTest::newRow("marlin") << int(QuantKind::Marlin) << 8650752LL;
    QTest::newRow("fp8") << int(QuantKind::Fp8) << 16777224LL;
    QTest::newRow("fp8-block") << int(QuantKind::Fp8Block) << 16781312LL;
    QTest::newRow("bnb-nf4") << int(QuantKind::BnbNf4) << 8654848LL;
    QTest::newRow("bnb-int8") << int(QuantKind::BnbInt8) << 16793600LL;
    QTest::newRow("none bf16") << int(QuantKind::None) << 33554432LL;
}

void TstServing::quantizedLinearBytes()
{
    QFETCH(int, kind);
    QFETCH(qlonglong, bytes);
    WeightQuant q;
    q.kind = static_cast<QuantKind>(kind);
    QCOMPARE(vramlab::quantizedLinearBytes(q, 4096, 4096, DType::Bf16), Bytes(bytes));
}

void TstServing::vllmRule3Llama31()
{
    const ServingEstimate e = run(llama31Vllm("0.6.4.post1", 20000));
    QVERIFY(e.rule.find("0.6.4") != std::string::npos);
    const ServingRank& k = e.limiting();
    // 8,030,261,248 bf16 parameters + the rotary cache 131072 x 128 x 2 B = "14.9888 GB" in the log.
    QCOMPARE(k.weightsBytes, Bytes(16094076928));
    // Profile of 20000 tokens: gate_up [T, 28672] + act [T, 14336] + 3 x [T, 4096], bf16.
    QCOMPARE(k.activationPeakBytes, Bytes(2211840000));
    QCOMPARE(k.kvBytesPerToken, Bytes(131072));
    QCOMPARE(e.gpuBlocks.value(), Count(1957)); // logged 1952
    QCOMPARE(e.cpuBlocks, Count(2048)); // 4 GiB of 2 MiB blocks, as logged
    QCOMPARE(e.kvCacheTokens, Count(31312));
    QVERIFY(!e.startupFails);
    QCOMPARE(e.logLines.at(2), std::string("# GPU blocks: 1957, # CPU blocks: 2048"));
    QVERIFY(e.logLines.at(1).find("peak_torch_memory=17.05GiB") != std::string::npos); // logged 17.06
}

void TstServing::vllmFailures()
{
    const ServingEstimate tooLong = run(llama31Vllm("0.6.4", 29000));
    QVERIFY(tooLong.startupFails);
    QCOMPARE(tooLong.kvCacheTokens, Count(23712)); // logged 23648
    QVERIFY(
        tooLong.failure.find("max seq len (29000) is larger than the maximum number of tokens") != std::string::npos);

    const ServingEstimate none = run(llama31Vllm("0.6.4", 8192, 0.6));
    QVERIFY(none.startupFails);
    QCOMPARE(none.gpuBlocks.value(), Count(0));
    QVERIFY(none.limiting().kvCacheBytes < 0);
    QVERIFY(none.failure.find("No available memory for the cache blocks") != std::string::npos);

    // Rule 1 (<= 0.2.4) does not see memory outside torch; V1 (0.10) prints tokens, not blocks.
    json doc = llama31Vllm("0.2.4", 8192);
    QCOMPARE(run(doc).limiting().nonTorchBytes, Bytes(0));
    const ServingEstimate v1 = run(llama31Vllm("0.10.0", 8192));
    QVERIFY(v1.logLines.back().rfind("Maximum concurrency for 8,192 tokens per request: ", 0) == 0);
    QCOMPARE(v1.maxNumBatchedTokens, Count(2048)); // the V1 OpenAI server on a GPU below 70 GiB
    // V1's dummy sampler skips top-k/top-p: 14 B per logit for 256 rows, above the MLP phase at 2048 tokens.
    QCOMPARE(v1.limiting().activationPeakBytes, Bytes(256LL * 128256 * 14 + 2048LL * 4096 * 2));
}

void TstServing::vllmPipelineStages()
{
    json doc = llama31Vllm("0.8.5", 8192);
    doc["run"]["parallelism"] = { { "gpus", 2 }, { "pipeline_parallel", 2 } };
    const ServingEstimate e = run(doc);
    QCOMPARE(e.ranks.size(), std::size_t(2));
    QCOMPARE(e.ranks[0].layers, Count(16));
    QCOMPARE(e.ranks[0].kvBytesPerToken, Bytes(65536));
    // Stage 0 holds the embedding, stage 1 the LM head and final norm: equal sizes, plus the norm.
    QCOMPARE(e.ranks[1].weightsBytes - e.ranks[0].weightsBytes, Bytes(4096 * 2));
    // The last stage runs the sampler: 256 x 128256 logits x 38 B while they are sorted + the final hidden states.
    QCOMPARE(e.ranks[1].activationPeakBytes, Bytes(256LL * 128256 * 38 + 8192LL * 4096 * 2));
    QCOMPARE(e.limitingRank, std::size_t(1));
}

void TstServing::sglangCellAndDefaults()
{
    const json doc = {
        { "model",
            { { "vocab_size", 151936 }, { "hidden_size", 4096 }, { "num_layers", 94 }, { "num_heads", 64 },
                { "num_kv_heads", 4 }, { "head_dim", 128 }, { "qk_norm", true }, { "max_position_embeddings", 40960 },
                { "moe", { { "num_experts", 128 }, { "top_k", 8 }, { "expert_ffn_hidden_size", 1536 } } } } },
        { "run",
            { { "mode", "serving" }, { "gpu", "h100-sxm-80gb" },
                { "parallelism", { { "gpus", 4 }, { "tensor_parallel", 4 } } },
                { "serving", { { "engine", "sglang" }, { "quantization", "fp8-block" } } } } }
    };
    const ServingEstimate e = run(doc);
    // 94 layers x 1 KV head per rank x (128 + 128) x 2 B.
    QCOMPARE(e.limiting().kvBytesPerToken, Bytes(48128));
    // server_args.py at the default 0.4.9: mem_fraction_static round((81,559 - (9.5 + 4 / 2) x 1024) / 81,559, 3) =
    // 0.856 at tensor parallel 4 on an H100, of the free memory before loading (the total less the default 512 MiB
    // context and 256 MiB NCCL).
    const Bytes preLoad = e.totalGpuBytes - 768 * kMiB;
    QCOMPARE(e.limiting().nonTorchBytes, Bytes(768) * kMiB);
    QCOMPARE(e.limiting().budgetBytes, preLoad - static_cast<Bytes>(static_cast<double>(preLoad) * (1.0 - 0.856)));
    QCOMPARE(e.kvCacheTokens, e.limiting().kvCacheBytes / 48128);
    QCOMPARE(e.maxNumSeqs, e.kvCacheTokens * 512 / 40960); // min(max(tokens / 40960 x 512, 2048), 4096)
    QVERIFY(e.maxNumSeqs > 2048 && e.maxNumSeqs < 4096);
    QVERIFY(!e.gpuBlocks);
}

void TstServing::llamaCppKvAndPadding()
{
    const ServingEstimate e = run(qwen32bLlamaCpp({ { "n_ctx", 32768 }, { "type_k", "q8_0" }, { "type_v", "q8_0" },
        { "flash_attn", true }, { "n_gpu_layers", -1 }, { "tensor_split", { 0.625, 0.375 } } }));
    QCOMPARE(e.devices.at(0).layers, Count(41));
    QCOMPARE(e.devices.at(0).kvBufferBytes, Bytes(2788) * kMiB); // logged in llama.cpp#11200
    QCOMPARE(e.devices.at(1).kvBufferBytes, Bytes(1564) * kMiB);
    QCOMPARE(e.kBytes, Bytes(2176) * kMiB);
    QCOMPARE(e.outputBufferBytes, Bytes(152064 * 4));
    // n_ctx padded to 256 with flash attention, 32 without.
    QCOMPARE(run(qwen32bLlamaCpp({ { "n_ctx", 5000 }, { "flash_attn", true } })).nCtxPadded, Count(5120));
    QCOMPARE(run(qwen32bLlamaCpp({ { "n_ctx", 5000 } })).nCtxPadded, Count(5024));
    // Every layer on the CPU by default: no GPU KV buffer.
    const ServingEstimate cpu = run(qwen32bLlamaCpp({ { "n_ctx", 4096 } }));
    QCOMPARE(cpu.devices.at(0).kvBufferBytes, Bytes(0));
    QCOMPARE(cpu.devices.back().kvBufferBytes, Bytes(64) * 4096 * 1024 * 2 * 2);
    // Q4_K_M file: bartowski/Qwen2.5-32B-Instruct-GGUF's Qwen2.5-32B-Instruct-Q4_K_M.gguf is
    // 19,851,351,776 bytes (pinned by a public installer's model table, code-search file
    // 65769254363); the tensors take all but the metadata and the tokenizer.
    const ServingEstimate km
        = run(qwen32bLlamaCpp({ { "n_ctx", 4096 }, { "n_gpu_layers", 65 }, { "quantization", "Q4_K_M" } }));
    Bytes tensors = 0;
    for (const LlamaCppDevice& d : km.devices)
        tensors += d.weightsBytes;
    QCOMPARE(tensors, Bytes(19845357568));
    QVERIFY(19851351776 - tensors < 8 * kMiB);
    // Q4_0 file: 64 layers of Q4_0 matrices, the output in Q6_K, the embedding Q4_0 on the CPU.
    const ServingEstimate q
        = run(qwen32bLlamaCpp({ { "n_ctx", 4096 }, { "n_gpu_layers", 65 }, { "quantization", "Q4_0" } }));
    QCOMPARE(q.devices.back().weightsBytes, ggmlBytes(GgmlType::Q4_0, 5120) * 152064);
}

void TstServing::llamaCppRefusesQuantizedVWithoutFlash()
{
    try {
        run(qwen32bLlamaCpp({ { "type_v", "q4_0" } }));
        QFAIL("expected a refusal");
    } catch (const InputError& e) {
        QCOMPARE(e.keyPath(), std::string("run.serving.type_v"));
    }
}

void TstServing::scenarioKeys()
{
    auto refusedAt = [](json doc) {
        try {
            (void)readScenario(doc);
        } catch (const InputError& e) {
            return e.keyPath();
        }
        return std::string("(accepted)");
    };
    json doc = llama31Vllm("0.6.4", 20000);
    doc["run"]["serving"]["gpu_memory_utilisation"] = 0.8;
    QCOMPARE(refusedAt(doc), std::string("run.serving.gpu_memory_utilisation"));
    doc = llama31Vllm("0.6.4", 20000);
    doc["run"]["serving"]["n_ctx"] = 4096;
    QCOMPARE(refusedAt(doc), std::string("run.serving.n_ctx"));
    doc = llama31Vllm("0.6.4", 20000);
    doc["run"]["mode"] = "inference";
    QCOMPARE(refusedAt(doc), std::string("run.serving"));
    doc = llama31Vllm("0.6.4", 20000);
    doc["run"].erase("serving");
    QCOMPARE(refusedAt(doc), std::string("run.serving"));
    doc = llama31Vllm("0.6.4", 20000);
    doc["run"]["serving"]["quantization"] = "Q4_K_M"; // a GGUF type is llama.cpp's
    QCOMPARE(refusedAt(doc), std::string("run.serving.quantization"));

    // Round trip: written explicitly, read back the same.
    doc = llama31Vllm("0.6.4", 20000);
    doc["run"]["serving"]["kv_cache_dtype"] = "fp8";
    const Scenario sc = readScenario(doc);
    const json written = scenarioToJson(sc);
    QCOMPARE(written.at("run").at("mode").get<std::string>(), std::string("serving"));
    const Scenario back = readScenario(written);
    QVERIFY(back.run.serving->kvCacheDtype.value() == DType::Fp8);
    QCOMPARE(back.run.serving->maxModelLen.value(), Count(20000));
    QCOMPARE(servingEstimate(back.model, back.run).gpuBlocks, servingEstimate(sc.model, sc.run).gpuBlocks);
    // An inference scenario is written as before, with no serving key.
    doc.at("run").erase("serving");
    doc["run"]["mode"] = "inference";
    QVERIFY(!scenarioToJson(readScenario(doc)).at("run").contains("serving"));
}

void TstServing::moeDecodeReadsRoutedExperts()
{
    const json doc = { { "model", { { "preset", "mixtral-8x7b" } } },
        { "run",
            { { "mode", "serving" }, { "gpu", "rtx-4090-24gb" },
                { "serving",
                    { { "engine", "vllm" }, { "engine_version", "0.6.4" }, { "quantization", "awq" },
                        { "max_model_len", 4096 } } } } } };
    const Scenario sc = readScenario(doc);
    const ServingEstimate e = servingEstimate(sc.model, sc.run);
    const ServingSpeed one = servingSpeed(sc.model, sc.run, e, 1, 512, 1024);
    QCOMPARE(one.expectedExperts, 2.0); // one token reads its top-2 of 8
    const ServingSpeed eight = servingSpeed(sc.model, sc.run, e, 8, 512, 1024);
    QVERIFY(std::abs(eight.expectedExperts - 8.0 * (1.0 - std::pow(0.75, 8))) < 1e-12); // 7.199
    QCOMPARE(one.decodeBound, std::string("bandwidth-bound"));
    // Reading 2 of 8 experts: the step reads far less than all the weights.
    QVERIFY(one.decodeBytes < 0.4 * static_cast<double>(e.limiting().weightsBytes));
    QVERIFY(eight.tpotS > one.tpotS);
}

void TstServing::fits()
{
    const Scenario sc = readScenario(llama31Vllm("0.6.4", 20000));
    // 4096-token requests: blocks // 256 blocks per request.
    const ServingFit c = maxConcurrency(sc.model, sc.run, 4096);
    QCOMPARE(c.value.value(), c.estimate->gpuBlocks.value() / 256);
    const ServingFit l = longestContext(sc.model, sc.run, 1);
    QVERIFY(l.value.has_value());
    RunSpec longer = sc.run;
    longer.serving->maxModelLen = *l.value + 1;
    QVERIFY(servingEstimate(sc.model, longer).startupFails);
    longer.serving->maxModelLen = *l.value;
    QVERIFY(!servingEstimate(sc.model, longer).startupFails);
    // llama.cpp: Qwen2.5-32B Q4_K_M on a 24 GiB card at 32768 tokens (8 GiB of f16 KV): not all 65 layers.
    const Scenario q = readScenario(qwen32bLlamaCpp({ { "n_ctx", 32768 }, { "quantization", "Q4_K_M" } }));
    const ServingFit g = mostGpuLayers(q.model, q.run);
    QVERIFY(g.value.has_value());
    qInfo("%s", g.explanation.c_str());
    QCOMPARE(*g.value, Count(58));
    RunSpec more = q.run;
    more.serving->nGpuLayers = *g.value + 1;
    const ServingEstimate over = servingEstimate(q.model, more);
    QVERIFY(over.devices[0].weightsBytes + over.devices[0].kvBufferBytes > q.run.gpu->memoryBytes);
}

void TstServing::hfGenerateIsTodaysInference()
{
    json doc = { { "model", { { "preset", "llama-3-8b" } } },
        { "run",
            { { "mode", "serving" }, { "gpu", "h100-sxm-80gb" },
                { "serving", { { "engine", "hf-generate" }, { "max_model_len", 8192 }, { "max_num_seqs", 4 } } } } } };
    const ServingEstimate e = run(doc);
    // 4 sequences x 8192 tokens x 32 layers x 2 x 8 heads x 128 x 2 B = 4 GiB, no reservation.
    QCOMPARE(e.kvCacheBytes, Bytes(4) * kGiB);
    QCOMPARE(e.limiting().weightsBytes, Bytes(8030261248LL * 2));
    QVERIFY(!e.gpuBlocks);
    QCOMPARE(e.kvCacheTokens, Count(4 * 8192));
}

void TstServing::llamaCppSlidingWindowCache()
{
    // Gemma 3 12B: 48 layers, every 6th global, window 1024, 8 KV heads x 256, f16: 8192 B a cell and layer.
    json doc = { { "model", { { "preset", "gemma-3-12b" } } },
        { "run",
            { { "mode", "serving" }, { "gpu", "rtx-4090-24gb" },
                { "serving",
                    { { "engine", "llama.cpp" }, { "engine_version", "b5500" }, { "n_ctx", 32768 },
                        { "flash_attn", true }, { "n_gpu_layers", -1 } } } } } };
    // iSWA (PR #13194, b5429): 8 global layers x 32768 cells + 40 local layers x pad(1024 + n_batch 2048, 256) =
    // 3072 cells (src/llama-kv-cache.cpp@b5501: n_swa x n_seq_max + n_batch).
    QCOMPARE(run(doc).kBytes + run(doc).vBytes, Bytes(8LL * 32768 * 8192 + 40LL * 3072 * 8192));
    // From b5554 (PR #13833) n_ubatch: pad(1024 + 512, 256) = 1536; before b5429 no iSWA cache.
    doc["run"]["serving"]["engine_version"] = "b5554";
    QCOMPARE(run(doc).kBytes + run(doc).vBytes, Bytes(8LL * 32768 * 8192 + 40LL * 1536 * 8192));
    doc["run"]["serving"]["engine_version"] = "b5428";
    QCOMPARE(run(doc).kBytes + run(doc).vBytes, Bytes(48LL * 32768 * 8192));
    // Without flash attention: padded to 32 before b6981 (1024 + 512 = 1536 either way; 1000 + 512 shows it),
    // to 256 from b6981 (src/llama-kv-cache-iswa.cpp@b6981 GGML_PAD(min(...), 256)).
    doc["model"]["sliding_window"] = 1000;
    doc["run"]["serving"]["flash_attn"] = false;
    doc["run"]["serving"]["engine_version"] = "b6000";
    QCOMPARE(run(doc).kBytes + run(doc).vBytes, Bytes(8LL * 32768 * 8192 + 40LL * 1536 * 8192));
    doc["run"]["serving"]["engine_version"] = "b6981";
    QCOMPARE(run(doc).kBytes + run(doc).vBytes, Bytes(8LL * 32768 * 8192 + 40LL * 1536 * 8192));
    doc["model"]["sliding_window"] = 1030; // 1542 cells: 1568 padded to 32, 1792 to 256
    QCOMPARE(run(doc).kBytes + run(doc).vBytes, Bytes(8LL * 32768 * 8192 + 40LL * 1792 * 8192));
    doc["run"]["serving"]["engine_version"] = "b6000";
    QCOMPARE(run(doc).kBytes + run(doc).vBytes, Bytes(8LL * 32768 * 8192 + 40LL * 1568 * 8192));
    // From b6981 the minimum is padded: n_ctx 1100 (1120 cells) gives its SWA layers PAD256(min(1120, 1542)) = 1280.
    doc["run"]["serving"]["engine_version"] = "b6981";
    doc["run"]["serving"]["n_ctx"] = 1100;
    QCOMPARE(run(doc).kBytes + run(doc).vBytes, Bytes(8LL * 1120 * 8192 + 40LL * 1280 * 8192));
    doc["run"]["serving"]["n_ctx"] = 32768;
    doc["model"].erase("sliding_window");
    doc["run"]["serving"]["flash_attn"] = true;
    doc["run"]["serving"]["engine_version"] = "b5500";
    doc["run"]["serving"]["swa_full"] = true;
    QCOMPARE(run(doc).kBytes + run(doc).vBytes, Bytes(48LL * 32768 * 8192));
    doc["run"]["serving"].erase("swa_full");
    doc["run"]["serving"]["engine_version"] = "b4500"; // before the iSWA cache
    QCOMPARE(run(doc).kBytes + run(doc).vBytes, Bytes(48LL * 32768 * 8192));
}

// Issue 20, the serving planner: 64 requests of 4,096 tokens of Llama 3 8B (vLLM 0.6.4) on
// RTX 3090s. Every row is the engine's own accounting of its deployment: applying it gives
// the requests it claims, and the ranking is by TPOT.
void TstServing::servingPlanner()
{
    const Scenario sc = readScenario(llama31Vllm("0.6.4", 4096));
    ServingPlanRequest req;
    req.gpus = 4;
    req.concurrency = 64;
    req.context = 4096;
    req.topK = 100;
    const ServingPlanResult p = servingPlan(sc.model, sc.run, req);
    QVERIFY(!p.top.empty());
    QCOMPARE(p.evaluated, Count(p.top.size() + p.unfit.size()));
    for (size_t i = 0; i < p.top.size(); ++i) {
        const ServingPlanCandidate& c = p.top[i];
        QCOMPARE(c.tensorParallel * c.pipelineParallel * c.dataParallel, Count(4));
        const RunSpec r = applyServingCandidate(sc.run, c, 4096);
        const ServingEstimate e = servingEstimate(sc.model, r);
        QCOMPARE(e.kvCacheTokens, c.estimate.kvCacheTokens);
        QCOMPARE(requestsHeld(e, *r.serving) * c.dataParallel, c.requestsHeld);
        QVERIFY(c.requestsHeld >= 64);
        QCOMPARE(c.speed.tpotS, servingSpeed(sc.model, r, e, c.batchPerReplica, 1024, 4096).tpotS);
        if (i > 0)
            QVERIFY(c.speed.tpotS >= p.top[i - 1].speed.tpotS);
    }
    // An fp8 cache holds twice the tokens of the bf16 one in the same layout.
    const auto find = [&](Count tp, Count dp, std::optional<DType> kv) {
        for (const ServingPlanCandidate& c : p.top)
            if (c.tensorParallel == tp && c.dataParallel == dp && c.kvCacheDtype == kv)
                return c;
        return ServingPlanCandidate {};
    };
    const ServingPlanCandidate bf16 = find(2, 2, std::nullopt), fp8 = find(2, 2, DType::Fp8);
    QVERIFY(bf16.requestsHeld > 0 && fp8.requestsHeld > 0);
    QVERIFY(fp8.estimate.kvCacheTokens >= 2 * bf16.estimate.kvCacheTokens - 16);
    QCOMPARE(fp8.summary(), std::string("TP 2 x PP 1 x DP 2, kv_cache_dtype fp8, max_model_len 4,096"));
    // One RTX 3090 holds 5 of them at most (23,712 tokens of cache at 20,000 tokens, fewer
    // here): nothing fits, and each row says why.
    req.gpus = 1;
    const ServingPlanResult one = servingPlan(sc.model, sc.run, req);
    QVERIFY(one.top.empty());
    QCOMPARE(one.unfit.size(), size_t(2));
    for (const ServingPlanCandidate& c : one.unfit)
        QVERIFY2(c.why.find("64 asked") != std::string::npos, c.why.c_str());
    // A TPOT limit no deployment meets.
    req.gpus = 4;
    req.maxTpotS = 1e-6;
    QVERIFY(servingPlan(sc.model, sc.run, req).top.empty());
    // A TTFT limit none meets: each row that starts and holds the requests says it is the TTFT.
    req.maxTpotS.reset();
    req.maxTtftS = 1e-6;
    const ServingPlanResult slowStart = servingPlan(sc.model, sc.run, req);
    QVERIFY(slowStart.top.empty());
    QCOMPARE(slowStart.unfit.size(), p.top.size() + p.unfit.size());
    for (const ServingPlanCandidate& c : slowStart.unfit)
        if (c.requestsHeld >= 64)
            QVERIFY2(c.why.find("TTFT ") == 0 && c.why.find(" limit") != std::string::npos, c.why.c_str());
    // A throughput floor (output tokens/s of all replicas): the fastest setups' rate keeps only
    // those that reach it; the rest say by how much they miss.
    req.maxTtftS.reset();
    double best = 0;
    for (const ServingPlanCandidate& c : p.top) {
        QCOMPARE(c.tokensPerSAll(), c.speed.tokensPerSTotal * double(c.dataParallel));
        best = std::max(best, c.tokensPerSAll());
    }
    req.minTokensPerS = best;
    const ServingPlanResult fast = servingPlan(sc.model, sc.run, req);
    QVERIFY(!fast.top.empty() && fast.top.size() < p.top.size());
    for (const ServingPlanCandidate& c : fast.top)
        QCOMPARE(c.tokensPerSAll(), best);
    QVERIFY(std::any_of(fast.unfit.begin(), fast.unfit.end(),
        [](const ServingPlanCandidate& c) { return c.why.find("tokens/s is under the") != std::string::npos; }));
    // The applied run names every GPU: the replicas are gpus / (tensor x pipeline), and the
    // engine's report and verdict say so.
    const RunSpec applied = applyServingCandidate(sc.run, bf16, 4096);
    QCOMPARE(applied.parallelism.gpus, Count(4));
    const ServingEstimate twoReplicas = servingEstimate(sc.model, applied);
    QCOMPARE(twoReplicas.replicas, Count(2));
    QCOMPARE(twoReplicas.kvCacheTokens, bf16.estimate.kvCacheTokens);
    QVERIFY(servingVerdict(twoReplicas).ends_with(" tokens, 2 replicas"));
    QCOMPARE(servingToJson(twoReplicas, {}).at("data_parallel_replicas").get<Count>(), Count(2));
}

// vLLM V1's hybrid cache (model_executor/models/config.py HybridAttentionMambaModelConfig, v1/core/kv_cache_utils.py).
void TstServing::hybridMambaVllm()
{
    json doc = nemotronNano({ { "engine", "vllm" }, { "engine_version", "0.10.2" }, { "max_model_len", 32768 } });
    ServingEstimate e = run(doc);
    // One sequence's state per layer: conv 3 x (10240 + 2 x 8 x 128) x 2 B = 73,728 and SSM 128 x 80 x 128 x 2 B
    // = 2,621,440: 2,695,168 B. One token of one attention layer: 2 x 8 x 128 x 2 B = 4,096 B. The attention block
    // grows to 16 x cdiv(2,695,168, 16 x 4,096) = 672 tokens (vllm-project/vllm#24280 quotes 672 for this model)
    // and the Mamba page is padded to 672 x 4,096 = 2,752,512 B (+2.13 %).
    QVERIFY(std::find(e.logLines.begin(), e.logLines.end(),
                "Setting attention block size to 672 tokens to ensure that attention page size is >= mamba page size.")
        != e.logLines.end());
    QVERIFY(std::find(e.logLines.begin(), e.logLines.end(),
                "Padding mamba page size by 2.13% to ensure that mamba page size and attention page size are exactly "
                "equal.")
        != e.logLines.end());
    const ServingRank& k = e.limiting();
    QCOMPARE(k.statePerSequenceBytes, Bytes(27) * 2'695'168);
    QCOMPARE(k.kvBytesPerToken, Bytes(4) * 4096);
    // NoPE attention (model.position none): no rotary cos/sin cache of 131,072 x 128 x 2 B among the weights.
    json rope = doc;
    rope["model"]["position"] = "rope";
    QCOMPARE(run(rope).limiting().weightsBytes - k.weightsBytes, Bytes(131072) * 128 * 2);
    // Groups of 4 layers (the fewer kind): 1 attention group, 7 Mamba groups (27 layers, one padded); a block is 4
    // pages; a 32,768-token request holds cdiv(32768, 672) = 49 attention blocks and 7 Mamba blocks.
    const Bytes page = 672 * 4096;
    QCOMPARE(*e.gpuBlocks, k.kvCacheBytes / page / 4);
    QCOMPARE(e.maxConcurrency, double(*e.gpuBlocks) / (49 + 7));
    QCOMPARE(e.kvCacheTokens, *e.gpuBlocks / 8 * 672); // num_blocks // groups x block size (before 0.24)
    QCOMPARE(k.stateBytes, Bytes(double(*e.gpuBlocks * page * 4) * 7 / 56));
    // The chart splits the cache: the Mamba-2 states are a segment of their own.
    const ServingBudgetChart chart = servingBudgetChart(readScenario(doc).run, e);
    const ServingBar& bar = chart.bars.front();
    QCOMPARE(bar.bytesOf("ssm_state"), k.stateBytes);
    QCOMPARE(bar.bytesOf("kv_cache") + bar.bytesOf("ssm_state"), k.kvCacheBytes);
    // The fit and the planner count requests by the engine's concurrency (blocks of both kinds), not by
    // attention blocks alone.
    QCOMPARE(requestsHeld(e, *readScenario(doc).run.serving), Count(e.maxConcurrency));

    // An fp32 scan state (--mamba-ssm-cache-dtype float32): 73,728 + 5,242,880 B, a block of 1,312 tokens.
    doc["run"]["serving"]["mamba_ssm_cache_dtype"] = "float32";
    e = run(doc);
    QCOMPARE(e.limiting().statePerSequenceBytes, Bytes(27) * 5'316'608);
    QVERIFY(std::find(e.logLines.begin(), e.logLines.end(),
                "Setting attention block size to 1312 tokens to ensure that attention page size is >= mamba page "
                "size.")
        != e.logLines.end());
    // Before 0.10.2 the states took kv_cache_dtype and the flag did not exist.
    doc["run"]["serving"]["engine_version"] = "0.10.1";
    QVERIFY_THROWS_EXCEPTION(InputError, run(doc));
    doc["run"]["serving"].erase("mamba_ssm_cache_dtype");
    doc["run"]["serving"]["kv_cache_dtype"] = "fp8";
    QCOMPARE(run(doc).limiting().statePerSequenceBytes, Bytes(27) * (2'695'168 / 2));
    // Tensor parallel 2 halves each state (8 groups split); 0.24 prints concurrency x max_model_len as tokens.
    doc["run"]["serving"]["engine_version"] = "0.24.0";
    doc["run"]["serving"].erase("kv_cache_dtype");
    doc["run"]["parallelism"] = { { "gpus", 2 }, { "tensor_parallel", 2 } };
    e = run(doc);
    QCOMPARE(e.limiting().statePerSequenceBytes, Bytes(27) * 2'695'168 / 2);
    QCOMPARE(e.kvCacheTokens, Count(e.maxConcurrency * 32768));
    // Prefix caching for a Mamba-2 model: its "all" mode (0.17-0.27, asked for) is refused; from 0.28.0 vLLM turns it
    // on by default in "align" mode (PR #50991): two state blocks per Mamba group, 49 + 2 x 7 per request.
    doc["run"]["serving"]["enable_prefix_caching"] = true;
    QVERIFY_THROWS_EXCEPTION(InputError, run(doc));
    doc["run"]["serving"].erase("enable_prefix_caching");
    doc["run"]["serving"]["engine_version"] = "0.28.0";
    e = run(doc);
    QCOMPARE(e.maxConcurrency, double(*e.gpuBlocks) / (49 + 2 * 7));
    doc["run"]["serving"]["enable_prefix_caching"] = false;
    QCOMPARE(run(doc).maxConcurrency, double(*e.gpuBlocks) / (49 + 7));
    doc["run"]["serving"].erase("enable_prefix_caching");
    doc["run"]["serving"]["engine_version"] = "0.24.0";
    // V0, llama.cpp, generate() and training are refused, naming why.
    doc["run"]["serving"]["engine_version"] = "0.9.2";
    try {
        run(doc);
        QFAIL("accepted");
    } catch (const InputError& err) {
        QCOMPARE(err.keyPath(), std::string("run.serving.engine_version"));
    }
    // Blocks without a Mamba-2 mixer or attention (a pattern of "*" and "-" only): the KV of the attention blocks,
    // no state (tests/fuzz/regressions/hybrid-without-mamba-layers.json once divided by the Mamba groups' 0).
    json plain = nemotronNano({ { "engine", "vllm" }, { "engine_version", "0.10.2" }, { "max_model_len", 32768 } });
    plain["model"].erase("ssm");
    plain["model"]["mlp_layers"] = 52;
    const ServingEstimate p = run(plain);
    QCOMPARE(p.limiting().kvBytesPerToken, Bytes(4) * 4096);
    QCOMPARE(p.limiting().statePerSequenceBytes, Bytes(0));
    QCOMPARE(p.kvCacheTokens, *p.gpuBlocks * 16);
    for (const char* engine : { "llama.cpp", "hf-generate" }) {
        json other = nemotronNano({ { "engine", engine } });
        try {
            run(other);
            QFAIL(engine);
        } catch (const InputError& err) {
            QCOMPARE(err.keyPath(), std::string("model.ssm"));
        }
    }
}

// SGLang's Mamba pool: a boot log of NVIDIA-Nemotron-Nano-9B-v2 with --disable-radix-cache --max-running-requests
// 48 (tests/data/hf/SOURCES.md): "Mamba Cache is allocated. max_mamba_cache_size: 48, conv_state size: 0.09GB,
// ssm_state size: 6.46GB": 49 slots (slot 0 a dummy) x 27 layers x 73,728 B (bf16 conv) and x 5,242,880 B (fp32).
void TstServing::hybridMambaSglang()
{
    json doc = nemotronNano({ { "engine", "sglang" }, { "engine_version", "0.5.4" }, { "mem_fraction_static", 0.82 },
        { "disable_radix_cache", true }, { "max_num_seqs", 48 }, { "context_length", 16384 } });
    ServingEstimate e = run(doc);
    QVERIFY(std::find(e.logLines.begin(), e.logLines.end(),
                "Mamba Cache is allocated. max_mamba_cache_size: 48, conv_state size: 0.09GB, ssm_state size: 6.46GB")
        != e.logLines.end());
    const ServingRank& k = e.limiting();
    QCOMPARE(k.stateBytes, Bytes(48) * 27 * (73'728 + 5'242'880));
    // The token pool holds the attention layers only: 4 x 2 x 8 x 128 x 2 B a token, after the Mamba pool.
    QCOMPARE(k.kvBytesPerToken, Bytes(16384));
    QCOMPARE(e.kvCacheTokens, (k.kvCacheBytes - k.stateBytes) / 16384);
    QCOMPARE(e.maxNumSeqs, Count(48));
    // Without the flags: the pool takes r / (1 + r) of the rest, r = 0.9, and requests are a third of the states.
    doc["run"]["serving"] = { { "engine", "sglang" }, { "engine_version", "0.5.4" } };
    e = run(doc);
    const ServingRank& d = e.limiting();
    const Bytes perSeq = 27 * (73'728 + 5'242'880);
    QCOMPARE(d.stateBytes / perSeq, Count(double(d.kvCacheBytes) * 0.9 / 1.9) / perSeq);
    const Count byTokens = std::min<Count>(std::max<Count>(e.kvCacheTokens * 512 / e.maxModelLen, 2048), 4096);
    QCOMPARE(e.maxNumSeqs, std::min(byTokens, d.stateBytes / perSeq / 3));
    doc["run"]["serving"]["engine_version"] = "0.5.3";
    QVERIFY_THROWS_EXCEPTION(InputError, run(doc));
}

// Gated DeltaNet (Qwen3.5-27B): vllm-project/vllm#40691, vLLM 0.19.0, --max-model-len 32768: "GPU KV cache size:
// 290,864 tokens" and "Maximum concurrency for 32,768 tokens per request: 33.04x". One layer's state per sequence:
// conv 3 x (2 x 16 x 128 + 48 x 128) x 2 B (bf16) = 61,440 and the recurrent state 48 x 128 x 128 x 4 B (the
// config's float32) = 3,145,728: 3,207,168 B. One attention token: 2 x 4 x 256 x 2 B = 4,096 B, so the block grows
// to 16 x cdiv(3,207,168, 65,536) = 784 tokens and the page to 784 x 4,096 = 3,211,264 B. 16 attention and 48 linear
// layers make groups of 16 (1 + 3 groups); the logged figures are 1,487 blocks: 1,487 // 4 x 784 = 290,864 and
// 1,487 / (cdiv(32768, 784) + 3) = 1,487 / 45 = 33.04. The log states no available memory, so the test gives the
// cache 1,487 blocks (--kv-cache-memory-bytes) and checks the arithmetic from there.
void TstServing::hybridDeltaNet()
{
    const Bytes page = 784 * 4096, blocks = 1487;
    json doc = qwen35_27b(
        { { "engine", "vllm" }, { "engine_version", "0.19.0" }, { "max_model_len", 32768 }, { "max_num_seqs", 16 },
            { "max_num_batched_tokens", 16384 }, { "kv_cache_memory_bytes", blocks * page * 16 + page } });
    ServingEstimate e = run(doc);
    QVERIFY(std::find(e.logLines.begin(), e.logLines.end(),
                "Setting attention block size to 784 tokens to ensure that attention page size is >= mamba page size.")
        != e.logLines.end());
    QVERIFY(std::find(e.logLines.begin(), e.logLines.end(),
                "Padding mamba page size by 0.13% to ensure that mamba page size and attention page size are exactly "
                "equal.")
        != e.logLines.end());
    const ServingRank& k = e.limiting();
    QCOMPARE(k.statePerSequenceBytes, Bytes(48) * 3'207'168);
    QCOMPARE(k.kvBytesPerToken, Bytes(16) * 4096);
    QCOMPARE(*e.gpuBlocks, Count(blocks));
    QCOMPARE(e.kvCacheTokens, Count(290'864));
    QCOMPARE(QString::number(e.maxConcurrency, 'f', 2), QStringLiteral("33.04"));
    QVERIFY(e.warnings.empty() || std::none_of(e.warnings.begin(), e.warnings.end(), [](const std::string& w) {
        return w.find("mamba_ssm_cache_dtype unset") != std::string::npos;
    })); // the model names its state dtype

    // The weights: q_proj's output gate doubles q (16 layers x 5,120 x 6,144 x 2 B); RoPE's cos/sin cache covers the
    // 64 rotated channels of 262,144 positions; the gated norm is one weight of 128 per layer.
    json plain = doc;
    plain["model"]["attention_output_gate"] = false;
    QCOMPARE(k.weightsBytes - run(plain).limiting().weightsBytes, Bytes(16) * 5120 * 6144 * 2);
    plain = doc;
    plain["model"].erase("rotary_dim");
    QCOMPARE(run(plain).limiting().weightsBytes - k.weightsBytes, Bytes(262144) * (256 - 64) * 2);

    // From 0.19.0 (PR #38270) CUDA-graph capture needs a Mamba block per sequence: more sequences than blocks fail
    // to start (vllm#49064: "max_num_seqs (1024) exceeds available Mamba cache blocks (969)"), not in eager mode.
    json many = doc;
    many["run"]["serving"]["max_num_seqs"] = 2000;
    QVERIFY(run(many).startupFails);
    QCOMPARE(run(many).failure.substr(0, 73),
        std::string("max_num_seqs (2000) exceeds available Mamba cache blocks (1487). Each dec"));
    many["run"]["serving"]["enforce_eager"] = true;
    QVERIFY(!run(many).startupFails);
    many["run"]["serving"]["enforce_eager"] = false;
    many["run"]["serving"]["engine_version"] = "0.18.0";
    QVERIFY(!run(many).startupFails);
    // From 0.20.0 (PR #38284; the official v0.20.0 image logs 0.9 as a non-default argument) an unset
    // gpu_memory_utilization is 0.92: the budget is 0.92 of the GPU, 0.9 when the run says so or before 0.20.0.
    json late = qwen35_27b({ { "engine", "vllm" }, { "engine_version", "0.20.0" }, { "max_model_len", 32768 } });
    const ServingEstimate at92 = run(late);
    QCOMPARE(at92.limiting().budgetBytes, Bytes(0.92 * double(at92.totalGpuBytes)));
    late["run"]["serving"]["engine_version"] = "0.19.1";
    QCOMPARE(run(late).limiting().budgetBytes, Bytes(0.9 * double(at92.totalGpuBytes)));
    late["run"]["serving"]["engine_version"] = "0.28.0";
    late["run"]["serving"]["gpu_memory_utilization"] = 0.9;
    QCOMPARE(run(late).limiting().budgetBytes, Bytes(0.9 * double(at92.totalGpuBytes)));
    QCOMPARE(scenarioToJson(readScenario(late))["run"]["serving"]["gpu_memory_utilization"], json(0.9));
    late["run"]["serving"].erase("gpu_memory_utilization");
    QVERIFY(!scenarioToJson(readScenario(late))["run"]["serving"].contains("gpu_memory_utilization"));

    // Prefix caching (mamba_cache_mode "align", 0.17.0 and later): two state blocks per linear group and request.
    doc["run"]["serving"]["enable_prefix_caching"] = true;
    e = run(doc);
    QCOMPARE(e.maxConcurrency, double(blocks) / (42 + 3 * 2));
    QCOMPARE(e.kvCacheTokens, Count(blocks / 4 * 784));
    doc["run"]["serving"]["engine_version"] = "0.16.0";
    try {
        run(doc);
        QFAIL("prefix caching before 0.17.0 accepted");
    } catch (const InputError& err) {
        QCOMPARE(err.keyPath(), std::string("run.serving.enable_prefix_caching"));
    }
    doc["run"]["serving"].erase("enable_prefix_caching");
    // Qwen3-Next arrived in 0.10.2; --kv-cache-memory-bytes is modelled from 0.14.0.
    doc["run"]["serving"]["engine_version"] = "0.10.2";
    try {
        run(doc);
        QFAIL("kv_cache_memory_bytes before 0.14.0 accepted");
    } catch (const InputError& err) {
        QCOMPARE(err.keyPath(), std::string("run.serving.kv_cache_memory_bytes"));
    }
    doc["run"]["serving"].erase("kv_cache_memory_bytes");
    QVERIFY(run(doc).limiting().kvCacheBytes > 0);
    doc["run"]["serving"]["engine_version"] = "0.10.1";
    try {
        run(doc);
        QFAIL("Gated DeltaNet before 0.10.2 accepted");
    } catch (const InputError& err) {
        QCOMPARE(err.keyPath(), std::string("run.serving.engine_version"));
    }
    // Tensor parallelism splits the value and the key heads: 12 divides the 24 query and 48 value heads (and
    // replicates the 4 KV heads), not the 16 key heads.
    doc["run"]["serving"]["engine_version"] = "0.19.0";
    doc["run"]["parallelism"] = { { "gpus", 2 }, { "tensor_parallel", 2 } };
    QCOMPARE(run(doc).limiting().statePerSequenceBytes, Bytes(48) * 3'207'168 / 2);
    doc["run"]["parallelism"] = { { "gpus", 12 }, { "tensor_parallel", 12 } };
    try {
        run(doc);
        QFAIL("tp 12 accepted");
    } catch (const InputError& err) {
        QCOMPARE(err.keyPath(), std::string("run.parallelism.tensor_parallel"));
        QVERIFY(err.expected().find("key heads") != std::string::npos);
    }

    // Qwen3.5's vision transformer: served only as vLLM's --language-model-only builds the model, without the tower
    // (its activations and vLLM's profiling of it on dummy images are not modelled).
    json tower = qwen35_27b({ { "engine", "vllm" }, { "engine_version", "0.19.0" }, { "max_model_len", 32768 } });
    const Bytes textWeights = run(tower).limiting().weightsBytes;
    tower["model"]["vision"] = { { "kind", "qwen-vit" }, { "hidden_size", 1152 }, { "intermediate_size", 4304 },
        { "num_layers", 27 }, { "num_heads", 16 }, { "patch_size", 16 }, { "temporal_patch_size", 2 },
        { "spatial_merge_size", 2 }, { "out_hidden_size", 5120 }, { "num_position_embeddings", 2304 } };
    QCOMPARE(refusedKey(tower), std::string("model.vision"));
    tower["run"]["serving"]["language_model_only"] = true;
    QCOMPARE(run(tower).limiting().weightsBytes, textWeights);
    tower["run"]["serving"]["engine_version"] = "0.16.0";
    QCOMPARE(refusedKey(tower), std::string("run.serving.engine_version"));
    json sglangTower = tower;
    sglangTower["run"]["serving"] = { { "engine", "sglang" }, { "engine_version", "0.5.4" } };
    QCOMPARE(refusedKey(sglangTower), std::string("model.vision"));
    json noTower
        = qwen35_27b({ { "engine", "vllm" }, { "engine_version", "0.19.0" }, { "language_model_only", true } });
    QCOMPARE(refusedKey(noTower), std::string("run.serving.language_model_only"));

    // SGLang keeps the conv state in the model dtype and the recurrent state in the config's mamba_ssm_dtype.
    const ServingEstimate sg = run(qwen35_27b({ { "engine", "sglang" }, { "engine_version", "0.5.4" } }));
    QCOMPARE(sg.limiting().statePerSequenceBytes, Bytes(48) * 3'207'168);
    // Training and one request's estimate are refused, naming the linear-attention layers.
    json training = qwen35_27b({});
    training["run"].erase("serving");
    training["run"]["mode"] = "training";
    try {
        validateScenario(readScenario(training));
        QFAIL("training accepted");
    } catch (const InputError& err) {
        QCOMPARE(err.keyPath(), std::string("model.ssm"));
        QVERIFY(err.expected().find("Gated DeltaNet") != std::string::npos);
    }
}

// vLLM's RowParallelLinear all-reduces each layer's attention and MLP output: 2 x layers x hidden x 2 B a token,
// 2 (tp - 1) / tp of it over each GPU's link, serial with the roofline's compute.
void TstServing::tensorParallelAllReduces()
{
    json doc = llama31Vllm("0.6.4", 4096);
    doc["run"]["gpu"] = "rtx-3090-24gb";
    doc["run"]["parallelism"] = { { "gpus", 2 }, { "tensor_parallel", 2 } };
    const Scenario sc = readScenario(doc);
    const ServingEstimate e = servingEstimate(sc.model, sc.run);
    const ServingSpeed s = servingSpeed(sc.model, sc.run, e, 8, 1000, 4096);
    QVERIFY(s.available);
    const double link = sc.run.gpu->interconnectGBs * 1e9;
    QVERIFY(link > 0);
    const double perToken = 64.0 * 2.0 * 0.5 * 4096.0 * 2.0 / link; // 32 layers x 2 all-reduces, tp 2
    QCOMPARE(s.decodeAllReduceS, perToken * 8);
    QCOMPARE(s.prefillAllReduceS, perToken * 1000);
    // On one GPU there is none, and the step is the roofline alone.
    json one = doc;
    one["run"]["parallelism"] = { { "gpus", 1 }, { "tensor_parallel", 1 } };
    const Scenario sc1 = readScenario(one);
    const ServingSpeed s1 = servingSpeed(sc1.model, sc1.run, servingEstimate(sc1.model, sc1.run), 8, 1000, 4096);
    QCOMPARE(s1.decodeAllReduceS, 0.0);
    QVERIFY(s.tpotS > s.decodeAllReduceS);
    QVERIFY(s.formula.find("tensor-parallel all-reduces") != std::string::npos);
}

namespace {

/// Gemma 3 27B's language model (62 layers, every 6th global, window 1024, 16 KV heads of 128) served by vLLM with
/// a fixed 40 GiB KV cache (--kv-cache-memory-bytes), max_model_len 32768, max_num_batched_tokens 8192.
json gemma27Vllm(const std::string& version)
{
    return { { "model",
                 { { "preset", "gemma-3-12b" }, { "num_layers", 62 }, { "hidden_size", 5376 }, { "num_heads", 32 },
                     { "num_kv_heads", 16 }, { "head_dim", 128 }, { "ffn_hidden_size", 21504 } } },
        { "run",
            { { "mode", "serving" }, { "gpu", "h100-sxm-80gb" },
                { "serving",
                    { { "engine", "vllm" }, { "engine_version", version }, { "max_model_len", 32768 },
                        { "max_num_batched_tokens", 8192 }, { "kv_cache_memory_bytes", 40 * kGiB } } } } } };
}

/// Llama 4 Scout's language model (tests/data/hf/llama-4-scout-17b-16e.json's text_config).
json scoutText(json serving, Count tp = 4)
{
    return { { "model",
                 { { "vocab_size", 202048 }, { "hidden_size", 5120 }, { "num_layers", 48 }, { "num_heads", 40 },
                     { "num_kv_heads", 8 }, { "head_dim", 128 }, { "ffn_hidden_size", 16384 },
                     { "max_position_embeddings", 10485760 }, { "sliding_window", 8192 },
                     { "global_layer_interval", 4 }, { "chunked_local_attention", true },
                     { "moe",
                         { { "num_experts", 16 }, { "top_k", 1 }, { "shared_experts", 1 },
                             { "expert_ffn_hidden_size", 8192 }, { "every_expert_every_token", true } } } } },
        { "run",
            { { "mode", "serving" }, { "gpu", "h100-sxm-80gb" },
                { "parallelism", { { "gpus", tp }, { "tensor_parallel", tp } } }, { "serving", serving } } } };
}

} // namespace

// vLLM V1's hybrid KV cache manager (PR #17996; kv_cache_utils.py get_kv_cache_config): Gemma 3 27B's 10 global
// and 52 sliding-window layers make 1 + 6 groups of 10 (8 padding layers); a page is 16 tokens x 16 heads x 128 x
// 2 x 2 B = 131,072 B, so 40 GiB hold 40 GiB / 131,072 / 10 = 32,768 blocks. A request at 32,768 tokens needs 2048
// blocks in the full group and cdiv(min(1023 + 8192, 32768), 16) + 1 = 577 in each window group: 5510.
void TstServing::vllmSlidingWindowGroups()
{
    // Without windows V1 counts whole blocks per request too (get_max_concurrency_for_kv_cache_config):
    // max_model_len 20,001 takes cdiv(20001, 16) = 1251 blocks; from 0.21.0 the size is that concurrency x L.
    {
        ServingEstimate u = run(llama31Vllm("0.20.0", 20001));
        const Count b = u.gpuBlocks.value_or(0);
        QVERIFY(b > 1251);
        QCOMPARE(u.maxConcurrency, double(b) / 1251.0);
        QCOMPARE(u.kvCacheTokens, b * 16);
        u = run(llama31Vllm("0.21.0", 20001));
        QCOMPARE(u.kvCacheTokens, Count(double(u.gpuBlocks.value_or(0)) / 1251.0 * 20001));
    }
    ServingEstimate e = run(gemma27Vllm("0.20.0"));
    QCOMPARE(e.gpuBlocks.value_or(0), Count(32768));
    QCOMPARE(e.kvCacheTokens, Count(32768 / 7 * 16)); // num_blocks // groups x block_size: 74,896
    QCOMPARE(e.maxConcurrency, 32768.0 / 5510.0);
    QVERIFY(!e.startupFails);
    QVERIFY(std::find(e.logLines.begin(), e.logLines.end(), "GPU KV cache size: 74,896 tokens") != e.logLines.end());
    // From 0.21.0 (PR #41069) the size is int(concurrency x max_model_len).
    e = run(gemma27Vllm("0.21.0"));
    QCOMPARE(e.kvCacheTokens, Count(194'871));
    // From 0.26.0 twice max_num_batched_tokens is in flight (PR #47728, async scheduling): 1089 blocks a window.
    e = run(gemma27Vllm("0.26.0"));
    QCOMPARE(e.maxConcurrency, 32768.0 / (2048.0 + 6 * 1089.0));
    QCOMPARE(e.kvCacheTokens, Count(125'115));
    QVERIFY_THROWS_EXCEPTION(InputError, run(gemma27Vllm("0.25.0"))); // not pinned
    // --no-async-scheduling (run.serving.async_scheduling false): one batch in flight, 0.20's 1025 blocks a window.
    {
        json sync = gemma27Vllm("0.26.0");
        sync["run"]["serving"]["async_scheduling"] = false;
        e = run(sync);
        QCOMPARE(e.maxConcurrency, 32768.0 / 5510.0);
        QVERIFY(std::none_of(e.warnings.begin(), e.warnings.end(),
            [](const std::string& w) { return w.find("assumed on") != std::string::npos; }));
        QCOMPARE(readScenario(sync).run.serving->asyncScheduling, std::optional<bool>(false));
        QCOMPARE(scenarioToJson(readScenario(sync))["run"]["serving"]["async_scheduling"], json(false));
    }
    // --disable-hybrid-kv-cache-manager: every layer full attention (ACCOUNTING_FACTS.md's worked example): 62 pages a
    // block, 5285 blocks, 84,560 tokens, 2048 blocks a request: 2.58x.
    {
        json off = gemma27Vllm("0.20.0");
        off["run"]["serving"]["disable_hybrid_kv_cache_manager"] = true;
        e = run(off);
        QCOMPARE(e.gpuBlocks.value_or(0), Count(5285));
        QCOMPARE(e.kvCacheTokens, Count(84'560));
        QCOMPARE(e.maxConcurrency, 5285.0 / 2048.0);
        QCOMPARE(scenarioToJson(readScenario(off))["run"]["serving"]["disable_hybrid_kv_cache_manager"], json(true));
        // A hybrid state-space model cannot start without the manager: refused, naming the flag.
        const json hybrid = { { "model", { { "preset", "qwen3-next-80b-a3b" } } },
            { "run",
                { { "mode", "serving" }, { "gpu", "h200-141gb" },
                    { "serving",
                        { { "engine", "vllm" }, { "engine_version", "0.17.0" }, { "max_model_len", 8192 },
                            { "disable_hybrid_kv_cache_manager", true } } } } } };
        QCOMPARE(refusedKey(hybrid), std::string("run.serving.disable_hybrid_kv_cache_manager"));
        off["run"]["serving"]["engine_version"] = "0.9.1"; // before the hybrid manager: refused, naming the flag
        off["run"]["serving"].erase("kv_cache_memory_bytes");
        off["run"]["serving"].erase("max_num_batched_tokens");
        QCOMPARE(refusedKey(off), std::string("run.serving.disable_hybrid_kv_cache_manager"));
    }
    // A decode step reads a local layer's window only: 52 layers x (32,768 - 1024) tokens x 8192 B fewer than if
    // every layer read the whole context.
    {
        const Scenario sc = readScenario(gemma27Vllm("0.20.0"));
        Scenario full = sc;
        full.model.slidingWindow = 0;
        const ServingSpeed windowed = servingSpeed(sc.model, sc.run, run(gemma27Vllm("0.20.0")), 1, 1024, 32768);
        const ServingSpeed whole
            = servingSpeed(full.model, full.run, servingEstimate(full.model, full.run), 1, 1024, 32768);
        QCOMPARE(whole.decodeBytes - windowed.decodeBytes, 52.0 * (32768 - 1024) * 8192);
    }
    // Before 0.9.2 (the V0-style accounting VRAM Lab models there) every layer is full: 62 pages a block.
    json v0 = gemma27Vllm("0.9.1");
    v0["run"]["serving"].erase("kv_cache_memory_bytes");
    v0["run"]["serving"].erase("max_num_batched_tokens"); // V0 without chunked prefill: at least max_model_len
    e = run(v0);
    QCOMPARE(e.gpuBlocks.value_or(0), e.limiting().kvCacheBytes / (62 * 131'072));
    // Pipeline stages of such a model are refused, naming the key.
    json pp = gemma27Vllm("0.20.0");
    pp["run"]["parallelism"] = { { "gpus", 2 }, { "pipeline_parallel", 2 } };
    QCOMPARE(refusedKey(pp), std::string("run.parallelism.pipeline_parallel"));
    // Too small a cache for one request: vLLM's check_enough_kv_cache_memory message.
    json small = gemma27Vllm("0.20.0");
    small["run"]["serving"]["kv_cache_memory_bytes"] = kGiB;
    e = run(small);
    QVERIFY(e.startupFails);
    QVERIFY2(e.failure.starts_with("To serve at least one request"), e.failure.c_str());
    // The fits count requests as the engine does: 5 of 32,768 tokens (5.95x), not blocks / 2048 = 16.
    {
        const Scenario sc = readScenario(gemma27Vllm("0.20.0"));
        const ServingFit f = maxConcurrency(sc.model, sc.run, 32768);
        QCOMPARE(f.value.value_or(0), Count(5));
    }
    // 0.9.2 is the first version VRAM Lab models as V1: the groups apply (10 pages a block, not 62).
    json v092 = gemma27Vllm("0.9.2");
    v092["run"]["serving"].erase("kv_cache_memory_bytes");
    e = run(v092);
    QCOMPARE(e.gpuBlocks.value_or(0), e.limiting().kvCacheBytes / (10 * 131'072));
    // Local and global counts closer than 1.5x (25 layers, every 2nd global: 13 and 12) are grouped by heuristics
    // of unpinned releases: refused, naming the key.
    json close = gemma27Vllm("0.20.0");
    close["model"]["num_layers"] = 25;
    close["model"]["global_layer_interval"] = 2;
    QCOMPARE(refusedKey(close), std::string("model.global_layer_interval"));
    close["model"]["num_layers"] = 24; // 12 and 12: one group size either way
    QCOMPARE(run(close).gpuBlocks.value_or(0), Count(40 * kGiB / 131'072 / 12));
    // A window in every layer (Mistral 7B v0.1: 32 layers, 8 KV heads, window 4096) is one group: the blocks are
    // the full model's, a request needs cdiv(4095 + 8192, 16) + 1 = 769 instead of 2048.
    json mistral = gemma27Vllm("0.20.0");
    mistral["model"] = { { "preset", "mistral-7b" } };
    e = run(mistral);
    const Count blocks = 40 * kGiB / (16 * 8 * 128 * 2 * 2) / 32;
    QCOMPARE(e.gpuBlocks.value_or(0), blocks);
    QCOMPARE(e.kvCacheTokens, blocks * 16);
    QCOMPARE(e.maxConcurrency, double(blocks) / 769.0);
    QCOMPARE(maxConcurrency(readScenario(mistral).model, readScenario(mistral).run, 32768).value.value_or(0),
        Count(blocks / 769));
    // From 0.21.0 the size is int(concurrency x max_model_len) here too; pipeline stages are each one group.
    mistral["run"]["serving"]["engine_version"] = "0.21.0";
    e = run(mistral);
    QCOMPARE(e.kvCacheTokens, Count(double(blocks) / 769.0 * 32768));
    mistral["run"]["parallelism"] = { { "gpus", 2 }, { "pipeline_parallel", 2 } };
    mistral["run"]["serving"].erase("kv_cache_memory_bytes");
    e = run(mistral);
    QCOMPARE(e.maxConcurrency, double(e.gpuBlocks.value_or(0)) / 769.0);
}

// Llama 4 in the engines: vLLM's chunked layers (ChunkedLocalAttentionSpec from 0.10.0: cdiv(min(C + X, L), 16)
// blocks, no extra block; full attention while VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to 0,
// 0.10.1-0.13.x), llama.cpp's hard-coded chunk, SGLang's versions.
void TstServing::llama4Engines()
{
    // TP 4: 2 KV heads per GPU, a page of 16 x 2 x 128 x 2 x 2 B = 16,384 B; 12 global and 36 chunked layers make
    // 1 + 3 groups of 12; 8 GiB hold 8 GiB / 16,384 / 12 = 43,690 blocks. At 131,072 tokens a request needs 8192
    // blocks in the global group and cdiv(8192 + 8192, 16) = 1024 in each chunked one.
    json v = { { "engine", "vllm" }, { "engine_version", "0.14.0" }, { "max_model_len", 131072 },
        { "max_num_batched_tokens", 8192 }, { "kv_cache_memory_bytes", 8 * kGiB } };
    ServingEstimate e = run(scoutText(v));
    QCOMPARE(e.gpuBlocks.value_or(0), Count(43'690));
    QCOMPARE(e.maxConcurrency, 43690.0 / (8192.0 + 3 * 1024.0));
    QCOMPARE(e.kvCacheTokens, Count(43'690 / 4 * 16));
    // 0.10.1-0.13.x: the environment variable's default disables the hybrid manager: 48 full layers.
    v["engine_version"] = "0.13.0";
    v.erase("kv_cache_memory_bytes");
    e = run(scoutText(v));
    QCOMPARE(e.gpuBlocks.value_or(0), e.limiting().kvCacheBytes / (48 * 16'384));
    QCOMPARE(e.maxConcurrency, double(e.kvCacheTokens) / 131072.0);
    // Prefill: a chunked layer's token at position q attends to q mod 8192 + 1 keys, 2 x 8192 x 8193 / 2 over a
    // 16,384-token prompt, where a sliding window of 8192 would give 16,384 x 8192.
    {
        v["kv_cache_memory_bytes"] = 8 * kGiB;
        v["engine_version"] = "0.14.0";
        const Scenario sc = readScenario(scoutText(v));
        Scenario sliding = sc;
        sliding.model.chunkedLocalAttention = false;
        const ServingEstimate est = servingEstimate(sc.model, sc.run);
        const double chunked = servingSpeed(sc.model, sc.run, est, 1, 16384, 16384).prefillFlops;
        const double window = servingSpeed(sliding.model, sliding.run, est, 1, 16384, 16384).prefillFlops;
        QCOMPARE(window - chunked, 2.0 * (2.0 * 5120) * 36 * (16384.0 * 8192 - 8192.0 * 8193) / 4);
        v.erase("kv_cache_memory_bytes");
        v["engine_version"] = "0.13.0";
    }
    // 0.10.0: the chunked layers' own spec before the environment variable existed.
    v["engine_version"] = "0.10.0";
    e = run(scoutText(v));
    QCOMPARE(e.gpuBlocks.value_or(0), e.limiting().kvCacheBytes / 16'384 / 12);
    v["engine_version"] = "0.8.2"; // before Llama 4
    QVERIFY_THROWS_EXCEPTION(InputError, run(scoutText(v)));
    // Training and generate() are refused with the reason.
    json train = scoutText(v);
    train["run"]["mode"] = "training";
    train["run"].erase("serving");
    try {
        validateScenario(readScenario(train));
        QFAIL("training was accepted");
    } catch (const InputError& err) {
        QVERIFY2(
            err.keyPath() == "model.moe.every_expert_every_token" || err.keyPath() == "model.chunked_local_attention",
            err.keyPath().c_str());
    }

    // llama.cpp (b5074 on; iSWA from b5429): 12 layers of n_ctx and 36 of pad(8192 + 512, 256) = 8704 cells.
    json l = { { "engine", "llama.cpp" }, { "engine_version", "b6000" }, { "n_ctx", 32768 }, { "flash_attn", true },
        { "n_gpu_layers", -1 } };
    e = run(scoutText(l, 1));
    const Bytes cell = 8 * 128 * 2; // K (or V) of one cell, f16
    QCOMPARE(e.kBytes, Bytes(12 * 32768 * cell + 36 * 8704 * cell));
    l["engine_version"] = "b5073";
    QVERIFY_THROWS_EXCEPTION(InputError, run(scoutText(l, 1)));
    l["engine_version"] = "b6000";
    json odd = scoutText(l, 1);
    odd["model"]["sliding_window"] = 4096; // llama.cpp hard-codes 8192
    QCOMPARE(refusedKey(odd), std::string("model.sliding_window"));

    // SGLang: from 0.4.5; the text-only model takes the full pool in every version, the one with its tower is
    // refused from 0.5.8 (a hybrid pool of swa_full_tokens_ratio, not modelled).
    json g = { { "engine", "sglang" }, { "engine_version", "0.5.8" }, { "context_length", 131072 } };
    e = run(scoutText(g));
    QCOMPARE(e.limiting().kvBytesPerToken, Bytes(48 * 2 * 128 * 2 * 2));
    g["engine_version"] = "0.4.4";
    QVERIFY_THROWS_EXCEPTION(InputError, run(scoutText(g)));
    // With its tower (Llama4ForConditionalGeneration) SGLang gives the chunked layers a hybrid pool from 0.5.8.
    g["engine_version"] = "0.5.8";
    json tower = scoutText(g);
    tower["model"]["vision"] = { { "kind", "llama4" }, { "hidden_size", 1408 }, { "intermediate_size", 5632 },
        { "num_layers", 34 }, { "num_heads", 16 }, { "image_size", 336 }, { "patch_size", 14 },
        { "projector_input_dim", 4096 }, { "out_hidden_size", 4096 } };
    QCOMPARE(refusedKey(tower), std::string("run.serving.engine_version"));
    tower["run"]["serving"]["engine_version"] = "0.5.7";
    QCOMPARE(run(tower).limiting().kvBytesPerToken, Bytes(48 * 2 * 128 * 2 * 2));
}

// SGLang lowers mem_fraction_static for a multimodal model by a rule that changed four times (serving_sglang.cpp
// sglangMultimodalFactor, from the tags' model_runner.py and server_args.py), and runs Gemma 3 text-only from v0.4.6
// unless launched with --enable-multimodal.
void TstServing::sglangMultimodalFactor()
{
    json doc = { { "model", { { "preset", "gemma-3-12b" } } },
        { "run",
            { { "mode", "serving" }, { "gpu", "h100-sxm-80gb" },
                { "serving", { { "engine", "sglang" }, { "engine_version", "0.4.9" } } } } } };
    // Gemma 3 4B's SigLIP tower: 27 layers of 1152.
    doc["model"]["vision"] = { { "hidden_size", 1152 }, { "intermediate_size", 4304 }, { "num_layers", 27 },
        { "num_heads", 16 }, { "image_size", 896 }, { "patch_size", 14 } };
    const auto budget = [&](const std::string& version, std::optional<double> mfs, bool multimodal) {
        json d = doc;
        d["run"]["serving"]["engine_version"] = version;
        if (mfs)
            d["run"]["serving"]["mem_fraction_static"] = *mfs;
        if (multimodal)
            d["run"]["serving"]["multimodal"] = true;
        const ServingEstimate e = run(d);
        return std::pair { e.limiting().budgetBytes, e.totalGpuBytes - e.limiting().nonTorchBytes };
    };
    const auto expect = [](Bytes preLoad, double mfs) {
        return preLoad - static_cast<Bytes>(static_cast<double>(preLoad) * (1.0 - mfs));
    };
    // The default fraction at TP 1 on an H100 is 0.874 at 0.4.9 (server_args.py: round((81,559 - 10,240) / 81,559)).
    auto [b, p] = budget("0.4.9", std::nullopt, false);
    QCOMPARE(b, expect(p, 0.874)); // Gemma 3 from v0.4.6: text-only by default, no factor
    QCOMPARE(budget("0.4.9", std::nullopt, true).first, expect(p, 0.874 * 0.90)); // --enable-multimodal
    QCOMPARE(budget("0.4.9", 0.8, true).first, expect(p, 0.8)); // from v0.4.9 only the default value is lowered
    QCOMPARE(budget("0.4.8", 0.8, true).first, expect(p, 0.8 * 0.90)); // before, any value
    QCOMPARE(budget("0.4.4.post4", 0.8, false).first, expect(p, 0.8 * 0.90)); // multimodal before v0.4.6
    QCOMPARE(budget("0.4.4.post3", 0.8, false).first, expect(p, 0.8 * 0.95));
    QCOMPARE(budget("0.4.4", 0.8, false).first, expect(p, 0.8 * 0.95));
    QCOMPARE(budget("0.4.9.post2", std::nullopt, true).first, expect(p, 0.874 * 0.90));
    // adjust_mem_fraction_for_vlm (v0.4.9.post3 on): 27 x 1152^2 / (24 x 1024^2) = 1.423828125, so
    // 0.95 x (1 - 0.1 x 0.423828125) = 0.909736328125.
    const double siglip = 0.95 * (1.0 - 0.1 * (27.0 * 1152.0 * 1152.0 / (24.0 * 1024.0 * 1024.0) - 1.0));
    QCOMPARE(siglip, 0.909736328125);
    QCOMPARE(budget("0.4.9.post3", std::nullopt, true).first, expect(p, 0.874 * siglip));
    QCOMPARE(budget("0.5.6", 0.8, true).first, expect(p, 0.8));
    // v0.5.18: the 100 MiB image-embedding cache comes out of the pool, whatever the fraction.
    json d = doc;
    d["run"]["serving"]["engine_version"] = "0.5.17";
    d["run"]["serving"]["mem_fraction_static"] = 0.8;
    d["run"]["serving"]["multimodal"] = true;
    const Bytes before = run(d).limiting().kvCacheBytes;
    d["run"]["serving"]["engine_version"] = "0.5.18";
    QCOMPARE(run(d).limiting().kvCacheBytes, before - 100 * kMiB);
    // Without the tower's shape the v0.4.9.post3 factor cannot be computed: refused, naming model.vision.
    d = doc;
    d["model"].erase("vision");
    d["run"]["serving"]["engine_version"] = "0.5.6";
    d["run"]["serving"]["multimodal"] = true;
    QCOMPARE(refusedKey(d), std::string("model.vision"));
    d["run"]["serving"]["mem_fraction_static"] = 0.8; // an explicit fraction is not lowered: no shape needed
    QCOMPARE(run(d).limiting().budgetBytes, expect(run(d).totalGpuBytes - run(d).limiting().nonTorchBytes, 0.8));

    // Llama 4 with its tower: SGLang builds the tower from v0.4.5.post1, and from v0.4.9.post4 only with
    // --enable-multimodal (mllama4.py, PR #8272); it is not TP-sharded, so each rank holds its 871,932,416 x 2 B.
    const auto scout = [](const std::string& version, bool multimodal) {
        json serving = { { "engine", "sglang" }, { "engine_version", version }, { "mem_fraction_static", 0.85 } };
        if (multimodal)
            serving["multimodal"] = true;
        const json doc = { { "model", { { "preset", "llama-4-scout" } } },
            { "run",
                { { "mode", "serving" }, { "gpu", "h100-sxm-80gb" },
                    { "parallelism", { { "gpus", 4 }, { "tensor_parallel", 4 } } }, { "serving", serving } } } };
        return run(doc).limiting().weightsBytes;
    };
    const Bytes tower = Bytes(871'932'416) * 2;
    QCOMPARE(scout("0.5.6", true) - scout("0.5.6", false), tower); // not built by default from 0.4.9.post4
    QCOMPARE(scout("0.4.9", false), scout("0.5.6", true)); // built by default before
    QCOMPARE(scout("0.4.5", false), scout("0.5.6", false)); // v0.4.5 builds the language model only
}

// SGLang's default --mem-fraction-static by release (server_args.py; the worked examples of ACCOUNTING_FACTS.md, each
// computed by running that tag's code): a table by tensor parallel size to 0.4.5.post2, a reserve by GPU size class
// from 0.4.7.post1, one from chunked prefill, CUDA-graph batch and ranks from 0.5.3, plus prefill graphs from 0.5.10.
void TstServing::sglangDefaultMemFraction()
{
    const auto mfs = [](const std::string& gpu, Count tp, const std::string& version) {
        const json doc = { { "model", { { "preset", "llama-3-8b" } } },
            { "run",
                { { "mode", "serving" }, { "gpu", gpu },
                    { "parallelism", { { "gpus", tp }, { "tensor_parallel", tp } } },
                    { "serving", { { "engine", "sglang" }, { "engine_version", version } } } } } };
        const ServingEstimate e = run(doc);
        const Bytes preLoad = e.totalGpuBytes - e.limiting().nonTorchBytes;
        return static_cast<double>(e.limiting().budgetBytes) / static_cast<double>(preLoad);
    };
    const auto near = [](double got, double want) { return std::abs(got - want) < 1e-9; };
    struct Row {
        const char* gpu;
        Count tp;
        const char* version;
        double want;
    };
    const Row rows[] = {
        { "h100-sxm-80gb", 1, "0.4.5", 0.88 }, // the v0.4.0 table, whatever the GPU
        { "h100-sxm-80gb", 8, "0.4.5", 0.81 },
        { "h100-sxm-80gb", 8, "0.3.5", 0.83 },
        { "h200-141gb", 1, "0.4.6", (143771.0 - 13 * 1024) / 143771.0 }, // 0.4.5.post3: 13 GiB on large GPUs
        { "h100-sxm-80gb", 1, "0.4.9", 0.874 },
        { "h100-sxm-80gb", 8, "0.4.9", 0.831 },
        { "h200-141gb", 1, "0.4.9", 0.911 },
        { "h200-141gb", 8, "0.4.9", 0.886 },
        { "rtx-4090-24gb", 1, "0.4.9", 0.879 },
        { "rtx-4090-24gb", 8, "0.4.9", 0.850 },
        { "a100-40gb", 1, "0.4.9", 0.750 },
        { "a100-40gb", 8, "0.4.9", 0.662 },
        { "h100-sxm-80gb", 1, "0.5.6", 0.835 },
        { "h100-sxm-80gb", 8, "0.5.6", 0.818 },
        { "h100-sxm-80gb", 1, "0.5.18", 0.830 },
        { "h100-sxm-80gb", 8, "0.5.18", 0.812 },
        { "h200-141gb", 1, "0.5.18", 0.903 },
        { "h200-141gb", 8, "0.5.18", 0.893 },
        { "rtx-4090-24gb", 1, "0.5.18", 0.833 },
        { "rtx-4090-24gb", 8, "0.5.18", 0.792 },
        { "a100-40gb", 1, "0.5.18", 0.823 },
        { "a100-40gb", 8, "0.5.18", 0.795 },
    };
    for (const Row& r : rows) {
        const double got = mfs(r.gpu, r.tp, r.version);
        QVERIFY2(near(got, r.want),
            (std::string(r.gpu) + " TP " + std::to_string(r.tp) + " " + r.version + ": " + std::to_string(got))
                .c_str());
    }
}

QTEST_APPLESS_MAIN(TstServing)
#include "tst_serving.moc"
