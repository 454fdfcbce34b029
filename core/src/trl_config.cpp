// SPDX-License-Identifier: MIT
#include "vramlab/trl_config.h"

#include "hf_trainer_args.h"
#include "json_reader.h"
#include "vramlab/errors.h"
#include "vramlab/units.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

namespace vramlab {

namespace {

using nlohmann::json;

// Why a key changes no GPU memory of a training step.
constexpr std::string_view kOutput = "output, logging, saving, the Hub and reports: no GPU memory of the step";
constexpr std::string_view kData = "the dataset and its preparation: no GPU memory (the batch's shape comes from "
                                   "max_length, packing and the batch size)";
constexpr std::string_view kEval = "evaluation runs between training steps under no_grad, below training's peak";
constexpr std::string_view kSchedule = "the learning rate, its schedule, clipping and seeds: no GPU memory";
constexpr std::string_view kLoader = "the CPU data loader: no GPU memory";
constexpr std::string_view kLauncher = "where the processes run (accelerate launch): no GPU memory";
constexpr std::string_view kLabels = "which tokens count in the loss (label masks): the same tensors";

/// Every key `trl sft` v0.25.1 accepts in its config: the fields of ScriptArguments and DatasetMixtureConfig
/// (trl/scripts/utils.py@1cf8d56c), ModelConfig (trl/trainer/model_config.py), SFTConfig
/// (trl/trainer/sft_config.py) and transformers v4.57.1's TrainingArguments (training_args.py@8cb5963c), and the
/// accelerate launch options trl/cli.py forwards. "" marks a key read below; the others say why they are left out.
const std::map<std::string_view, std::string_view>& knownKeys()
{
    static const std::map<std::string_view, std::string_view> keys = [] {
        std::map<std::string_view, std::string_view> k;
        const auto add = [&](std::initializer_list<std::string_view> names, std::string_view why) {
            for (std::string_view n : names)
                k.emplace(n, why);
        };
        // Read below.
        add({ "per_device_train_batch_size", "per_gpu_train_batch_size", "gradient_accumulation_steps", "bf16", "fp16",
                "optim", "optim_args", "adafactor", "gradient_checkpointing", "torch_compile", "torch_compile_backend",
                "torch_compile_mode", "torchdynamo", "use_liger_kernel", "liger_kernel_config", "deepspeed", "fsdp",
                "fsdp_config", "fsdp_min_num_params", "fsdp_transformer_layer_cls_to_wrap", "parallelism_config",
                "label_smoothing_factor", "use_cpu", "no_cuda", "use_mps_device", "optim_target_modules",
                "half_precision_backend", "fp16_backend", "max_length", "packing", "packing_strategy", "padding_free",
                "pad_to_multiple_of", "loss_type", "activation_offloading", "dtype", "torch_dtype",
                "attn_implementation", "use_peft", "lora_r", "lora_alpha", "lora_dropout", "lora_target_modules",
                "lora_target_parameters", "lora_modules_to_save", "lora_task_type", "use_dora", "load_in_8bit",
                "load_in_4bit", "bnb_4bit_quant_type", "use_bnb_nested_quant", "num_processes", "accelerate_config",
                "config_file", "mixed_precision", "use_deepspeed", "use_fsdp", "dynamo_backend", "env" },
            "");
        add({ "output_dir", "overwrite_output_dir", "logging_dir", "logging_strategy", "logging_first_step",
                "logging_steps", "logging_nan_inf_filter", "log_level", "log_level_replica", "log_on_each_node",
                "save_strategy", "save_steps", "save_total_limit", "save_safetensors", "save_on_each_node",
                "save_only_model", "restore_callback_states_from_checkpoint", "resume_from_checkpoint", "run_name",
                "disable_tqdm", "report_to", "project", "trackio_space_id", "push_to_hub", "hub_model_id",
                "hub_strategy", "hub_token", "hub_private_repo", "hub_always_push", "hub_revision",
                "push_to_hub_model_id", "push_to_hub_organization", "push_to_hub_token", "skip_memory_metrics",
                "include_tokens_per_second", "include_num_input_tokens_seen", "debug", "tpu_metrics_debug", "do_train",
                "do_predict", "load_best_model_at_end", "metric_for_best_model", "greater_is_better",
                "num_train_epochs", "max_steps" },
            kOutput);
        add({ "dataset_name", "dataset_config", "dataset_train_split", "dataset_test_split", "dataset_streaming",
                "datasets", "streaming", "test_split_size", "chat_template_path", "dataset_text_field",
                "dataset_kwargs", "dataset_num_proc", "eos_token", "pad_token", "remove_unused_columns", "label_names",
                "group_by_length", "length_column_name", "ignore_data_skip", "data_seed" },
            kData);
        add({ "do_eval", "eval_strategy", "eval_steps", "eval_delay", "eval_on_start", "per_device_eval_batch_size",
                "per_gpu_eval_batch_size", "eval_accumulation_steps", "eval_do_concat_batches",
                "eval_use_gather_object", "batch_eval_metrics", "prediction_loss_only", "include_inputs_for_metrics",
                "include_for_metrics", "bf16_full_eval", "fp16_full_eval", "jit_mode_eval", "eval_packing",
                "past_index", "use_legacy_prediction_loop" },
            kEval);
        add({ "learning_rate", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm",
                "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_ratio", "warmup_steps", "seed", "full_determinism",
                "neftune_noise_alpha", "average_tokens_across_devices" },
            kSchedule);
        add({ "dataloader_drop_last", "dataloader_num_workers", "dataloader_prefetch_factor", "dataloader_pin_memory",
                "dataloader_persistent_workers" },
            kLoader);
        add({ "local_rank", "ddp_backend", "ddp_timeout", "tpu_num_cores", "mp_parameters", "ray_scope", "num_machines",
                "machine_rank", "main_process_ip", "main_process_port", "gpu_ids", "same_network", "rdzv_backend",
                "multi_gpu", "monitor_interval", "max_restarts", "main_training_function" },
            kLauncher);
        add({ "completion_only_loss", "assistant_only_loss" }, kLabels);
        add({ "model_name_or_path", "model_revision", "trust_remote_code" },
            "the model stays the scenario's (File > From config.json… imports a model's config.json)");
        add({ "model_init_kwargs" }, "trl sft loads the model itself (trl/scripts/sft.py): SFTTrainer ignores it");
        add({ "use_rslora" }, "rank-stabilized LoRA changes the scaling, not a tensor");
        add({ "gradient_checkpointing_kwargs", "gradient_checkpointing_use_reentrant" },
            "reentrant or not, a checkpointed layer keeps only its input");
        add({ "tf32" }, "TF32 matmuls: no GPU memory");
        add({ "fp16_opt_level" }, "apex's AMP level, read only with half_precision_backend \"apex\"");
        add({ "ddp_find_unused_parameters", "ddp_broadcast_buffers", "ddp_bucket_cap_mb" },
            "DDP's own settings: its buckets are the scenario's communication buffers (run.overheads)");
        add({ "accelerator_config" }, "accelerate's batch dispatch and sampler: no GPU memory");
        add({ "auto_find_batch_size" },
            "halves the batch after an out-of-memory error: the estimate is for the batch given");
        add({ "torch_empty_cache_steps" }, "empties the allocator's cache between steps: not the step's peak");
        add({ "ignore_bias_buffers" }, "read by trl dpo only");
        return k;
    }();
    return keys;
}

class Reader : detail::ConfigReader {
public:
    Reader(Scenario& sc, const json& config, ConfigImport& out)
        : ConfigReader(config, out, detail::Coercion::Argparse)
        , m_sc(sc)
        , m_run(sc.run)
    {
    }

