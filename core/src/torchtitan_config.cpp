// SPDX-License-Identifier: MIT
#include "vramlab/torchtitan_config.h"

#include "json_reader.h"
#include "vramlab/errors.h"
#include "vramlab/presets.h"
#include "vramlab/units.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

namespace vramlab {

namespace {

using nlohmann::json;

/// A config value by section and key, with torchtitan@9dec370ad26b's default (config_manager.py) when absent.
class Config {
public:
    explicit Config(const json& c)
        : m_c(c)
    {
    }
    const json* find(std::string_view section, std::string_view key) const
    {
        const auto s = m_c.find(std::string(section));
        if (s == m_c.end())
            return nullptr;
        const auto k = s->find(std::string(key));
        return k == s->end() ? nullptr : &*k;
    }
    bool has(std::string_view section, std::string_view key) const { return find(section, key) != nullptr; }
    bool flag(std::string_view section, std::string_view key) const // store_true: absent is false
    {
        const json* v = find(section, key);
        if (!v)
            return false;
        if (!v->is_boolean())
            throw InputError(
                name(section, key), "expected true or false, got " + detail::JsonObjectReader::describe(*v));
        return v->get<bool>();
    }
    Count integer(std::string_view section, std::string_view key, Count fallback, Count min, Count max) const
    {
        const json* v = find(section, key);
        if (!v)
            return fallback;
        if (!v->is_number_integer() || v->get<std::int64_t>() < min || v->get<std::int64_t>() > max)
            throw InputError(name(section, key),
                "expected an integer from " + formatCount(min) + " to " + formatCount(max) + ", got "
                    + detail::JsonObjectReader::describe(*v));
        return v->get<std::int64_t>();
    }
    std::string text(std::string_view section, std::string_view key, std::string_view fallback) const
    {
        const json* v = find(section, key);
        if (!v)
            return std::string(fallback);
        if (!v->is_string())
            throw InputError(name(section, key), "expected a string, got " + detail::JsonObjectReader::describe(*v));
        return v->get<std::string>();
    }
    static std::string name(std::string_view section, std::string_view key)
    {
        return std::string(section).append(".").append(key);
    }

private:
    const json& m_c;
};

/// config_manager.py@9dec370ad26b: each section's keys, and for those that change no GPU memory why they are left
/// out. A key outside this table is not that version's.
const std::map<std::string_view, std::map<std::string_view, std::string_view>>& knownKeys()
{
    static const std::map<std::string_view, std::map<std::string_view, std::string_view>> keys {
        { "job",
            { { "config_file", "" }, { "dump_folder", "" }, { "description", "" }, { "use_for_integration_test", "" },
                { "print_args", "" } } },
        { "profiling",
            { { "enable_profiling", "" }, { "save_traces_folder", "" }, { "profile_freq", "" },
                { "enable_memory_snapshot", "" }, { "save_memory_snapshot_folder", "" } } },
        { "metrics",
            { { "log_freq", "" }, { "enable_tensorboard", "" }, { "disable_color_printing", "" },
                { "save_tb_folder", "" }, { "rank_0_only", "" }, { "enable_wandb", "" } } },
        { "model", { { "name", "m" }, { "flavor", "m" }, { "norm_type", "m" }, { "tokenizer_path", "" } } },
        { "optimizer", { { "name", "m" }, { "lr", "" }, { "fused", "m" }, { "early_step_in_backward", "m" } } },
        { "training",
            { { "dataset", "" }, { "dataset_path", "" }, { "batch_size", "m" }, { "seq_len", "m" },
                { "warmup_steps", "" }, { "max_norm", "" }, { "steps", "" }, { "data_parallel_replicate_degree", "m" },
                { "data_parallel_shard_degree", "m" }, { "enable_cpu_offload", "m" }, { "tensor_parallel_degree", "m" },
                { "disable_loss_parallel", "m" }, { "mixed_precision_param", "m" }, { "mixed_precision_reduce", "m" },
                { "compile", "m" }, { "gc_freq", "" }, { "seed", "" }, { "deterministic", "" } } },
        { "experimental",
            { { "enable_async_tensor_parallel", "m" }, { "pipeline_parallel_degree", "m" },
                { "pipeline_parallel_split_points", "m" }, { "pipeline_parallel_schedule", "m" },
                { "pipeline_parallel_schedule_csv", "m" }, { "pipeline_parallel_microbatches", "m" },
                { "enable_compiled_autograd", "m" }, { "context_parallel_degree", "m" },
                { "context_parallel_rotate_method", "m" } } },
        { "checkpoint",
            { { "enable_checkpoint", "" }, { "folder", "" }, { "interval_type", "" }, { "interval", "" },
                { "model_weights_only", "" }, { "export_dtype", "" }, { "create_seed_checkpoint", "" },
                { "async_mode", "" }, { "keep_latest_k", "" }, { "load_step", "" } } },
        { "activation_checkpoint", { { "mode", "m" }, { "selective_ac_option", "m" } } },
        { "float8",
            { { "enable_float8_linear", "m" }, { "enable_fsdp_float8_all_gather", "m" },
                { "precompute_float8_dynamic_scale_for_fsdp", "" }, { "scaling_type_input", "m" },
                { "scaling_type_weight", "m" }, { "scaling_type_grad_output", "m" } } },
        { "comm", { { "init_timeout_seconds", "" }, { "train_timeout_seconds", "" }, { "trace_buf_size", "" } } },
        { "memory_estimation", { { "enabled", "" }, { "disable_fake_mode", "" } } },
    };
    return keys;
}

std::string_view whyLeftOut(std::string_view section)
{
    if (section == "checkpoint")
        return "checkpoint files: written between steps, not held on the GPU during one";
    if (section == "memory_estimation")
        return "torchtitan's own estimate runs before training; it changes nothing the step holds";
    if (section == "profiling" || section == "metrics" || section == "job" || section == "comm")
        return "logging, tracing, folders and timeouts: no GPU memory of the step";
    return "the schedule, data, clipping and seeds: no GPU memory of the step";
}

class Reader {
public:
    Reader(Scenario& sc, const json& config, ConfigImport& out)
        : m_sc(sc)
        , m_run(sc.run)
        , m_cfg(config)
        , m_out(out)
    {
    }

