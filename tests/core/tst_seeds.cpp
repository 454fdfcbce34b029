// SPDX-License-Identifier: MIT
// The worked examples of the seed articles (/work/shared/seeds/*.txt), each under the
// conventions its article uses, reproduced through the core API. Where an article's
// arithmetic is off, the test asserts the right number and says why.
#include "vramlab/dtype.h"
#include "vramlab/estimator.h"
#include "vramlab/kv_cache.h"
#include "vramlab/model_states.h"
#include "vramlab/parameter_tensors.h"
#include "vramlab/presets.h"
#include "vramlab/report.h"
#include "vramlab/run_spec.h"
#include "vramlab/units.h"

#include <QtTest>

#include <cmath>
#include <vector>

using namespace vramlab;

namespace {

/// |a - b| <= relTol * |b|: only where an article rounds.
static bool near(double a, double b, double relTol)
{
    return std::fabs(a - b) <= relTol * std::fabs(b);
}

QByteArray msg(double got, double want)
{
    return QByteArray("got ") + QByteArray::number(got, 'g', 10) + " want " + QByteArray::number(want, 'g', 10);
}

/// A textbook "P parameters" model: one trainable tensor.
std::vector<LocalParam> textbook(Count p)
{
    return { { "P", 1, p, 1, true } };
}

/// Decimal gigabytes as the articles write them ("23.2 GB"), rounded to the byte.
constexpr Bytes GB(double x)
{
    return Bytes(x * 1e9 + 0.5);
}

/// True when `bytes` prints as `shown` GB with `decimals` decimals ("2.15 GB", "0.07 GB").
bool shownAs(Bytes bytes, double shown, int decimals)
{
    return std::fabs(double(bytes) / 1e9 - shown) <= 0.5 * std::pow(10.0, -decimals) + 1e-12;
}

constexpr Count kGemmaP = 11'600'000'000; // 000: "~11.6B parameters"

RunSpec articleRegime000()
{
    // 000's regime: bf16 working weights, fp32 gradients, fp32 Adam m and v, no master copy.
    RunSpec run;
    run.precision = Precision::MixedBf16;
    run.masterWeights = false;
    run.optimizer = Optimizer::AdamW;
    return run;
}

RunSpec articleRegime001()
{
    // 001's regime: bf16 weights and gradients, fp32 Adam, no master copy (VRAM Lab's pure
    // bf16 would keep Adam in bf16 too, hence mixed with overrides).
    RunSpec run;
    run.precision = Precision::MixedBf16;
    run.masterWeights = false;
    run.gradientDtype = DType::Bf16;
    return run;
}

Scenario preset(const char* key)
{
    Scenario sc;
    const auto p = findPreset(key);
    if (p)
        sc.model = p->model;
    return sc;
}

const ActivationTensor* tensorNamed(const Report& r, std::string_view name)
{
    for (const ActivationTensor& t : r.activations.tensors)
        if (t.name == name)
            return &t;
    return nullptr;
}

} // namespace

class TestSeeds : public QObject {
    Q_OBJECT
private slots:

    // 000_7538fca4317d34bf.txt (Gemma "4" 12B, training vs inference): "For Gemma 4 12B:
    // ~11.6B parameters, ~23.2 GB at BF16." "gradients are accumulated in FP32 ...
    // 11.6B x 4 bytes = 46.4 GB", "Adam m (FP32): 11.6B x 4 bytes = 46.4 GB", "Adam v
    // (FP32): ... 46.4 GB", "Activations (B=1, T=512): 2.4 GB", "Total: 164.8 GB".
    // The article's regime is bf16 working weights, fp32 gradients, fp32 Adam and no
    // fp32 master copy: mixed-bf16 with masterWeights = false.
    void gemma000_fullTrainingStates()
    {
        const RunSpec run = articleRegime000();
        const ModelStateBytes s = modelStates(textbook(kGemmaP), run);
        QCOMPARE(s.weights, GB(23.2));
        QCOMPARE(s.master, Bytes(0));
        QCOMPARE(s.gradients, GB(46.4));
        QCOMPARE(s.optimizer, GB(92.8)); // m + v, 46.4 GB each
        QCOMPARE(s.optimizer / 2, GB(46.4));
        // The article's itemised list (23.2 + 46.4 + 46.4 + 46.4 + 2.4) sums to 164.8 GB:
        // its total is right. (Its comparison table's "~211 GB" adds the fp32 master copy
        // of the mixed-precision section: see gemma000_comparisonTable.)
        const Bytes activations = GB(2.4);
        QCOMPARE(s.weights + s.master + s.gradients + s.optimizer + activations, GB(164.8));
        // "Other components: 162.4 GB": the model states alone are 162.4 GB.
        QCOMPARE(s.weights + s.gradients + s.optimizer, GB(162.4));
        // "requires 3x A100 80GB minimum": 164.8 / 80 = 2.06, so 3 GPUs.
        QCOMPARE(ceilDiv(GB(164.8), GB(80)), Count(3));
    }
    // 000, "ZeRO" table for 4x A100: "None (DP) ... ~167 GB", "ZeRO-1 | Optimizer state
    // (m, v) | 23.2 GB (1/4) | ~93 GB", "ZeRO-2 | + Gradients | ... | ~58 GB + activations",
    // "ZeRO-3 | + Model weights | ... | ~40 GB + activations"; then "For Gemma 4 12B on 4x
    // A100 80GB with FSDP + ZeRO-3 + gradient checkpointing: Weights per GPU: 5.8 GB (1/4),
    // Gradients per GPU: 11.6 GB (1/4, FP32), Optimizer state per GPU: 23.2 GB, Activations
    // (B=2, T=1024, ckpt): ~1.5 GB, Overhead: 3.0 GB, Total per GPU: ~45 GB".
    void gemma000_zeroTable()
    {
        RunSpec run = articleRegime000();
        run.parallelism.gpus = 4;
        QCOMPARE(run.parallelism.dataParallel(), Count(4));
        const auto states = [&](int stage) {
            run.parallelism.zeroStage = stage;
            return modelStates(textbook(kGemmaP), run);
        };
        const auto total = [](const ModelStateBytes& s) { return s.weights + s.master + s.gradients + s.optimizer; };

        const ModelStateBytes z0 = states(0);
        QCOMPARE(total(z0), GB(162.4)); // "~167 GB" = 162.4 + a few GB of activations

        const ModelStateBytes z1 = states(1); // 23.2 + 46.4 + 23.2
        QCOMPARE(z1.weights, GB(23.2));
        QCOMPARE(z1.gradients, GB(46.4));
        QCOMPARE(z1.optimizer, GB(23.2));
        QCOMPARE(total(z1), GB(92.8)); // "~93 GB"
        // "fits on 2x 80 GB" can only mean two GPUs' worth of memory: 92.8 GB per GPU is
        // more than one 80 GB A100 holds, so ZeRO-1 on 4 GPUs does not fit.
        QVERIFY(total(z1) > GB(80));

        const ModelStateBytes z2 = states(2); // 23.2 + 11.6 + 23.2
        QCOMPARE(z2.weights, GB(23.2));
        QCOMPARE(z2.gradients, GB(11.6));
        QCOMPARE(z2.optimizer, GB(23.2));
        QCOMPARE(total(z2), GB(58.0)); // "~58 GB"

        const ModelStateBytes z3 = states(3); // 5.8 + 11.6 + 23.2
        QCOMPARE(z3.weights, GB(5.8));
        QCOMPARE(z3.gradients, GB(11.6));
        QCOMPARE(z3.optimizer, GB(23.2));
        QCOMPARE(total(z3), GB(40.6)); // "~40 GB": 40.6 exactly

        // FSDP example: 5.8 + 11.6 + 23.2 + 1.5 + 3.0 = 45.1 GB, "~45 GB", fits 80 GB.
        const Bytes fsdp = total(z3) + GB(1.5) + GB(3.0);
        QCOMPARE(fsdp, GB(45.1));
        QVERIFY2(near(double(fsdp), 45e9, 0.01), msg(double(fsdp), 45e9).constData());
    }