    void apply()
    {
        if (!m_c.is_object())
            throw InputError("(config)", "expected a TRL config: a YAML mapping of keys such as max_length");
        for (const auto& [key, v] : m_c.items()) {
            const auto k = knownKeys().find(key);
            if (k == knownKeys().end())
                refuse(key,
                    key == "max_seq_length"
                        ? "not a key of TRL v0.25.1 (SFTConfig renamed it max_length in v0.20; trl sft hands it to "
                          "accelerate launch, which stops on it): write max_length"
                        : "not a key of TRL v0.25.1's sft (ScriptArguments, SFTConfig with transformers v4.57.1's "
                          "TrainingArguments, ModelConfig) nor an accelerate launch option VRAM Lab reads; trl sft "
                          "hands an unknown key to accelerate launch, which stops on it (another trl command's key "
                          "it drops): remove it, or set what it does in the scenario");
            if (!k->second.empty() && !v.is_null())
                m_out.ignored.push_back(key + ": " + std::string(k->second));
        }
        // What the config leaves out is that version's default, not the scenario's.
        m_run = defaultRunKeepingMachine(m_run);
        m_run.mode = Mode::Training;
        m_run.framework = Framework::HfTransformers;
        launcher();
        finetune();
        precision();
        attention();
        batch();
        optimizer();
        checkpointingAndLoss();
        refusals();
        m_out.applied.insert(m_out.applied.begin(), "(the config) -> run.framework = hf-transformers, mode training");
        deepSpeed();
    }

private:
    /// trl/cli.py@1cf8d56c: keys that are accelerate launch options go to `accelerate launch`.
    void launcher()
    {
        Parallelism& p = m_run.parallelism;
        if (const auto n = integer("num_processes", 1, 1'000'000)) {
            p.gpus = *n;
            applied("num_processes", formatCount(*n), "run.parallelism.gpus");
        }
        if (const auto name = text("accelerate_config")) {
            // trl/accelerate_configs/*.yaml@1cf8d56c: single_gpu one process; the others num_processes 8 (which a
            // num_processes key overrides: launch arguments win over the config file); single_gpu and multi_gpu run
            // with mixed_precision bf16 (which TrainingArguments' bf16 sets anyway); the DeepSpeed and FSDP ones shard.
            if (!find("num_processes")) {
                p.gpus = *name == "single_gpu" ? 1 : 8;
                applied("accelerate_config", *name,
                    "run.parallelism.gpus " + formatCount(p.gpus) + " (the shipped config's num_processes)");
            }
            if (*name == "zero1" || *name == "zero2" || *name == "zero3") {
                m_zeroFromAccelerate = *name->rbegin() - '0';
                applied("accelerate_config", *name,
                    "DeepSpeed ZeRO-" + std::string(1, *name->rbegin()) + " as trl/accelerate_configs/" + *name
                        + ".yaml sets it (no offload)");
            } else if (*name == "single_gpu" || *name == "multi_gpu") {
                applied("accelerate_config", *name, *name == "multi_gpu" ? "DDP (zero_stage 0)" : "one process");
            } else if (*name == "fsdp1") {
                // fsdp1.yaml@1cf8d56c: fsdp_version 1, FULL_SHARD, no offload, use_orig_params; Trainer accumulates
                // under no_sync and wraps a PeftModel with PEFT's policy (the hf-transformers profile's defaults).
                p.zeroStage = 3;
                p.sharding = Sharding::Fsdp1;
                applied("accelerate_config", *name,
                    "run.parallelism.zero_stage 3, sharding fsdp1 (FULL_SHARD, no offload, as "
                    "trl/accelerate_configs/fsdp1.yaml sets it)");
            } else {
                refuse("accelerate_config",
                    "expected single_gpu, multi_gpu, zero1, zero2, zero3 or fsdp1 (TRL's shipped configs that VRAM "
                    "Lab models); got \""
                        + *name
                        + "\" (accelerate's FSDP2 and a config file of your own are not read: set run.parallelism "
                          "in the scenario)");
            }
        }
        if (text("config_file"))
            refuse("config_file",
                "an accelerate config file is not read: use accelerate_config with one of TRL's shipped names, or "
                "set run.parallelism in the scenario");
        if (const auto mp = text("mixed_precision"); mp && *mp != "no")
            refuse("mixed_precision",
                "accelerate launch's mixed precision is not read: say it with bf16 or fp16 (TrainingArguments sets "
                "ACCELERATE_MIXED_PRECISION from them)");
        if (on("use_deepspeed", false) || on("use_fsdp", false))
            refuse(on("use_deepspeed", false) ? "use_deepspeed" : "use_fsdp",
                "accelerate launch's sharding flags are not read: use accelerate_config zero1/zero2/zero3 or an "
                "inline deepspeed config");
        if (const auto d = text("dynamo_backend"); d && *d != "no")
            refuse("dynamo_backend", "torch.compile of a whole transformers model is not modelled: expected \"no\"");
        if (const json* env = find("env")) {
            if (!env->is_object())
                refuse("env", "expected a mapping of environment variables (TrlParser raises otherwise)");
            for (const auto& [name, value] : env->items()) {
                if (name != "PYTORCH_CUDA_ALLOC_CONF") {
                    m_out.ignored.push_back("env." + name + ": an environment variable VRAM Lab does not read");
                    continue;
                }
                const std::string conf = value.is_string() ? value.get<std::string>() : value.dump();
                const bool expandable = conf.find("expandable_segments:True") != std::string::npos;
                m_run.allocator.expandableSegments = expandable;
                applied("env.PYTORCH_CUDA_ALLOC_CONF", conf,
                    std::string("run.allocator.expandable_segments ") + (expandable ? "true" : "false")
                        + " (its other options are not modelled)");
            }
        }
    }

