// SPDX-License-Identifier: MIT
// Framework behaviours, hand-computed: each loss's tensors and transients, torchtitan's
// selective-op save list, fused and in-backward optimizers, and the new keys' reading,
// errors and round trip. The source each number follows is cited next to it.
#include "test_scenarios.h"
#include "vramlab/activation_model.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/flops_model.h"
#include "vramlab/pipeline_schedule.h"
#include "vramlab/scenario_fields.h"
#include "vramlab/scenario_io.h"
#include "vramlab/step_timeline.h"

#include <QtTest>

using namespace vramlab;
using nlohmann::json;

namespace {

/// A toy model whose bytes are easy to add by hand: vocab 1000, hidden 64, 2 layers,
/// 4 heads of 16, 2 KV heads, SwiGLU 128, RMSNorm, RoPE; micro-batch 2 x 16 tokens, mixed-bf16.
Scenario toy(const json& runExtra = json::object(), const json& modelExtra = json::object())
{
    json doc = json::parse(R"({"format": "vramlab.scenario", "version": 1, "name": "toy",
        "model": {"vocab_size": 1000, "hidden_size": 64, "num_layers": 2, "num_heads": 4, "num_kv_heads": 2,
                  "ffn_hidden_size": 128, "mlp": "swiglu", "norm": "rmsnorm", "position": "rope"},
        "run": {"sequence_length": 16, "micro_batch_size": 2, "precision": "mixed-bf16", "attention": "flash"}})");
    doc["run"].update(runExtra);
    doc["model"].update(modelExtra);
    return readScenario(doc);
}

/// Both layers, the embedding and the head on one GPU.
ActivationSet acts(const Scenario& sc)
{
    return trainingActivations(sc.model, sc.run, StageSlice { 2, 0, true, true });
}

Bytes tensorBytes(const ActivationSet& s, std::string_view name)
{
    Bytes b = 0;
    for (const ActivationTensor& t : s.tensors)
        if (t.name == name)
            b += t.total();
    return b;
}

InputError refusal(const json& runExtra)
{
    try {
        const Scenario sc = toy(runExtra);
        (void)estimate(sc);
    } catch (const InputError& e) {
        return e;
    }
    return InputError("", "no error");
}

} // namespace

class TstFrameworks : public QObject {
    Q_OBJECT
private slots:
    void upcastIsTodaysLoss();
    void nativeLoss();
    void torchtuneChunked();
    void litgptChunked();
    void ligerFused();
    void selectiveOp();
    void fusedOptimizerHasNoTemporaries();
    void optimizerInBackward();
    void parallelBlocks();
    void qloraAsLitgptRunsIt();
    void qloraAsTorchtuneRunsIt();
    void keysRoundTrip();
    void badKeysNamed();
    void compiledBlocks();
    void compiledTorchtuneLoss();
    void compileRefusedWhereNotModelled();
    void dtensorLossParallel();
    void sequenceParallelKeepsGatheredInputs();
    void torchtuneActivationOffloading();
    void torchaoFloat8();
    void torchtitanCompiledLoss();
    void fp8AllGather();
    void fsdp1FlatParameters();
    void litgptMixedKeepsTheModelFp32();
    void loraAsPeftRunsIt();
    void doraAsPeftRunsIt();
    void qloraAsPeftPreparesIt();
    void megatronPrecisionAwareOptimizer();
    void megatronAsTransformerEngineRunsIt();
    void zeroAsDeepSpeedRunsIt();
    void firstLayersCheckpointed();
    void cohereLayerNorm();
    void interleavedPipeline();
    void fsdpInsidePipelining();
    void asyncTensorParallel();
    void deepSpeedZero3Gathers();
    void sftTrainerTokenAccuracy();
};

