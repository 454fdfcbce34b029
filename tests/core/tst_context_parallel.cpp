// SPDX-License-Identifier: MIT
// Context parallelism as torchtitan runs it (run.parallelism.context_parallel), hand-computed:
// torchtitan train.py@9dec370ad26b5f8e9a7333a0e36165018262644b wraps forward and backward in
// PyTorch's context_parallel(cp_mesh, buffers=[input_ids, labels, model.freqs_cis],
// no_restore_buffers={input_ids, labels}) with the "allgather" rotate method; the ring attention is
// torch/distributed/tensor/experimental/_attention.py (_templated_ring_attention and its backward,
// read at pytorch/pytorch@0123248a; see core/src/activation_model.cpp ringAttentionBuffers).
#include "vramlab/activation_model.h"
#include "vramlab/errors.h"
#include "vramlab/estimator.h"
#include "vramlab/precision_regime.h"
#include "vramlab/scenario_io.h"
#include "vramlab/step_timeline.h"

#include <QtTest>

using namespace vramlab;
using nlohmann::json;

namespace {

/// vocab 1000, hidden 64, 2 layers, 4 heads of 16, 2 KV heads, SwiGLU 128, RoPE; micro-batch 2 x 16
/// tokens, mixed-bf16, flash, torchtitan, 4 GPUs with FSDP.
json toyDoc(const json& runExtra = json::object())
{
    json doc = json::parse(R"({"format": "vramlab.scenario", "version": 1, "name": "toy",
        "model": {"vocab_size": 1000, "hidden_size": 64, "num_layers": 2, "num_heads": 4, "num_kv_heads": 2,
                  "ffn_hidden_size": 128, "mlp": "swiglu", "norm": "rmsnorm", "position": "rope"},
        "run": {"sequence_length": 16, "micro_batch_size": 2, "precision": "mixed-bf16", "attention": "flash",
                "framework": "torchtitan",
                "parallelism": {"gpus": 4, "zero_stage": 3, "sharding": "fsdp2"}}})");
    for (auto& [k, v] : runExtra.items()) {
        if (k == "parallelism")
            doc["run"]["parallelism"].update(v);
        else
            doc["run"][k] = v;
    }
    return doc;
}

Scenario toy(const json& runExtra = json::object())
{
    return readScenario(toyDoc(runExtra));
}

ActivationSet acts(const Scenario& sc)
{
    return trainingActivations(sc.model, sc.run, StageSlice { 2, 0, true, true });
}

Bytes named(const std::vector<ActivationTensor>& list, std::string_view name)
{
    Bytes b = 0;
    for (const ActivationTensor& t : list)
        if (t.name == name)
            b += t.total();
    return b;
}

InputError refusal(const json& runExtra)
{
    try {
        (void)estimate(toy(runExtra));
    } catch (const InputError& e) {
        return e;
    }
    return InputError("", "no error");
}

json cp(Count n)
{
    return { { "parallelism", { { "context_parallel", n } } } };
}

} // namespace

class TstContextParallel : public QObject {
    Q_OBJECT
private slots:
    void ringBuffersByHand();
    void stepBuffersByHand();
    void eachGpuHoldsItsShare();
    void oneIsNoContextParallelism();
    void flopsCountSamplesOverCp();
    void timelineAddsRingBuffersPerLayer();
    void refusalsNameTheKey();
    void fsdpShardGroupRestatesTheGroup();
    void hsdpShardsWithinItsGroup();
    void keyRoundTrips();
};