    /// trl/trainer/model_config.py and get_peft_config / get_quantization_config (trl/trainer/utils.py@1cf8d56c).
    void finetune()
    {
        Finetune& f = m_run.finetune;
        const bool peft = on("use_peft", false);
        const bool four = on("load_in_4bit", false);
        if (on("load_in_8bit", false))
            refuse("load_in_8bit", "bitsandbytes' LLM.int8 weights in training are not modelled: expected false");
        if (four && !peft)
            refuse("load_in_4bit",
                "a 4-bit model trains only with adapters (Trainer refuses a purely quantized model): expected "
                "use_peft true");
        f = Finetune {};
        if (!peft) {
            f.method = FinetuneMethod::Full;
            applied("use_peft", "false", "run.finetune.method = full");
            return;
        }
        f.method = four ? FinetuneMethod::Qlora : FinetuneMethod::Lora;
        f.rank = integer("lora_r", 1, 1 << 20).value_or(16);
        if (const json* a = find("lora_alpha")) {
            if (!a->is_number())
                refuse("lora_alpha", "expected a number, got " + detail::JsonObjectReader::describe(*a));
            f.alpha = a->get<double>();
        }
        f.dropout = dropout("lora_dropout").value_or(0.05); // ModelConfig's default
        f.dora = on("use_dora", false);
        if (const auto task = text("lora_task_type"); task && *task != "CAUSAL_LM")
            refuse("lora_task_type",
                "expected CAUSAL_LM (the causal language model trl sft trains), got \"" + *task + "\"");
        refuseModulesToSave("lora_modules_to_save");
        if (find("lora_target_parameters"))
            m_out.ignored.push_back("lora_target_parameters: trl sft does not pass it to LoraConfig "
                                    "(trl/trainer/utils.py get_peft_config)");
        targets();
        if (four) {
            const std::string quant = text("bnb_4bit_quant_type").value_or("nf4");
            if (quant != "nf4" && quant != "fp4")
                refuse("bnb_4bit_quant_type", "expected nf4 or fp4, got \"" + quant + "\"");
            f.quant = Nf4Format::Bitsandbytes;
            f.doubleQuant = on("use_bnb_nested_quant", false);
            applied("load_in_4bit", "true",
                "run.finetune.method = qlora (bitsandbytes " + quant
                    + (quant == "fp4" ? ", stored as NF4 is: 4 bits and a scale per 64" : "") + "), double_quant "
                    + (f.doubleQuant ? "true" : "false") + " (use_bnb_nested_quant)");
        }
        applied("use_peft", "true",
            "run.finetune.method = " + std::string(four ? "qlora" : "lora") + ", rank " + formatCount(f.rank)
                + ", dropout " + formatDouble(f.dropout, std::chars_format::general, 3) + (f.dora ? ", dora" : ""));
    }