    // 000, "Mixed Precision Training": "Working weights (BF16): 23.2 GB, Master weights
    // (FP32): 46.4 GB, Gradients (FP32): 46.4 GB, Adam m (FP32): 46.4 GB, Adam v (FP32):
    // 46.4 GB, Total (no activations): 208.8 GB" against "FP32-only training: 4 bytes x N
    // params x (weights + grads + opt) = 4 x 11.6B x (1 + 1 + 2) = 185 GB".
    // 4 x 11.6 x 4 = 185.6 GB: the article truncates it to "185 GB" (and "~185 GB").
    void gemma000_mixedVsFp32()
    {
        RunSpec mixed; // VRAM Lab's default mixed-bf16 regime keeps the fp32 master copy
        mixed.precision = Precision::MixedBf16;
        const ModelStateBytes m = modelStates(textbook(kGemmaP), mixed);
        QCOMPARE(m.weights, GB(23.2));
        QCOMPARE(m.master, GB(46.4));
        QCOMPARE(m.gradients, GB(46.4));
        QCOMPARE(m.optimizer, GB(92.8));
        const Bytes mixedTotal = m.weights + m.master + m.gradients + m.optimizer;
        QCOMPARE(mixedTotal, GB(208.8));

        RunSpec fp32;
        fp32.precision = Precision::Fp32;
        const ModelStateBytes f = modelStates(textbook(kGemmaP), fp32);
        QCOMPARE(f.weights, GB(46.4));
        QCOMPARE(f.master, Bytes(0));
        QCOMPARE(f.gradients, GB(46.4));
        QCOMPARE(f.optimizer, GB(92.8));
        const Bytes fp32Total = f.weights + f.master + f.gradients + f.optimizer;
        QCOMPARE(fp32Total, 4 * kGemmaP * 4); // 185.6 GB, not 185
        QCOMPARE(fp32Total, GB(185.6));
        // The article's point stands: mixed precision holds 2 bytes/param more (18 vs 16).
        QCOMPARE(mixedTotal - fp32Total, 2 * kGemmaP);
    }