    void apply(const json& c)
    {
        if (!c.is_object())
            throw InputError("(config)", "expected a torchtitan TOML config: tables such as [training]");
        for (const auto& [section, keys] : c.items()) {
            const auto known = knownKeys().find(section);
            if (known == knownKeys().end())
                throw InputError(section, "not a section of torchtitan@9dec370ad26b's config (config_manager.py)");
            if (!keys.is_object())
                throw InputError(section, "expected a [" + section + "] table");
            for (const auto& [key, v] : keys.items()) {
                const auto k = known->second.find(key);
                if (k == known->second.end())
                    throw InputError(section + "." + key, "not a key of torchtitan@9dec370ad26b's [" + section + "]");
                if (k->second.empty())
                    m_out.ignored.push_back(section + "." + key + ": " + std::string(whyLeftOut(section)));
            }
        }
        // What the config leaves out is that version's default, not the scenario's.
        m_run = defaultRunKeepingMachine(m_run);
        model();
        parallel();
        precisionAndSharding();
        batch();
        checkpointing();
        rest();
        m_out.applied.insert(m_out.applied.begin(), "(the config) -> run.framework = torchtitan, mode training");
    }

private:
    void applied(const std::string& key, const std::string& value, const std::string& to)
    {
        m_out.applied.push_back(key + " = " + value + " -> " + to);
    }
    [[noreturn]] static void refuse(const std::string& key, const std::string& why) { throw InputError(key, why); }