    /// ModelConfig.__post_init__ (model_config.py@1cf8d56c) unwraps a one-element list to a string, which PEFT
    /// matches as a regular expression against the whole module name (tuners_utils.py@77daa8d3
    /// check_target_module_exists); two or more names match as suffixes.
    void targets()
    {
        Finetune& f = m_run.finetune;
        const json* t = find("lora_target_modules");
        std::vector<std::string> names;
        if (!t) {
            // peft utils/constants.py@77daa8d3: ["q_proj", "v_proj"] for llama, mistral, mixtral, qwen2, qwen3 and
            // gemma3_text; other model types other modules or an error.
            const auto checkpoint = detail::hfCheckpoint(m_sc.model);
            if (!checkpoint || !detail::peftDefaultsToQv(checkpoint->modelType))
                refuse("lora_target_modules",
                    "unset, PEFT picks modules by the model's model_type (utils/constants.py); VRAM Lab knows that "
                    "choice for the Llama, Mistral, Mixtral, Qwen2, Qwen3 dense, SmolLM2 and Gemma 3 1B presets "
                    "only: name the modules");
            f.targets = { "q", "v" };
            applied(
                "lora_target_modules", "(unset)", "run.finetune.targets [q, v] (PEFT's default for the model type)");
            return;
        }
        const bool single = t->is_string() || (t->is_array() && t->size() == 1);
        if (t->is_array()) {
            for (const json& e : *t) {
                if (!e.is_string())
                    refuse(
                        "lora_target_modules", "expected module names, got " + detail::JsonObjectReader::describe(e));
                names.push_back(e.get<std::string>());
            }
        } else if (t->is_string()) {
            names.push_back(t->get<std::string>());
        } else {
            refuse("lora_target_modules",
                "expected a list of module names, got " + detail::JsonObjectReader::describe(*t));
        }
        if (names.empty())
            refuse("lora_target_modules", "expected at least one module name");
        if (single && names.front() != "all-linear")
            refuse("lora_target_modules",
                "one name becomes a string in ModelConfig.__post_init__ (model_config.py@1cf8d56c), and PEFT reads a "
                "string as a regular expression over the whole module name, which VRAM Lab does not evaluate (a bare "
                "name such as \""
                    + names.front() + "\" matches no module and PEFT stops): list two or more names, or all-linear");
        std::string shown;
        f.targets = detail::scenarioTargets(names, "lora_target_modules", shown);
        applied("lora_target_modules", t->dump(), "run.finetune.targets [" + shown + "]");
    }

