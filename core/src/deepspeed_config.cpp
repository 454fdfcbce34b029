// SPDX-License-Identifier: MIT
#include "vramlab/deepspeed_config.h"

#include "vramlab/errors.h"
#include "vramlab/units.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string_view>
#include <tuple>

namespace vramlab {

namespace {

using nlohmann::json;

/// What a config may say, key by key (DeepSpeed v0.16.4, runtime/config.py, runtime/zero/config.py,
/// runtime/zero/offload_config.py@e2dc3eeb, with their defaults). Each reader maps a key or says
/// why it is left out; a value that changes GPU memory in a way VRAM Lab does not model is refused.
class Reader {
public:
    Reader(Scenario& sc, DeepSpeedImport& out)
        : m_sc(sc)
        , m_run(sc.run)
        , m_before(sc.run)
        , m_out(out)
    {
    }

    void top(const json& c)
    {
        if (!c.is_object())
            throw InputError("(config)", "expected a DeepSpeed config: a JSON object");
        // What the config leaves out is DeepSpeed's default, not the scenario's (runtime/zero/config.py@e2dc3eeb: no
        // ZeRO, no offload, its buckets; grad_accum_dtype None): only "auto" keeps the scenario's value.
        Parallelism& p = m_run.parallelism;
        p.zeroStage = 0;
        // DeepSpeed shards as DeepSpeed: none of PyTorch FSDP's settings survives (an FSDP2 or FSDP1 scenario's).
        p.sharding = Sharding::Zero;
        p.noSync.reset();
        p.fsdpWrap.reset();
        p.fp8AllGather = false;
        p.fsdpShardGroup = 0; // HSDP's group: DeepSpeed partitions over every data-parallel rank here
        m_run.keepAllGathered = m_run.keepLastBlockGathered = false;
        p.offloadOptimizer = p.offloadParams = false;
        p.reduceBucketSize.reset();
        p.overlapComm.reset();
        p.stage3PrefetchBucketSize.reset();
        p.stage3MaxLiveParameters.reset();
        p.stage3MaxReuseDistance.reset();
        p.stage3ParamPersistenceThreshold.reset();
        m_run.gradientDtype.reset();
        const char* bf16Key = c.contains("bfloat16") ? "bfloat16" : "bf16"; // BFLOAT16_OLD, the older name
        const bool bf16 = on(c, bf16Key), fp16 = on(c, "fp16");
        if (bf16 && fp16)
            throw InputError("fp16.enabled", "expected bf16 or fp16 enabled, not both");
        batch(c);
        for (const auto& [key, v] : c.items()) {
            if (key == "train_micro_batch_size_per_gpu" || key == "gradient_accumulation_steps"
                || key == "train_batch_size")
                continue; // batch() read them
            else if (key == "bf16" || key == "bfloat16" || key == "fp16")
                precision(key, v);
            else if (key == "zero_optimization")
                zero(v);
            else if (key == "optimizer")
                optimizer(v);
            else if (key == "data_types")
                dataTypes(v);
            else if (key == "activation_checkpointing")
                activationCheckpointing(v);
            else if (key == "communication_data_type")
                unlessDefault(key, v, v.is_null(), "gradients reduced in another type than the model's");
            else if (key == "sparse_gradients" || key == "prescale_gradients" || key == "graph_harvesting")
                unlessDefault(key, v, v.is_boolean() && !v.get<bool>(), key);
            else if (ignoredKey(key))
                ignore(key, "changes no GPU memory (schedule, clipping, logging, checkpoint files)");
            else if (featureKey(key)) // only an empty section or one switched off: each changes memory when used
                unlessDefault(key, v,
                    v.is_object()
                        && (v.empty()
                            || (v.contains("enabled") && v.at("enabled").is_boolean() && !v.at("enabled").get<bool>())),
                    "DeepSpeed's " + key);
            else
                throw InputError(key, "not a DeepSpeed v0.16.4 config key VRAM Lab knows");
        }
        // DeepSpeed's 16-bit modes keep fp32 master weights (BF16_Optimizer, FP16_Optimizer, ZeRO's fp32
        // partition): "auto" makes a pure 16-bit scenario mixed.
        if (bf16 || fp16) {
            m_run.precision = bf16 ? Precision::MixedBf16 : Precision::MixedFp16;
            applied(std::string(bf16 ? bf16Key : "fp16") + ".enabled", "true", "run.precision",
                bf16 ? "mixed-bf16" : "mixed-fp16");
        } else if (isAuto(c, bf16Key) || isAuto(c, "fp16")) {
            if (m_run.precision == Precision::Bf16 || m_run.precision == Precision::Fp16) {
                m_run.precision = m_run.precision == Precision::Bf16 ? Precision::MixedBf16 : Precision::MixedFp16;
                applied("bf16/fp16", "auto", "run.precision",
                    m_run.precision == Precision::MixedBf16 ? "mixed-bf16 (DeepSpeed keeps an fp32 master)"
                                                            : "mixed-fp16 (DeepSpeed keeps an fp32 master)");
            }
        } else {
            m_run.precision = Precision::Fp32; // neither enabled: DeepSpeed trains in fp32
            applied("bf16/fp16", "off", "run.precision", "fp32");
        }
        m_run.framework = Framework::Deepspeed;
        m_out.applied.insert(m_out.applied.begin(), "(the config) -> run.framework = deepspeed");
        // A Hugging Face model under Trainer + DeepSpeed still computes its own loss (ForCausalLMLoss: the upcast
        // logits and their shifted copy); the deepspeed profile's loss is plain PyTorch's.
        if (m_before.framework == Framework::HfTransformers && !m_run.loss) {
            m_run.loss = LossKind::HfShift;
            m_out.applied.push_back("(the scenario's Hugging Face model) -> run.loss = hf-shift");
        }
    }