    /// torchtitan/models/llama/__init__.py@9dec370ad26b llama3_configs: 8B, 70B and 405B are Llama 3.1's shapes.
    void model()
    {
        const std::string name = m_cfg.text("model", "name", "llama");
        const std::string flavor = m_cfg.text("model", "flavor", "debugmodel");
        if (name != "llama3")
            refuse(
                "model.name", "expected \"llama3\" (the model torchtitan@9dec370ad26b trains), got \"" + name + "\"");
        static const std::map<std::string_view, std::string_view> presetOf { { "8B", "llama-3-8b" },
            { "70B", "llama-3-70b" }, { "405B", "llama-3.1-405b" } };
        const auto p = presetOf.find(flavor);
        if (p == presetOf.end())
            refuse("model.flavor",
                "expected 8B, 70B or 405B (Llama 3.1's shapes, as presets); got \"" + flavor
                    + "\" (give its shapes in the scenario instead)");
        m_sc.model = findPreset(p->second)->model;
        applied("model.flavor", flavor, "model.preset = " + std::string(p->second));
        const std::string norm = m_cfg.text("model", "norm_type", "rmsnorm");
        if (norm != "rmsnorm")
            refuse("model.norm_type",
                "expected \"rmsnorm\" (modelled as torchtitan's RMSNorm in fp32); got \"" + norm
                    + "\", which keeps other tensors");
    }

    /// parallel_dims.py@9dec370ad26b: dp_shard -1 is world / (dp_replicate x cp x tp x pp), and the product must be
    /// the world size (the scenario's GPUs: the launcher's NGPU).
    void parallel()
    {
        Parallelism& p = m_run.parallelism;
        const Count world = p.gpus;
        m_replicate = m_cfg.integer("training", "data_parallel_replicate_degree", 1, 1, world);
        const Count tp = m_cfg.integer("training", "tensor_parallel_degree", 1, 1, world);
        const Count pp = m_cfg.integer("experimental", "pipeline_parallel_degree", 1, 1, world);
        const Count cp = m_cfg.integer("experimental", "context_parallel_degree", 1, 1, world);
        const Count other = m_replicate * tp * pp * cp;
        Count shard = m_cfg.integer("training", "data_parallel_shard_degree", -1, -1, world);
        if (shard == 0)
            refuse("training.data_parallel_shard_degree", "expected -1 or at least 1, as parallel_dims.py asserts");
        if (shard < 0)
            shard = world / other;
        if (shard < 1 || checkedMul(other, shard) != world)
            refuse("training.data_parallel_shard_degree",
                "expected dp_replicate x dp_shard x cp x tp x pp = the scenario's " + formatCount(world)
                    + " GPUs (run.parallelism.gpus, the launcher's world size), as parallel_dims.py asserts; got "
                    + formatCount(m_replicate) + " x " + formatCount(shard) + " x " + formatCount(cp) + " x "
                    + formatCount(tp) + " x " + formatCount(pp));
        m_shard = shard;
        p.tensorParallel = tp;
        p.sequenceParallel = tp > 1; // apply_tp: SequenceParallel norms and Shard(1) inputs whenever TP is on
        p.pipelineParallel = pp;
        p.contextParallel = cp;
        applied("training.tensor_parallel_degree", formatCount(tp),
            "run.parallelism.tensor_parallel" + std::string(tp > 1 ? ", sequence_parallel true" : ""));
        applied("experimental.pipeline_parallel_degree", formatCount(pp), "run.parallelism.pipeline_parallel");
        applied("experimental.context_parallel_degree", formatCount(cp), "run.parallelism.context_parallel");
        const std::string rotate = m_cfg.text("experimental", "context_parallel_rotate_method", "allgather");
        if (rotate != "allgather" && cp > 1)
            refuse("experimental.context_parallel_rotate_method",
                "expected \"allgather\" (the ring modelled); got \"" + rotate + "\"");
        if (const json* s = m_cfg.find("experimental", "pipeline_parallel_split_points");
            s && !(s->is_array() && s->empty()))
            refuse("experimental.pipeline_parallel_split_points",
                "expected [] (stages split as generate_split_points does); hand-written split points are not "
                "modelled");
        if (!m_cfg.text("experimental", "pipeline_parallel_schedule_csv", "").empty())
            refuse(
                "experimental.pipeline_parallel_schedule_csv", "expected \"\": a schedule from a file is not modelled");
        const std::string schedule = m_cfg.text("experimental", "pipeline_parallel_schedule", "1F1B");
        if (pp > 1) {
            if (schedule == "Interleaved1F1B") {
                p.pipelineSchedule = PipelineSchedule::Interleaved;
                p.virtualStages = 2; // pipeline_llama.py: two stages per rank for the looped schedules
            } else if (schedule != "1F1B") {
                refuse("experimental.pipeline_parallel_schedule",
                    "expected 1F1B or Interleaved1F1B (the schedules modelled); got \"" + schedule + "\"");
            }
            applied("experimental.pipeline_parallel_schedule", schedule,
                "run.parallelism.pipeline_schedule" + std::string(schedule == "1F1B" ? "" : ", virtual_stages 2"));
        }
        // parallelize_llama.py reads the flag only under TP.
        if (m_cfg.flag("experimental", "enable_async_tensor_parallel") && tp > 1) {
            p.asyncTp = true;
            applied("experimental.enable_async_tensor_parallel", "true", "run.parallelism.async_tp");
        }
    }