    /// The load dtype (ModelConfig.dtype, default None: transformers 4.57.1 loads fp32) and Trainer's autocast (bf16
    /// or fp16; SFTConfig: bf16 unless fp16). Trainer never casts the parameters (accelerate wraps forward in autocast
    /// and converts its outputs to fp32).
    void precision()
    {
        std::optional<std::string> dtype = text("dtype");
        const char* dtypeKey = "dtype";
        if (!dtype && (dtype = text("torch_dtype")))
            dtypeKey = "torch_dtype"; // model_config.py: copied into dtype with a FutureWarning
        const bool fp16 = on("fp16", false);
        const bool bf16 = find("bf16") ? on("bf16", false) : !fp16; // sft_config.py __post_init__
        const std::string d = dtype.value_or("float32");
        if (d != "auto" && d != "bfloat16" && d != "float16" && d != "float32")
            refuse(dtypeKey, "expected auto, bfloat16, float16 or float32 (ModelConfig's choices), got \"" + d + "\"");
        const FinetuneMethod method = m_run.finetune.method;
        if (method == FinetuneMethod::Qlora && (!dtype || d == "auto" || d == "float32"))
            refuse(dtypeKey,
                !dtype ? "unset with load_in_4bit, bitsandbytes computes in fp32 and transformers loads the other "
                         "modules in fp16 (quantizer_bnb_4bit.py): not modelled; expected bfloat16 or float16"
                    : d == "auto"
                    ? "auto with load_in_4bit: TRL passes it as bnb_4bit_compute_dtype and BitsAndBytesConfig fails "
                      "(getattr(torch, \"auto\")); expected bfloat16 or float16"
                    : "float32 with load_in_4bit (fp32 compute) is not modelled; expected bfloat16 or float16");
        // "auto" is the checkpoint's dtype (from_pretrained), which VRAM Lab knows for its presets.
        std::optional<DType> checkpoint;
        if (d == "auto") {
            const auto known = detail::hfCheckpoint(m_sc.model);
            if (!known || !known->dtype)
                refuse(dtypeKey,
                    "auto loads the checkpoint's own dtype, which VRAM Lab does not know for this model: expected "
                    "bfloat16, float16 or float32");
            checkpoint = known->dtype;
        }
        const DType weights = checkpoint ? *checkpoint
            : d == "float32"             ? DType::Fp32
            : d == "float16"             ? DType::Fp16
                                         : DType::Bf16;
        const std::string autocast = bf16 ? "bf16 autocast" : fp16 ? "fp16 autocast" : "no autocast";
        const std::string weightText = (dtype ? d : std::string("unset (fp32)"))
            + (checkpoint ? " (the checkpoint's " + std::string(toString(*checkpoint)) + ")" : "");
        Precision p = detail::trainerPrecision(weights, bf16, fp16, method != FinetuneMethod::Full);
        // accelerate (accelerator.py prepare_model, FSDP1 under mixed precision) upcasts every trainable flat
        // parameter to fp32: MixedPrecision(param_dtype) then gathers it in 16 bits, so the run is mixed.
        if (m_run.parallelism.fsdp1() && (bf16 || fp16) && (p == Precision::Bf16 || p == Precision::Fp16)) {
            p = p == Precision::Bf16 ? Precision::MixedBf16 : Precision::MixedFp16;
            applied("accelerate_config", "fsdp1",
                "run.precision " + std::string(toString(p))
                    + " (accelerate upcasts the trainable flat parameters to fp32 under FSDP1 with mixed precision)");
        }
        m_run.precision = p;
        m_autocast = bf16 || fp16;
        if (weights == DType::Fp32 && method == FinetuneMethod::Lora && m_autocast) {
            m_run.finetune.baseFp32 = true;
            applied(dtypeKey, dtype ? d : std::string("(unset)"),
                "run.finetune.base_fp32 (transformers loads the model in fp32; the frozen base stays fp32 under "
                "autocast: a lower bound, autocast's 16-bit casts of it are not modelled)");
        }
        applied(std::string(dtypeKey) + ", bf16, fp16", weightText + ", " + autocast,
            "run.precision = " + std::string(toString(p)));
    }