// cp 2: each GPU holds s/cp = 8 tokens; repeat_kv (torchtitan model.py@9dec370) hands SDPA K and V with
// the 4 query heads, d = 16, b = 2. One local Q-sized tensor: 2 x 4 x 8 x 16 = 1024 elements.
void TstContextParallel::ringBuffersByHand()
{
    const ActivationSet s = acts(toy(cp(2)));
    const std::vector<ActivationTensor>& r = s.ringBuffers;
    // Forward, a full-size merge (step 1 on rank 1): all_gather_tensor of cat(K, V) over the ring:
    // 2 (K, V) x 2 x 4 x 16 tokens x 16 x 2 B = 8192; _SDPAMerger with convert_to_f32: the fp32
    // accumulator 4096, the block output 2048 and its fp32 copy 4096, two fp32 temporaries 8192;
    // the merged and the block lse, 2 x (2 x 4 x 8) x 4 B = 512.
    QCOMPARE(named(r, "ring attention: K and V all-gathered over the whole sequence (16-bit, allgather rotater)"),
        Bytes(8192));
    QCOMPARE(named(r, "ring attention: merged output accumulator (fp32, _SDPAMerger)"), Bytes(4096));
    QCOMPARE(named(r, "ring attention: this step's block output (16-bit)"), Bytes(2048));
    QCOMPARE(named(r, "ring attention: block output upcast to fp32"), Bytes(4096));
    QCOMPARE(named(r, "ring attention: merge temporaries out - sigmoid(lse_i - lse) * (out - out_i) (two fp32)"),
        Bytes(8192));
    QCOMPARE(named(r, "ring attention: merged and block log-sum-exp (fp32)"), Bytes(512));
    QCOMPARE(s.ringForwardBytes, Bytes(8192 + 4096 + 2048 + 4096 + 8192 + 512));
    // Backward at step 0: a new allgather rotater gathers K and V again (8192) from the contiguous
    // copies (2 x 2048) and their cat (4096); zeros_like(dtype=float32) accumulators: dQ 4096, dK + dV
    // 8192; the flash backward's 16-bit dQ 2048, dK + dV 4096; the fp32 cat of dK, dV sent (8192) and
    // permute_tensor's output (8192).
    QCOMPARE(named(r, "ring backward: K and V all-gathered again (16-bit)"), Bytes(8192));
    QCOMPARE(named(r, "ring backward: contiguous copies of the local K and V (16-bit)"), Bytes(4096));
    QCOMPARE(named(r, "ring backward: local K and V concatenated for the all-gather (16-bit)"), Bytes(4096));
    QCOMPARE(named(r, "ring backward: dQ accumulator (fp32)"), Bytes(4096));
    QCOMPARE(named(r, "ring backward: dK and dV accumulators (fp32)"), Bytes(8192));
    QCOMPARE(named(r, "ring backward: the flash backward's dQ (16-bit)"), Bytes(2048));
    QCOMPARE(named(r, "ring backward: the flash backward's dK and dV (16-bit)"), Bytes(4096));
    QCOMPARE(named(r, "ring backward: dK and dV concatenated to send (fp32)"), Bytes(8192));
    QCOMPARE(named(r, "ring backward: dK and dV received by all-to-all (fp32)"), Bytes(8192));
    QCOMPARE(s.ringBackwardBytes, Bytes(8192 + 4096 + 4096 + 4096 + 8192 + 2048 + 4096 + 8192 + 8192));
    // cp 4: the gathered K and V stay the whole sequence (8192), the local buffers halve.
    const ActivationSet four = acts(toy({ { "parallelism", { { "context_parallel", 4 }, { "gpus", 4 } } } }));
    QCOMPARE(four.ringForwardBytes, Bytes(8192 + (4096 + 2048 + 4096 + 8192 + 512) / 2));
}

// context_parallel() at the step: freqs_cis (16 positions x 8 complex64 = 1024 B) cloned to restore it,
// the load-balanced shard of it (8 x 8 x 8 B = 512) and its clone (512), the shards of input ids and
// labels (2 x 2 x 8 x 8 B = 256).
void TstContextParallel::stepBuffersByHand()
{
    const ActivationSet s = acts(toy(cp(2)));
    QCOMPARE(named(s.tensors,
                 "context_parallel: freqs_cis cloned to restore it after the step (complex64, whole "
                 "sequence)"),
        Bytes(1024));
    QCOMPARE(
        named(s.tensors, "context_parallel: load-balanced shard of freqs_cis and its clone (complex64)"), Bytes(1024));
    QCOMPARE(named(s.tensors, "context_parallel: load-balanced shards of input ids and labels (int64)"), Bytes(256));
}