    /// parallelize_llama.py@9dec370ad26b: FSDP2 (HSDP with dp_replicate) wherever dp_shard or cp is above 1, with
    /// MixedPrecisionPolicy(param_dtype, reduce_dtype float32), every block but the last resharded after forward,
    /// none with pipelining; DDP for dp_replicate alone; train.py runs no autocast, so without FSDP's bf16
    /// parameters the model computes in fp32.
    void precisionAndSharding()
    {
        Parallelism& p = m_run.parallelism;
        const bool fsdp = m_shard > 1 || p.contextParallel > 1;
        if (m_cfg.flag("training", "enable_cpu_offload"))
            refuse("training.enable_cpu_offload", "expected false: FSDP2's CPUOffloadPolicy is not modelled");
        const std::string param = m_cfg.text("training", "mixed_precision_param", "bfloat16");
        const std::string reduce = m_cfg.text("training", "mixed_precision_reduce", "float32");
        if (param != "bfloat16" && param != "float32")
            refuse("training.mixed_precision_param", "expected \"bfloat16\" or \"float32\", got \"" + param + "\"");
        if (reduce != "float32")
            refuse("training.mixed_precision_reduce", "expected \"float32\" (its only choice), got \"" + reduce + "\"");
        m_run.precision = fsdp && param == "bfloat16" ? Precision::MixedBf16 : Precision::Fp32;
        applied("training.mixed_precision_param", param + (fsdp ? "" : " (no FSDP: not applied)"),
            std::string("run.precision = ") + (m_run.precision == Precision::MixedBf16 ? "mixed-bf16" : "fp32"));
        p.zeroStage = fsdp ? 3 : 0;
        p.sharding = fsdp ? Sharding::Fsdp2 : Sharding::Zero;
        p.fsdpShardGroup = fsdp && m_replicate > 1 ? m_shard * p.contextParallel : 0;
        p.offloadOptimizer = p.offloadParams = false;
        m_run.keepAllGathered = fsdp && p.pipelineParallel > 1;
        m_run.keepLastBlockGathered = fsdp && p.pipelineParallel == 1;
        if (fsdp)
            applied("training.data_parallel_shard_degree", formatCount(m_shard),
                "run.parallelism.zero_stage 3, sharding fsdp2, reshard_after_forward "
                    + std::string(p.pipelineParallel > 1 ? "false (pipelining)" : "\"all but last block\"")
                    + (m_replicate > 1 ? ", fsdp_shard_group " + formatCount(p.fsdpShardGroup) + " (HSDP)" : ""));
        else if (m_replicate > 1 && (p.tensorParallel > 1 || p.pipelineParallel > 1))
            refuse("training.data_parallel_replicate_degree",
                "DDP with tensor or pipeline parallelism: torchtitan@9dec370ad26b raises \"DDP has not supported > 1D "
                "parallelism\" (parallelize_llama.py apply_ddp); use data_parallel_shard_degree (FSDP)");
        else if (m_replicate > 1)
            applied("training.data_parallel_replicate_degree", formatCount(m_replicate), "DDP (zero_stage 0)");
        const bool lossParallel = p.tensorParallel > 1 && !m_cfg.flag("training", "disable_loss_parallel");
        if (lossParallel) {
            m_run.loss = LossKind::LossParallel;
            applied("training.tensor_parallel_degree", formatCount(p.tensorParallel), "run.loss = loss-parallel");
        }
    }