    /// transformers 4.57.1: attn_implementation None is "sdpa" (modeling_utils.py); both kernels keep no s x s.
    void attention()
    {
        const std::string a = text("attn_implementation").value_or("sdpa");
        m_flashVarlen = a == "flash_attention_2" || a == "flash_attention_3" || a.starts_with("kernels-community/");
        if (a == "eager")
            m_run.attention = AttentionImpl::Eager;
        else if (a == "sdpa" || m_flashVarlen)
            m_run.attention = AttentionImpl::Flash;
        else
            refuse("attn_implementation",
                "expected sdpa, eager, flash_attention_2, flash_attention_3 or a kernels-community flash kernel, got \""
                    + a + "\"");
        applied("attn_implementation", a, std::string("run.attention = ") + (a == "eager" ? "eager" : "flash"));
    }

    /// sft_trainer.py@1cf8d56c: each sample is truncated to max_length; without padding-free the collator pads to the
    /// batch's longest (its peak: max_length); padding-free (padding_free, or packing with "bfd") concatenates the
    /// micro-batch into one row of up to batch x max_length tokens.
    void batch()
    {
        Count b = integer("per_device_train_batch_size", 1, 1'000'000).value_or(8);
        if (const auto old = integer("per_gpu_train_batch_size", 1, 1'000'000))
            b = *old; // training_args.py: the deprecated per-GPU size wins when set
        m_run.gradientAccumulationSteps = integer("gradient_accumulation_steps", 1, 1'000'000).value_or(1);
        if (m_c.contains("max_length") && m_c.at("max_length").is_null())
            refuse("max_length",
                "null trains untruncated samples, whose longest length VRAM Lab cannot know: expected a length");
        const Count maxLength = integer("max_length", 1, 1LL << 30).value_or(1024);
        const bool packing = on("packing", false);
        const std::string strategy = text("packing_strategy").value_or("bfd");
        if (strategy != "bfd" && strategy != "wrapped")
            refuse("packing_strategy", "expected bfd or wrapped, got \"" + strategy + "\"");
        const bool paddingFree = on("padding_free", false) || (packing && strategy == "bfd");
        const Count multiple = integer("pad_to_multiple_of", 1, 1 << 20).value_or(1);
        if (paddingFree && !m_flashVarlen)
            refuse(on("padding_free", false) ? "padding_free" : "packing",
                "padding-free batches (packing with \"bfd\" is one) under sdpa or eager attention make transformers "
                "build a tokens x tokens mask (masking_utils.py find_packed_sequence_indices), which is not modelled; "
                "expected attn_implementation flash_attention_2");
        const Count tokens = paddingFree ? checkedMul(b, maxLength) : maxLength;
        m_run.sequenceLength = ceilDiv(tokens, multiple) * multiple;
        m_run.microBatchSize = paddingFree ? 1 : b;
        applied("per_device_train_batch_size, max_length", formatCount(b) + ", " + formatCount(maxLength),
            paddingFree ? "run.micro_batch_size 1 x sequence_length " + formatCount(m_run.sequenceLength)
                    + " (padding-free: the micro-batch is one row)"
                        : "run.micro_batch_size " + formatCount(b) + " x sequence_length "
                    + formatCount(m_run.sequenceLength) + " (padded to the longest sample: max_length at the peak"
                    + (b > 1 && !m_flashVarlen ? std::string(detail::kPaddingMaskCaveat) : std::string()) + ")");
        applied("gradient_accumulation_steps", formatCount(m_run.gradientAccumulationSteps),
            "run.gradient_accumulation_steps");
    }