    /// runtime/config.py@e2dc3eeb _set_batch_related_parameters and _batch_assertion, with world_size the
    /// data-parallel GPUs: the three sizes as given, the missing ones derived as DeepSpeed derives them ("auto" is
    /// what Trainer fills in from its arguments: the scenario's).
    void batch(const json& c)
    {
        const Count world = std::max<Count>(1, m_run.parallelism.sampleParallel());
        const auto given = [&](const char* key, Count scenarioValue) -> std::optional<Count> {
            const auto it = c.find(key);
            if (it == c.end() || it->is_null())
                return std::nullopt;
            if (isAuto(*it))
                return scenarioValue;
            Count v = 0;
            readCount(key, *it, 1, 1'000'000'000, v);
            return v;
        };
        const std::optional<Count> micro = given("train_micro_batch_size_per_gpu", m_run.microBatchSize);
        const std::optional<Count> accum = given("gradient_accumulation_steps", m_run.gradientAccumulationSteps);
        const std::optional<Count> train = given("train_batch_size",
            checkedMul(micro.value_or(m_run.microBatchSize), accum.value_or(m_run.gradientAccumulationSteps), world));
        Count m = 0, g = 0, t = 0;
        if (train && micro && accum) {
            t = *train, m = *micro, g = *accum;
        } else if (train && micro) {
            t = *train, m = *micro, g = *train / *micro / world;
        } else if (train && accum) {
            t = *train, g = *accum, m = *train / world / *accum;
        } else if (micro && accum) {
            m = *micro, g = *accum, t = checkedMul(m, g, world);
        } else if (train) {
            t = *train, g = 1, m = *train / world;
        } else if (micro) {
            m = *micro, g = 1, t = checkedMul(m, world);
        } else {
            throw InputError("train_batch_size",
                "DeepSpeed asserts that train_batch_size or train_micro_batch_size_per_gpu is given");
        }
        if (m < 1 || g < 1 || t != checkedMul(m, g, world))
            throw InputError("train_batch_size",
                "expected train_batch_size = micro-batch x accumulation x data-parallel GPUs (" + formatCount(world)
                    + ", the scenario's), as DeepSpeed asserts; got " + formatCount(t) + " with micro-batch "
                    + formatCount(m) + " and accumulation " + formatCount(g));
        for (const auto& [key, was, now, target] :
            { std::tuple { "train_micro_batch_size_per_gpu", m_run.microBatchSize, m, "run.micro_batch_size" },
                std::tuple { "gradient_accumulation_steps", m_run.gradientAccumulationSteps, g,
                    "run.gradient_accumulation_steps" } }) {
            const auto it = c.find(key);
            const std::string how = it == c.end() ? "derived" : isAuto(*it) ? "auto" : formatCount(now);
            applied(key, how, target, formatCount(now) + (now == was ? " (as it was)" : ""));
        }
        m_run.microBatchSize = m;
        m_run.gradientAccumulationSteps = g;
    }

private:
    static bool isAuto(const json& v) { return v.is_string() && v.get<std::string>() == "auto"; }
    static bool isAuto(const json& c, const char* key)
    {
        const auto it = c.find(key);
        return it != c.end() && it->is_object() && it->contains("enabled") && isAuto(it->at("enabled"));
    }
    static bool enabled(const json& v)
    {
        return v.is_object() && v.contains("enabled") && v.at("enabled").is_boolean() && v.at("enabled").get<bool>();
    }
    static bool on(const json& c, const char* key) { return c.contains(key) && enabled(c.at(key)); }

    static bool ignoredKey(std::string_view k)
    {
        for (std::string_view i :
            { "scheduler", "gradient_clipping", "steps_per_print", "wall_clock_breakdown", "dump_state", "tensorboard",
                "wandb", "csv_monitor", "comet", "flops_profiler", "comms_logger", "monitor_config", "checkpoint",
                "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer", "gradient_predivide_factor",
                "seq_parallel_communication_data_type", "aio", "memory_breakdown", "disable_allgather", "timers",
                "use_data_before_expert_parallelism", "load_universal_checkpoint", "use_node_local_storage" })
            if (k == i)
                return true;
        return false;
    }
    static bool featureKey(std::string_view k)
    {
        for (std::string_view f : { "amp", "compression_training", "quantize_training", "data_efficiency",
                 "curriculum_learning", "autotuning", "nebula", "eigenvalue", "progressive_layer_drop", "hybrid_engine",
                 "elasticity", "pipeline", "compile", "sparse_attention", "weight_quantization" })
            if (k == f)
                return true;
        return false;
    }

    void applied(const std::string& key, const std::string& value, const char* to, const std::string& shown)
    {
        m_out.applied.push_back(key + " = " + value + " -> " + to + " = " + shown);
    }
    void ignore(const std::string& key, const std::string& why) { m_out.ignored.push_back(key + ": " + why); }
    void unlessDefault(const std::string& key, const json& v, bool isDefault, const std::string& what)
    {
        if (!isDefault)
            throw InputError(key, what + " is not modelled; got " + v.dump());
        ignore(key, "default, " + what + " off");
    }

    static void readCount(const std::string& key, const json& v, Count lo, Count hi, Count& to)
    {
        // DeepSpeed takes 5e8 as well as 500000000 (pp_int).
        if (!v.is_number() || (v.is_number_float() && std::floor(v.get<double>()) != v.get<double>()))
            throw InputError(key, "expected a whole number or \"auto\", got " + v.dump());
        const double d = v.get<double>();
        if (!(d >= double(lo) && d <= double(hi)))
            throw InputError(key, "expected " + formatCount(lo) + " to " + formatCount(hi) + ", got " + v.dump());
        to = v.is_number_integer() ? v.get<Count>() : Count(d);
    }
    void count(const std::string& key, const json& v, Count lo, Count hi, Count& to, const char* target)
    {
        if (isAuto(v))
            return ignore(key, "\"auto\": the scenario's " + formatCount(to) + " kept");
        readCount(key, v, lo, hi, to);
        applied(key, formatCount(to), target, formatCount(to));
    }
    /// An optional bucket: "auto" is what Hugging Face's Trainer writes (integrations/deepspeed.py
    /// trainer_config_finalize), `autoValue` of the model.
    void bucket(const std::string& key, const json& v, std::optional<Count>& to, const char* target, Count autoValue)
    {
        Count n = autoValue;
        if (!isAuto(v))
            readCount(key, v, 0, 1'000'000'000'000, n);
        to = n;
        applied(
            key, isAuto(v) ? "auto (Hugging Face: " + formatCount(n) + ")" : formatCount(n), target, formatCount(n));
    }
    void flag(const std::string& key, const json& v, std::optional<bool>& to, const char* target)
    {
        if (isAuto(v))
            return ignore(key, "\"auto\": Trainer leaves it to DeepSpeed's default");
        if (!v.is_boolean())
            throw InputError(key, "expected true or false, got " + v.dump());
        to = v.get<bool>();
        applied(key, v.dump(), target, v.dump());
    }

    void precision(const std::string& key, const json& v)
    {
        if (!v.is_object())
            throw InputError(key, "expected an object with \"enabled\"");
        for (const auto& [k, x] : v.items()) {
            const std::string path = key + "." + k;
            if (k == "enabled") {
                if (isAuto(x))
                    ignore(path, "\"auto\": the scenario's precision kept");
                else if (!x.is_boolean())
                    throw InputError(path, "expected true, false or \"auto\", got " + x.dump());
            } else if (key == "fp16"
                && (k == "loss_scale" || k == "initial_scale_power" || k == "loss_scale_window" || k == "hysteresis"
                    || k == "consecutive_hysteresis" || k == "min_loss_scale")) {
                ignore(path, "loss scaling keeps no GPU memory");
            } else if (k == "auto_cast" || k == "immediate_grad_update" || k == "fp16_master_weights_and_grads"
                || k == "check_grad_overflow") {
                unlessDefault(path, x, x.is_boolean() && !x.get<bool>(), key + " " + k);
            } else {
                throw InputError(path, "not a DeepSpeed v0.16.4 " + key + " key VRAM Lab knows");
            }
        }
    }

    /// offload_config.py@e2dc3eeb: DeepSpeedZeroOffloadParamConfig (`param`) or ...OptimizerConfig.
    void offload(const std::string& key, const json& v, bool& to, const char* target, bool param)
    {
        if (!v.is_object())
            throw InputError(key, "expected an object with \"device\"");
        std::string device = "none";
        for (const auto& [k, x] : v.items()) {
            const std::string path = key + "." + k;
            if (k == "device") {
                if (!x.is_string() || (x != "cpu" && x != "none" && x != "nvme"))
                    throw InputError(path, "expected \"cpu\", \"nvme\" or \"none\", got " + x.dump());
                device = x.get<std::string>();
            } else if (k == "pin_memory" || k == "buffer_count" || k == "nvme_path"
                || (param ? k == "buffer_size" || k == "max_in_cpu"
                          : k == "fast_init" || k == "pipeline_read" || k == "pipeline_write" || k == "pipeline")) {
                ignore(path, "host-side (pinned or NVMe buffers), no GPU memory");
            } else if (k == "ratio" && !param) {
                unlessDefault(path, x, x.is_number() && x.get<double>() == 1.0, "partial optimizer offload");
            } else {
                throw InputError(path, "not a DeepSpeed v0.16.4 offload key VRAM Lab knows");
            }
        }
        if (device == "nvme")
            throw InputError(key + ".device", "NVMe offload (ZeRO-Infinity's swapping buffers) is not modelled");
        to = device == "cpu";
        applied(key + ".device", device, target, to ? "true" : "false");
    }

    void zero(const json& z)
    {
        if (!z.is_object())
            throw InputError("zero_optimization", "expected an object");
        Parallelism& p = m_run.parallelism;
        const Count h = m_sc.model.hiddenSize;
        for (const auto& [k, v] : z.items()) {
            const std::string key = "zero_optimization." + k;
            if (k == "stage") {
                Count stage = m_before.parallelism.zeroStage; // "auto": the scenario's
                count(key, v, 0, 3, stage, "run.parallelism.zero_stage");
                p.zeroStage = int(stage);
            } else if (k == "offload_optimizer") {
                offload(key, v, p.offloadOptimizer, "run.parallelism.offload_optimizer", false);
            } else if (k == "offload_param") {
                offload(key, v, p.offloadParams, "run.parallelism.offload_params", true);
            } else if (k == "cpu_offload") { // deprecated: offload_optimizer {"device": "cpu"}
                if (!v.is_boolean())
                    throw InputError(key, "expected true or false, got " + v.dump());
                p.offloadOptimizer = v.get<bool>();
                applied(key, v.dump(), "run.parallelism.offload_optimizer", v.dump());
            } else if (k == "reduce_bucket_size") {
                bucket(key, v, p.reduceBucketSize, "run.parallelism.reduce_bucket_size", checkedMul(h, h));
            } else if (k == "overlap_comm") {
                flag(key, v, p.overlapComm, "run.parallelism.overlap_comm");
            } else if (k == "stage3_prefetch_bucket_size" || k == "prefetch_bucket_size") {
                bucket(key, v, p.stage3PrefetchBucketSize, "run.parallelism.stage3_prefetch_bucket_size",
                    checkedMul(h, h) * 9 / 10);
            } else if (k == "stage3_param_persistence_threshold" || k == "param_persistence_threshold") {
                bucket(key, v, p.stage3ParamPersistenceThreshold, "run.parallelism.stage3_param_persistence_threshold",
                    checkedMul(h, 10));
            } else if (k == "stage3_max_live_parameters" || k == "max_live_parameters") {
                bucket(key, v, p.stage3MaxLiveParameters, "run.parallelism.stage3_max_live_parameters", 1'000'000'000);
            } else if (k == "stage3_max_reuse_distance" || k == "max_reuse_distance") {
                bucket(key, v, p.stage3MaxReuseDistance, "run.parallelism.stage3_max_reuse_distance", 1'000'000'000);
            } else if (k == "allgather_bucket_size") {
                ignore(key, "v0.16.4 all-gathers into the flat buffer (all_gather_into_tensor): no bucket");
            } else if (k == "round_robin_gradients" || k == "ignore_unused_parameters" || k == "load_from_fp32_weights"
                || k == "elastic_checkpoint" || k == "use_multi_rank_bucket_allreduce"
                || k == "stage3_gather_16bit_weights_on_model_save" || k == "gather_16bit_weights_on_model_save"
                || k == "stage3_gather_fp16_weights_on_model_save" || k == "log_trace_cache_warnings"
                || k == "pipeline_loading_checkpoint" || k == "override_module_apply") {
                ignore(key, "changes no GPU memory in training (ordering, checkpoint files)");
            } else if (k == "contiguous_gradients" || k == "reduce_scatter" || k == "allgather_partitions"
                || k == "memory_efficient_linear") {
                unlessDefault(key, v, isAuto(v) || (v.is_boolean() && v.get<bool>()), k + " false");
            } else if (k == "sub_group_size") {
                unlessDefault(key, v, isAuto(v) || (v.is_number() && v.get<double>() >= 1e9),
                    "optimizer sub-groups smaller than DeepSpeed's 1e9 elements");
            } else if (k == "zero_hpz_partition_size") {
                unlessDefault(key, v, v.is_number() && v.get<double>() <= 1, "ZeRO++ hierarchical partitioning");
            } else if (k == "zero_quantized_weights" || k == "zero_quantized_nontrainable_weights"
                || k == "zero_quantized_gradients" || k == "stage3_use_all_reduce_for_fetch_params"
                || k == "legacy_stage1") {
                unlessDefault(key, v, v.is_boolean() && !v.get<bool>(), k);
            } else if (k == "mics_shard_size") {
                unlessDefault(key, v, v.is_number() && v.get<double>() < 0, "MiCS");
            } else if (k == "stage3_model_persistence_threshold" || k == "model_persistence_threshold"
                || k == "stage3_module_granularity_threshold") {
                unlessDefault(key, v,
                    v.is_number()
                        && (k == "stage3_module_granularity_threshold" ? v.get<double>() == 0
                                                                       : v.get<double>() >= 9e18),
                    k);
            } else {
                throw InputError(key, "not a DeepSpeed v0.16.4 zero_optimization key VRAM Lab knows");
            }
        }
    }

    void optimizer(const json& o)
    {
        if (!o.is_object() || !o.contains("type") || !o.at("type").is_string())
            throw InputError("optimizer.type", "expected the optimizer's type (\"AdamW\", \"Adam\", \"Lion\")");
        std::string type = o.at("type").get<std::string>();
        std::transform(type.begin(), type.end(), type.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
        // runtime/engine.py@e2dc3eeb _configure_basic_optimizer: Adam/AdamW build FusedAdam (DeepSpeedCPUAdam with
        // offload), Lion FusedLion; both keep their states per parameter as the scenario's optimizer does.
        if (type == "adam" || type == "adamw") {
            m_run.optimizer = Optimizer::AdamW;
            m_run.optimizerImpl = OptimizerImpl::Fused;
            applied("optimizer.type", o.at("type").get<std::string>(), "run.optimizer", "adamw (FusedAdam)");
        } else if (type == "lion") {
            m_run.optimizer = Optimizer::Lion;
            m_run.optimizerImpl = OptimizerImpl::Fused;
            applied("optimizer.type", o.at("type").get<std::string>(), "run.optimizer", "lion (FusedLion)");
        } else {
            throw InputError("optimizer.type",
                "expected Adam, AdamW or Lion (the optimizers modelled), got \"" + o.at("type").get<std::string>()
                    + "\"");
        }
        for (const auto& [k, v] : o.items()) {
            if (k == "type")
                continue;
            if (k != "params")
                throw InputError("optimizer." + k, "not a DeepSpeed optimizer key VRAM Lab knows");
            if (v.is_object() && v.contains("torch_adam") && v.at("torch_adam").is_boolean()
                && v.at("torch_adam").get<bool>())
                throw InputError("optimizer.params.torch_adam", "torch.optim.Adam(W) under DeepSpeed is not modelled");
            ignore("optimizer.params", "learning rate, betas, eps and weight decay keep no GPU memory");
        }
    }

    void dataTypes(const json& d)
    {
        if (!d.is_object())
            throw InputError("data_types", "expected an object");
        for (const auto& [k, v] : d.items()) {
            const std::string key = "data_types." + k;
            if (k != "grad_accum_dtype")
                throw InputError(key, "not a DeepSpeed data_types key VRAM Lab knows");
            if (v.is_null())
                continue;
            if (v == "fp32" || v == "bf16" || v == "fp16") {
                m_run.gradientDtype = v == "fp32" ? DType::Fp32 : v == "bf16" ? DType::Bf16 : DType::Fp16;
                applied(key, v.get<std::string>(), "run.gradient_dtype", v.get<std::string>());
            } else {
                throw InputError(key, "expected \"fp32\", \"bf16\" or \"fp16\", got " + v.dump());
            }
        }
    }

    void activationCheckpointing(const json& a)
    {
        if (!a.is_object())
            throw InputError("activation_checkpointing", "expected an object");
        for (const auto& [k, v] : a.items()) {
            const std::string key = "activation_checkpointing." + k;
            // Only models that call deepspeed.checkpointing.checkpoint read these (Megatron-DeepSpeed); the
            // model's own checkpointing is run.checkpointing.
            if (k == "partition_activations" || k == "cpu_checkpointing")
                unlessDefault(key, v, v.is_boolean() && !v.get<bool>(), "DeepSpeed's " + k);
            else if (k == "contiguous_memory_optimization" || k == "number_checkpoints"
                || k == "synchronize_checkpoint_boundary" || k == "profile")
                ignore(key, "read only by deepspeed.checkpointing; the model's checkpointing is run.checkpointing");
            else
                throw InputError(key, "not a DeepSpeed activation_checkpointing key VRAM Lab knows");
        }
    }

    Scenario& m_sc;
    RunSpec& m_run;
    const RunSpec m_before; ///< the scenario's run: what "auto" keeps
    DeepSpeedImport& m_out;
};

} // namespace

DeepSpeedImport applyDeepSpeedConfig(Scenario& scenario, const nlohmann::json& config)
{
    DeepSpeedImport out;
    Scenario work = scenario; // nothing changes unless the whole config reads
    Reader(work, out).top(config);
    scenario = std::move(work);
    return out;
}

} // namespace vramlab