    /// train.py@9dec370ad26b: training.batch_size is each data-parallel rank's batch; with pipelining the schedule
    /// splits it into pipeline_parallel_microbatches (default: the pipeline degree); there is no gradient
    /// accumulation otherwise.
    void batch()
    {
        const Count b = m_cfg.integer("training", "batch_size", 8, 1, 1'000'000);
        m_run.sequenceLength = m_cfg.integer("training", "seq_len", 2048, 1, 1LL << 30);
        applied("training.seq_len", formatCount(m_run.sequenceLength), "run.sequence_length");
        const Count pp = m_run.parallelism.pipelineParallel;
        Count micro = 1;
        if (pp > 1) {
            const json* n = m_cfg.find("experimental", "pipeline_parallel_microbatches");
            micro = n ? m_cfg.integer("experimental", "pipeline_parallel_microbatches", pp, 1, b) : pp;
            if (b % micro != 0)
                refuse("experimental.pipeline_parallel_microbatches",
                    "expected a divisor of training.batch_size (" + formatCount(b) + "), got " + formatCount(micro));
        }
        m_run.microBatchSize = b / micro;
        m_run.gradientAccumulationSteps = micro;
        applied("training.batch_size", formatCount(b),
            "run.micro_batch_size " + formatCount(b / micro) + " x gradient_accumulation_steps " + formatCount(micro)
                + (pp > 1 ? " (pipeline micro-batches)" : ""));
    }