// Apart from those buffers, a GPU under cp 2 keeps what the same run keeps for 8-token samples:
// the load-balanced shards are equal (chunks r and 2cp-1-r), and the loss sees the local tokens.
void TstContextParallel::eachGpuHoldsItsShare()
{
    const ActivationSet sharded = acts(toy(cp(2)));
    const ActivationSet shorter = acts(toy({ { "sequence_length", 8 } }));
    QCOMPARE(sharded.bytes - (1024 + 1024 + 256), shorter.bytes);
    QCOMPARE(sharded.recomputeBytes, shorter.recomputeBytes);
    QCOMPARE(sharded.lossForwardBytes, shorter.lossForwardBytes);
    QCOMPARE(sharded.lossBackwardBytes, shorter.lossBackwardBytes);
    QCOMPARE(sharded.largestLayerTensorBytes, shorter.largestLayerTensorBytes);
    // Full checkpointing keeps the sharded layer inputs: 2 layers x 2 x 8 x 64 x 2 B.
    const ActivationSet full
        = acts(toy({ { "parallelism", { { "context_parallel", 2 } } }, { "checkpointing", "full" } }));
    QCOMPARE(named(full.tensors, "layer input (checkpoint)"), Bytes(2 * 2 * 8 * 64 * 2));
}

// train.py@9dec370 enters no context_parallel context when cp is 1: the report is the one without the key.
void TstContextParallel::oneIsNoContextParallelism()
{
    const Report with = estimate(toy(cp(1)));
    const Report without = estimate(toy());
    QCOMPARE(with.peak, without.peak);
    QCOMPARE(with.total, without.total);
    QCOMPARE(with.activations.bytes, without.activations.bytes);
    QCOMPARE(with.activations.ringForwardBytes, Bytes(0));
    QCOMPARE(with.activations.ringBackwardBytes, Bytes(0));
    QCOMPARE(with.flops.perStep, without.flops.perStep);
    QCOMPARE(with.flops.tokensPerStep, without.flops.tokensPerStep);
    QCOMPARE(with.activations.tensors.size(), without.activations.tensors.size());
}

// 4 GPUs, cp 2: two replicas read different samples, each sample's tokens on two GPUs; every token still
// attends over the whole sequence, so the FLOPs per token are those of 16-token samples.
void TstContextParallel::flopsCountSamplesOverCp()
{
    const Report sharded = estimate(toy(cp(2)));
    const Report plain = estimate(toy());
    QCOMPARE(sharded.flops.tokensPerStep, Count(2 * 16 * 2));
    QCOMPARE(plain.flops.tokensPerStep, Count(2 * 16 * 4));
    QCOMPARE(sharded.flops.attentionPerToken, plain.flops.attentionPerToken);
    QCOMPARE(sharded.flops.perToken, plain.flops.perToken);
    // FSDP shards over dp_shard x cp = all 4 GPUs (parallelize_llama.py@9dec370: dp_shard_cp): same states.
    QCOMPARE(sharded.bytes(ComponentKind::OptimizerStates), plain.bytes(ComponentKind::OptimizerStates));
    QCOMPARE(sharded.bytes(ComponentKind::Weights), plain.bytes(ComponentKind::Weights));
}