    // 000, activations "For Gemma 4 12B with B=1, T=512 ..., one local block:
    //   Input: 1 x 512 x 3840 x 2 bytes = 3.9 MB
    //   Q (pre-RoPE): 1 x 512 x 4096 x 2 bytes = 4.2 MB
    //   K+V: 1 x 512 x 2048 x 2 x 2 = 4.2 MB
    //   Attention P: 1 x 512 x 512 x 16 x 2 = 4.2 MB (TxT per head, local window)
    //   FFN gate+up: 2 x 1 x 512 x 15360 x 2 = 31.5 MB
    //   Subtotal per block: ~48 MB; 40 local blocks: ~1,920 MB; 8 global blocks (larger T
    //   for attention P): ~500 MB; Total activations (B=1, T=512): ~2,420 MB ~ 2.4 GB"
    // and "At B=8, T=2048: Activations: 8 x (2048/512) x 2.4 GB = 38.4 GB".
    void gemma000_activationArithmetic()
    {
        const Count B = 1, T = 512;
        const Bytes input = B * T * 3840 * 2;
        const Bytes q = B * T * 4096 * 2;
        const Bytes kv = B * T * 2048 * 2 * 2;
        const Bytes probs = B * T * T * 16 * 2;
        const Bytes ffn = 2 * B * T * 15360 * 2;
        QCOMPARE(input, Bytes(3'932'160)); // "3.9 MB"
        QCOMPARE(q, Bytes(4'194'304)); // "4.2 MB"
        QCOMPARE(kv, Bytes(4'194'304)); // "4.2 MB"
        QCOMPARE(ffn, Bytes(31'457'280)); // "31.5 MB"
        // Wrong in the article: 1 x 512 x 512 x 16 x 2 is 8,388,608 B = 8.4 MB, not 4.2 MB
        // (the article halves it; its own formula gives twice its figure).
        QCOMPARE(probs, Bytes(8'388'608));
        // With the article's 4.2 MB for P the items sum to its "~48 MB"; with the right
        // P they sum to 52.2 MB. (The article also lists "Attention output: [B x T x 4096]"
        // among the tensors backward needs but leaves its 4.2 MB out of the subtotal.)
        const Bytes articleBlock = input + q + kv + probs / 2 + ffn;
        QCOMPARE(articleBlock, Bytes(47'972'352));
        const Bytes block = input + q + kv + probs + ffn;
        QCOMPARE(block, Bytes(52'166'656));
        QCOMPARE(40 * articleBlock / 1'000'000, Bytes(1918)); // "40 local blocks: ~1,920 MB"
        // Gemma's local window (1024 in Gemma 3, VRAM Lab's preset) is longer than T = 512,
        // so the 8 global blocks see the same 512 x 512 scores as the local ones: 8 x 52.2
        // = 417 MB, not "~500 MB". All 48 blocks: 2.50 GB (article: 2.42 GB).
        const Scenario g = preset("gemma-3-12b");
        QCOMPARE(g.model.slidingWindow, Count(1024));
        QCOMPARE(g.model.globalLayers(), Count(8));
        QCOMPARE(g.model.localLayers(), Count(40));
        QVERIFY(g.model.slidingWindow >= T);
        QCOMPARE(8 * block, Bytes(417'333'248));
        QCOMPARE(48 * block, Bytes(2'503'999'488));
        QVERIFY(shownAs(48 * articleBlock, 2.3,
            1)); // the article's own items give 2.30 GB, its "2,420 MB" adds 500 MB for the globals

        // Wrong in the article: 8 x (2048/512) x 2.4 GB = 32 x 2.4 = 76.8 GB, not 38.4 GB
        // (and the attention P term grows with T^2, not T, so even that is a floor).
        const Bytes scaled = 8 * (2048 / 512) * GB(2.4);
        QCOMPARE(scaled, GB(76.8));
        // Its totals inherit the error: "Other components: 162.4 GB, Total: ~200 GB" is
        // 162.4 + 76.8 = 239.2 GB; checkpointed "38.4 GB / 7 ~ 5.5 GB, Total: 167.9 GB" is
        // 76.8 / 7 = 11.0 GB and 173.4 GB.
        QCOMPARE(GB(162.4) + scaled, GB(239.2));
        QVERIFY(shownAs(scaled / 7, 11.0, 1));
        QVERIFY(shownAs(GB(162.4) + scaled / 7, 173.4, 1));
        QVERIFY(shownAs(GB(162.4) + GB(38.4) / 7, 167.9, 1)); // the article's own (wrong-input) sum
    }

    // 000's per-block items against VRAM Lab's eager tensor list for the same shapes
    // (Gemma 3 12B: hidden 3840, 16 heads x 256 = 4096, 8 KV heads x 256 = 2048, FFN
    // 15360, 48 layers; B = 1, T = 512, mixed bf16, no checkpointing).
    void gemma000_activationsAgainstCore()
    {
        Scenario sc = preset("gemma-3-12b");
        sc.run.sequenceLength = 512;
        sc.run.microBatchSize = 1;
        sc.run.attention = AttentionImpl::Eager;
        sc.run.checkpointing.kind = Checkpointing::Kind::None;
        const Report r = estimate(sc);
        const auto each = [&](std::string_view name) -> Bytes {
            const ActivationTensor* t = tensorNamed(r, name);
            return t ? t->bytesEach : -1;
        };
        QCOMPARE(each("attention input (norm output, read by q/k/v)"), Bytes(3'932'160)); // "Input"
        QCOMPARE(each("Q after RoPE"), Bytes(4'194'304)); // "Q"
        // "Attention P": the core keeps the fp32 softmax (autocast) and its bf16 copy; the
        // bf16 copy is the 8.4 MB the article's formula gives (not its 4.2 MB).
        QCOMPARE(each("attention probabilities cast back from fp32"), Bytes(8'388'608));
        QCOMPARE(each("softmax probabilities (fp32)"), Bytes(16'777'216));
        // "FFN gate+up: 31.5 MB"
        QCOMPARE(each("gate projection output") + each("up projection output"), Bytes(31'457'280));
        // "K+V: 4.2 MB" holds for the 8 KV heads; eager GQA repeats K and V to the 16 query
        // heads before the matmul, so the saved K and V are 4.2 MB each.
        QCOMPARE(each("K after RoPE (repeated to query heads)"), Bytes(4'194'304));
        QCOMPARE(each("V (repeated to query heads)"), Bytes(4'194'304));

        // Everything a block keeps (fp32 inputs of the four norms and of q/k-norm, GELU
        // output, gated product, attention output, both softmax copies, ...) is 178.8 MB,
        // 3.7x the article's 48 MB; the whole model 9.14 GB against its 2.4 GB.
        Bytes perLayer = 0;
        for (const ActivationTensor& t : r.activations.tensors)
            if (t.scope == ActivationScope::Layer) {
                QCOMPARE(t.count, Count(48)); // T < window: local and global blocks alike
                perLayer += t.bytesEach;
            }
        QCOMPARE(perLayer, Bytes(178'839'864));
        QCOMPARE(r.activations.bytes, r.bytesOf("activations"));
        QVERIFY(r.bytesOf("activations") > 48 * perLayer); // + the ends: fp32 log-softmax over 262,208 tokens...
        QCOMPARE(each("log-softmax of the logits (fp32)"), Bytes(512) * 262'208 * 4);
        QVERIFY(shownAs(r.bytesOf("activations"), 9.14, 2));

        // "At B=8, T=2048": the article's 38.4 GB (76.8 GB with its arithmetic fixed)
        // against VRAM Lab: 247 GB with FlashAttention, 408 GB eager (the s^2 scores of the
        // 8 global layers at 2048 and the 40 local ones capped at the 1024 window), and
        // 23.7 GB with full checkpointing against the article's "~5.5 GB".
        sc.run.sequenceLength = 2048;
        sc.run.microBatchSize = 8;
        const Bytes eager = estimate(sc).bytesOf("activations");
        sc.run.attention = AttentionImpl::Flash;
        const Bytes flash = estimate(sc).bytesOf("activations");
        sc.run.checkpointing.kind = Checkpointing::Kind::Full;
        const Bytes ckpt = estimate(sc).bytesOf("activations");
        QVERIFY(flash > GB(76.8) && eager > flash);
        QVERIFY(shownAs(flash, 247.3, 1));
        QVERIFY(shownAs(eager, 408.4, 1));
        QVERIFY(shownAs(ckpt, 23.7, 1));
        QVERIFY(ckpt < flash / 10);
    }

    // 000, MFU: "FLOPs per forward+backward pass ~ 6 x 11.6B x T (tokens)", "At T=1024,
    // batch=8: FLOPs per step ~ 6 x 11.6B x 8,192 = 570 x 10^12 FLOPs", "If step takes 2
    // seconds: Actual throughput = 570 x 10^12 / 2 = 285 TFLOPS, MFU = 285 / 312 = 91%".
    void gemma000_flopsAndMfu()
    {
        const double flops = 6.0 * double(kGemmaP) * 8192.0;
        QVERIFY2(near(flops, 570.1632e12, 1e-12), msg(flops, 570.1632e12).constData());
        QVERIFY2(near(flops, 570e12, 0.001), msg(flops, 570e12).constData());
        const double achieved = flops / 2.0;
        QVERIFY2(near(achieved, 285e12, 0.001), msg(achieved, 285e12).constData());
        const double mfu = achieved / 312e12;
        QVERIFY2(std::lround(mfu * 100) == 91, msg(mfu, 0.91).constData()); // 0.9137

        // VRAM Lab, Gemma 3 12B, micro-batch 8 of 1024 tokens on an A100.
        Scenario sc = preset("gemma-3-12b");
        sc.run.sequenceLength = 1024;
        sc.run.microBatchSize = 8;
        sc.run.gpu = findGpu("a100-80gb");
        sc.run.mfu = mfu;
        const Report r = estimate(sc);
        QCOMPARE(r.flops.tokensPerStep, Count(8192));
        QVERIFY2(near(r.flops.peakTflops, 312, 1e-9), msg(r.flops.peakTflops, 312).constData());
        // 6 x matmul parameters (11.77B with the tied LM head, which is a matmul) plus the
        // attention score/value matmuls: 598 TFLOP, 4.9% above the article's 570.
        QVERIFY2(near(r.flops.forwardPerToken, 2.0 * double(r.params.matmulActive) + r.flops.attentionPerToken, 1e-9),
            msg(r.flops.forwardPerToken, 2.0 * double(r.params.matmulActive) + r.flops.attentionPerToken).constData());
        QVERIFY2(near(r.flops.perToken, 3.0 * r.flops.forwardPerToken, 1e-9),
            msg(r.flops.perToken, 3.0 * r.flops.forwardPerToken).constData());
        QVERIFY2(near(r.flops.perStep, r.flops.perToken * 8192.0, 1e-9),
            msg(r.flops.perStep, r.flops.perToken * 8192.0).constData());
        QVERIFY2(near(r.flops.perStep, 598e12, 0.001), msg(r.flops.perStep, 598e12).constData());
        // With the matmuls at the article's 91% of peak the step takes 2.11 s instead of 2 s:
        // the 598 TFLOP plus QK^T recomputed by flash's backward (hardware FLOPs), and the
        // MFU that implies is the article's definition again (model FLOPs / time / peak).
        QVERIFY2(near(r.flops.stepTimeS, r.flops.hardwarePerStep / (312e12 * mfu), 1e-9),
            msg(r.flops.stepTimeS, r.flops.hardwarePerStep / (312e12 * mfu)).constData());
        QVERIFY2(near(r.flops.stepTimeS, 2.1095, 0.001), msg(r.flops.stepTimeS, 2.1095).constData());
        QVERIFY2(near(r.flops.mfu, r.flops.perStep / (312e12 * r.flops.stepTimeS), 1e-12),
            msg(r.flops.mfu, r.flops.perStep / (312e12 * r.flops.stepTimeS)).constData());
    }
    // 000, LoRA: "For rank=16, applied to Q, K, V, and O projections in all 48 layers:
    // 4 matrices x 48 layers x 2 x (3840 x 16) parameters ~ 23.6M parameters", "Frozen
    // weights (BF16, no gradient): 23.2 GB, LoRA A, B working (BF16): 0.045 GB, LoRA
    // gradients (FP32): 0.09 GB, LoRA Adam state (FP32): 0.18 GB, Activations
    // (checkpointed, B=1, T=1024): 0.8 GB, Total: ~24 GB".
    void gemma000_lora()
    {
        const Count articleLora = 4 * 48 * 2 * (3840 * 16);
        QCOMPARE(articleLora, Count(23'592'960)); // "~23.6M"
        // The article treats every projection as 3840 -> 3840. Gemma 3 12B's are q 3840 ->
        // 4096, k and v 3840 -> 2048, o 4096 -> 3840: rank x (in + out) per adapter gives
        // 16 x (7936 + 5888 + 5888 + 7936) x 48 = 21,233,664 (10% fewer).
        Scenario sc = preset("gemma-3-12b");
        sc.run.finetune.method = FinetuneMethod::Lora;
        sc.run.finetune.rank = 16;
        sc.run.finetune.targets = { "q", "k", "v", "o" };
        const Count realLora = 16 * ((3840 + 4096) + 2 * (3840 + 2048) + (4096 + 3840)) * 48;
        QCOMPARE(realLora, Count(21'233'664));
        QCOMPARE(loraParameters(sc.model, sc.run.finetune), realLora);

        // Memory under the article's regime (bf16 adapters, fp32 gradients and Adam, no
        // master copy), textbook base of 11.6B frozen bf16 parameters.
        RunSpec run = articleRegime000();
        const std::vector<LocalParam> params { { "base", 1, kGemmaP, 1, false }, { "lora", 1, articleLora, 1, true } };
        const ModelStateBytes s = modelStates(params, run);
        QCOMPARE(s.weights, GB(23.2) + 2 * articleLora);
        QCOMPARE(s.master, Bytes(0));
        QCOMPARE(s.gradients, 4 * articleLora);
        QCOMPARE(s.optimizer, 8 * articleLora);
        // 2 x 23.59M = 47.2 MB: the article's "0.045 GB" is 0.047 GB (0.045 is neither the
        // GB nor the GiB figure, 0.044 GiB); "0.09" is 0.094 and "0.18" is 0.189, cut
        // rather than rounded.
        QVERIFY(shownAs(2 * articleLora, 0.047, 3));
        QVERIFY2(near(double(2 * articleLora), 0.045e9, 0.05), msg(double(2 * articleLora), 0.045e9).constData());
        QVERIFY(shownAs(s.gradients, 0.09, 2));
        QVERIFY(shownAs(s.optimizer, 0.19, 2));
        // "Total: ~24 GB": 23.2 + 0.047 + 0.094 + 0.189 + 0.8 = 24.33.
        const Bytes total = s.weights + s.gradients + s.optimizer + GB(0.8);
        QVERIFY(shownAs(total, 24.3, 1));

        // VRAM Lab on the real shapes, same regime: 21.2M adapters.
        sc.run.masterWeights = false;
        sc.run.checkpointing.kind = Checkpointing::Kind::Full;
        sc.run.sequenceLength = 1024;
        const Report r = estimate(sc);
        QCOMPARE(r.loraParams, realLora);
        QCOMPARE(r.trainableParams, realLora);
        QCOMPARE(r.bytesOf("weights"), 2 * r.params.total + 2 * realLora);
        QCOMPARE(r.bytesOf("master_weights"), Bytes(0));
        QCOMPARE(r.bytesOf("gradients"), 4 * realLora); // 0.085 GB
        QCOMPARE(r.bytesOf("optimizer_states"), 8 * realLora); // 0.170 GB
        // Full checkpointing at B=1, T=1024 keeps 1.48 GB here against the article's
        // 0.8 GB: the fp32 log-softmax over Gemma's 262,208-token vocabulary alone is
        // 1.07 GB.
        QCOMPARE(tensorNamed(r, "log-softmax of the logits (fp32)")->bytesEach, Bytes(1024) * 262'208 * 4);
        QVERIFY(r.bytesOf("activations") > GB(0.8));
    }

    // 000, QLoRA: "the frozen base model is quantized to 4-bit NF4 ... compresses the base
    // model weights from 23.2 GB to ~5.8 GB", "Frozen weights (NF4, 4-bit): 5.8 GB ...
    // Total: ~7 GB".
    void gemma000_qlora()
    {
        // 5.8 GB is 4.0 bits a weight. NF4 as bitsandbytes stores it also keeps one 8-bit
        // absmax per 64 weights and one fp32 absmax per 256 blocks (double quantization):
        // 4.127 bits, 5.98 GB for 11.6B parameters.
        QCOMPARE(kGemmaP / 2, GB(5.8));
        const Bytes nf4 = storageBytes(DType::Nf4, kGemmaP);
        QCOMPARE(nf4, kGemmaP / 2 + kGemmaP / 64 + ceilDiv(kGemmaP / 64, 256) * 4);
        QCOMPARE(nf4, Bytes(5'984'082'032));
        RunSpec run = articleRegime000();
        std::vector<LocalParam> params { { "base", 1, kGemmaP, 1, false } };
        params[0].frozenStorage = DType::Nf4;
        QCOMPARE(modelStates(params, run).weights, nf4);
        QCOMPARE(modelStates(params, run).gradients, Bytes(0));
        // "~7 GB": 5.98 + 0.047 + 0.094 + 0.189 + 0.8 = 7.11 GB (5.8 GB base: 6.93 GB).
        const Count lora = 23'592'960;
        const Bytes total = nf4 + 2 * lora + 4 * lora + 8 * lora + GB(0.8);
        QVERIFY(shownAs(total, 7.1, 1));

        // VRAM Lab on Gemma 3 12B quantizes the linear layers only; the 262,208 x 3840
        // embedding (1.01B parameters, tied with the LM head) and the norms stay bf16:
        // 5.55 GB NF4 + 2.01 GB bf16 + 0.04 GB adapters = 7.61 GB, not 5.8.
        Scenario sc = preset("gemma-3-12b");
        sc.run.finetune.method = FinetuneMethod::Qlora;
        sc.run.masterWeights = false;
        const Report r = estimate(sc);
        Count linear = 0, other = 0;
        Bytes nf4Linear = 0;
        for (const ParamTensor& t : parameterTensors(sc.model)) {
            if (t.linear) {
                linear += t.total();
                nf4Linear += checkedMul(storageBytes(DType::Nf4, t.elements()), t.copies);
            } else {
                other += t.total();
            }
        }
        QCOMPARE(linear, Count(10'758'389'760));
        QCOMPARE(other, r.params.total - linear);
        QCOMPARE(nf4Linear, Bytes(5'549'921'280));
        QCOMPARE(r.bytesOf("weights"), nf4Linear + 2 * other + 2 * r.loraParams);
        QCOMPARE(r.bytesOf("weights"), Bytes(7'607'677'440));
    }

    // 000, "Comparison: Inference vs Training" table: Inference "23.2 GB (BF16)", "~24 GB";
    // Full Training "23.2 GB BF16 + 46.4 GB FP32 master", "46.4 GB (FP32)", "92.8 GB (Adam
    // m+v FP32)", "2.4 GB (B=1, T=512)", "~211 GB (3-4x A100)". And the opening: "You can
    // run Gemma 4 12B inference on a single A100 with 23 GB to spare."
    void gemma000_comparisonTable()
    {
        RunSpec mixed;
        mixed.precision = Precision::MixedBf16; // with the master copy, as the table has it
        const ModelStateBytes s = modelStates(textbook(kGemmaP), mixed);
        const Bytes full = s.weights + s.master + s.gradients + s.optimizer + GB(2.4);
        QCOMPARE(full, GB(211.2)); // 23.2 + 46.4 + 46.4 + 92.8 + 2.4
        // The table's full-training column uses the master copy while the earlier "164.8
        // GB" section does not: 211.2 - 164.8 = 46.4 GB, the master weights.
        QCOMPARE(full - GB(164.8), GB(46.4));
        // "3-4x A100": 211.2 GB needs ceil(211.2 / 80) = 3 A100s' worth of memory.
        QCOMPARE(ceilDiv(full, GB(80)), Count(3));

        // VRAM Lab, Gemma 3 12B (11.77B parameters, 1.4% above the article's 11.6B): the
        // same 18 bytes/param give 211.8 GB of model states, and its eager activations at
        // B=1, T=512 are 9.1 GB, not 2.4.
        Scenario sc = preset("gemma-3-12b");
        sc.run.sequenceLength = 512;
        sc.run.attention = AttentionImpl::Eager;
        const Report r = estimate(sc);
        QVERIFY2(near(double(r.params.total), double(kGemmaP), 0.02),
            msg(double(r.params.total), double(kGemmaP)).constData());
        QCOMPARE(
            r.bytesOf("weights") + r.bytesOf("master_weights") + r.bytesOf("gradients") + r.bytesOf("optimizer_states"),
            18 * r.params.total);

        // Inference: 23.2 GB of bf16 weights leave 56.8 GB of an 80 GB A100, not "23 GB to
        // spare" (23 GB is the weights, not the room left).
        QCOMPARE(GB(80) - s.weights, GB(56.8));
        Scenario inf = preset("gemma-3-12b");
        inf.run.mode = Mode::Inference;
        inf.run.inference.contextLength = 4096;
        inf.run.inference.batchSize = 1;
        inf.run.gpu = findGpu("a100-80gb");
        const Report ri = estimate(inf);
        QCOMPARE(ri.bytesOf("weights"), 2 * ri.params.total); // 23.5 GB
        QCOMPARE(ri.bytesOf("gradients"), Bytes(0));
        QCOMPARE(ri.bytesOf("optimizer_states"), Bytes(0));
        QVERIFY(ri.fits);
        QVERIFY2(near(double(ri.total), 24e9, 0.1), msg(double(ri.total), 24e9).constData()); // "~24 GB"
    }
    // 001_40069b71e1a07754.txt (memory considerations), section 3.1: "Let P = 7 x 10^9
    // parameters, BF16 for weights/gradients (2 bytes), FP32 for optimizer (4 bytes).",
    // "Running total: 14 + 14 + 56 = 84 GB (already exceeds A100 80GB!)", activations
    // "Without checkpointing: ~32 GB, With checkpointing: ~2-5 GB", "Without gradient
    // checkpointing: ~116 GB, With gradient checkpointing: ~89 GB".
    void memory001_modelStates()
    {
        const Count P = 7'000'000'000;
        // The article's regime: bf16 weights and gradients, fp32 Adam, no master copy
        // (VRAM Lab's pure bf16 would keep Adam in bf16 too, hence the overrides).
        RunSpec run = articleRegime001();
        run.optimizer = Optimizer::AdamW;
        const ModelStateBytes s = modelStates(textbook(P), run);
        QCOMPARE(s.weights, GB(14));
        QCOMPARE(s.master, Bytes(0));
        QCOMPARE(s.gradients, GB(14));
        QCOMPARE(s.optimizer, GB(56));
        const Bytes states = s.weights + s.gradients + s.optimizer;
        QCOMPARE(states, GB(84));
        QVERIFY(states > GB(80));
        QCOMPARE(states + GB(32), GB(116));
        QCOMPARE(states + GB(5), GB(89)); // "~89 GB" takes the upper end of "2-5 GB"
        // Table 4.1, "Total | 89-116 GB | 20-36 GB": inference 14 + (1..2) + (5..20).
        QCOMPARE(GB(14) + GB(1) + GB(5), GB(20));
        QCOMPARE(GB(14) + GB(2) + GB(20), GB(36));
        // "Training requires 3-5x more memory than inference": the table's own ranges give
        // 89/36 = 2.5x to 116/20 = 5.8x.
        const double low = double(GB(89)) / double(GB(36)), high = double(GB(116)) / double(GB(20));
        QVERIFY2(near(low, 2.47, 0.002), msg(low, 2.47).constData());
        QVERIFY2(near(high, 5.8, 1e-12), msg(high, 5.8).constData());
        QVERIFY(low < 3.0 && high > 5.0);
    }

    // 001, section 5.3: "Example (7B LLaMA, BF16): For single request (B=1), sequence length
    // 4096: M_KV = 2 x 32 x 1 x 4096 x 4096 x 2 = 2.15 GB", "For batch size 8: M_KV = 2.15 x
    // 8 = 17.2 GB"; "GQA example (7B model, seq=4096): Multi-Head (32 KV heads): 2.15 GB,
    // GQA (8 KV heads): 0.54 GB (4x reduction), MQA (1 KV head): 0.07 GB (32x reduction)".
    void memory001_kvCache()
    {
        Scenario sc = preset("llama-2-7b");
        QCOMPARE(sc.model.numLayers, Count(32));
        QCOMPARE(sc.model.numKvHeads, Count(32));
        QCOMPARE(sc.model.kvWidth(), Count(4096));
        sc.run.mode = Mode::Inference;
        sc.run.inference.contextLength = 4096;
        sc.run.inference.batchSize = 1;
        sc.run.inference.kvCacheDtype = DType::Bf16;

        const Bytes mha = kvCache(sc.model, sc.run).bytes;
        QCOMPARE(mha, Bytes(2) * 32 * 1 * 4096 * 4096 * 2); // 2,147,483,648 B = 2 GiB
        QVERIFY(shownAs(mha, 2.15, 2));
        QCOMPARE(estimate(sc).bytesOf("kv_cache"), mha);

        sc.run.inference.batchSize = 8;
        const Bytes batch8 = kvCache(sc.model, sc.run).bytes;
        QCOMPARE(batch8, 8 * mha);
        QVERIFY(shownAs(batch8, 17.2, 1)); // 17.18 GB
        sc.run.inference.batchSize = 1;

        ModelSpec gqa = sc.model;
        gqa.numKvHeads = 8;
        const Bytes g8 = kvCache(gqa, sc.run).bytes;
        QCOMPARE(g8, mha / 4);
        QVERIFY(shownAs(g8, 0.54, 2)); // 0.537 GB

        ModelSpec mqa = sc.model;
        mqa.numKvHeads = 1;
        const Bytes g1 = kvCache(mqa, sc.run).bytes;
        QCOMPARE(g1, mha / 32);
        QVERIFY(shownAs(g1, 0.07, 2)); // 0.067 GB
    }

    // 001, section 6.2: "Example (7B model, 8 GPUs, ZeRO-3): Per GPU memory: (14 + 14 + 56)
    // / 8 = 10.5 GB", with the table "ZeRO-1 | Optimizer states | 4x", "ZeRO-2 | +
    // Gradients | 8x", "ZeRO-3 | + Parameters | Up to N_GPUs x".
    void memory001_zero()
    {
        const Count P = 7'000'000'000;
        RunSpec run = articleRegime001();
        run.parallelism.gpus = 8;
        const auto perGpu = [&](int stage) {
            run.parallelism.zeroStage = stage;
            const ModelStateBytes s = modelStates(textbook(P), run);
            return s.weights + s.master + s.gradients + s.optimizer;
        };
        QCOMPARE(perGpu(0), GB(84));
        QCOMPARE(perGpu(3), GB(10.5));
        QCOMPARE(perGpu(0) / perGpu(3), Bytes(8));
        // The "4x" and "8x" are the ZeRO paper's figures for 16 bytes/param as the number
        // of GPUs grows; in this article's 12-byte regime on its 8 GPUs ZeRO-1 gives
        // 84 / (14 + 14 + 7) = 2.4x and ZeRO-2 84 / (14 + 1.75 + 7) = 3.7x.
        QCOMPARE(perGpu(1), GB(35));
        QCOMPARE(perGpu(2), GB(22.75));
        const double z1 = double(perGpu(0)) / double(perGpu(1)), z2 = double(perGpu(0)) / double(perGpu(2));
        QVERIFY2(near(z1, 2.4, 1e-12), msg(z1, 2.4).constData());
        QVERIFY2(near(z2, 84.0 / 22.75, 1e-12), msg(z2, 84.0 / 22.75).constData()); // 3.69
        QVERIFY(z1 < 4.0 && z2 < 8.0);
    }

    // 002_51a560227754592c.txt (field guide): "mixed precision (FP16/BF16) with Adam. ...
    // 2 bytes for the FP16 weight, 2 bytes for the FP16 gradient, and 12 bytes of optimizer
    // state (a 4-byte FP32 master copy of the weight, 4 bytes for the first moment, 4 bytes
    // for the second moment). That comes to about 16 bytes per parameter", "A 7B model
    // needs about 112GB", "A one-trillion-parameter model needs about 16TB"; ZeRO "Stage 1
    // shards only the optimizer state for about a 4x reduction, Stage 2 also shards
    // gradients for about 8x, and Stage 3 ... Nd x".
    void guide002_sixteenBytes()
    {
        RunSpec run;
        run.precision = Precision::MixedFp16;
        run.gradientDtype = DType::Fp16;
        run.optimizer = Optimizer::Adam;
        const auto perParam = modelStates(textbook(1'000'000), run);
        QCOMPARE(perParam.weights, Bytes(2'000'000));
        QCOMPARE(perParam.gradients, Bytes(2'000'000));
        QCOMPARE(perParam.master + perParam.optimizer, Bytes(12'000'000));
        const auto total = [](const ModelStateBytes& s) { return s.weights + s.master + s.gradients + s.optimizer; };
        QCOMPARE(total(perParam), Bytes(16'000'000));
        QCOMPARE(total(modelStates(textbook(7'000'000'000), run)), GB(112));
        QCOMPARE(total(modelStates(textbook(1'000'000'000'000), run)), Bytes(16'000'000'000'000)); // 16 TB

        // ZeRO stages with Nd = 64 (the ZeRO paper's example): 16 / (4 + 12/64) = 3.8x,
        // 16 / (2 + 14/64) = 7.2x, 16 / (16/64) = 64x. "About 4x / 8x" are the limits.
        const Count P = 7'000'000'000;
        run.parallelism.gpus = 64;
        const auto ratio = [&](int stage) {
            run.parallelism.zeroStage = stage;
            return double(16 * P) / double(total(modelStates(textbook(P), run)));
        };
        QVERIFY2(near(ratio(1), 16.0 / (4.0 + 12.0 / 64), 1e-9), msg(ratio(1), 16.0 / (4.0 + 12.0 / 64)).constData());
        QVERIFY2(near(ratio(2), 16.0 / (2.0 + 14.0 / 64), 1e-9), msg(ratio(2), 16.0 / (2.0 + 14.0 / 64)).constData());
        QVERIFY2(near(ratio(3), 64.0, 1e-9), msg(ratio(3), 64.0).constData());
        QVERIFY(ratio(1) < 4.0 && ratio(2) < 8.0);
        run.parallelism.gpus = 1024;
        QVERIFY2(near(ratio(1), 4.0, 0.005), msg(ratio(1), 4.0).constData());
        QVERIFY2(near(ratio(2), 8.0, 0.01), msg(ratio(2), 8.0).constData());
    }

    // 002: "inference runs a 7B model in 14GB at FP16, or under 4GB at 4-bit quantization";
    // LoRA "on GPT-3 175B ... training VRAM from 1.2TB to 350GB, with checkpoints going from
    // 350GB to 35MB"; QLoRA "Brought a 65B fine-tune that normally needs over 780GB onto a
    // single 48GB GPU".
    void guide002_inferenceAndAdapters()
    {
        const Count P7 = 7'000'000'000;
        QCOMPARE(storageBytes(DType::Fp16, P7), GB(14));
        // 4-bit with its scales: NF4 (4.127 bits) 3.61 GB; int4 with an fp16 scale and zero
        // point per group of 128 (GPTQ/AWQ), 4.25 bits: 3.72 GB. Both under 4 GB.
        const Bytes nf4 = storageBytes(DType::Nf4, P7);
        QCOMPARE(nf4, P7 / 2 + P7 / 64 + ceilDiv(P7 / 64, 256) * 4);
        QCOMPARE(nf4, Bytes(3'611'083'988));
        const Bytes int4 = storageBytes(DType::Int4, P7);
        QCOMPARE(int4, P7 / 2 + P7 / 128 * 4);
        QCOMPARE(int4, Bytes(3'718'750'000));
        QVERIFY(nf4 < GB(4) && int4 < GB(4));

        // 175B at 16 bits: 350 GB, the frozen weights and the full checkpoint.
        QCOMPARE(storageBytes(DType::Fp16, 175'000'000'000), GB(350));

        // 65B "over 780GB": 12 bytes/param, 16-bit weights and gradients with fp32 Adam
        // (QLoRA paper's regime); in NF4 the 65B base is 33.5 GB, under 48 GB.
        const Count P65 = 65'000'000'000;
        RunSpec run = articleRegime001();
        const ModelStateBytes s = modelStates(textbook(P65), run);
        QCOMPARE(s.weights + s.master + s.gradients + s.optimizer, GB(780));
        std::vector<LocalParam> frozen { { "base", 1, P65, 1, false } };
        frozen[0].frozenStorage = DType::Nf4;
        const Bytes base = modelStates(frozen, run).weights;
        QCOMPARE(base, Bytes(33'531'494'144));
        QVERIFY(base < GB(48));
    }
    // 003_d4eb4f65508c26eb.txt (qualitative): "optimizer memory can consume even more
    // memory than the model weights themselves", "increasing context length increases
    // activation memory and attention memory dramatically", "Larger batch sizes create
    // more activations" (Batch Size = 1 vs 64; contexts 4K, 8K, 32K, 128K), and training
    // needs "much more memory than inference". Checked on Llama-2-7B.
    void qualitative003_ordering()
    {
        const Scenario base = preset("llama-2-7b");
        const EstimateOptions quick { false };
        const auto training = [&](Count seq, Count batch, AttentionImpl attn) {
            RunSpec run = base.run;
            run.sequenceLength = seq;
            run.microBatchSize = batch;
            run.attention = attn;
            return estimate(base.model, run, quick);
        };
        const Report r = training(4096, 1, AttentionImpl::Flash);
        // AdamW: 8 bytes of fp32 m and v against 2 bytes of bf16 weights per parameter.
        QCOMPARE(r.bytesOf("optimizer_states"), 4 * r.bytesOf("weights"));
        QVERIFY(r.bytesOf("optimizer_states") > r.bytesOf("weights"));
        QVERIFY(r.bytesOf("gradients") >= r.bytesOf("weights"));

        // Batch 1 -> 64: activations grow with the batch (64x, but for a few fixed tensors).
        const Bytes b1 = r.bytesOf("activations");
        const Bytes b64 = training(4096, 64, AttentionImpl::Flash).bytesOf("activations");
        QVERIFY(b64 > b1);
        QVERIFY2(near(double(b64) / double(b1), 64.0, 0.01), msg(double(b64) / double(b1), 64).constData());

        // Context 4K -> 8K -> 32K -> 128K: activations grow at every step; with eager
        // attention faster than the tokens (the s^2 scores), with FlashAttention linearly.
        Bytes previous = 0;
        for (Count seq : { 4096, 8192, 32768, 131072 }) {
            const Bytes flash = training(seq, 1, AttentionImpl::Flash).bytesOf("activations");
            QVERIFY(flash > previous);
            const double perToken = double(flash) / double(seq), perToken4k = double(b1) / 4096.0;
            QVERIFY2(near(perToken, perToken4k, 1e-6), msg(perToken, perToken4k).constData()); // 6.13 MB a token
            previous = flash;
        }
        const Bytes eager4k = training(4096, 1, AttentionImpl::Eager).bytesOf("activations");
        const Bytes eager8k = training(8192, 1, AttentionImpl::Eager).bytesOf("activations");
        QVERIFY(eager8k > 2 * eager4k);
        QVERIFY(eager4k > b1);

        // The KV cache of inference grows with the context too, in proportion.
        RunSpec inf;
        inf.mode = Mode::Inference;
        inf.inference.contextLength = 4096;
        const Bytes kv4k = kvCache(base.model, inf).bytes;
        for (Count ctx : { 8192, 32768, 131072 }) {
            inf.inference.contextLength = ctx;
            QCOMPARE(kvCache(base.model, inf).bytes, kv4k * (ctx / 4096));
        }
        inf.inference.contextLength = 4096;
        QVERIFY(r.total > estimate(base.model, inf, quick).total);
    }

    // 004_2e927cad82cf44fd.txt (single-GPU chapter), Chapter 2: "Weights 4P bytes | 2P (BF16)
    // + 4P (FP32 master copy); Gradients 4P bytes | 2P (BF16) or 4P (FP32 accumulation);
    // Adam optimizer 8P bytes (m + v) | 8P bytes (m + v in FP32); Total 16P bytes |
    // 16P-18P bytes", "a 1B model needs ~16 GB, a 7B model needs ~112 GB, and a 70B model
    // needs ~1,120 GB - that is 14 H100 GPUs just for the static model state."
    void singleGpu004_modelStates()
    {
        const auto perParam = [](RunSpec run) {
            const ModelStateBytes s = modelStates(textbook(1000), run);
            return (s.weights + s.master + s.gradients + s.optimizer) / 1000;
        };
        RunSpec fp32;
        fp32.precision = Precision::Fp32;
        QCOMPARE(perParam(fp32), Bytes(16));
        RunSpec mixedBf16Grads;
        mixedBf16Grads.precision = Precision::MixedBf16;
        mixedBf16Grads.gradientDtype = DType::Bf16;
        QCOMPARE(perParam(mixedBf16Grads), Bytes(16));
        RunSpec mixedFp32Grads;
        mixedFp32Grads.precision = Precision::MixedBf16; // VRAM Lab's default: fp32 gradients
        QCOMPARE(perParam(mixedFp32Grads), Bytes(18));

        const auto states = [&](Count p) {
            const ModelStateBytes s = modelStates(textbook(p), mixedBf16Grads);
            return s.weights + s.master + s.gradients + s.optimizer;
        };
        QCOMPARE(states(1'000'000'000), GB(16));
        QCOMPARE(states(7'000'000'000), GB(112));
        QCOMPARE(states(70'000'000'000), GB(1120));
        // 1120 / 80 = 14 exactly: 14 H100s with not a byte to spare at 80 GB each.
        QCOMPARE(ceilDiv(states(70'000'000'000), GB(80)), Count(14));
        const auto h100 = findGpu("h100-sxm-80gb");
        QVERIFY(h100.has_value());
        QCOMPARE(ceilDiv(states(70'000'000'000), h100->memoryBytes), Count(14));
        // With the fp32 gradients of the 18P end: 1,260 GB, 16 H100s.
        QCOMPARE(18 * Count(70'000'000'000), GB(1260));
        QCOMPARE(ceilDiv(GB(1260), GB(80)), Count(16));

        // "P ~ 12 L h^2 + V h" on GPT-3 175B's shapes: 174.56B against VRAM Lab's count of
        // 174.60B (biases, norms and the 2048 x 12288 learned positions make the rest).
        const Scenario gpt3 = preset("gpt3-175b");
        const ModelSpec& m = gpt3.model;
        const Count approx = 12 * m.numLayers * m.hiddenSize * m.hiddenSize + m.vocabSize * m.hiddenSize;
        QCOMPARE(approx, Count(174'563'733'504));
        const Count exact = countParameters(m).total;
        QVERIFY2(near(double(exact), double(approx), 0.001), msg(double(exact), double(approx)).constData());
        QVERIFY(exact > approx);
    }

    // 004, Chapter 3: "The memory required for activations during a forward pass through a
    // transformer in mixed precision is approximately: M_act ~ L . s . b . (34h + 5 . s .
    // n_heads)" (Korthikanti et al. 2022), computed by hand for GPT-3 175B (L = 96,
    // h = 12288, 96 heads, s = 2048, b = 1) and set against VRAM Lab's eager estimate.
    void singleGpu004_activationFormula()
    {
        Scenario sc = preset("gpt3-175b");
        const ModelSpec& m = sc.model;
        QCOMPARE(m.numLayers, Count(96));
        QCOMPARE(m.hiddenSize, Count(12288));
        QCOMPARE(m.numHeads, Count(96));
        QVERIFY(m.dropout > 0); // Korthikanti's constants include the dropout masks
        const Count L = 96, s = 2048, b = 1, h = 12288, a = 96, V = m.vocabSize;
        const Bytes korthikanti = L * s * b * (34 * h + 5 * s * a);
        QCOMPARE(korthikanti, Bytes(275'414'777'856)); // 275.4 GB

        sc.run.sequenceLength = s;
        sc.run.microBatchSize = b;
        sc.run.precision = Precision::MixedBf16;
        sc.run.attention = AttentionImpl::Eager;
        sc.run.checkpointing.kind = Checkpointing::Kind::None;
        const Report r = estimate(sc);
        // VRAM Lab lists each saved tensor. Per layer its sbh terms add up to the same 34
        // (two LayerNorm inputs 4, q/k/v input 2, Q K V 6, o_proj input 2, GELU input 8 and
        // output 8, MLP input 2, three 1-byte dropout masks... ), but the s^2 terms are
        // 7 a s^2 b, not 5: autocast runs the softmax in fp32, so the saved probabilities
        // are 4 bytes (Korthikanti counts 2), next to the 1-byte dropout mask and the
        // 2-byte dropped probabilities. Add the LayerNorms' mean and rstd (s x b x 2 bytes,
        // two each per layer) and autograd's 8-byte 1/sqrt(d) scalar.
        Bytes perLayer = 0;
        for (const ActivationTensor& t : r.activations.tensors)
            if (t.scope == ActivationScope::Layer) {
                QCOMPARE(t.count, L);
                perLayer += t.bytesEach;
            }
        const Bytes softmaxFp32Extra = 2 * a * s * s * b;
        const Bytes normStats = 2 * 2 * s * b * 2;
        QCOMPARE(perLayer, s * b * (34 * h + 5 * s * a) + softmaxFp32Extra + normStats + 8);
        // The ends of the model, outside the formula: token and position ids (int64),
        // embedding dropout mask, final LayerNorm, LM head input, and the fp32 log-softmax
        // over the 50,257-token vocabulary (0.41 GB).
        const Bytes ends
            = 2 * 8 * s * b + s * b * h + (2 * s * b * h + 2 * 2 * s * b) + 2 * s * b * h + 4 * s * b * V + 4;
        QCOMPARE(r.bytesOf("activations"), korthikanti + L * softmaxFp32Extra + L * (normStats + 8) + ends);
        QCOMPARE(r.bytesOf("activations"), Bytes(353'263'338'244)); // 353.3 GB, 1.28x the formula
        // Flash attention keeps no s^2 tensor: the formula's 5 a s term disappears and
        // what is left is the 34 s b h of the formula plus the fp32 log-sum-exp and the ends.
        sc.run.attention = AttentionImpl::Flash;
        const Bytes flash = estimate(sc).bytesOf("activations");
        QVERIFY(flash < korthikanti);
        QVERIFY2(near(double(flash), double(L * s * b * 34 * h), 0.01),
            msg(double(flash), double(L * s * b * 34 * h)).constData());
    }
};

QTEST_APPLESS_MAIN(TestSeeds)
#include "tst_seeds.moc"