// 32 tokens x 1000 vocabulary = 32,000 logits.
void TstFrameworks::upcastIsTodaysLoss()
{
    const ActivationSet a = acts(toy());
    QCOMPARE(tensorBytes(a, "log-softmax of the logits (fp32)"), Bytes(128'000));
    QCOMPARE(a.lossForwardBytes, Bytes(32'000 * (2 + 4))); // bf16 logits + fp32 copy
    QCOMPARE(a.lossBackwardBytes, Bytes(32'000 * 8)); // two fp32 gradients
    QCOMPARE(a.lossHeldBytes, Bytes(0));
}

// cross_entropy on 16-bit logits (lit-gpt chunked_cross_entropy with chunk_size=0@8641822).
void TstFrameworks::nativeLoss()
{
    const ActivationSet a = acts(toy({ { "loss", "native" } }));
    QCOMPARE(tensorBytes(a, "log-softmax of the logits (16-bit)"), Bytes(64'000));
    QCOMPARE(a.lossForwardBytes, Bytes(64'000));
    QCOMPARE(a.lossBackwardBytes, Bytes(128'000));
}

// torchtune CEWithChunkedOutputLoss@1814feb, 8 chunks of ceil(16/8) = 2 positions x 2 rows = 4 tokens:
// every chunk's fp32 log-softmax kept (32 x 1000 x 4), all bf16 logits + one chunk's fp32 copy in forward.
void TstFrameworks::torchtuneChunked()
{
    const ActivationSet a = acts(toy({ { "framework", "torchtune" } }));
    QCOMPARE(tensorBytes(a, "log-softmax of every chunk (fp32, all kept for backward)"), Bytes(128'000));
    QCOMPARE(tensorBytes(a, "cross-entropy total weight of a chunk (scalar)"), Bytes(8 * 4));
    QCOMPARE(a.lossForwardBytes, Bytes(64'000 + 4 * 1000 * 4));
    QCOMPARE(a.lossBackwardBytes, Bytes(4 * 1000 * 8));
    QCOMPARE(a.lossHeldBytes, Bytes(0));
}

// lit-gpt@8641822: 128-token lm_head chunks, last position dropped, logits kept through backward;
// Lightning Fabric's convert_output (lightning@71aed75 fabric/wrappers.py, plugins/precision/half.py) hands every
// chunk back as an fp32 copy, so the log-softmaxes, the held logits and the gradients are fp32.
// 300 tokens x 2 rows: chunks of 256 tokens, 598 loss rows.
void TstFrameworks::litgptChunked()
{
    const ActivationSet a = acts(toy({ { "framework", "litgpt" }, { "sequence_length", 300 } }));
    QCOMPARE(tensorBytes(a, "log-softmax of every chunk (fp32, all kept for backward)"), Bytes(598 * 1000 * 4));
    QCOMPARE(tensorBytes(a, "cross-entropy total weight of a chunk (scalar)"), Bytes(3 * 4));
    QCOMPARE(a.lossHeldBytes, Bytes(600 * 1000 * 4));
    QCOMPARE(a.lossForwardBytes, Bytes(0));
    QCOMPARE(a.lossBackwardBytes, Bytes(256 * 1000 * 4 * 2));
    // lit_gpt/rmsnorm.py@8641822 keeps its input in bf16, not an fp32 copy.
    QCOMPARE(tensorBytes(a, "final norm: input"), Bytes(600 * 64 * 2));
    QCOMPARE(tensorBytes(a, "final norm: fp32 input"), Bytes(0));
    // "fp32" names the same conversion; the 16-bit type is the bare module's chunks (no Fabric).
    const ActivationSet same
        = acts(toy({ { "framework", "litgpt" }, { "sequence_length", 300 }, { "loss_dtype", "fp32" } }));
    QCOMPARE(same.lossHeldBytes, a.lossHeldBytes);
    QCOMPARE(same.lossForwardBytes, Bytes(0)); // no torchtune-style per-chunk upcast
    const ActivationSet bare
        = acts(toy({ { "framework", "litgpt" }, { "sequence_length", 300 }, { "loss_dtype", "bf16" } }));
    QCOMPARE(tensorBytes(bare, "log-softmax of every chunk (16-bit, all kept for backward)"), Bytes(598 * 1000 * 2));
    QCOMPARE(bare.lossHeldBytes, Bytes(600 * 1000 * 2));
    QCOMPARE(bare.lossBackwardBytes, Bytes(256 * 1000 * 2 * 2));
    // run.loss "native" under litgpt: cross_entropy on Fabric's fp32 logits, no upcast of its own.
    const ActivationSet native
        = acts(toy({ { "framework", "litgpt" }, { "sequence_length", 300 }, { "loss", "native" } }));
    QCOMPARE(tensorBytes(native, "log-softmax of the logits (fp32, as Fabric returned them)"), Bytes(600 * 1000 * 4));
    QCOMPARE(native.lossHeldBytes, Bytes(600 * 1000 * 4));
    QCOMPARE(native.lossBackwardBytes, Bytes(600 * 1000 * 8));
}

// Liger fused_linear_cross_entropy.py@e11c2d6: inc_factor = cdiv(1000, 64) = 16,
// chunk = next_pow2(cdiv(32, 16)) = 2 rows; saves grad_input (32 x 64) and grad_weight (1000 x 64).
void TstFrameworks::ligerFused()
{
    const ActivationSet a = acts(toy({ { "loss", "fused" } }));
    QCOMPARE(tensorBytes(a, "gradient of the LM head input (computed in forward)"), Bytes(32 * 64 * 2));
    QCOMPARE(tensorBytes(a, "gradient of the LM head weight (computed in forward)"), Bytes(1000 * 64 * 2));
    QCOMPARE(tensorBytes(a, "LM head input (final norm output)"), Bytes(0));
    QCOMPARE(a.lossForwardBytes, Bytes(2 * 1000 * (2 + 4) + 32 * 4));
    QCOMPARE(a.lossBackwardBytes, Bytes(0));
}

// torchtitan parallelize_llama.py@9dec370 _save_list: per block the input, wq, wv, w1, w2 outputs
// and SDPA's O and log-sum-exp. 32 tokens: 4096 + 4096 + 2048 + 8192 + 4096 + 4096 + 512 B.
void TstFrameworks::selectiveOp()
{
    const Scenario sc = toy({ { "framework", "torchtitan" }, { "checkpointing", "selective-op" } });
    const ActivationSet a = acts(sc);
    const Bytes perLayer = 4096 + 4096 + 2048 + 4096 + 512 + 8192 + 4096;
    QCOMPARE(a.bytes - a.embeddingBytes - a.headBytes, 2 * perLayer);
    // Rebuilt in backward: torchtitan's whole block (model.py@9dec370: fp32 RMSNorm copies, K and V
    // repeated to 4 heads, the contiguous copy read by wo) minus the reused O, log-sum-exp and w1 output.
    const Bytes norm = 32 * 64 * 4 + 32 * 4 + 32 * 64 * 2;
    const Bytes block = norm + 4096 /*qkv input*/ + 3 * 4096 /*Q, K, V*/ + 4096
        + 512 /*O, lse*/ + 4096 /*wo input*/ + norm + 4096 /*MLP input*/ + 4 * 8192;
    QCOMPARE(a.recomputeBytes, block - (4096 + 512 + 8192));
    const Report rep = estimate(sc);
    QCOMPARE(rep.stepInputs.recompute, a.recomputeBytes);
    // Refused where the save list's mm count does not describe the block.
    QCOMPARE(refusal({ { "checkpointing", "selective-op" }, { "attention", "eager" } }).keyPath(),
        std::string("run.checkpointing"));
}

void TstFrameworks::fusedOptimizerHasNoTemporaries()
{
    // Toy parameters: embedding 64,000 + 2 x (q 4,096 + k 2,048 + v 2,048 + o 4,096 + 3 x 8,192 + norms 128)
    // + final norm 64 + LM head 64,000 = 202,048; foreach AdamW's sqrt(v) list is fp32: 4 B each.
    const Report foreach = estimate(toy());
    const Report fused = estimate(toy({ { "optimizer_impl", "fused" } }));
    QCOMPARE(foreach.stepInputs.optimizerTemporaries, Bytes(202'048 * 4));
    QCOMPARE(fused.stepInputs.optimizerTemporaries, Bytes(0));
    QVERIFY(fused.peak < foreach.peak);
    // DeepSpeed's and Megatron's profiles default to fused Adam.
    QCOMPARE(estimate(toy({ { "framework", "deepspeed" } })).stepInputs.optimizerTemporaries, Bytes(0));
}

// The hand case of tst_timeline (start 310 B, 4 layers of 10 B) with optimizer in backward:
// the last layer's backward holds 3 B working set + its 25 B of gradients + 10 B of step
// temporaries on 351 B alive: 389 B, and no step at the end.
void TstFrameworks::optimizerInBackward()
{
    StepInputs in = test::handStep();
    in.optimizerTemporaries = 40;
    in.optimizerInBackward = true;
    const StepTimeline t = simulateStep(in, 2);
    QCOMPARE(t.peak, Bytes(389));
    QCOMPARE(t.atPeak.layer, Count(3));
    QCOMPARE(t.events.back().total(), Bytes(310));
    QCOMPARE(refusal({ { "optimizer_in_backward", true }, { "gradient_accumulation_steps", 2 } }).keyPath(),
        std::string("run.optimizer_in_backward"));
}

// lit_gpt/model.py@8641822 Block with parallel_residual and shared_attention_norm: the MLP reads
// norm_1's output, so a layer keeps no pre-MLP norm (fp32 input 32 x 64 x 4, rsqrt 32 x 4,
// normalized 32 x 64 x 2) and no separate MLP input (32 x 64 x 2): 16,512 B less per layer.
void TstFrameworks::parallelBlocks()
{
    json doc = json::parse(R"({"format": "vramlab.scenario", "version": 1, "name": "toy",
        "model": {"vocab_size": 1000, "hidden_size": 64, "num_layers": 2, "num_heads": 4, "num_kv_heads": 2,
                  "ffn_hidden_size": 128, "mlp": "swiglu", "norm": "rmsnorm", "position": "rope"},
        "run": {"sequence_length": 16, "micro_batch_size": 2, "precision": "mixed-bf16", "attention": "flash"}})");
    const ActivationSet sequential = acts(readScenario(doc));
    doc["model"]["parallel_residual"] = true;
    doc["model"]["shared_attention_norm"] = true;
    const Scenario shared = readScenario(doc);
    QCOMPARE(sequential.bytes - acts(shared).bytes, Bytes(2 * (8192 + 128 + 4096 + 4096)));
    QCOMPARE(
        estimate(readScenario(doc)).params.total + 2 * 64, estimate(toy()).params.total); // one norm fewer per layer
    const Scenario back = readScenario(scenarioToJson(shared));
    QVERIFY(back.model.parallelResidual && back.model.sharedAttentionNorm);
    doc["model"]["parallel_residual"] = false;
    try {
        (void)readScenario(doc);
        QFAIL("a shared norm without a parallel block was accepted");
    } catch (const InputError& e) {
        QCOMPARE(e.keyPath(), std::string("model.shared_attention_norm"));
    }
}

// lit-gpt@8641822 QLoRA: Lightning's BitsandbytesPrecision quantizes every nn.Linear, the LM head
// too; bitsandbytes' NF4 without double quantization keeps an fp32 scale per 64 weights; MatMul4Bit
// (bitsandbytes@0.41.0) keeps each NF4 linear's input; PagedAdamW keeps fp32 states.
void TstFrameworks::qloraAsLitgptRunsIt()
{
    const json qlora = { { "framework", "litgpt" }, { "precision", "bf16" }, { "optimizer_impl", "paged-32bit" },
        { "finetune",
            { { "method", "qlora" }, { "rank", 8 }, { "targets", { "q", "v" } }, { "dropout", 0.0 },
                { "double_quant", false }, { "quantize_lm_head", true } } } };
    const Scenario sc = toy(qlora);
    const Report rep = estimate(sc);
    // Linear weights: 2 x (4,096 + 2,048 + 2,048 + 4,096 + 3 x 8,192) + LM head 64,000 = 137,728, each
    // 0.5 B + 4 B per 64; embedding 64,000 and norms 2 x 2 x 64 + 64 in bf16.
    const Bytes nf4 = 137'728 / 2 + (2 * (64 + 32 + 32 + 64 + 3 * 128) + 1000) * 4;
    QCOMPARE(rep.component("weights")->bytes - (64'000 + 320) * 2 - rep.loraParams * 2, nf4);
    QCOMPARE(rep.component("optimizer_states")->bytes, rep.loraParams * 8); // fp32 m and v
    QCOMPARE(rep.stepInputs.optimizerTemporaries, Bytes(0));
    // Kept inputs: the qkv input 32 x 64 x 2 in both layers (lora_A reads it without dropout; in
    // layer 2 the NF4 qkv keeps the same tensor), the MLP input 32 x 64 x 2 and the down input
    // 32 x 128 x 2 in both layers (NF4 gate/up and down), and the NF4 LM head's input 32 x 64 x 2.
    const ActivationSet a = acts(sc);
    auto bytes = [&](std::string_view name) {
        Bytes b = 0;
        for (const ActivationTensor& t : a.tensors)
            b += t.name == name ? t.total() : 0;
        return b;
    };
    QCOMPARE(bytes("attention input (norm output, read by q/k/v)"), Bytes(2 * 4096));
    QCOMPARE(bytes("MLP input (norm output)"), Bytes(2 * 4096));
    QCOMPARE(bytes("gated product (down_proj input)"), Bytes(2 * 8192));
    QCOMPARE(bytes("LM head input (final norm output)"), Bytes(4096));
    // The same run as LoRA on a bf16 base keeps only the qkv inputs (for lora_A).
    json lora = qlora;
    lora["finetune"] = { { "method", "lora" }, { "rank", 8 }, { "targets", { "q", "v" } }, { "dropout", 0.0 } };
    lora.erase("optimizer_impl");
    const ActivationSet b = acts(toy(lora));
    QCOMPARE(a.bytes - b.bytes, Bytes(2 * 4096 + 2 * 8192 + 4096));
    QCOMPARE(refusal({ { "finetune", { { "method", "lora" }, { "quantize_lm_head", true } } } }).keyPath(),
        std::string("run.finetune.quantize_lm_head"));
    QCOMPARE(refusal({ { "optimizer", "sgd" }, { "optimizer_impl", "paged-32bit" } }).keyPath(),
        std::string("run.optimizer_impl"));
}

// torchtune@1814feb QLoRA (modules/low_precision/nf4_linear.py, modules/peft/lora.py): torchao's NF4Tensor
// (torchao/dtypes/nf4tensor.py@77ca57d16844, to_nf4(block_size=64, scaler_block_size=256)) holds per weight
// of n elements n/2 B of codes, n/64 B of int8 scales, 2 B per 256 scales, a 2 B scaler mean and a 32 B
// table; LinearNF4 saves only the weight; get_original_weight's locals hold 14 B per element eagerly.
void TstFrameworks::qloraAsTorchtuneRunsIt()
{
    const json model = { { "hidden_size", 256 }, { "ffn_hidden_size", 512 } };
    const json qlora = { { "framework", "torchtune" }, { "precision", "bf16" }, { "loss", "upcast" },
        { "finetune", { { "method", "qlora" }, { "rank", 8 }, { "targets", { "q", "v" } }, { "dropout", 0.0 } } } };
    const Scenario sc = toy(qlora, model);
    QVERIFY(!sc.run.finetune.quant); // unset: torchtune's torchao-nf4
    const Report rep = estimate(sc);
    // Per layer q 65,536, k and v 32,768, o 65,536 and gate/up/down 131,072 elements:
    // 2 x 33,834 + 2 x 16,934 + 3 x 67,634 B (e.g. q: 32,768 + 1,024 + 4 x 2 + 2 + 32).
    const Bytes perLayer = 2 * 33'834 + 2 * 16'934 + 3 * 67'634;
    QCOMPARE(perLayer, Bytes(304'438));
    // Embedding and head 2 x 256,000 and the norms 5 x 256 stay bf16; the adapters are bf16.
    QCOMPARE(rep.bytesOf("weights") - 2 * (512'000 + 5 * 256) - rep.loraParams * 2, 2 * perLayer);
    auto dequant = [](const Report& r) {
        for (const Component& c : r.overheadParts)
            if (c.key == std::string_view("dequant"))
                return c.bytes;
        return Bytes(0);
    };
    QCOMPARE(dequant(rep), Bytes(14 * 131'072)); // eager: the largest weight, gate/up/down
    json compiled = qlora;
    compiled["compile"] = true;
    QCOMPARE(dequant(estimate(toy(compiled, model))), Bytes(2 * 131'072));
    // bitsandbytes' format on the same run: an fp32 absmax per 256 scales, no table or mean.
    json bnb = qlora;
    bnb["finetune"]["quant"] = "bnb-nf4";
    const Report b = estimate(toy(bnb, model));
    // Per layer (torchao - bnb): q and o 2 x (42 - 16), k and v 2 x (38 - 8), gate/up/down 3 x (50 - 32).
    QCOMPARE(rep.bytesOf("weights") - b.bytesOf("weights"), Bytes(2 * (2 * (42 - 16) + 2 * (38 - 8) + 3 * (50 - 32))));
    QCOMPARE(dequant(b), Bytes(2 * 131'072));
    // LinearNF4 keeps no input: the same saved tensors as LoRA on a bf16 base.
    json lora = qlora;
    lora["finetune"]["method"] = "lora";
    QCOMPARE(acts(sc).bytes, acts(toy(lora, model)).bytes);
    // The key is written back only when set, and read back as written.
    QVERIFY(!readScenario(scenarioToJson(sc)).run.finetune.quant);
    QVERIFY(*readScenario(scenarioToJson(toy(bnb, model))).run.finetune.quant == Nf4Format::Bitsandbytes);
    // What to_nf4 asserts, and what torchao's format cannot say: named refusals.
    QCOMPARE(refusal({ { "framework", "torchtune" }, { "finetune", { { "method", "qlora" } } } }).keyPath(),
        std::string("run.finetune.quant")); // the 64-wide toy: q has 4,096 elements
    json head = qlora;
    head["finetune"]["quantize_lm_head"] = true; // 256,000 elements
    try {
        (void)estimate(toy(head, model));
        QFAIL("an LM head of 256,000 elements was quantized with torchao");
    } catch (const InputError& e) {
        QCOMPARE(e.keyPath(), std::string("run.finetune.quant"));
        QVERIFY(std::string(e.what()).find("head") != std::string::npos);
    }
    json noDq = qlora;
    noDq["finetune"]["double_quant"] = false;
    try {
        (void)estimate(toy(noDq, model));
        QFAIL("torchao NF4 without double quantization was accepted");
    } catch (const InputError& e) {
        QCOMPARE(e.keyPath(), std::string("run.finetune.double_quant"));
    }
    QCOMPARE(refusal({ { "finetune", { { "method", "lora" }, { "quant", "bnb-nf4" } } } }).keyPath(),
        std::string("run.finetune.quant"));
}

void TstFrameworks::keysRoundTrip()
{
    const Scenario sc = toy({ { "framework", "litgpt" }, { "loss", "chunked" }, { "loss_chunks_tokens", 64 },
        { "loss_dtype", "bf16" }, { "optimizer_impl", "fused" }, { "optimizer_in_backward", true },
        { "checkpointing", "selective-op" }, { "compile", false } });
    const Scenario back = readScenario(scenarioToJson(sc));
    QVERIFY(back.run.framework == Framework::Litgpt);
    QVERIFY(*back.run.loss == LossKind::Chunked);
    QCOMPARE(*back.run.lossChunkTokens, Count(64));
    QVERIFY(*back.run.lossDtype == DType::Bf16);
    QVERIFY(*back.run.optimizerImpl == OptimizerImpl::Fused);
    QVERIFY(back.run.optimizerInBackward);
    QVERIFY(back.run.checkpointing.kind == Checkpointing::Kind::SelectiveOp);
    // Unset keys stay unset, so the framework keeps choosing them.
    const Scenario plain = readScenario(scenarioToJson(toy({ { "framework", "torchtune" } })));
    QVERIFY(!plain.run.loss && !plain.run.optimizerImpl && !plain.run.lossChunks);
    const Scenario fsdp = readScenario(scenarioToJson(toy({ { "parallelism",
        { { "gpus", 8 }, { "zero_stage", 3 }, { "sharding", "fsdp2" },
            { "reshard_after_forward", "all but last block" } } } })));
    QVERIFY(fsdp.run.parallelism.fsdp2() && fsdp.run.keepLastBlockGathered);
}

void TstFrameworks::badKeysNamed()
{
    QCOMPARE(refusal({ { "framework", "jax" } }).keyPath(), std::string("run.framework"));
    QCOMPARE(refusal({ { "loss", "focal" } }).keyPath(), std::string("run.loss"));
    QCOMPARE(refusal({ { "loss_chunks", 4 } }).keyPath(), std::string("run.loss_chunks"));
    QCOMPARE(refusal({ { "loss", "chunked" }, { "loss_chunks", 4 }, { "loss_chunks_tokens", 128 } }).keyPath(),
        std::string("run.loss_chunks_tokens"));
    QCOMPARE(refusal({ { "loss", "chunked" }, { "loss_dtype", "fp16" } }).keyPath(), std::string("run.loss_dtype"));
    QCOMPARE(refusal({ { "compile", true } }).keyPath(), std::string("run.compile"));
    QCOMPARE(refusal({ { "activation_offloading", true } }).keyPath(), std::string("run.activation_offloading"));
    QCOMPARE(refusal({ { "parallelism", { { "context_parallel", 2 } } } }).keyPath(),
        std::string("run.parallelism.context_parallel"));
    QCOMPARE(
        refusal({ { "parallelism", { { "async_tp", true } } } }).keyPath(), std::string("run.parallelism.async_tp"));
    QCOMPARE(refusal({ { "finetune", { { "method", "qlora" }, { "quant", "gptq" } } } }).keyPath(),
        std::string("run.finetune.quant"));
}

// torch.compile (kCompileRule, torch/_functorch/partitioners.py@c28ba8e): per layer the two RMSNorms
// keep their 16-bit input (2 B x 2048, b s h = 2 x 16 x 64) instead of an fp32 copy (4 B) and the
// normalized tensor (2 B), and SwiGLU's SiLU output (2 B x b s ffn = 2 x 4096) is rebuilt.
void TstFrameworks::compiledBlocks()
{
    const ActivationSet eager = acts(toy({ { "framework", "torchtune" }, { "loss", "upcast" } }));
    const ActivationSet compiled
        = acts(toy({ { "framework", "torchtune" }, { "loss", "upcast" }, { "compile", true } }));
    // Two layers x (2 norms x (4 + 2 - 2) B x 2048 + 2 B x 4096) = 49,152 B fewer in the layers;
    // the compiled loss keeps its fp32 input instead of the log-softmax, plus 2 x 4 B per token (+256 B),
    // and no longer nll_loss's 4-byte total weight.
    QCOMPARE(eager.bytes - compiled.bytes, Bytes(49'152 - 256 + 4));
    QCOMPARE(tensorBytes(compiled, "input norm: input (16-bit, kept by the compiled block)"), Bytes(2 * 4096));
    QCOMPARE(tensorBytes(compiled, "pre-MLP norm: input (16-bit, kept by the compiled block)"), Bytes(2 * 4096));
    QCOMPARE(tensorBytes(compiled, "input norm: fp32 input"), Bytes(0));
    QCOMPARE(tensorBytes(compiled, "SiLU output"), Bytes(0));
    QCOMPARE(tensorBytes(compiled, "input norm: rsqrt (fp32)"), tensorBytes(eager, "input norm: rsqrt (fp32)"));
    QCOMPARE(tensorBytes(compiled, "gated product (down_proj input)"),
        tensorBytes(eager, "gated product (down_proj input)"));
    // Explain lists what was removed: per layer 2 x (8,192 + 4,096) + 8,192, and the 128,000 B log-softmax.
    QCOMPARE(compiled.compileRemovedBytes, Bytes(2 * 32'768 + 128'000));
    QVERIFY(!compiled.compileScope.empty());
    QCOMPARE(eager.compileRemovedBytes, Bytes(0));
    // The final norm is outside the compiled blocks (torchtune compile_model): it keeps its fp32 copy.
    QCOMPARE(tensorBytes(compiled, "final norm: fp32 input"), Bytes(4 * 2048));
    // torchtitan compiles the blocks only (train.py@9dec370 leaves the loss eager).
    const ActivationSet titan = acts(toy({ { "framework", "torchtitan" }, { "compile", true } }));
    QCOMPARE(tensorBytes(titan, "log-softmax of the logits (fp32)"), Bytes(128'000));
}

// torchtune compile_loss: nn.CrossEntropyLoss compiled whole on fp32 logits, or
// CEWithChunkedOutputLoss.compute_cross_entropy compiled per chunk (training/_compile.py@1814feb).
void TstFrameworks::compiledTorchtuneLoss()
{
    const ActivationSet up = acts(toy({ { "framework", "torchtune" }, { "loss", "upcast" }, { "compile", true } }));
    QCOMPARE(tensorBytes(up, "fp32 logits (input of the compiled cross-entropy, kept for backward)"), Bytes(128'000));
    QCOMPARE(tensorBytes(up, "log-softmax of the logits (fp32)"), Bytes(0));
    QCOMPARE(up.lossForwardBytes, Bytes(64'000)); // the 16-bit logits while .float() copies them
    QCOMPARE(up.lossBackwardBytes, Bytes(128'000)); // one fp32 gradient, not two
    // 8 chunks of 2 positions x batch 2 = 4 rows: the 16-bit chunks are kept, no fp32 log-softmax,
    // no per-chunk total weight (reduction "sum"); backward writes one chunk's 16-bit gradient.
    const ActivationSet ch = acts(toy({ { "framework", "torchtune" }, { "compile", true } }));
    QCOMPARE(tensorBytes(ch, "16-bit logits of every chunk (inputs of the compiled cross-entropy, kept for backward)"),
        Bytes(64'000));
    QCOMPARE(tensorBytes(ch, "row max and sum of exponentials of every chunk (fp32)"), Bytes(256));
    QCOMPARE(tensorBytes(ch, "cross-entropy total weight of a chunk (scalar)"), Bytes(0));
    QCOMPARE(ch.lossForwardBytes, Bytes(0));
    QCOMPARE(ch.lossBackwardBytes, Bytes(4 * 1000 * 2));
}

void TstFrameworks::compileRefusedWhereNotModelled()
{
    for (const json& extra : { json { { "compile", true } }, // plain PyTorch: what is compiled is not said
             json { { "framework", "hf-transformers" }, { "compile", true } },
             json { { "framework", "torchtune" }, { "compile", true }, { "attention", "eager" } },
             json { { "framework", "torchtune" }, { "compile", true }, { "loss", "fused" } } }) {
        const InputError e = refusal(extra);
        QCOMPARE(QString::fromStdString(e.keyPath()), QStringLiteral("run.compile"));
    }
    QVERIFY(std::string(refusal({ { "compile", true } }).what()).find("torchtitan or torchtune") != std::string::npos);
}

// PyTorch loss_parallel (distributed/tensor/parallel/loss.py@02eef6b) on a 500-entry vocabulary
// shard (TP 2), 32 tokens: forward 16-bit logits + fp32 copy + shifted = 2 + 4 + 4 B beside the saved
// result; backward zeros, exp and product: 12 B. Megatron's profile keeps the upcast counts.
void TstFrameworks::dtensorLossParallel()
{
    const json tp = { { "framework", "torchtitan" }, { "loss", "loss-parallel" },
        { "parallelism", { { "gpus", 2 }, { "tensor_parallel", 2 } } } };
    const ActivationSet a = acts(toy(tp));
    QCOMPARE(tensorBytes(a, "log-softmax of the vocabulary shard (fp32)"), Bytes(32 * 500 * 4));
    QCOMPARE(a.lossForwardBytes, Bytes(32 * 500 * 10));
    QCOMPARE(a.lossBackwardBytes, Bytes(32 * 500 * 12));
    // Megatron-LM core_v0.15.0 (tensor_parallel/cross_entropy.py@0d7e02b): the .float() copy of the bf16 shard is
    // normalized in place and saved (with the bool target mask and the int64 masked targets); forward holds the bf16
    // logits beside it, backward writes the gradient into it and autograd casts that to a new bf16 tensor.
    json meg = tp;
    meg["framework"] = "megatron";
    const ActivationSet m = acts(toy(meg));
    QCOMPARE(tensorBytes(m, "softmax of the vocabulary shard (fp32: the .float() copy, normalized in place)"),
        Bytes(32 * 500 * 4));
    QCOMPARE(tensorBytes(m, "target mask (bool)") + tensorBytes(m, "masked targets (int64)"), Bytes(32 + 32 * 8));
    QCOMPARE(m.lossForwardBytes, Bytes(32 * 500 * 2));
    QCOMPARE(m.lossBackwardBytes, Bytes(32 * 500 * 2));
}

// Megatron-LM with Transformer Engine (its default transformer_impl): the fused norm kernels keep the 16-bit input and
// fp32 rsigma per token (no fp32 copy, no normalized tensor), and the fused SwiGLU keeps only fc1's output.
void TstFrameworks::megatronAsTransformerEngineRunsIt()
{
    const ActivationSet m = acts(toy({ { "framework", "megatron" } }));
    // 32 tokens of 64 in both layers, for each of the two norms.
    QCOMPARE(tensorBytes(m, "input norm: input"), Bytes(2 * 32 * 64 * 2));
    QCOMPARE(tensorBytes(m, "input norm: rsigma (fp32)"), Bytes(2 * 32 * 4));
    QCOMPARE(tensorBytes(m, "input norm: fp32 input"), Bytes(0));
    QCOMPARE(tensorBytes(m, "input norm: normalized"), Bytes(0));
    QCOMPARE(tensorBytes(m, "pre-MLP norm: rsigma (fp32)"), Bytes(2 * 32 * 4));
    // fc1's output is gate and up, 2 x 128 wide; the SwiGLU output is fc2's input; no SiLU output is kept.
    QCOMPARE(tensorBytes(m, "fc1 output (gate and up, kept by the fused SwiGLU)"), Bytes(2 * 32 * 256 * 2));
    QCOMPARE(tensorBytes(m, "SwiGLU output (fc2 input)"), Bytes(2 * 32 * 128 * 2));
    QCOMPARE(tensorBytes(m, "SiLU output"), Bytes(0));
    // The plain profile keeps the eager tensors: fp32 copies in the norms and four MLP tensors.
    const ActivationSet p = acts(toy());
    QCOMPARE(tensorBytes(p, "input norm: fp32 input"), Bytes(2 * 32 * 64 * 4));
    QCOMPARE(tensorBytes(p, "SiLU output"), Bytes(2 * 32 * 128 * 2));
    // A LayerNorm model under Megatron keeps mu beside rsigma.
    const ActivationSet ln = acts(toy({ { "framework", "megatron" } }, { { "norm", "layernorm" }, { "mlp", "gelu" } }));
    QCOMPARE(tensorBytes(ln, "input norm: mu (fp32)"), Bytes(2 * 32 * 4));
    QCOMPARE(tensorBytes(ln, "up projection output (GELU input)"), Bytes(2 * 32 * 128 * 2));
    // Megatron has no ZeRO-2/3 of its own: the report says so.
    const Report r
        = estimate(toy({ { "framework", "megatron" }, { "parallelism", { { "gpus", 2 }, { "zero_stage", 3 } } } }));
    QVERIFY(std::any_of(r.warnings.begin(), r.warnings.end(),
        [](const std::string& w) { return w.starts_with("run.parallelism.zero_stage: Megatron-LM"); }));
}

// torchtitan's sequence parallelism (parallelize_llama.py@9dec370 apply_tp): PrepareModuleInput gathers
// Shard(1) to Replicate before attention and the MLP, so q/k/v keep the full 16-row input
// (2 x 16 x 64 x 2 B per layer); plain PyTorch here follows Megatron and keeps the 8-row shard.
void TstFrameworks::sequenceParallelKeepsGatheredInputs()
{
    const json par = { { "gpus", 2 }, { "tensor_parallel", 2 }, { "sequence_parallel", true } };
    const ActivationSet titan = acts(toy({ { "framework", "torchtitan" }, { "parallelism", par } }));
    const ActivationSet plain = acts(toy({ { "parallelism", par } }));
    QCOMPARE(tensorBytes(titan, "attention input (norm output, read by q/k/v)"), Bytes(2 * 4096));
    QCOMPARE(tensorBytes(plain, "attention input (norm output, read by q/k/v)"), Bytes(2 * 2048));
    QCOMPARE(tensorBytes(titan, "LM head input (final norm output)"), Bytes(4096));
    QCOMPARE(tensorBytes(titan, "input norm: fp32 input"), tensorBytes(plain, "input norm: fp32 input"));
}

// torchtune OffloadActivations (training/_activation_offloading.py@1814feb) with whole-layer
// checkpointing, 4 layers: each keeps its 4,096 B input (2 x 16 x 64 x 2 B); two stay on the GPU.
// Offloaded: the other two inputs (8,192 B), the token ids (32 x 8 B) and the final norm's fp32
// input, rsqrt and normalized tensor (8,192 + 128 + 4,096 B); the loss (outside the context) stays.
void TstFrameworks::torchtuneActivationOffloading()
{
    const json run = { { "framework", "torchtune" }, { "checkpointing", "full" } };
    json offload = run;
    offload["activation_offloading"] = true;
    const Scenario on = toy(offload, { { "num_layers", 4 } });
    const Scenario off = toy(run, { { "num_layers", 4 } });
    const StageSlice all { 4, 0, true, true };
    const ActivationSet a = trainingActivations(on.model, on.run, all);
    const ActivationSet b = trainingActivations(off.model, off.run, all);
    QCOMPARE(a.offloadedBytes, Bytes(8192 + 256 + 8192 + 128 + 4096));
    QCOMPARE(b.bytes - a.bytes, a.offloadedBytes);
    QCOMPARE(a.embeddingBytes, Bytes(0));
    QCOMPARE(a.headBytes, b.headBytes - (8192 + 128 + 4096));
    // The report counts them in host memory.
    const Report rep = estimate(on);
    QCOMPARE(rep.hostBytes, a.offloadedBytes);
    QVERIFY(rep.hostFormula.find("OffloadActivations") != std::string::npos);
    // Other frameworks, or without whole-layer checkpointing: refused, naming the key.
    QCOMPARE(QString::fromStdString(refusal({ { "activation_offloading", true } }).keyPath()),
        QStringLiteral("run.activation_offloading"));
    QCOMPARE(
        QString::fromStdString(refusal({ { "framework", "torchtune" }, { "activation_offloading", true } }).keyPath()),
        QStringLiteral("run.activation_offloading"));
}

// torchao's Float8Linear under torchtitan (float8_linear.py@eab345c2268a): no resident fp8 weight copy;
// eager autograd keeps each linear's fp8 input (one cast per linear: q, k, v read the same norm output,
// w1 and w3 the same MLP input) and its fp8 transposed unsharded weight. Toy layer (h 64, 4 x 16 query,
// 2 x 16 K/V heads, SwiGLU 128; 32 tokens): weights 64x64 + 2 x 64x32 + 64x64 + 3 x 64x128 = 36,864 B;
// attention input 3 x 2,048 B for 4,096 (+2,048), wo's input 2,048 for 4,096 (-2,048), MLP input
// 2 x 2,048 for 4,096 (0), w2's input 4,096 for 8,192 (-4,096): +32,768 B per layer.
void TstFrameworks::torchaoFloat8()
{
    const ActivationSet bf16 = acts(toy({ { "framework", "torchtitan" } }));
    const ActivationSet fp8 = acts(toy({ { "framework", "torchtitan" }, { "fp8", true } }));
    QCOMPARE(fp8.bytes - bf16.bytes, Bytes(2 * 32'768));
    QCOMPARE(tensorBytes(fp8, "wq fp8 weight, transposed (unsharded)"), Bytes(2 * 4096));
    QCOMPARE(tensorBytes(fp8, "fp8 cast of one reading linear: attention input (norm output, read by q/k/v)"),
        Bytes(2 * 3 * 2048));
    // The LM head stays in 16-bit (torchtitan float8.py filter: fqn != "output").
    QCOMPARE(
        tensorBytes(fp8, "LM head input (final norm output)"), tensorBytes(bf16, "LM head input (final norm output)"));
    // Compiled, the casts are recomputed in backward and identical casts merged: no fp8 weight is kept,
    // one fp8 copy of each shared input.
    const ActivationSet compiled = acts(toy({ { "framework", "torchtitan" }, { "fp8", true }, { "compile", true } }));
    QCOMPARE(tensorBytes(compiled, "wq fp8 weight, transposed (unsharded)"), Bytes(0));
    QCOMPARE(tensorBytes(compiled, "attention input (norm output, read by q/k/v)"), Bytes(2 * 2048));
    // Model states: no fp8 copy beside the weights (Transformer Engine's `plain` keeps 1 B per linear weight,
    // the 1000 x 64 LM head's included).
    auto weights = [](const json& extra) { return estimate(toy(extra)).bytes(ComponentKind::Weights); };
    QCOMPARE(weights({ { "framework", "torchtitan" }, { "fp8", true } }), weights({ { "framework", "torchtitan" } }));
    QCOMPARE(weights({ { "fp8", true } }) - weights(json::object()), Bytes(2 * 36'864 + 64'000));
    // Op-level checkpointing with float8 is modelled compiled (the bf16 save list); eager, torchtitan@9dec370's
    // list caches aten.abs outputs, which is refused; torchao float8 on LoRA is refused.
    const Scenario sac = toy(
        { { "framework", "torchtitan" }, { "fp8", true }, { "compile", true }, { "checkpointing", "selective-op" } });
    QCOMPARE(acts(sac).bytes,
        acts(toy({ { "framework", "torchtitan" }, { "compile", true }, { "checkpointing", "selective-op" } })).bytes);
    QCOMPARE(refusal({ { "framework", "torchtitan" }, { "fp8", true }, { "checkpointing", "selective-op" } }).keyPath(),
        std::string("run.checkpointing"));
    QCOMPARE(
        refusal({ { "framework", "torchtitan" }, { "fp8", true }, { "finetune", { { "method", "lora" } } } }).keyPath(),
        std::string("run.fp8"));
}

// torchtitan/components/loss.py@e7c0cae: torch.compile(cross_entropy(pred.float(), labels)) keeps the 16-bit
// logits (32 x 1000 x 2 B) and two fp32 reductions per token (256 B); backward writes one 16-bit gradient.
void TstFrameworks::torchtitanCompiledLoss()
{
    const ActivationSet l = acts(toy({ { "framework", "torchtitan" }, { "compile", true }, { "compile_loss", true } }));
    QCOMPARE(tensorBytes(l, "16-bit logits (input of the compiled loss, kept for backward)"), Bytes(64'000));
    QCOMPARE(
        tensorBytes(l, "row max and sum of exponentials (fp32, the compiled log-softmax's reductions)"), Bytes(256));
    QCOMPARE(tensorBytes(l, "log-softmax of the logits (fp32)"), Bytes(0));
    QCOMPARE(l.lossForwardBytes, Bytes(0));
    QCOMPARE(l.lossBackwardBytes, Bytes(64'000));
    // The pinned 9dec370 leaves it eager; compile_loss without compile is refused, naming the key.
    QCOMPARE(tensorBytes(
                 acts(toy({ { "framework", "torchtitan" }, { "compile", true } })), "log-softmax of the logits (fp32)"),
        Bytes(128'000));
    QCOMPARE(refusal({ { "framework", "torchtitan" }, { "compile_loss", true } }).keyPath(),
        std::string("run.compile_loss"));
    const Scenario back = readScenario(
        scenarioToJson(toy({ { "framework", "torchtitan" }, { "compile", true }, { "compile_loss", true } })));
    QVERIFY(back.run.compileLoss.value_or(false));
    // Under PyTorch's pipelining the logits are the last stage's output, which output_chunks keeps until the next
    // step (stage.py; pipelineBuffers): the compiled loss's reference to them is the same storage, counted once.
    const json pp = { { "gpus", 2 }, { "pipeline_parallel", 2 } };
    const ActivationSet staged = acts(toy({ { "framework", "torchtitan" }, { "compile", true },
        { "compile_loss", true }, { "parallelism", pp }, { "gradient_accumulation_steps", 2 } }));
    QCOMPARE(tensorBytes(staged, "16-bit logits (input of the compiled loss, kept for backward)"), Bytes(0));
    QCOMPARE(tensorBytes(staged, "row max and sum of exponentials (fp32, the compiled log-softmax's reductions)"),
        Bytes(256));
    QCOMPARE(l.bytes - staged.bytes, Bytes(64'000));
}

// torchao enable_fsdp_float8_all_gather (fsdp_utils.py@0afa4c1 fsdp_pre_all_gather casts the shard): the
// toy layer gathers its 36,864 linear weights at 1 B and its two norms (128) at 2 B: 2 x 37,120 B for
// the current and the prefetched layer, against 2 x 36,992 x 2 B in bf16.
void TstFrameworks::fp8AllGather()
{
    const json par = { { "gpus", 2 }, { "zero_stage", 3 }, { "sharding", "fsdp2" } };
    auto gathered = [&](bool fp8Gather) {
        json p = par;
        if (fp8Gather)
            p["fp8_all_gather"] = true;
        const Report r = estimate(toy({ { "framework", "torchtitan" }, { "fp8", true }, { "parallelism", p } }));
        for (const Component& c : r.overheadParts)
            if (c.key == "zero3_gather")
                return c.bytes;
        return Bytes(-1);
    };
    QCOMPARE(gathered(false), Bytes(2 * 36'992 * 2));
    QCOMPARE(gathered(true), Bytes(2 * 37'120));
    json p = par;
    p["fp8_all_gather"] = true;
    QCOMPARE(refusal({ { "framework", "torchtitan" }, { "parallelism", p } }).keyPath(),
        std::string("run.parallelism.fp8_all_gather"));
    QVERIFY(readScenario(scenarioToJson(toy({ { "framework", "torchtitan" }, { "fp8", true }, { "parallelism", p } })))
                .run.parallelism.fp8AllGather);
    // Unset, the key is not written (files that load today stay byte-identical).
    QVERIFY(!scenarioToJson(toy({ { "framework", "torchtitan" } }))["run"]["parallelism"].contains("fp8_all_gather"));
}

// FSDP1 (run.parallelism.sharding "fsdp1"; /work facts: torch/distributed/fsdp v2.6.0 _flat_param.py,
// _runtime_utils.py, fully_sharded_data_parallel.py no_sync). The toy has 202,048 parameters: 64,000 embedding and
// LM head each, 36,992 per block, 64 in the final norm.
void TstFrameworks::fsdp1FlatParameters()
{
    const json fsdp1 = { { "gpus", 2 }, { "zero_stage", 3 }, { "sharding", "fsdp1" } };
    json fsdp2 = fsdp1;
    fsdp2["sharding"] = "fsdp2";
    // Full fine-tuning without accumulation: the states are FSDP2's (fp32 shard as the parameter, the root gathered
    // from forward to backward, fp32 sharded gradients).
    const Report one = estimate(toy({ { "parallelism", fsdp1 } })), two = estimate(toy({ { "parallelism", fsdp2 } }));
    for (const char* key : { "weights", "master_weights", "gradients", "optimizer_states" })
        QCOMPARE(one.bytesOf(key), two.bytesOf(key));
    // Accumulating under no_sync keeps every gradient whole in the gathered (bf16) type: 202,048 x 2 B.
    json sync = fsdp1;
    sync["no_sync"] = true;
    QCOMPARE(estimate(toy({ { "gradient_accumulation_steps", 4 }, { "parallelism", sync } })).bytesOf("gradients"),
        Bytes(202'048 * 2));
    // A cache shared across accumulation counts (sweeps, the planner) tells the unsharded gradients apart.
    {
        EstimateCache cache;
        const Scenario once = toy({ { "parallelism", sync } });
        const Scenario four = toy({ { "gradient_accumulation_steps", 4 }, { "parallelism", sync } });
        (void)estimate(once.model, once.run, EstimateOptions { false }, &cache);
        QCOMPARE(
            estimate(four.model, four.run, EstimateOptions { false }, &cache).bytesOf("gradients"), Bytes(202'048 * 2));
    }
    // The Hugging Face Trainer accumulates under no_sync by default; plain PyTorch does not.
    QCOMPARE(estimate(toy({ { "framework", "hf-transformers" }, { "gradient_accumulation_steps", 4 },
                          { "parallelism", fsdp1 } }))
                 .bytesOf("gradients"),
        Bytes(202'048 * 2));
    QCOMPARE(estimate(toy({ { "gradient_accumulation_steps", 4 }, { "parallelism", fsdp1 } })).bytesOf("gradients"),
        one.bytesOf("gradients"));
    // LoRA r8 on q and v (1,792 adapter parameters a block) inside each block's flat parameter (LitGPT's wrapping):
    // with use_orig_params the frozen block weights get gradients too, 2 x 36,992 of them, here in bf16.
    const json lora = { { "method", "lora" }, { "rank", 8 }, { "targets", { "q", "v" } }, { "dropout", 0.0 } };
    auto loraRun = [&](const char* wrap, Count accumulation, bool noSync) {
        json par = fsdp1;
        par["fsdp_wrap"] = wrap;
        par["no_sync"] = noSync;
        return json { { "precision", "bf16" }, { "finetune", lora }, { "gradient_accumulation_steps", accumulation },
            { "parallelism", par } };
    };
    // Unsharded under no_sync, else halved over 2 GPUs (bf16 adapters in plain PyTorch).
    QCOMPARE(estimate(toy(loraRun("blocks", 4, true))).bytesOf("gradients"), Bytes(3'584 * 2 + 2 * 36'992 * 2));
    QCOMPARE(estimate(toy(loraRun("blocks", 1, true))).bytesOf("gradients"), Bytes(3'584 * 2 / 2 + 36'992 * 2));
    QCOMPARE(estimate(toy(loraRun("peft", 4, true))).bytesOf("gradients"), Bytes(3'584 * 2));
    // Their layers keep what full fine-tuning keeps (the frozen q/k/v read the norm output for a weight gradient),
    // and backward computes 2 FLOPs per frozen block weight per token more.
    json litBlocks = loraRun("blocks", 1, false), litApart = loraRun("peft", 1, false);
    litBlocks["framework"] = litApart["framework"] = "litgpt";
    const Scenario blocks = toy(litBlocks), apart = toy(litApart);
    QCOMPARE(tensorBytes(acts(apart), "MLP input (norm output)"), Bytes(0)); // frozen gate/up keep no input
    QCOMPARE(tensorBytes(acts(blocks), "MLP input (norm output)"), Bytes(2 * 32 * 64 * 2));
    const Report rb = estimate(blocks), ra = estimate(apart);
    // 2 blocks x 36,864 linear weights, 64 tokens a step (2 GPUs x 2 x 16).
    QCOMPARE(rb.flops.hardwarePerStep - ra.flops.hardwarePerStep, 2.0 * 2 * 36'864 * 64);
    // Refused where it is not modelled, naming the key.
    json sync2 = fsdp2;
    sync2["no_sync"] = true;
    QCOMPARE(refusal({ { "parallelism", sync2 } }).keyPath(), std::string("run.parallelism.no_sync"));
    json zero2 = fsdp1;
    zero2["zero_stage"] = 2;
    QCOMPARE(refusal({ { "parallelism", zero2 } }).keyPath(), std::string("run.parallelism.sharding"));
    QCOMPARE(refusal({ { "framework", "torchtitan" }, { "parallelism", fsdp1 } }).keyPath(),
        std::string("run.parallelism.sharding"));
    json qlora = loraRun("peft", 1, false);
    qlora["finetune"]["method"] = "qlora";
    QCOMPARE(refusal(qlora).keyPath(), std::string("run.parallelism.sharding"));
    json hfBlocks = loraRun("blocks", 1, false);
    hfBlocks["framework"] = "hf-transformers";
    QCOMPARE(refusal(hfBlocks).keyPath(), std::string("run.parallelism.fsdp_wrap"));
    json fullWrap = fsdp1;
    fullWrap["fsdp_wrap"] = "peft";
    QCOMPARE(refusal({ { "parallelism", fullWrap } }).keyPath(), std::string("run.parallelism.fsdp_wrap"));
    json tp = fsdp1;
    tp["tensor_parallel"] = 2;
    QCOMPARE(refusal({ { "parallelism", tp } }).keyPath(), std::string("run.parallelism.tensor_parallel"));
    // Leaving FSDP1 drops its keys (the panel's hidden controls cannot).
    Scenario left = toy(loraRun("blocks", 4, true));
    const ScenarioField* sharding = findField("run.parallelism.sharding");
    QVERIFY(sharding);
    sharding->set(left, FieldValue(std::string("fsdp2")));
    QVERIFY(!left.run.parallelism.noSync && !left.run.parallelism.fsdpWrap);
    Scenario lowered = toy(loraRun("blocks", 4, true));
    findField("run.parallelism.zero_stage")->set(lowered, FieldValue(Count(2)));
    QVERIFY(!lowered.run.parallelism.noSync && !lowered.run.parallelism.fsdpWrap);
    QCOMPARE(lowered.run.parallelism.zeroStage, 2);
    // Written back as read; unset keys stay unwritten.
    const json back = scenarioToJson(toy(loraRun("blocks", 4, true)))["run"]["parallelism"];
    QCOMPARE(back["sharding"], json("fsdp1"));
    QCOMPARE(back["fsdp_wrap"], json("blocks"));
    QCOMPARE(back["no_sync"], json(true));
    QVERIFY(!scenarioToJson(toy({ { "parallelism", fsdp1 } }))["run"]["parallelism"].contains("no_sync"));
}

// Lightning's bf16-mixed (lit-gpt's default for training; lightning@71aed75 plugins/precision/amp.py: no
// convert_module, autocast in forward): the frozen base stays fp32, 4 B for each of the toy's 202,048 weights; what
// autocast keeps is not modelled, so the peak is a lower bound. bf16-true converts the module: 2 B.
void TstFrameworks::litgptMixedKeepsTheModelFp32()
{
    const json lora = { { "method", "lora" }, { "rank", 8 }, { "targets", { "q", "v" } } };
    const Report mixed = estimate(toy({ { "framework", "litgpt" }, { "finetune", lora } }));
    QCOMPARE(mixed.bytesOf("weights"), Bytes(202'048 * 4 + 3'584 * 2));
    QVERIFY(mixed.lowerBound.find("bf16-mixed") != std::string::npos);
    const Report pure = estimate(toy({ { "framework", "litgpt" }, { "precision", "bf16" }, { "finetune", lora } }));
    QCOMPARE(pure.bytesOf("weights"), Bytes(202'048 * 2 + 3'584 * 2));
    QVERIFY(pure.lowerBound.empty());
    // The Hugging Face Trainer loads the base in 16 bits under the same precision.
    QCOMPARE(estimate(toy({ { "framework", "hf-transformers" }, { "finetune", lora } })).bytesOf("weights")
            - Bytes(3'584 * 4),
        Bytes(202'048 * 2));
    // Lightning quantizes from fp16 and bitsandbytes 0.41 dequantizes into it, then casts to the input's type: the
    // widest NF4 weight (the quantized LM head, 64,000) in fp16 and bf16 at once; the
    // Hugging Face path dequantizes straight into bf16.
    const json qlora
        = { { "method", "qlora" }, { "rank", 8 }, { "targets", { "q", "v" } }, { "quantize_lm_head", true } };
    auto dequant = [&](const char* framework, const char* precision) {
        for (const Component& c :
            estimate(toy({ { "framework", framework }, { "precision", precision }, { "finetune", qlora } }))
                .overheadParts)
            if (c.key == "dequant")
                return c.bytes;
        return Bytes(-1);
    };
    QCOMPARE(dequant("litgpt", "bf16"), Bytes(64'000 * 4));
    QCOMPARE(dequant("plain", "bf16"), Bytes(64'000 * 2));
    // lit-gpt refuses quantization with mixed precision.
    QCOMPARE(refusal({ { "framework", "litgpt" }, { "finetune", { { "method", "qlora" } } } }).keyPath(),
        std::string("run.precision"));
}

// TRL's SFTTrainer under autocast (sft_trainer.py@1cf8d56c compute_loss): accelerate's fp32 logits (32 tokens x 1000)
// and outputs.logits[..., :-1, :].contiguous() (2 samples x 15 positions x 1000, fp32) with its int64 argmax.
void TstFrameworks::sftTrainerTokenAccuracy()
{
    const ActivationSet plain = acts(toy({ { "framework", "hf-transformers" } }));
    QCOMPARE(plain.lossForwardBytes, Bytes(32'000 * (2 + 4)));
    const ActivationSet sft = acts(toy({ { "framework", "hf-transformers" }, { "sft_token_accuracy", true } }));
    QCOMPARE(sft.lossForwardBytes, Bytes(32'000 * 4 + 30'000 * 4 + 30 * 8));
    QCOMPARE(sft.lossBackwardBytes, plain.lossBackwardBytes);
    const Scenario back
        = readScenario(scenarioToJson(toy({ { "framework", "hf-transformers" }, { "sft_token_accuracy", true } })));
    QVERIFY(back.run.sftTokenAccuracy);
    // With Liger's fused loss SFTTrainer keeps no logits: refused, naming the key.
    QCOMPARE(
        refusal({ { "framework", "hf-transformers" }, { "loss", "fused" }, { "sft_token_accuracy", true } }).keyPath(),
        std::string("run.sft_token_accuracy"));
}

QTEST_APPLESS_MAIN(TstFrameworks)
// Hugging Face transformers v4.57.1 with PEFT v0.18.0 (framework_profile.cpp cites the lines): SDPA without a
// mask keeps K and V at the KV heads (enable_gqa) and o_proj keeps the transpose().contiguous() copy of its output;
// PEFT's adapters are fp32, so each adapted linear keeps its own copy of its input: fp32 without autocast, autocast's
// 16-bit cast with it; the frozen projections keep no input of their own.
void TstFrameworks::loraAsPeftRunsIt()
{
    const json lora = { { "framework", "hf-transformers" }, { "precision", "bf16" },
        { "finetune", { { "method", "lora" }, { "rank", 8 }, { "targets", { "q", "v" } }, { "dropout", 0.0 } } } };
    const ActivationSet hf = acts(toy(lora));
    // 32 tokens of 64 in fp32 for each of q and v in both layers; A's outputs 32 x 8 in fp32.
    QCOMPARE(tensorBytes(hf, "LoRA q: input cast to the fp32 adapters (lora_A input)"), Bytes(2 * 32 * 64 * 4));
    QCOMPARE(tensorBytes(hf, "LoRA v: input cast to the fp32 adapters (lora_A input)"), Bytes(2 * 32 * 64 * 4));
    QCOMPARE(tensorBytes(hf, "LoRA q: A output (B input)"), Bytes(2 * 32 * 8 * 4));
    QCOMPARE(tensorBytes(hf, "attention input (norm output, read by q/k/v)"), Bytes(0));
    QCOMPARE(tensorBytes(hf, "attention output (o_proj input)"), Bytes(0)); // o_proj frozen: its input is not kept
    QCOMPARE(tensorBytes(hf, "K after RoPE"), Bytes(2 * 2 * 2 * 16 * 16 * 2)); // 2 KV heads, not repeated
    // The same run in plain PyTorch: lora_A reads the shared 16-bit norm output, A's output is 16-bit.
    json plain = lora;
    plain["framework"] = "plain";
    const ActivationSet p = acts(toy(plain));
    QCOMPARE(tensorBytes(p, "attention input (norm output, read by q/k/v)"), Bytes(2 * 32 * 64 * 2));
    QCOMPARE(tensorBytes(p, "LoRA q: A output (B input)"), Bytes(2 * 32 * 8 * 2));
    // Under autocast (Trainer's bf16=True: mixed-bf16 here) lora_A runs in bf16 on autocast's copy of the input.
    json autocast = lora;
    autocast["precision"] = "mixed-bf16";
    const ActivationSet a = acts(toy(autocast));
    QCOMPARE(tensorBytes(a, "LoRA q: input as autocast casts it (lora_A input)"), Bytes(2 * 32 * 64 * 2));
    QCOMPARE(tensorBytes(a, "LoRA v: A output (B input)"), Bytes(2 * 32 * 8 * 2));
    QCOMPARE(tensorBytes(a, "LoRA q: input cast to the fp32 adapters (lora_A input)"), Bytes(0));
    // Dropout: nn.Dropout on the cast copy keeps its mask and the dropped fp32 copy, not the cast itself.
    json dropped = lora;
    dropped["finetune"]["dropout"] = 0.05;
    const ActivationSet d = acts(toy(dropped));
    QCOMPARE(tensorBytes(d, "LoRA q: dropout mask (bool)"), Bytes(2 * 32 * 64));
    QCOMPARE(tensorBytes(d, "LoRA q: dropped-out input"), Bytes(2 * 32 * 64 * 4));
    QCOMPARE(tensorBytes(d, "LoRA q: input cast to the fp32 adapters (lora_A input)"), Bytes(0));
    // Full fine-tuning: o_proj keeps SDPA's contiguous copy beside SDPA's own output.
    json full = lora;
    full.erase("finetune");
    const ActivationSet f = acts(toy(full));
    QCOMPARE(tensorBytes(f, "attention output (o_proj input)"), Bytes(2 * 32 * 64 * 2));
    QCOMPARE(tensorBytes(f, "attention output O (flash; also o_proj input)"), Bytes(2 * 32 * 64 * 2));
    // PEFT's adapters are fp32 (cast_adapter_dtype): 2 layers x (8 x (64 + 64) + 8 x (64 + 32)) = 3,584 of them
    // with fp32 gradients and fp32 AdamW states and no master copy, whatever the precision; plain keeps bf16.
    for (const char* precision : { "bf16", "mixed-bf16" }) {
        json run = lora;
        run["precision"] = precision;
        const Report rep = estimate(toy(run));
        QCOMPARE(rep.trainableParams, Count(3584));
        QCOMPARE(rep.bytesOf("gradients"), Bytes(3584 * 4));
        QCOMPARE(rep.bytesOf("optimizer_states"), Bytes(3584 * 8));
        QCOMPARE(rep.bytesOf("master_weights"), Bytes(0));
    }
    QCOMPARE(estimate(toy(plain)).bytesOf("gradients"), Bytes(3584 * 2));
    // QLoRA as PEFT prepares it (fp32 embedding, norms and head) without autocast is not modelled: the report says
    // so (qloraAsPeftPreparesIt has it under autocast).
    json qlora = lora;
    qlora["finetune"]["method"] = "qlora";
    const Report q = estimate(toy(qlora));
    QVERIFY(std::any_of(q.warnings.begin(), q.warnings.end(),
        [](const std::string& w) { return w.find("prepare_model_for_kbit_training") != std::string::npos; }));
}

// QLoRA under autocast (Trainer's bf16=True) with fp32 norms. TRL's SFTTrainer (the default; its
// prepare_model_for_kbit_training, trl/models/utils.py@v0.25.0) casts the 5 norms to fp32 (5 x 64 elements, 2 B more
// each); PEFT's (utils/other.py@77daa8d3) the embedding and LM head too (1,000 x 64 twice). An RMSNorm then returns
// fp32 weight * x.to(input_dtype), fp32 by type promotion, and bitsandbytes' Linear4bit returns its input's type
// (nn/modules.py@0.48.2: .to(inp_dtype)), so the gate and up outputs and SiLU's, which SiLU and the product keep, are
// fp32 (32 tokens x 128 x 4 B in each of 2 layers), and after the first layer's MLP the residual stream is: a
// checkpoint keeps the second layer's input in fp32 (32 x 64 x 4 B), the first one's in 16 bits under TRL. With
// PEFT's fp32 embedding every input and the RoPE tables (cos.to(hidden_states.dtype), 16 x 16) are fp32, and the
// frozen fp32 LM head weight is cast to bf16 by autocast in forward, a cast its matmul keeps for the input's gradient
// (1,000 x 64 x 2 B).
void TstFrameworks::qloraAsPeftPreparesIt()
{
    const json trl = { { "framework", "hf-transformers" }, { "precision", "mixed-bf16" },
        { "finetune", { { "method", "qlora" }, { "rank", 8 }, { "targets", { "all-linear" } } } } };
    json peft = trl, none = trl;
    peft["finetune"]["kbit_preparation"] = "peft";
    none["finetune"]["kbit_preparation"] = "none";
    const Report t = estimate(toy(trl)), p = estimate(toy(peft)), n = estimate(toy(none));
    QCOMPARE(t.bytesOf("weights") - n.bytesOf("weights"), Bytes(5 * 64 * 2));
    QCOMPARE(p.bytesOf("weights") - n.bytesOf("weights"), Bytes((1000 * 64 * 2 + 5 * 64) * 2));
    for (const Report* r : { &t, &p, &n })
        QVERIFY2(r->lowerBound.empty(), r->lowerBound.c_str());
    const auto says = [](const Report& r, const char* what) {
        return std::any_of(r.warnings.begin(), r.warnings.end(),
            [&](const std::string& w) { return w.find(what) != std::string::npos; });
    };
    QVERIFY(says(t, "kbit_preparation: assumed \"trl\"")); // the default is said
    QVERIFY(!says(p, "kbit_preparation") && !says(n, "kbit_preparation"));
    const ActivationSet a = acts(toy(trl)), b = acts(toy(peft)), c = acts(toy(none));
    const Bytes mlp32 = 2 * 32 * 128 * 4;
    for (const ActivationSet* s : { &a, &b }) {
        QCOMPARE(tensorBytes(*s, "gate projection output (fp32: Linear4bit returns its input's type)"), mlp32);
        QCOMPARE(tensorBytes(*s, "SiLU output (fp32: Linear4bit returns its input's type)"), mlp32);
        QCOMPARE(tensorBytes(*s, "up projection output (fp32: Linear4bit returns its input's type)"), mlp32);
    }
    QCOMPARE(tensorBytes(c, "gate projection output"), mlp32 / 2);
    const char* headCast = "LM head weight as autocast casts it from fp32 (kept for the input's gradient)";
    QCOMPARE(tensorBytes(b, headCast), Bytes(1000 * 64 * 2));
    QCOMPARE(tensorBytes(a, headCast), Bytes(0)); // TRL leaves the head 16-bit
    QCOMPARE(tensorBytes(a, "RoPE cos table"), Bytes(16 * 16 * 2));
    QCOMPARE(tensorBytes(b, "RoPE cos table"), Bytes(16 * 16 * 4));
    // Nothing else moves: norms kept an fp32 input already, autocast's casts feed SDPA and the adapters.
    QCOMPARE(a.bytes - c.bytes, 3 * mlp32 / 2);
    QCOMPARE(b.bytes - c.bytes, 3 * mlp32 / 2 + Bytes(1000 * 64 * 2) + Bytes(2 * 16 * 16 * 2));
    json checkpointed = trl;
    checkpointed["checkpointing"] = "full";
    const ActivationSet ct = acts(toy(checkpointed));
    QCOMPARE(tensorBytes(ct, "first layer input (checkpoint; the embedding's 16-bit output)"), Bytes(32 * 64 * 2));
    QCOMPARE(tensorBytes(ct, "layer input (checkpoint; fp32 residual stream)"), Bytes(32 * 64 * 4));
    // Only the first n layers checkpointed (the toy has 2): the first input is still the embedding's 16-bit output.
    json firstLayers = trl;
    firstLayers["checkpointing"] = json { { "layers", 2 } };
    const ActivationSet fl = acts(toy(firstLayers));
    QCOMPARE(tensorBytes(fl, "first layer input (checkpoint; the embedding's 16-bit output)"), Bytes(32 * 64 * 2));
    QCOMPARE(tensorBytes(fl, "layer input (checkpoint, first layers of the stage)"), Bytes(32 * 64 * 4));
    checkpointed["finetune"]["kbit_preparation"] = "peft";
    QCOMPARE(
        tensorBytes(acts(toy(checkpointed)), "layer input (checkpoint; fp32 residual stream)"), Bytes(2 * 32 * 64 * 4));
    // Without autocast every activation after the first norm becomes fp32, which is not modelled: a lower bound.
    json pure = trl;
    pure["precision"] = "bf16";
    QVERIFY(estimate(toy(pure)).lowerBound.find("without autocast") != std::string::npos);
    json dora = trl;
    dora["finetune"]["dora"] = true;
    QVERIFY(estimate(toy(dora)).lowerBound.find("with DoRA") != std::string::npos);
    // Refused where neither prepares the model, naming the key.
    const std::string key = "run.finetune.kbit_preparation";
    json lora = trl;
    lora["finetune"] = { { "method", "lora" }, { "kbit_preparation", "peft" } };
    QCOMPARE(refusal(lora).keyPath(), key);
    json tune = peft;
    tune["framework"] = "torchtune";
    QCOMPARE(refusal(tune).keyPath(), key);
    json torchao = peft;
    torchao["finetune"]["quant"] = "torchao-nf4";
    QCOMPARE(refusal(torchao).keyPath(), key);
    // Written back only when set.
    QVERIFY(!scenarioToJson(toy(trl))["run"]["finetune"].contains("kbit_preparation"));
    QCOMPARE(scenarioToJson(toy(none))["run"]["finetune"]["kbit_preparation"], json("none"));
}

// DoRA as PEFT 0.18.0 runs it (tuners/lora/variants.py DoraLinearVariant.forward, dora.py DoraLinearLayer@77daa8d3),
// q (64 -> 64) and v (64 -> 32) adapted at rank 8 on the toy, 32 tokens, bf16 without autocast, so x is cast to the
// fp32 adapters' type: (m / n - 1) * base + (m / n) * lora_B(lora_A(x)) * s keeps the base output (bf16), B's
// output (fp32) and n, m / n - 1, m / n (fp32, one per output); the norm's transients are x_eye (in x in), A's
// output (in x r), B A, the weight's fp32 copy, s B A and W + s B A (in x out, fp32).
void TstFrameworks::doraAsPeftRunsIt()
{
    const json dora = {
        { "framework", "hf-transformers" }, { "precision", "bf16" },
        { "finetune",
            { { "method", "lora" }, { "rank", 8 }, { "targets", { "q", "v" } }, { "dropout", 0.0 }, { "dora", true } } }
    };
    const ActivationSet a = acts(toy(dora));
    QCOMPARE(tensorBytes(a, "LoRA q: DoRA base layer output (kept by (m / n - 1) x base)"), Bytes(2 * 32 * 64 * 2));
    QCOMPARE(tensorBytes(a, "LoRA q: DoRA B output (kept by (m / n) x lora)"), Bytes(2 * 32 * 64 * 4));
    QCOMPARE(tensorBytes(a, "LoRA q: DoRA weight norm n, m / n - 1 and m / n"), Bytes(2 * 3 * 64 * 4));
    QCOMPARE(tensorBytes(a, "LoRA v: DoRA B output (kept by (m / n) x lora)"), Bytes(2 * 32 * 32 * 4));
    json plainLora = dora;
    plainLora["finetune"].erase("dora");
    const ActivationSet l = acts(toy(plainLora));
    QCOMPARE(a.bytes - l.bytes,
        Bytes(2 * (32 * 64 * 2 + 32 * 64 * 4 + 3 * 64 * 4 + 32 * 32 * 2 + 32 * 32 * 4 + 3 * 32 * 4)));
    // q's norm is the widest: 64 x 64 x 4 B for x_eye, B A, the weight's copy, s B A and the sum, and A's 64 x 8 x 4 B.
    QCOMPARE(a.doraForwardBytes, Bytes(5 * 64 * 64 * 4 + 64 * 8 * 4));
    // Under autocast (mixed-bf16) A and B run in bf16 (on autocast's cast of x_eye), x stays fp32.
    json autocast = dora;
    autocast["precision"] = "mixed-bf16";
    const ActivationSet ac = acts(toy(autocast));
    QCOMPARE(tensorBytes(ac, "LoRA q: DoRA B output (kept by (m / n) x lora)"), Bytes(2 * 32 * 64 * 2));
    QCOMPARE(ac.doraForwardBytes,
        Bytes(64 * 64 * 4 + 64 * 64 * 2 + 64 * 8 * 2 + 64 * 64 * 2 + 64 * 64 * 4 + 64 * 64 * 2 + 64 * 64 * 4));
    // Dropout: base = F.linear(dropout(x), W.to(x.dtype)) keeps the fp32 weight copy and its own fp32 output; the
    // copy leaves the transients (it is counted as kept).
    json dropped = dora;
    dropped["finetune"]["dropout"] = 0.05;
    const ActivationSet d = acts(toy(dropped));
    QCOMPARE(
        tensorBytes(d, "LoRA q: DoRA weight in x's type (F.linear's, kept for x's gradient)"), Bytes(2 * 64 * 64 * 4));
    QCOMPARE(tensorBytes(d, "LoRA q: DoRA base output F.linear(dropout(x), W) (kept by (m / n - 1) x base)"),
        Bytes(2 * 32 * 64 * 4));
    QCOMPARE(tensorBytes(d, "LoRA q: DoRA base layer output (kept by (m / n - 1) x base)"), Bytes(0));
    QCOMPARE(d.doraForwardBytes, Bytes(4 * 64 * 64 * 4 + 64 * 8 * 4));
    // The magnitudes train: 64 + 32 per layer beside A and B; FLOPs add B A through x_eye and the norm per forward,
    // (2 in^2 r + 2 in r out + 4 in out) / 32 tokens per layer.
    const Report rd = estimate(toy(dora)), rl = estimate(toy(plainLora));
    QCOMPARE(rd.loraParams - rl.loraParams, Count(2 * (64 + 32)));
    const double q = (2.0 * 64 * 64 * 8 + 2.0 * 64 * 8 * 64 + 4.0 * 64 * 64) / 32,
                 v = (2.0 * 64 * 64 * 8 + 2.0 * 64 * 8 * 32 + 4.0 * 64 * 32) / 32;
    QCOMPARE(rd.flops.perToken - rl.flops.perToken, 2 * (q + v) + 2.0 * 2 * (64 + 32));
    QCOMPARE(rd.trainableParams - rl.trainableParams, Count(2 * (64 + 32)));
    // PEFT's and only PEFT's; written back only when on.
    QVERIFY(scenarioToJson(toy(dora))["run"]["finetune"]["dora"] == json(true));
    QVERIFY(!scenarioToJson(toy(plainLora))["run"]["finetune"].contains("dora"));
    json other = dora;
    other["framework"] = "plain";
    QCOMPARE(refusal(other).keyPath(), std::string("run.finetune.dora"));
    json full = dora;
    full["finetune"]["method"] = "full";
    QCOMPARE(refusal(full).keyPath(), std::string("run.finetune.dora"));
    json tp = dora;
    tp["parallelism"] = { { "gpus", 2 }, { "tensor_parallel", 2 } };
    QCOMPARE(refusal(tp).keyPath(), std::string("run.finetune.dora"));
}

// Megatron-LM core_v0.15.0 --use-precision-aware-optimizer (distrib_optimizer.py: master_param init_shard(int16) with
// store_param_remainders and bf16; exp_avg/exp_avg_sq init_shard(exp_avg_dtype)): on the toy over 2 GPUs with the
// distributed optimizer, the master shard is 2 B a weight instead of 4 and bf16 moments are 2 B each instead of 4.
void TstFrameworks::megatronPrecisionAwareOptimizer()
{
    const json par = { { "gpus", 2 }, { "zero_stage", 1 } };
    const Report base = estimate(toy({ { "framework", "megatron" }, { "parallelism", par } }));
    const Report aware
        = estimate(toy({ { "framework", "megatron" }, { "parallelism", par }, { "precision_aware_optimizer", true } }));
    const Report bf16 = estimate(toy({ { "framework", "megatron" }, { "parallelism", par },
        { "precision_aware_optimizer", true }, { "optimizer_state_dtype", "bf16" } }));
    QVERIFY(base.bytesOf("master_weights") > 0);
    QCOMPARE(aware.bytesOf("master_weights") * 2, base.bytesOf("master_weights"));
    QCOMPARE(aware.bytesOf("optimizer_states"), base.bytesOf("optimizer_states"));
    QCOMPARE(bf16.bytesOf("optimizer_states") * 2, base.bytesOf("optimizer_states"));
    QCOMPARE(bf16.bytesOf("master_weights"), aware.bytesOf("master_weights"));
    // The toy's P parameters, sharded over 2: master P / 2 x 2 B.
    QCOMPARE(aware.bytesOf("master_weights"), Bytes(base.trainableParams / 2 * 2));
    QCOMPARE(
        refusal({ { "framework", "megatron" }, { "parallelism", par }, { "optimizer_state_dtype", "bf16" } }).keyPath(),
        std::string("run.optimizer_state_dtype"));
    QCOMPARE(refusal({ { "framework", "torchtitan" }, { "precision_aware_optimizer", true } }).keyPath(),
        std::string("run.precision_aware_optimizer"));
    QCOMPARE(refusal({ { "framework", "megatron" }, { "precision_aware_optimizer", true } }).keyPath(),
        std::string("run.precision_aware_optimizer")); // no distributed optimizer (zero_stage 0)
    const json back = scenarioToJson(toy({ { "framework", "megatron" }, { "parallelism", par },
        { "precision_aware_optimizer", true }, { "optimizer_state_dtype", "bf16" } }))["run"];
    QCOMPARE(back["precision_aware_optimizer"], json(true));
    QCOMPARE(back["optimizer_state_dtype"], json("bf16"));
}

// DeepSpeed v0.16.4 (runtime/zero/stage_1_and_2.py, stage3.py, bf16_optimizer.py@e2dc3eeb), on the toy over 4 GPUs
// with a 1,000-element bucket: every tensor of the toy divides by 4, so each rank's partition is P / 4.
void TstFrameworks::zeroAsDeepSpeedRunsIt()
{
    const auto run = [](int zero, json extra = json::object()) {
        json r = { { "framework", "deepspeed" }, { "parallelism", { { "gpus", 4 }, { "zero_stage", zero } } } };
        if (zero > 0)
            r["parallelism"]["reduce_bucket_size"] = 1000;
        r.update(extra, true);
        return estimate(toy(r));
    };
    const Report z2 = run(2);
    const Count p = z2.stepInputs.trainableParamsLocal, part = p / 4;
    QCOMPARE(p % 4, Count(0));
    // ZeRO-2: 16-bit weights, the 16-bit gradient partition (grads_in_partition), fp32 master and Adam partitions.
    QCOMPARE(z2.bytesOf("weights"), Bytes(2 * p));
    QCOMPARE(z2.bytesOf("gradients"), Bytes(2 * part));
    QCOMPARE(z2.bytesOf("master_weights"), Bytes(4 * part));
    QCOMPARE(z2.bytesOf("optimizer_states"), Bytes(8 * part));
    // The step flattens the 16-bit partition and casts it to fp32 (2 + 4 B a parameter of the partition); the
    // bucket (1,000 x 2 B) lives through each backward, the loss's included.
    QCOMPARE(z2.stepInputs.optimizerTemporaries, Bytes(6 * part));
    QCOMPARE(z2.stepInputs.backwardBucket, Bytes(2000));
    QCOMPARE(z2.stepInputs.layerGradientBucket, Bytes(0));
    // At the step the states are DeepSpeed's own estimate, 2P + 18P/N (estimate_zero2_model_states_mem_needs:
    // "2_grads_16bit + 4_grads_32bit + 4_params_32bit + 8_optimizer_states_32bit"), plus the brief 16-bit flat copy.
    QCOMPARE(z2.bytesOf("weights") + z2.bytesOf("gradients") + z2.bytesOf("master_weights")
            + z2.bytesOf("optimizer_states") + z2.stepInputs.optimizerTemporaries - 2 * part,
        Bytes(2 * p + 18 * part));
    // overlap_comm keeps two buckets.
    QCOMPARE(run(2, { { "parallelism", { { "overlap_comm", true } } } }).stepInputs.backwardBucket, Bytes(4000));
    // ZeRO-1: no hooks, so backward leaves the whole 16-bit gradients; the bucket is filled at the boundary.
    const Report z1 = run(1);
    QCOMPARE(z1.bytesOf("gradients"), Bytes(2 * p));
    QCOMPARE(z1.stepInputs.backwardBucket, Bytes(0));
    QCOMPARE(z1.stepInputs.optimizerTemporaries, std::max(Bytes(6 * part), Bytes(2000)));
    // ZeRO-3: the bucket is allocated at setup and kept; reduce_scatter_coalesced concatenates a bucket's partitions.
    const Report z3 = run(3);
    Bytes resident = 0;
    for (const Component& c : z3.overheadParts)
        resident += c.key == std::string_view("ds_ipg_bucket") ? c.bytes : 0;
    QCOMPARE(resident, Bytes(2000));
    QCOMPARE(z3.stepInputs.layerGradientBucket, Bytes(2000));
    QCOMPARE(z3.bytesOf("gradients"), Bytes(2 * part));
    // Without ZeRO, bf16 runs BF16_Optimizer: an fp32 gradient buffer and the bf16 gradients beside it.
    const Report z0 = run(0);
    QCOMPARE(z0.bytesOf("gradients"), Bytes(6 * p));
    QCOMPARE(run(0, { { "precision", "mixed-fp16" } }).stepInputs.optimizerTemporaries, Bytes(4 * p));
    // The same ZeRO-2 run as plain PyTorch's ZeRO keeps fp32 gradients and DDP's two 25 MiB buckets.
    json plainRun = { { "parallelism", { { "gpus", 4 }, { "zero_stage", 2 } } } };
    const Report plain = estimate(toy(plainRun));
    QCOMPARE(plain.bytesOf("gradients"), Bytes(4 * part));
    // The keys are DeepSpeed's: elsewhere they are refused by name.
    plainRun["parallelism"]["reduce_bucket_size"] = 1000;
    try {
        (void)estimate(toy(plainRun));
        QFAIL("reduce_bucket_size without DeepSpeed was accepted");
    } catch (const InputError& e) {
        QCOMPARE(e.keyPath(), std::string("run.parallelism.reduce_bucket_size"));
    }
}

// Checkpointing {"layers": n}: the first n layers of the stage keep only their input, the others everything
// (Megatron-LM transformer_block.py@0d7e02b _checkpointed_forward with recompute_method "block").
void TstFrameworks::firstLayersCheckpointed()
{
    const json one = { { "checkpointing", { { "layers", 1 } } } };
    const ActivationSet none = acts(toy()), full = acts(toy({ { "checkpointing", "full" } })), half = acts(toy(one));
    // Layer 0 keeps its input, 32 tokens of 64 in bf16; layer 1 its whole set, the one a full run rebuilds.
    QCOMPARE(half.checkpointInputBytes, Bytes(32 * 64 * 2));
    QCOMPARE(half.recomputeBytes, full.recomputeBytes);
    QCOMPARE(half.bytes, none.bytes - full.recomputeBytes + half.checkpointInputBytes);
    QCOMPARE(tensorBytes(half, "layer input (checkpoint, first layers of the stage)"), Bytes(32 * 64 * 2));
    // The peak lies between the full and the unchecked run's, and half the layers' forward is recomputed.
    const Report rn = estimate(toy()), rf = estimate(toy({ { "checkpointing", "full" } })), rh = estimate(toy(one));
    QVERIFY(rf.peak <= rh.peak && rh.peak <= rn.peak);
    QVERIFY(rf.peak < rn.peak);
    // (flash attention's own backward recomputation is in all three alike)
    QCOMPARE(
        rh.flops.hardwarePerStep - rn.flops.hardwarePerStep, (rf.flops.hardwarePerStep - rn.flops.hardwarePerStep) / 2);
    // Every layer checkpointed is full checkpointing; the count is read, written back and checked.
    QCOMPARE(acts(toy({ { "checkpointing", { { "layers", 2 } } } })).bytes, full.bytes);
    QCOMPARE(scenarioToJson(toy(one))["run"]["checkpointing"], json({ { "layers", 1 } }));
    try {
        (void)estimate(toy({ { "checkpointing", { { "layers", 3 } } } }));
        QFAIL("3 of 2 layers were accepted");
    } catch (const InputError& e) {
        QCOMPARE(e.keyPath(), std::string("run.checkpointing.layers"));
    }
}

// CohereLayerNorm (models/cohere/modeling_cohere.py@015bfeb8): a weight-only LayerNorm computed in fp32; in a
// parallel block its output feeds attention and the MLP. Full fine-tuning keeps per layer the centered fp32 input,
// the fp32 rsqrt, the fp32 normalized tensor (the weight's gradient) and the weight's fp32 copy.
void TstFrameworks::cohereLayerNorm()
{
    const json model = { { "norm", "layernorm" }, { "norm_bias", false }, { "parallel_residual", true },
        { "shared_attention_norm", true } };
    const ActivationSet a = acts(toy({ { "framework", "hf-transformers" } }, model));
    QCOMPARE(tensorBytes(a, "input norm: centered fp32 input (x - mean)"), Bytes(2 * 32 * 64 * 4));
    QCOMPARE(tensorBytes(a, "input norm: rsqrt (fp32)"), Bytes(2 * 32 * 4));
    QCOMPARE(tensorBytes(a, "input norm: normalized (fp32)"), Bytes(2 * 32 * 64 * 4));
    QCOMPARE(tensorBytes(a, "input norm: fp32 copy of the weight"), Bytes(2 * 64 * 4));
    QCOMPARE(tensorBytes(a, "pre-MLP norm: centered fp32 input (x - mean)"), Bytes(0)); // one norm per layer
    // The weights: one 64-wide norm per layer and the final one, no biases; the same model with LayerNorm biases
    // has 2 x 64 + 64 more.
    json biased = model;
    biased["norm_bias"] = true;
    QCOMPARE(estimate(toy(json::object(), biased)).params.total - estimate(toy(json::object(), model)).params.total,
        Count(3 * 64));
}

// Interleaved 1F1B (Megatron-LM schedules.py@0d7e02b get_pp_rank_microbatches; PyTorch's ScheduleInterleaved1F1B):
// rank r runs 2 (pp - 1 - r) + (v - 1) g chunk forwards before its first backward, g micro-batches per chunk in turn.
void TstFrameworks::interleavedPipeline()
{
    const json par = { { "gpus", 2 }, { "pipeline_parallel", 2 }, { "pipeline_schedule", "interleaved-1F1B" },
        { "virtual_stages", 2 } };
    const json model = { { "num_layers", 8 } };
    const Scenario sc
        = toy({ { "parallelism", par }, { "gradient_accumulation_steps", 2 }, { "gpu", "h100-sxm-80gb" } }, model);
    // 8 layers in 4 chunks of 2: rank 0 holds chunks 0 and 2, rank 1 chunks 1 and 3; g = pp = 2 micro-batches.
    // The last rank: warm-up (2 - 1) x 2 = 2, so 3 chunk passes (6 layers) alive, the head's among them.
    const PipelineRank last = pipelineRank(sc.model, sc.run, 1);
    QCOMPARE(last.params.layers(), Count(4));
    QCOMPARE(last.chunksInFlight, Count(3));
    QCOMPARE(last.activations.layers(), Count(6));
    QCOMPARE(last.inFlight, Count(1));
    QVERIFY(last.activations.last && !last.activations.first);
    // Rank 0: warm-up 2 x 1 + 2 = 4 covers all 2 x 2 chunk passes, both micro-batches' embeddings among them.
    const PipelineRank first = pipelineRank(sc.model, sc.run, 0);
    QCOMPARE(first.chunksInFlight, Count(4));
    QCOMPARE(first.activations.layers(), Count(8));
    QCOMPARE(first.activations.embeddingMicroBatches, Count(2));
    const ActivationSet one = trainingActivations(sc.model, sc.run, StageSlice { 8, 0, true, false });
    // The second micro-batch's token ids: 2 x 16 int64.
    QCOMPARE(trainingActivations(sc.model, sc.run, first.activations).bytes, one.bytes + Bytes(2 * 16 * 8));
    // The published case's shape: 32 layers, pp 4 x 8 chunks, 4 micro-batches: 29 chunks on the last rank, all 32
    // (4 embeddings) on the first.
    const Scenario mega = toy({ { "parallelism",
                                    { { "gpus", 8 }, { "pipeline_parallel", 4 },
                                        { "pipeline_schedule", "interleaved-1F1B" }, { "virtual_stages", 8 } } },
                                  { "gradient_accumulation_steps", 4 }, { "framework", "megatron" } },
        { { "num_layers", 32 } });
    QCOMPARE(pipelineRank(mega.model, mega.run, 3).chunksInFlight, Count(29));
    QCOMPARE(pipelineRank(mega.model, mega.run, 0).chunksInFlight, Count(32));
    QCOMPARE(pipelineRank(mega.model, mega.run, 0).activations.embeddingMicroBatches, Count(4));
    // torchtitan's 405B split (pipelining_utils.py@9dec370 generate_split_points): 126 layers in 16 stages are
    // 7, 8 x 14, 7, so rank 0 holds chunks 0 and 8 (7 + 8), rank 1 chunks 1 and 9 (8 + 8), rank 7 chunks 7 and 15
    // (8 + 7); in 8 stages (1F1B) 15, 16 x 6, 15. Plain eager code gives the remainder to the first stages.
    const json p8 = { { "gpus", 8 }, { "pipeline_parallel", 8 }, { "pipeline_schedule", "interleaved-1F1B" },
        { "virtual_stages", 2 } };
    const json deep = { { "num_layers", 126 } };
    const Scenario split
        = toy({ { "parallelism", p8 }, { "gradient_accumulation_steps", 8 }, { "framework", "torchtitan" } }, deep);
    QCOMPARE(pipelineRank(split.model, split.run, 0).params.layers(), Count(15));
    QCOMPARE(pipelineRank(split.model, split.run, 1).params.layers(), Count(16));
    QCOMPARE(pipelineRank(split.model, split.run, 7).params.layers(), Count(15));
    // Rank 7's first backward: warm-up (2 - 1) x 8 = 8 passes of chunk 7 (8 layers) and 1 of chunk 15 (7 layers).
    QCOMPARE(pipelineRank(split.model, split.run, 7).activations.layers(), Count(8 * 8 + 7));
    const json p8plain = { { "gpus", 8 }, { "pipeline_parallel", 8 } };
    const Scenario titan1f1b = toy(
        { { "parallelism", p8plain }, { "gradient_accumulation_steps", 8 }, { "framework", "torchtitan" } }, deep);
    QCOMPARE(pipelineRank(titan1f1b.model, titan1f1b.run, 0).params.layers(), Count(15));
    QCOMPARE(pipelineRank(titan1f1b.model, titan1f1b.run, 6).params.layers(), Count(16));
    QCOMPARE(pipelineRank(titan1f1b.model, titan1f1b.run, 7).params.layers(), Count(15));
    const Scenario plain1f1b = toy({ { "parallelism", p8plain }, { "gradient_accumulation_steps", 8 } }, deep);
    QCOMPARE(pipelineRank(plain1f1b.model, plain1f1b.run, 0).params.layers(), Count(16));
    QCOMPARE(pipelineRank(plain1f1b.model, plain1f1b.run, 6).params.layers(), Count(15));
    // PyTorch's rounds: 6 micro-batches on 4 ranks are one round of g = 6, so rank 0's warm-up 6 + 6 covers all 12.
    const Scenario titan = toy({ { "parallelism",
                                     { { "gpus", 4 }, { "pipeline_parallel", 4 },
                                         { "pipeline_schedule", "interleaved-1F1B" }, { "virtual_stages", 2 } } },
                                   { "gradient_accumulation_steps", 6 }, { "framework", "torchtitan" } },
        model);
    QCOMPARE(pipelineRank(titan.model, titan.run, 0).chunksInFlight, Count(12));
    QCOMPARE(pipelineRank(titan.model, titan.run, 3).chunksInFlight, Count(7)); // (2 - 1) x 6 + 1
    // The report: one pass of the chunks in flight, the bubble cut by the chunks per rank.
    const Report r = estimate(sc);
    QCOMPARE(r.microBatchesInFlight, Count(1));
    json plainPar = par;
    plainPar.erase("pipeline_schedule");
    plainPar.erase("virtual_stages");
    const Report oneF = estimate(
        toy({ { "parallelism", plainPar }, { "gradient_accumulation_steps", 2 }, { "gpu", "h100-sxm-80gb" } }, model));
    QCOMPARE(oneF.microBatchesInFlight, Count(2)); // 1F1B: two micro-batches of the stage's 4 layers
    QVERIFY(r.flops.time.pipelineS < oneF.flops.time.pipelineS);
    // Written back only when interleaved; what the schedules cannot run is refused naming the key.
    const json back = scenarioToJson(sc)["run"]["parallelism"];
    QCOMPARE(back["pipeline_schedule"], json("interleaved-1F1B"));
    QCOMPARE(back["virtual_stages"], json(2));
    QVERIFY(!scenarioToJson(toy())["run"]["parallelism"].contains("pipeline_schedule"));
    auto refused = [&](json p, const json& run, const json& m) {
        json extra = run;
        extra["parallelism"] = p;
        try {
            (void)estimate(toy(extra, m));
        } catch (const InputError& e) {
            return e.keyPath();
        }
        return std::string("accepted");
    };
    const json two = { { "gradient_accumulation_steps", 2 } };
    // Megatron-LM asserts equal chunks; torchtitan's split points and plain's remainder-first split take any.
    QCOMPARE(
        refused(par, { { "gradient_accumulation_steps", 2 }, { "framework", "megatron" } }, { { "num_layers", 6 } }),
        std::string("run.parallelism.virtual_stages"));
    QCOMPARE(refused(par, two, { { "num_layers", 6 } }), std::string("accepted"));
    QCOMPARE(refused(par, two, { { "num_layers", 3 } }), std::string("run.parallelism.virtual_stages")); // 4 chunks
    QCOMPARE(
        refused(par, { { "gradient_accumulation_steps", 3 } }, model), std::string("run.gradient_accumulation_steps"));
    json zero2 = par;
    zero2["zero_stage"] = 2;
    zero2["gpus"] = 4;
    QCOMPARE(refused(zero2, two, model), std::string("run.parallelism.zero_stage"));
    json oneChunk = par;
    oneChunk["virtual_stages"] = 1;
    QCOMPARE(refused(oneChunk, two, model), std::string("run.parallelism.virtual_stages"));
    json chunksWithout = par;
    chunksWithout.erase("pipeline_schedule");
    QCOMPARE(refused(chunksWithout, two, model), std::string("run.parallelism.virtual_stages"));
    QCOMPARE(refused(par, { { "gradient_accumulation_steps", 2 }, { "checkpointing", { { "layers", 1 } } } }, model),
        std::string("run.checkpointing"));
    json badName = par;
    badName["pipeline_schedule"] = "ZBV";
    QCOMPARE(refused(badName, two, model), std::string("run.parallelism.pipeline_schedule"));
}

// FSDP2 inside PyTorch's pipelining (torch 2.6 stage.py backward_maybe_with_nosync: set_reshard_after_backward and
// set_requires_gradient_sync False on every micro-batch; _fsdp_param.py to_accumulated_grad_if_needed): every block
// stays gathered in bf16 and the gradients accumulate unsharded in fp32 until the last micro-batch.
void TstFrameworks::fsdpInsidePipelining()
{
    const auto base8 = [](Count elements) { return elements / 8; }; // every toy tensor splits evenly over 8 GPUs
    const json fsdp = { { "gpus", 8 }, { "zero_stage", 3 }, { "sharding", "fsdp2" }, { "pipeline_parallel", 2 } };
    const Scenario sc = toy({ { "parallelism", fsdp }, { "gradient_accumulation_steps", 2 } });
    const Report r = estimate(sc);
    // Stage 1 of 2 (the last): layer 1, the final norm and the LM head. Per layer: q 64x64, k and v 64x32, o 64x64,
    // gate, up, down 64x128 each, two norms of 64: 36,864 + 128; the final norm 64 and the head 64 x 1000.
    const Count layer = 64 * 64 * 2 + 64 * 32 * 2 + 64 * 128 * 3 + 2 * 64, head = 64 + 64 * 1000;
    const Count embedding = 1000 * 64;
    const Count local = r.stageIndex == 0 ? embedding + layer : layer + head;
    QCOMPARE(r.bytesOf("weights"), Bytes(2 * local)); // whole, bf16: no reshard after backward
    QCOMPARE(r.bytesOf("gradients"), Bytes(4 * local)); // whole, fp32: no reduce-scatter before the last micro-batch
    QCOMPARE(r.bytesOf("master_weights"), Bytes(4 * ceilDiv(local, 4))); // sharded over the 4 data-parallel GPUs
    const auto warned = [](const Report& rep) {
        return std::any_of(rep.warnings.begin(), rep.warnings.end(),
            [](const std::string& w) { return w.starts_with("run.parallelism.pipeline_parallel: FSDP inside"); });
    };
    QVERIFY(warned(r));
    // No gathered-layer overhead beside them: the weights component holds them.
    for (const Component& c : r.overheadParts)
        QVERIFY(c.key != "zero3_gather");
    // Without pipelining FSDP2 keeps no bf16 shard of the blocks, but its root (the embedding, the final norm and
    // the LM head, outside the blocks) is never resharded after forward (_fsdp_state.py _lazy_init).
    json flat = fsdp;
    flat["pipeline_parallel"] = 1;
    QCOMPARE(estimate(toy({ { "parallelism", flat } })).bytesOf("weights"), Bytes(2 * (embedding + head)));
    // Pure bf16 (no fp32 master): the shard of every tensor stays, the root is gathered beside it.
    QCOMPARE(estimate(toy({ { "parallelism", flat }, { "precision", "bf16" } })).bytesOf("weights"),
        Bytes(2 * base8(embedding + 2 * layer + head) + 2 * (embedding + head)));
    // Experts are their own groups, not the root: an MoE model's root is still the embedding, final norm and head.
    const Report moe
        = estimate(toy({ { "parallelism", flat } }, { { "moe", { { "num_experts", 4 }, { "top_k", 2 } } } }));
    QCOMPARE(moe.bytesOf("weights"), Bytes(2 * (embedding + head)));
    // LoRA: the frozen base keeps its bf16 shard, and the root is gathered beside it.
    const Count base = embedding + 2 * layer + head;
    QCOMPARE(estimate(toy({ { "parallelism", flat }, { "finetune", { { "method", "lora" } } } })).bytesOf("weights"),
        Bytes(2 * base / 8 + 2 * (embedding + head)));
    // reshard_after_forward false keeps every weight whole and the gradients sharded.
    flat["reshard_after_forward"] = false;
    const Scenario kept = toy({ { "parallelism", flat } });
    const Report k = estimate(kept);
    const Count all = embedding + 2 * layer + head;
    QCOMPARE(k.bytesOf("weights"), Bytes(2 * all));
    QCOMPARE(k.bytesOf("gradients"), Bytes(4 * ceilDiv(all, 8)));
    QVERIFY(!warned(k));
    QCOMPARE(scenarioToJson(kept)["run"]["parallelism"]["reshard_after_forward"], json(false));
    json zero = flat;
    zero["sharding"] = "zero";
    QCOMPARE(refusal({ { "parallelism", zero } }).keyPath(), std::string("run.parallelism.reshard_after_forward"));

    // torchtitan's stages (torch 2.6 stage.py): a receive buffer per micro-batch for the input (stages after the
    // first) and for the output's gradient (stages before the last), each the tensor between stages, 2 x 16 x 64
    // in bf16; output_chunks keeps each output (the last stage's: the logits, 2 x 16 x 1000 bf16) and the input's
    // .grad stays, both until the next step.
    const Scenario titan
        = toy({ { "framework", "torchtitan" }, { "parallelism", fsdp }, { "gradient_accumulation_steps", 2 } });
    const Bytes boundary = 2 * 16 * 64 * 2;
    const PipelineRank first = pipelineRank(titan.model, titan.run, 0), last = pipelineRank(titan.model, titan.run, 1);
    QCOMPARE(first.buffers.receive, 2 * boundary);
    QCOMPARE(first.buffers.outputKept, boundary);
    QCOMPARE(first.buffers.inputGradKept, Bytes(0));
    QCOMPARE(last.buffers.receive, 2 * boundary);
    QCOMPARE(last.buffers.outputKept, Bytes(2 * 16 * 1000 * 2));
    QCOMPARE(last.buffers.inputGradKept, boundary);
    const Report t = estimate(titan);
    Bytes receive = 0;
    for (const Component& c : t.overheadParts)
        if (c.key == "pipeline_buffers")
            receive = c.bytes;
    QCOMPARE(receive, 2 * boundary);
    // Three stages: the middle one receives both ways.
    const Scenario mid
        = toy({ { "framework", "torchtitan" }, { "parallelism", { { "gpus", 3 }, { "pipeline_parallel", 3 } } },
                  { "gradient_accumulation_steps", 3 } },
            { { "num_layers", 3 } });
    QCOMPARE(pipelineRank(mid.model, mid.run, 1).buffers.receive, 3 * 2 * boundary);
    QCOMPARE(pipelineRank(mid.model, mid.run, 1).buffers.inputGradKept, boundary);
    QCOMPARE(pipelineRank(mid.model, mid.run, 1).buffers.outputKept, boundary);
    // Interleaved, each of a rank's stages has its own: pp 2 x 2 chunks of 2 layers, 2 micro-batches. Rank 0 holds
    // the model's first stage (no input) and its third; rank 1 the second and the last (no gradient, the logits).
    const Scenario inter = toy({ { "framework", "torchtitan" },
                                   { "parallelism",
                                       { { "gpus", 2 }, { "pipeline_parallel", 2 },
                                           { "pipeline_schedule", "interleaved-1F1B" }, { "virtual_stages", 2 } } },
                                   { "gradient_accumulation_steps", 2 } },
        { { "num_layers", 8 } });
    const PipelineBuffers r0 = pipelineRank(inter.model, inter.run, 0).buffers,
                          r1 = pipelineRank(inter.model, inter.run, 1).buffers;
    QCOMPARE(r0.receive, 2 * 3 * boundary);
    QCOMPARE(r0.outputKept, 2 * boundary);
    QCOMPARE(r0.inputGradKept, boundary);
    QCOMPARE(r1.receive, 2 * 3 * boundary);
    QCOMPARE(r1.outputKept, boundary + Bytes(2 * 16 * 1000 * 2));
    QCOMPARE(r1.inputGradKept, 2 * boundary);
    // Megatron-LM's schedule is not PyTorch's: no such buffers modelled, nor FSDP's pipelining behaviour.
    const Scenario mega
        = toy({ { "framework", "megatron" }, { "parallelism", { { "gpus", 3 }, { "pipeline_parallel", 3 } } },
                  { "gradient_accumulation_steps", 3 } },
            { { "num_layers", 3 } });
    QCOMPARE(pipelineRank(mega.model, mega.run, 1).buffers.receive, Bytes(0));
    RunSpec megaFsdp = mega.run;
    megaFsdp.parallelism.zeroStage = 3;
    megaFsdp.parallelism.sharding = Sharding::Fsdp2;
    QVERIFY(!megaFsdp.fsdp2InPipeline() && !megaFsdp.fsdpKeepsGathered());
}

// torchtitan's async TP (parallelize_llama.py@9dec370: requires compile; torch _symmetric_memory
// get_symm_mem_workspace): a workspace of 2 x [b, s / tp, h] in bf16, outside the caching allocator.
void TstFrameworks::asyncTensorParallel()
{
    const json par = { { "gpus", 2 }, { "tensor_parallel", 2 }, { "sequence_parallel", true }, { "async_tp", true } };
    const Scenario sc = toy({ { "framework", "torchtitan" }, { "compile", true }, { "parallelism", par } });
    EstimateOptions replay;
    replay.replayAllocator = true;
    const Report r = estimate(sc, replay);
    Bytes workspace = 0;
    for (const Component& c : r.overheadParts)
        if (c.key == "symm_mem_workspace")
            workspace = c.bytes;
    QCOMPARE(workspace, Bytes(2 * 2 * (16 / 2) * 64 * 2));
    // The saved tensors are those of synchronous TP (the pass runs after the partition); the workspace is in the
    // device figure, not in the caching allocator's reserved one.
    json sync = par;
    sync.erase("async_tp");
    const Report s
        = estimate(toy({ { "framework", "torchtitan" }, { "compile", true }, { "parallelism", sync } }), replay);
    QCOMPARE(r.activations.bytes, s.activations.bytes);
    QCOMPARE(r.peakReservedBytes, s.peakReservedBytes);
    QVERIFY(s.peakReservedBytes > 0);
    QCOMPARE(r.peakDeviceBytes, s.peakDeviceBytes + workspace);
    QCOMPARE(scenarioToJson(sc)["run"]["parallelism"]["async_tp"], json(true));
    QCOMPARE(refusal({ { "framework", "torchtitan" }, { "parallelism", par } }).keyPath(),
        std::string("run.parallelism.async_tp")); // without compile
}

// DeepSpeed ZeRO-3 at v0.16.4 (partitioned_param_coordinator.py, partition_parameters.py, parameter_offload.py
// @e2dc3eeb). The toy: embedding 64,000, two layers of 36,992, the final norm 64 and the head 64,000: 202,048.
void TstFrameworks::deepSpeedZero3Gathers()
{
    const auto run = [](const json& extra) {
        json par = { { "gpus", 8 }, { "zero_stage", 3 } };
        par.update(extra);
        return estimate(toy({ { "framework", "deepspeed" }, { "parallelism", par } }));
    };
    const auto part = [](const Report& r, std::string_view key) {
        for (const Component& c : r.overheadParts)
            if (c.key == key)
                return c.bytes;
        return Bytes(0);
    };
    // The running module's largest tensor (a 64 x 128 MLP weight) and a prefetch of 10,000 elements and one tensor
    // more, twice while its coalesced all-gather unpacks: 2 B x (8,192 + 2 x 18,192). (The head is kept through
    // the loss, below.)
    const Report small = run({ { "stage3_prefetch_bucket_size", 10'000 } });
    QCOMPARE(part(small, "zero3_gather"), Bytes(2 * (8'192 + 2 * 18'192)));
    // The prefetch cannot exceed the model: 2 B x (8,192 + 2 x 202,048) at the default 5e7.
    QCOMPARE(part(run(json::object()), "zero3_gather"), Bytes(2 * (8'192 + 2 * 202'048)));
    // max_live_parameters caps the prefetch.
    QCOMPARE(part(run({ { "stage3_max_live_parameters", 10'000 } }), "zero3_gather"), part(small, "zero3_gather"));
    // At the loss the head (64,000 + the final norm's 64) and the layers reused within max_reuse_distance stay
    // gathered: a layer's reuse traverses the layers after it and the tail twice, 37,024 per layer on average.
    QCOMPARE(run(json::object()).stepInputs.lossGathered, Bytes(2 * (2 * 37'024 + 64'064))); // 1e9: both layers
    QCOMPARE(run({ { "stage3_max_reuse_distance", 140'000 } }).stepInputs.lossGathered,
        Bytes(2 * (37'024 + 64'064))); // 70,000 - 64,064 = 5,936 elements left: the last layer
    QCOMPARE(run({ { "stage3_max_reuse_distance", 100'000 } }).stepInputs.lossGathered, Bytes(2 * 64'064));
    // Tensors of at most the persistence threshold stay whole: the five norms of 64 at a threshold of 100.
    QCOMPARE(part(run({ { "stage3_param_persistence_threshold", 100 } }), "ds_persistent"), Bytes(2 * 5 * 64));
    // Only DeepSpeed's ZeRO-3 has them; written back when set.
    QCOMPARE(refusal({ { "parallelism", { { "gpus", 8 }, { "zero_stage", 3 }, { "stage3_max_reuse_distance", 1 } } } })
                 .keyPath(),
        std::string("run.parallelism.stage3_max_reuse_distance"));
    const Scenario sc = toy({ { "framework", "deepspeed" },
        { "parallelism", { { "gpus", 8 }, { "zero_stage", 3 }, { "stage3_prefetch_bucket_size", 10'000 } } } });
    QCOMPARE(scenarioToJson(sc)["run"]["parallelism"]["stage3_prefetch_bucket_size"], json(10'000));
}

#include "tst_frameworks.moc"