    /// training_args.py@8cb5963c OptimizerNames and trainer.py get_optimizer_cls_and_kwargs.
    void optimizer()
    {
        std::string optim = text("optim").value_or("adamw_torch_fused");
        if (on("adafactor", false))
            optim = "adafactor"; // the deprecated flag: training_args.py __post_init__
        if (find("optim_target_modules"))
            refuse("optim_target_modules", "GaLore and APOLLO projections are not modelled: expected none");
        if (optim == "sgd" && find("optim_args"))
            refuse("optim_args", "SGD's arguments (momentum) are not read: expected none with optim sgd");
        detail::applyTrainerOptimizer(m_run, optim, "optim");
        if (find("optim_args") && optim != "sgd")
            m_out.ignored.push_back("optim_args: the optimizer's hyper-parameters keep no other states");
        applied("optim",
            text("optim") ? optim
                          : optim
                    + " (unset: transformers' default from torch 2.8; adamw_torch "
                      "before, whose foreach update keeps temporaries)",
            "run.optimizer = " + std::string(toString(m_run.optimizer))
                + (m_run.optimizerImpl ? ", optimizer_impl " + std::string(toString(*m_run.optimizerImpl)) : ""));
    }

    /// SFTConfig: gradient_checkpointing defaults to true; Trainer (or, for QLoRA, TRL's
    /// prepare_model_for_kbit_training) checkpoints every decoder layer. use_liger_kernel: Trainer applies Liger's
    /// kernels for the model (liger_kernel/transformers/monkey_patch.py@v0.6.3: rope, rms_norm, swiglu and
    /// fused_linear_cross_entropy on by default).
    void checkpointingAndLoss()
    {
        const bool checkpointing = on("gradient_checkpointing", true);
        m_run.checkpointing = { checkpointing ? Checkpointing::Kind::Full : Checkpointing::Kind::None, 0 };
        applied("gradient_checkpointing", checkpointing ? "true" : "false",
            std::string("run.checkpointing = ") + (checkpointing ? "full" : "none"));
        if (!on("use_liger_kernel", false)) {
            if (find("liger_kernel_config"))
                m_out.ignored.push_back("liger_kernel_config: read only with use_liger_kernel");
            return sftTrainerMetrics();
        }
        const auto checkpoint = detail::hfCheckpoint(m_sc.model);
        if (!checkpoint)
            refuse("use_liger_kernel",
                "Liger patches some model types only, and VRAM Lab does not know this model's: expected false, or a "
                "preset");
        if (!detail::ligerHasKernels(checkpoint->modelType)) {
            m_out.ignored.push_back("use_liger_kernel: Liger v0.6.3 has no kernels for model type "
                + std::string(checkpoint->modelType) + " (monkey_patch.py logs it and changes nothing)");
            return sftTrainerMetrics();
        }
        bool flce = true, ce = false, normOrGlu = true;
        std::string normKey = "use_liger_kernel";
        if (const json* cfg = find("liger_kernel_config")) {
            if (!cfg->is_object())
                refuse("liger_kernel_config", "expected a mapping of kernel names to true or false");
            bool norm = true, glu = true;
            for (const auto& [k, v] : cfg->items()) {
                if (!v.is_boolean())
                    refuse("liger_kernel_config." + k, "expected true or false");
                const bool on = v.get<bool>();
                if (k == "fused_linear_cross_entropy")
                    flce = on;
                else if (k == "cross_entropy")
                    ce = on;
                else if (k == "rms_norm" || k == "layer_norm")
                    norm = norm && on;
                else if (k == "swiglu" || k == "geglu")
                    glu = glu && on;
                else
                    m_out.ignored.push_back("liger_kernel_config." + k
                        + ": a rotary or model-specific kernel: the same tensors (Liger drops the arguments its patch "
                          "function does not take)");
            }
            normOrGlu = norm || glu;
            normKey = "liger_kernel_config";
        }
        if (ce && flce)
            refuse("liger_kernel_config.cross_entropy",
                "Liger asserts that cross_entropy and fused_linear_cross_entropy are not both true");
        applied("use_liger_kernel", "true",
            detail::applyLiger(m_run, flce, ce, normOrGlu, "liger_kernel_config.cross_entropy", normKey));
        if (!flce)
            sftTrainerMetrics();
    }

    /// sft_trainer.py@1cf8d56c compute_loss: without Liger, after forward SFTTrainer copies the logits for its token
    /// accuracy, beside the saved log-softmax; under autocast they are fp32 (run.sft_token_accuracy). Without
    /// autocast the 16-bit logits and their copy stay under the loss's own fp32 copy.
    void sftTrainerMetrics()
    {
        if (!m_autocast)
            return;
        m_run.sftTokenAccuracy = true;
        applied("(SFTTrainer)", "token accuracy",
            "run.sft_token_accuracy (a copy of the logits after each forward: sft_trainer.py compute_loss)");
    }