// The ring buffers are transients of one layer: beside the forward's saved tensors, and beside the
// layer's backward.
void TstContextParallel::timelineAddsRingBuffersPerLayer()
{
    StepInputs in;
    in.training = true;
    in.layers = 2;
    in.layerActs = 1000;
    in.ringForward = 5000;
    QCOMPARE(simulateStep(in, 2, false).peak, Bytes(1000 + 5000)); // the second layer's forward
    QCOMPARE(simulateStep(in, 2, true).peak, Bytes(1000 + 5000));
    in.ringBackward = 7000;
    QCOMPARE(simulateStep(in, 2, false).peak, Bytes(1000 + 7000)); // the last layer's backward
    const StepTimeline t = simulateStep(in, 2, true);
    QCOMPARE(t.peak, Bytes(1000 + 7000));
    QVERIFY(t.atPeak.phase == StepPhase::Backward);
    const Report rep = estimate(toy(cp(2)));
    QCOMPARE(rep.stepInputs.ringForward, rep.activations.ringForwardBytes);
    QCOMPARE(rep.stepInputs.ringBackward, rep.activations.ringBackwardBytes);
}

void TstContextParallel::refusalsNameTheKey()
{
    const std::string key = "run.parallelism.context_parallel";
    for (const char* fw : { "plain", "hf-transformers", "torchtune", "litgpt", "deepspeed", "megatron" })
        QCOMPARE(refusal({ { "framework", fw }, { "parallelism", { { "context_parallel", 2 } } } }).keyPath(), key);
    QCOMPARE(refusal({ { "attention", "eager" }, { "parallelism", { { "context_parallel", 2 } } } }).keyPath(),
        std::string("run.attention"));
    // 4 GPUs: cp 3 does not divide the FSDP group; 0 is below the key's range.
    QCOMPARE(refusal(cp(3)).keyPath(), key);
    QCOMPARE(refusal(cp(0)).keyPath(), key);
    // Load balancing cuts the sequence into 2 x cp chunks: 12 tokens and cp 4 do not divide.
    QCOMPARE(refusal({ { "sequence_length", 12 }, { "parallelism", { { "context_parallel", 4 } } } }).keyPath(), key);
    // Inference ignores the key, as it ignores the other training keys.
    QCOMPARE(estimate(toy({ { "mode", "inference" }, { "parallelism", { { "context_parallel", 2 } } } })).peak,
        estimate(toy({ { "mode", "inference" } })).peak);
    const std::string why
        = refusal({ { "framework", "plain" }, { "parallelism", { { "context_parallel", 2 } } } }).what();
    QVERIFY2(why.find("torchtitan") != std::string::npos, why.c_str());
    // A plain run with cp 1 is no context parallelism and passes.
    QCOMPARE(refusal({ { "framework", "plain" }, { "parallelism", { { "context_parallel", 1 } } } }).keyPath(),
        std::string(""));
}

// torchtitan shards with FSDP over dp_shard x cp: all gpus / (tp x pp) unless dp_replicate > 1 (HSDP).
void TstContextParallel::fsdpShardGroupRestatesTheGroup()
{
    QCOMPARE(refusal({ { "parallelism", { { "context_parallel", 2 }, { "fsdp_shard_group", 4 } } } }).keyPath(),
        std::string(""));
    QCOMPARE(refusal({ { "parallelism", { { "fsdp_shard_group", 3 } } } }).keyPath(),
        std::string("run.parallelism.fsdp_shard_group")); // not a divisor of 4
    QCOMPARE(refusal({ { "parallelism", { { "context_parallel", 4 }, { "fsdp_shard_group", 2 } } } }).keyPath(),
        std::string("run.parallelism.fsdp_shard_group")); // the CP ranks are inside the shard group
    QCOMPARE(refusal({ { "parallelism", { { "fsdp_shard_group", 2 }, { "offload_optimizer", true } } } }).keyPath(),
        std::string("run.parallelism.fsdp_shard_group"));
    QCOMPARE(refusal({ { "parallelism", { { "zero_stage", 2 }, { "fsdp_shard_group", 4 } } } }).keyPath(),
        std::string("run.parallelism.fsdp_shard_group"));
    QCOMPARE(refusal({ { "parallelism", { { "fsdp_shard_group", "all" } } } }).keyPath(),
        std::string("run.parallelism.fsdp_shard_group"));
}