    /// parallelize_llama.py@9dec370ad26b _apply_ac_to_transformer_block: "full" wraps every block, "selective" with
    /// "op" saves every second matmul and SDPA, with an integer k wraps every k-th block (the count starts at 1).
    void checkpointing()
    {
        const std::string mode = m_cfg.text("activation_checkpoint", "mode", "selective");
        const std::string option = m_cfg.text("activation_checkpoint", "selective_ac_option", "2");
        Checkpointing& c = m_run.checkpointing;
        if (mode == "none") {
            c = { Checkpointing::Kind::None, 0 };
        } else if (mode == "full") {
            c = { Checkpointing::Kind::Full, 0 };
        } else if (mode != "selective") {
            refuse("activation_checkpoint.mode", "expected none, selective or full, got \"" + mode + "\"");
        } else if (option == "op") {
            c = { Checkpointing::Kind::SelectiveOp, 0 };
        } else {
            // parallelize_llama.py: `selective_ac_option.isdigit()`, else it raises.
            Count k = -1;
            if (!option.empty() && option.size() <= 9
                && std::all_of(option.begin(), option.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
                k = std::stoll(option);
            if (k < 0)
                refuse("activation_checkpoint.selective_ac_option",
                    "expected \"op\" or a layer count, got \"" + option + "\"");
            const Count layers = m_sc.model.numLayers;
            const Count wrapped = k == 0 ? layers : layers / k;
            if (m_run.parallelism.pipelineParallel > 1 && wrapped != layers)
                refuse("activation_checkpoint.selective_ac_option",
                    "every k-th block counted across a pipeline rank's chunks is not modelled; expected \"op\", 0 or 1 "
                    "with pipelining");
            c = wrapped == layers ? Checkpointing { Checkpointing::Kind::Full, 0 }
                : wrapped == 0    ? Checkpointing { Checkpointing::Kind::None, 0 }
                                  : Checkpointing { Checkpointing::Kind::Layers, wrapped };
        }
        const std::string shown = c.kind == Checkpointing::Kind::None ? "none"
            : c.kind == Checkpointing::Kind::Full                     ? "full"
            : c.kind == Checkpointing::Kind::SelectiveOp              ? "selective-op"
                                                                      : "{\"layers\": " + formatCount(c.every) + "}";
        applied("activation_checkpoint.mode", mode + (mode == "selective" ? " (" + option + ")" : ""),
            "run.checkpointing = " + shown);
    }

    void rest()
    {
        m_run.mode = Mode::Training;
        m_run.framework = Framework::Torchtitan;
        m_run.finetune.method = FinetuneMethod::Full;
        m_run.attention = AttentionImpl::Flash; // F.scaled_dot_product_attention
        m_run.compile = m_cfg.flag("training", "compile");
        if (m_run.compile) {
            m_run.compileLoss = false; // train.py@9dec370ad26b leaves the loss eager
            applied("training.compile", "true", "run.compile (each block; the loss eager)");
        }
        if (m_cfg.flag("experimental", "enable_compiled_autograd"))
            refuse("experimental.enable_compiled_autograd", "expected false: compiled autograd is not modelled");
        const std::string opt = m_cfg.text("optimizer", "name", "AdamW");
        if (opt != "AdamW" && opt != "Adam")
            refuse("optimizer.name", "expected AdamW or Adam (torchtitan/optimizer.py), got \"" + opt + "\"");
        m_run.optimizer = opt == "AdamW" ? Optimizer::AdamW : Optimizer::Adam;
        m_run.optimizerImpl = m_cfg.flag("optimizer", "fused") ? OptimizerImpl::Fused : OptimizerImpl::Foreach;
        applied("optimizer.name", opt,
            std::string("run.optimizer, optimizer_impl ") + (m_cfg.flag("optimizer", "fused") ? "fused" : "foreach"));
        m_run.optimizerInBackward = m_cfg.flag("optimizer", "early_step_in_backward");
        if (m_run.optimizerInBackward)
            applied("optimizer.early_step_in_backward", "true", "run.optimizer_in_backward");
        // float8.py@9dec370ad26b Float8Handler: nothing is converted before SM89 (the GPUs without FP8 tensor cores
        // here), and FSDP's float8 all-gather needs dp_shard above 1.
        const bool float8 = m_cfg.flag("float8", "enable_float8_linear");
        const bool sm89 = !m_run.gpu || m_run.gpu->fp8Tflops > 0;
        m_run.fp8 = float8 && sm89;
        m_run.parallelism.fp8AllGather
            = m_run.fp8 && m_shard > 1 && m_cfg.flag("float8", "enable_fsdp_float8_all_gather");
        if (float8 && !sm89)
            applied("float8.enable_float8_linear", "true",
                "nothing: torchtitan converts no linear before SM89 (" + m_run.gpu->name + " has no FP8)");
        if (m_run.fp8) {
            for (const char* k : { "scaling_type_input", "scaling_type_weight", "scaling_type_grad_output" })
                if (m_cfg.text("float8", k, "dynamic") != "dynamic")
                    refuse(Config::name("float8", k),
                        "expected \"dynamic\": delayed scaling's amax history is not modelled");
            applied("float8.enable_float8_linear", "true",
                std::string("run.fp8") + (m_run.parallelism.fp8AllGather ? ", parallelism.fp8_all_gather" : ""));
        }
    }

    Scenario& m_sc;
    RunSpec& m_run;
    Config m_cfg;
    ConfigImport& m_out;
    Count m_replicate = 1, m_shard = 1;
};

} // namespace

ConfigImport applyTorchtitanConfig(Scenario& scenario, const json& config)
{
    ConfigImport out;
    Scenario next = scenario; // all or nothing: a refusal leaves the scenario as it was
    Reader(next, config, out).apply(config);
    scenario = std::move(next);
    return out;
}

} // namespace vramlab