    void refusals()
    {
        if (on("torch_compile", false) || find("torch_compile_backend") || find("torch_compile_mode")
            || find("torchdynamo"))
            refuse(on("torch_compile", false)       ? "torch_compile"
                    : find("torch_compile_backend") ? "torch_compile_backend"
                    : find("torch_compile_mode")    ? "torch_compile_mode"
                                                    : "torchdynamo",
                "torch.compile of a whole transformers model is not modelled: expected it off");
        if (const json* ls = find("label_smoothing_factor"); ls && !(ls->is_number() && ls->get<double>() == 0))
            refuse("label_smoothing_factor",
                "Trainer's LabelSmoother computes its own log-softmax of the logits, which is not modelled: expected "
                "0");
        for (const char* cpu : { "use_cpu", "no_cuda", "use_mps_device" })
            if (on(cpu))
                refuse(cpu, "a run without a CUDA GPU: expected false");
        if (const auto loss = text("loss_type"); loss && *loss != "nll")
            refuse("loss_type", "expected nll (DFT's loss keeps other tensors, not modelled), got \"" + *loss + "\"");
        if (on("activation_offloading", false))
            refuse("activation_offloading",
                "TRL's offloading wraps the whole step, loss included (sft_trainer.py); modelled only as torchtune "
                "runs it: expected false");
        if (const auto b = text("half_precision_backend"); b && *b != "auto")
            refuse("half_precision_backend", "expected auto (torch's autocast), got \"" + *b + "\"");
        if (const auto b = text("fp16_backend"); b && *b != "auto")
            refuse("fp16_backend", "expected auto (torch's autocast), got \"" + *b + "\"");
        const json* fsdp = find("fsdp");
        const bool fsdpOn = fsdp
            && !((fsdp->is_string() && fsdp->get<std::string>().empty()) || (fsdp->is_array() && fsdp->empty())
                || (fsdp->is_boolean() && !fsdp->get<bool>()));
        if (fsdpOn)
            refuse("fsdp",
                "FSDP through TrainingArguments is not read: set run.parallelism (sharding fsdp1 or fsdp2) in the "
                "scenario");
        for (const char* k : { "fsdp_config", "fsdp_min_num_params", "fsdp_transformer_layer_cls_to_wrap" })
            if (find(k))
                m_out.ignored.push_back(std::string(k) + ": read only with fsdp");
        if (find("parallelism_config"))
            refuse("parallelism_config", "accelerate's ParallelismConfig (TP, CP) is not read: expected none");
    }

    /// An inline DeepSpeed config (TrainingArguments.deepspeed as a mapping), or the ZeRO stage of TRL's shipped
    /// accelerate configs (accelerate's DeepSpeedPlugin: zero_stage, no offload, bf16 from mixed_precision).
    void deepSpeed()
    {
        const json* ds = inlineDeepSpeed();
        if (ds && m_zeroFromAccelerate)
            refuse("deepspeed",
                "both an inline DeepSpeed config and accelerate_config " + text("accelerate_config").value());
        json config;
        if (ds) {
            config = *ds;
        } else if (m_zeroFromAccelerate) {
            config = { { "zero_optimization",
                           { { "stage", m_zeroFromAccelerate }, { "offload_optimizer", { { "device", "none" } } },
                               { "offload_param", { { "device", "none" } } } } },
                { "train_micro_batch_size_per_gpu", "auto" }, { "gradient_accumulation_steps", "auto" },
                { "bf16", { { "enabled", "auto" } } }, { "fp16", { { "enabled", "auto" } } } };
        } else {
            return;
        }
        detail::applyInlineDeepSpeed(m_sc, config, m_out);
    }

    Scenario& m_sc;
    RunSpec& m_run;
    bool m_flashVarlen = false;
    bool m_autocast = false; ///< Trainer's bf16 or fp16 autocast
    int m_zeroFromAccelerate = 0;
};

} // namespace

ConfigImport applyTrlConfig(Scenario& scenario, const json& config)
{
    ConfigImport out;
    Scenario next = scenario; // all or nothing: a refusal leaves the scenario as it was
    Reader(next, config, out).apply();
    scenario = std::move(next);
    return out;
}

} // namespace vramlab