// HSDP (fully_shard over a (replicate, shard) mesh, torch/distributed/_composable/fsdp/fully_shard.py): each
// GPU keeps what FSDP over its shard group alone keeps; the gathers and the reduce-scatter stay inside the
// group and each shard's gradient is all-reduced across the replicas.
void TstContextParallel::hsdpShardsWithinItsGroup()
{
    const json h100 = { { "gpu", "h100-sxm-80gb" } };
    json hsdpRun = h100, fsdp4Run = h100, fsdp8Run = h100;
    hsdpRun["parallelism"] = { { "gpus", 8 }, { "fsdp_shard_group", 4 } };
    fsdp8Run["parallelism"] = { { "gpus", 8 } };
    const Scenario sc = toy(hsdpRun);
    QCOMPARE(sc.run.parallelism.shardGroup(), Count(4));
    const Report hsdp = estimate(sc), fsdp4 = estimate(toy(fsdp4Run)), fsdp8 = estimate(toy(fsdp8Run));
    for (const char* k : { "weights", "master_weights", "gradients", "optimizer_states" })
        QCOMPARE(hsdp.bytesOf(k), fsdp4.bytesOf(k));
    QVERIFY(hsdp.bytesOf("optimizer_states") > fsdp8.bytesOf("optimizer_states"));
    QCOMPARE(hsdp.bytesOf("activations"), fsdp8.bytesOf("activations"));
    // Restating every rank is FSDP, to the byte and the second.
    json restated = fsdp8Run;
    restated["parallelism"]["fsdp_shard_group"] = 8;
    const Report same = estimate(toy(restated));
    QCOMPARE(same.peak, fsdp8.peak);
    QCOMPARE(same.flops.time.dataParallelS, fsdp8.flops.time.dataParallelS);
    // Per micro-batch: 3/4 x (T x grad + 2 P x weight) inside the group of 4, and 2 x 1/2 x T/4 x grad
    // across the 2 replicas, over the GPU's link.
    const double t = static_cast<double>(hsdp.stepInputs.trainableParamsLocal);
    const double p = static_cast<double>(hsdp.stepInputs.paramsLocal);
    const PrecisionRegime reg = precisionRegime(sc.run);
    const double grad = bytesPerElement(reg.gradients), weight = bytesPerElement(reg.working);
    const double bytes = 0.75 * (t * grad + 2 * p * weight) + 2 * 0.5 * t / 4 * grad;
    QCOMPARE(hsdp.flops.time.dataParallelS, bytes / (sc.run.gpu->interconnectGBs * 1e9));
    // Written back as set, read back the same; the planner's setups shard over every rank.
    QCOMPARE(scenarioToJson(sc).at("run").at("parallelism").at("fsdp_shard_group").get<Count>(), Count(4));
    QCOMPARE(readScenario(scenarioToJson(sc)).run.parallelism.fsdpShardGroup, Count(4));
}

void TstContextParallel::keyRoundTrips()
{
    const json written
        = scenarioToJson(toy({ { "parallelism", { { "context_parallel", 2 }, { "fsdp_shard_group", 4 } } } }));
    QCOMPARE(written.at("run").at("parallelism").at("context_parallel").get<Count>(), Count(2));
    QVERIFY(!written.at("run").at("parallelism").contains("fsdp_shard_group")); // restates the default
    QCOMPARE(readScenario(written).run.parallelism.contextParallel, Count(2));
    QVERIFY(!scenarioToJson(toy(cp(1))).at("run").at("parallelism").contains("context_parallel"));
}

QTEST_APPLESS_MAIN(TstContextParallel)
#include "tst_context_parallel.moc"
