// SPDX-License-Identifier: MIT
#include "vramlab/axolotl_config.h"

#include "hf_trainer_args.h"
#include "json_reader.h"
#include "vramlab/errors.h"
#include "vramlab/units.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

namespace vramlab {

namespace {

using nlohmann::json;

/// How axolotl v0.13.0's schema keys (utils/schemas/*.py, AxolotlInputConfig and its mixins) are taken.
enum class Use {
    Read, ///< read below
    Refuse, ///< changes GPU memory in a way not modelled: refused unless unset, false, empty or 1
    NoMemory, ///< listed as left out with its reason
};

struct KeyUse {
    Use use;
    std::string_view why; ///< NoMemory: the reason; Refuse: what it is
};

void addAll(std::map<std::string, KeyUse>& k, std::string_view names, Use use, std::string_view why)
{
    std::istringstream in { std::string(names) };
    for (std::string n; in >> n;)
        k.emplace(n, KeyUse { use, why });
}

const std::map<std::string, KeyUse>& knownKeys()
{
    static const std::map<std::string, KeyUse> keys = [] {
        std::map<std::string, KeyUse> k;
        addAll(k,
            "base_model learning_rate load_in_8bit load_in_4bit adapter lora_r lora_alpha lora_target_modules "
            "lora_target_linear lora_modules_to_save lora_dropout peft_layers_to_transform peft_layers_pattern "
            "peft_use_dora bnb_config_kwargs gradient_accumulation_steps micro_batch_size batch_size optimizer "
            "optim_args bf16 fp16 bfloat16 float16 gradient_checkpointing "
            "sequence_len sample_packing pad_to_sequence_len multipack_real_batches batch_flattening "
            "xformers_attention "
            "sdp_attention flex_attention flash_attention eager_attention attn_implementation lora_mlp_kernel "
            "lora_qkv_kernel lora_o_kernel chunked_cross_entropy plugins deepspeed activation_offloading "
            "unfrozen_parameters rl liger_rope liger_rms_norm liger_layer_norm liger_swiglu liger_glu_activation "
            "liger_cross_entropy liger_fused_linear_cross_entropy liger_use_token_scaling cut_cross_entropy",
            Use::Read, "");
        addAll(k,
            "processor_type use_kernels model_quantization_config model_quantization_config_kwargs lora_model_dir "
            "lora_target_parameters peft peft_layer_replication qlora_sharded_model_loading lora_on_cpu gptq relora "
            "relora_prune_ratio relora_cpu_offload optim_target_modules lisa_n_layers lisa_step_interval "
            "lisa_layers_attribute use_ray ray_num_workers resources_per_worker image_size image_resize_algorithm "
            "model_kwargs overrides_of_model_kwargs model_config overrides_of_model_config max_packed_sequence_len "
            "rope_scaling trainer_cls trl vllm qat "
            "reward_model process_reward_model center_rewards_coefficient num_labels dpo_beta dpo_use_weighting "
            "dpo_use_logits_to_keep dpo_label_smoothing dpo_norm_loss dpo_padding_free dpo_generate_during_eval "
            "pretraining_dataset device_map fp8 fp8_enable_fsdp_float8_all_gather max_prompt_len use_pose "
            "pose_split_on_token_ids pose_max_context_len pose_num_chunks pretrain_multipack_attn "
            "pretraining_sample_concatenation streaming s2_attention flash_attn_cross_entropy "
            "flash_attn_rms_norm flash_attn_fuse_mlp flash_optimum unsloth_cross_entropy_loss unsloth_lora_mlp "
            "unsloth_lora_qkv unsloth_lora_o unsloth_rms_norm unsloth_rope tiled_mlp tiled_mlp_num_shards "
            "tiled_mlp_use_original_mlp llama4_linearized_experts deepcompile fsdp fsdp_config dp_shard_size "
            "dp_replicate_size sequence_parallel_degree context_parallel_size heads_k_stride ring_attn_func "
            "tensor_parallel_size torch_compile torch_compile_backend torch_compile_mode orpo_alpha rpo_alpha "
            "simpo_gamma cpo_alpha kto_desirable_weight kto_undesirable_weight rl_beta max_memory gpu_memory_limit",
            Use::Refuse, "");
        addAll(k,
            "cls_model_config tokenizer_config tokenizer_use_fast tokenizer_legacy tokenizer_use_mistral_common "
            "tokenizer_type tokenizer_save_jinja_files output_dir hub_model_id hub_strategy save_safetensors "
            "use_wandb wandb_name wandb_run_id wandb_mode wandb_project wandb_entity wandb_watch wandb_log_model "
            "use_mlflow mlflow_tracking_uri mlflow_experiment_name mlflow_run_name hf_mlflow_log_artifacts use_comet "
            "comet_api_key comet_workspace comet_project_name comet_experiment_key comet_mode comet_online "
            "comet_experiment_config use_otel_metrics otel_metrics_host otel_metrics_port gradio_title gradio_share "
            "gradio_server_name gradio_server_port gradio_max_new_tokens gradio_temperature ray_run_name strict "
            "resume_from_checkpoint auto_resume_from_checkpoints quantization dynamic_checkpoint max_steps "
            "save_steps saves_per_epoch save_strategy save_total_limit save_first_step logging_steps "
            "early_stopping_patience load_best_model_at_end save_only_model use_tensorboard profiler_steps "
            "profiler_steps_start include_tokens_per_second include_tkps loss_watchdog_threshold "
            "loss_watchdog_patience merge_lora axolotl_config_path is_preprocess",
            Use::NoMemory, "output, logging, saving, the Hub and reports: no GPU memory of the step");
        addAll(k,
            "datasets test_datasets shuffle_merged_datasets shuffle_before_merging_datasets dataset_prepared_path "
            "dataset_shard_num dataset_shard_idx skip_prepare_dataset num_dataset_shards_to_save dataset_processes "
            "dataset_num_proc dataset_exact_deduplication dataset_keep_in_memory push_dataset_to_hub "
            "hf_use_auth_token train_on_inputs group_by_length remove_unused_columns min_sample_len "
            "excess_length_strategy sample_packing_group_size sample_packing_bin_size sample_packing_sequentially "
            "sample_packing_mp_start_method curriculum_sampling pretrain_multipack_buffer_size "
            "streaming_multipack_buffer_size preprocess_iterable total_num_tokens total_supervised_tokens "
            "sample_packing_eff_est chat_template chat_template_jinja chat_template_kwargs eot_tokens "
            "default_system_message val_set_size",
            Use::NoMemory,
            "the dataset and its preparation: no GPU memory (the batch's shape comes from sequence_len, packing and "
            "the batch size)");
        addAll(k,
            "eval_batch_size eval_sequence_len eval_sample_packing eval_table_size eval_max_new_tokens "
            "do_causal_lm_eval "
            "eval_causal_lm_metrics do_bench_eval bench_dataset bench_split metric_for_best_model greater_is_better "
            "eval_steps evals_per_epoch eval_strategy evaluation_strategy",
            Use::NoMemory, "evaluation runs between training steps under no_grad, below training's peak");
        addAll(k,
            "loraplus_lr_ratio loraplus_lr_embedding jagged_restart_steps jagged_restart_warmup_steps "
            "jagged_restart_anneal_steps embedding_lr embedding_lr_scale weight_decay torchdistx_path lr_scheduler "
            "lr_scheduler_kwargs lr_quadratic_warmup cosine_min_lr_ratio cosine_constant_lr_ratio lr_div_factor "
            "lr_groups adam_epsilon adam_epsilon2 adam_beta1 adam_beta2 adam_beta3 dion_lr dion_momentum "
            "dion_rank_fraction dion_rank_multiple_of max_grad_norm num_epochs seed warmup_steps warmup_ratio "
            "noisy_embedding_alpha neftune_noise_alpha",
            Use::NoMemory, "the learning rate, its schedule, clipping and seeds: no GPU memory");
        addAll(k,
            "dataloader_pin_memory dataloader_num_workers dataloader_prefetch_factor dataloader_drop_last "
            "accelerator_config",
            Use::NoMemory, "the CPU data loader: no GPU memory");
        addAll(k,
            "device world_size local_rank ddp ddp_timeout ddp_bucket_cap_mb ddp_broadcast_buffers "
            "ddp_find_unused_parameters low_cpu_mem_usage experimental_skip_move_to_device gc_steps",
            Use::NoMemory, "where the processes run and how DDP reduces: the scenario's GPUs and buffers");
        addAll(k,
            "base_model_config trust_remote_code type_of_model model_type revision_of_model model_revision "
            "is_falcon_derived_model is_llama_derived_model is_mistral_derived_model is_qwen_derived_model",
            Use::NoMemory, "the model stays the scenario's (File > From config.json… imports a model's config.json)");
        addAll(k,
            "special_tokens tokens added_tokens_overrides resize_token_embeddings_to_32x shrink_embeddings "
            "mean_resizing_embeddings fix_untrained_tokens reinit_weights",
            Use::NoMemory,
            "tokens the vocabulary already has add no rows; new ones grow the embedding and LM head (set "
            "model.vocab_size in the scenario)");
        addAll(k, "lora_fan_in_fan_out peft_use_rslora peft_init_lora_weights peft_trainable_token_indices",
            Use::NoMemory, "the adapters' layout, scaling and start values: the same tensors");
        addAll(k, "tf32 float32", Use::NoMemory, "read by no precision axolotl v0.13.0 resolves (tf32: matmul flags)");
        addAll(k, "gradient_checkpointing_kwargs", Use::NoMemory,
            "reentrant or not, a checkpointed layer keeps only its input");
        addAll(k, "embeddings_skip_upcast", Use::NoMemory, "changes the model's loading, not the step");
        addAll(k, "flex_attn_compile_kwargs", Use::NoMemory,
            "compiles the flex-attention function only, and only under torch 2.6 (monkeypatch/attention/flex_attn.py)");
        addAll(k, "chunked_cross_entropy_num_chunks", Use::NoMemory, "read only with chunked_cross_entropy");
        addAll(k, "auto_find_batch_size", Use::NoMemory,
            "halves the batch after an out-of-memory error: the estimate is for the batch given");
        addAll(k, "fsdp_version fsdp_final_state_dict_type", Use::NoMemory, "read only with fsdp_config");
        return k;
    }();
    return keys;
}

constexpr std::string_view kLiger = "axolotl.integrations.liger.LigerPlugin";
constexpr std::string_view kCce = "axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin";

class Reader : detail::ConfigReader {
public:
    Reader(Scenario& sc, const json& config, ConfigImport& out)
        : ConfigReader(config, out, detail::Coercion::Pydantic)
        , m_sc(sc)
        , m_run(sc.run)
    {
    }

    void apply()
    {
        if (!m_c.is_object())
            throw InputError("(config)", "expected an axolotl config: a YAML mapping of keys such as base_model");
        plugins();
        for (const auto& [key, v] : m_c.items()) {
            const auto k = knownKeys().find(key);
            const bool pluginKey = key.starts_with("liger_") || key == "cut_cross_entropy";
            if (k == knownKeys().end() || (pluginKey && !pluginListed(key))) {
                m_out.ignored.push_back(key
                    + (pluginKey ? ": its plugin is not in plugins, so axolotl's schema drops it"
                                 : ": not a key of axolotl v0.13.0's schema, which drops it"));
                continue;
            }
            if (k->second.use == Use::Refuse && active(key, v))
                refuse(key,
                    "changes GPU memory in a way VRAM Lab does not model (" + why(key)
                        + "): expected it unset, false or empty");
            if (k->second.use == Use::NoMemory && !v.is_null())
                m_out.ignored.push_back(key + ": " + std::string(k->second.why));
        }
        for (const char* required : { "base_model", "learning_rate" })
            if (!find(required))
                refuse(required, "axolotl's schema requires it (no default)");
        m_run = defaultRunKeepingMachine(m_run);
        m_run.mode = Mode::Training;
        m_run.framework = Framework::HfTransformers;
        finetune();
        precision();
        attention();
        batch();
        optimizer();
        checkpointing();
        loss();
        m_out.applied.insert(m_out.applied.begin(), "(the config) -> run.framework = hf-transformers, mode training");
        deepSpeed();
    }

private:
    /// A refused key is harmless unset, false, zero, empty, or 1 for a parallel size.
    static bool active(const std::string& key, const json& v)
    {
        if (v.is_null() || (v.is_boolean() && !v.get<bool>()) || (v.is_string() && v.get<std::string>().empty())
            || ((v.is_array() || v.is_object()) && v.empty()))
            return false;
        if (v.is_number())
            return key.ends_with("_size") || key.ends_with("_degree") ? v.get<double>() > 1 : v.get<double>() != 0;
        if (key == "device_map" && v.is_string() && v.get<std::string>() == "auto")
            return false; // axolotl's own choice on one GPU
        if (v.is_string() && asBool(v, detail::Coercion::Pydantic) == false)
            return false;
        return true;
    }
    static std::string why(const std::string& key)
    {
        if (key.starts_with("unsloth_") || key.starts_with("flash_attn_") || key.starts_with("tiled_mlp")
            || key == "use_kernels" || key == "flash_optimum" || key == "llama4_linearized_experts")
            return "a kernel patch that keeps other tensors than transformers' modules";
        if (key.starts_with("fsdp") || key.ends_with("parallel_size") || key.starts_with("dp_")
            || key == "sequence_parallel_degree" || key == "heads_k_stride" || key == "ring_attn_func"
            || key == "deepcompile")
            return "FSDP, tensor or context parallelism through axolotl: set run.parallelism in the scenario";
        if (key.starts_with("torch_compile"))
            return "torch.compile of a whole transformers model";
        if (key.starts_with("dpo_") || key.starts_with("kto_") || key == "trl" || key == "vllm" || key == "rl_beta"
            || key.ends_with("_alpha") || key == "simpo_gamma" || key.ends_with("reward_model")
            || key == "center_rewards_coefficient" || key == "num_labels" || key == "trainer_cls")
            return "another trainer than causal-LM fine-tuning";
        if (key == "model_config" || key == "overrides_of_model_config" || key == "model_kwargs"
            || key == "overrides_of_model_kwargs")
            return "overrides of the model's config or loading: give the model's shapes in the scenario";
        if (key == "max_packed_sequence_len" || key == "rope_scaling")
            return "axolotl v0.13.0 refuses it too (deprecated.py)";
        return "axolotl's " + key;
    }

    bool pluginListed(const std::string& key) const { return key == "cut_cross_entropy" ? m_cce : m_liger; }
    /// integrations/config.py: a plugin's keys exist only when plugins lists it; Liger and Cut Cross Entropy are
    /// modelled (their fused losses), the others refused.
    void plugins()
    {
        const json* p = find("plugins");
        if (!p)
            return;
        if (!p->is_array())
            refuse("plugins", "expected a list of plugin class names");
        for (const json& e : *p) {
            const std::string name = e.is_string() ? e.get<std::string>() : e.dump();
            if (name == kLiger)
                m_liger = true;
            else if (name == kCce)
                m_cce = true;
            else
                refuse("plugins",
                    "expected " + std::string(kLiger) + " or " + std::string(kCce)
                        + " (the plugins VRAM Lab models), got \"" + name + "\"");
        }
    }

    /// loaders/model.py _set_quantization_config and _configure_embedding_dtypes, loaders/adapter.py load_lora.
    void finetune()
    {
        Finetune& f = m_run.finetune;
        f = Finetune {};
        const std::string adapter = text("adapter").value_or("");
        const bool four = on("load_in_4bit");
        if (on("load_in_8bit"))
            refuse("load_in_8bit", "bitsandbytes' LLM.int8 weights in training are not modelled: expected false");
        if (four && adapter != "qlora")
            refuse("load_in_4bit",
                adapter.empty() ? "axolotl refuses 4-bit loading without an adapter: expected adapter qlora"
                                : "expected adapter qlora with load_in_4bit, got \"" + adapter + "\"");
        if (adapter.empty()) {
            f.method = FinetuneMethod::Full;
            applied("adapter", "(none)", "run.finetune.method = full");
            return;
        }
        if (adapter != "lora" && adapter != "qlora")
            refuse("adapter", "expected lora or qlora, got \"" + adapter + "\"");
        if (adapter == "qlora" && !four)
            refuse("adapter", "axolotl's qlora requires load_in_4bit: true");
        f.method = four ? FinetuneMethod::Qlora : FinetuneMethod::Lora;
        const auto r = integer("lora_r", 1, 1 << 20);
        if (!r)
            refuse("lora_r", "expected the LoRA rank (axolotl's schema has no default)");
        f.rank = *r;
        if (const json* a = find("lora_alpha"); a && a->is_number())
            f.alpha = a->get<double>();
        f.dropout = dropout("lora_dropout").value_or(0.0); // schemas/peft.py validate_lora_dropout
        f.dora = on("peft_use_dora");
        refuseModulesToSave("lora_modules_to_save");
        for (const char* k : { "peft_layers_to_transform", "peft_layers_pattern" })
            if (find(k))
                refuse(k, "adapters on some layers only are not modelled: expected none");
        loraKernels();
        targets();
        if (four) {
            if (const json* kw = find("bnb_config_kwargs"); kw && !(kw->is_object() && kw->empty()))
                refuse("bnb_config_kwargs",
                    "other bitsandbytes settings than axolotl's (nf4, double quantization, "
                    "16-bit storage) are not modelled: expected none");
            // _configure_embedding_dtypes: PEFT's prepare_model_for_kbit_training casts every 16-bit parameter that
            // is not 4-bit to fp32, then axolotl casts the norms and embeddings back; a bias of a quantized linear or
            // an MoE router stays fp32, which is not modelled.
            const ModelSpec& m = m_sc.model;
            if (m.bias || m.qkvBias || m.attentionBias || m.moe.enabled())
                refuse("adapter",
                    "QLoRA as axolotl prepares it leaves the biases of quantized linear layers and the MoE routers in "
                    "fp32 (PEFT's cast, which axolotl undoes for norms and embeddings only): not modelled for this "
                    "model");
            f.quant = Nf4Format::Bitsandbytes;
            f.doubleQuant = true;
            f.kbitPreparation = KbitPreparation::None;
            applied("load_in_4bit", "true",
                "run.finetune.method = qlora (bitsandbytes nf4, double quantization), kbit_preparation none (PEFT's "
                "fp32 cast undone for norms and embeddings: _configure_embedding_dtypes)");
        }
        applied("adapter", adapter,
            "run.finetune.method = " + std::string(four ? "qlora" : "lora") + ", rank " + formatCount(f.rank)
                + ", dropout " + formatDouble(f.dropout, std::chars_format::general, 3) + (f.dora ? ", dora" : ""));
    }

    /// schemas/config.py check_auto_enable_lora_kernels: with lora_dropout written as 0 (before its default is
    /// filled) and no kernel key set, axolotl turns its Triton LoRA kernels on (kernels/lora.py), which save other
    /// tensors than PEFT's layers.
    void loraKernels()
    {
        const char* kernelKeys[] = { "lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel" };
        bool anySet = false;
        for (const char* k : kernelKeys) {
            if (on(k))
                refuse(k,
                    "axolotl's LoRA Triton kernels save other tensors than PEFT's layers (not modelled): "
                    "expected false");
            anySet = anySet || find(k);
        }
        const bool unsloth = on("unsloth_lora_mlp") || on("unsloth_lora_qkv") || on("unsloth_lora_o");
        if (!anySet && !unsloth && !find("rl") && dropout("lora_dropout") == 0.0)
            refuse("lora_dropout",
                "0 makes axolotl turn on its LoRA Triton kernels (check_auto_enable_lora_kernels), which save other "
                "tensors than PEFT's layers (not modelled): set lora_mlp_kernel, lora_qkv_kernel and lora_o_kernel "
                "false");
    }

    /// loaders/adapter.py: lora_target_modules (a string is PEFT's regular expression over the whole module name)
    /// and lora_target_linear (every linear layer but the LM head).
    void targets()
    {
        Finetune& f = m_run.finetune;
        f.targets.clear();
        std::vector<std::string> names;
        if (const json* t = find("lora_target_modules")) {
            if (t->is_string()) {
                if (t->get<std::string>() != "all-linear")
                    refuse("lora_target_modules",
                        "a string is PEFT's regular expression over the whole module name, which VRAM Lab does not "
                        "evaluate (a bare name such as \"q_proj\" matches no module): list the module names");
                names.push_back("all-linear");
            } else if (t->is_array()) {
                for (const json& e : *t) {
                    if (!e.is_string())
                        refuse("lora_target_modules",
                            "expected module names, got " + detail::JsonObjectReader::describe(e));
                    names.push_back(e.get<std::string>());
                }
            } else {
                refuse("lora_target_modules",
                    "expected a list of module names, got " + detail::JsonObjectReader::describe(*t));
            }
        }
        if (on("lora_target_linear"))
            names.push_back("all-linear");
        if (names.empty())
            refuse("lora_target_modules",
                "no modules: PEFT raises without target_modules (axolotl passes an empty list, not PEFT's default); "
                "give lora_target_modules or lora_target_linear: true");
        std::string shown;
        f.targets = detail::scenarioTargets(names, "lora_target_modules", shown);
        applied("lora_target_modules, lora_target_linear", "(as given)", "run.finetune.targets [" + shown + "]");
    }

    /// utils/config/__init__.py resolve_dtype: bf16 "auto" is bf16 where the GPU has it; the model loads in bf16 (or
    /// bfloat16), else fp16 (fp16, float16), else fp32; Trainer runs bf16 autocast for bf16 or bfloat16, fp16 autocast
    /// for fp16 (core/builders/base.py).
    void precision()
    {
        const json* b = find("bf16");
        const bool autoBf16 = !b || (b->is_string() && b->get<std::string>() == "auto");
        if (b && !autoBf16 && !asBool(*b, m_coercion))
            refuse("bf16", "expected auto, true or false (axolotl refuses \"full\"), got " + b->dump());
        const bool gpuBf16 = !m_run.gpu || m_run.gpu->bf16Tflops > 0;
        std::optional<bool> fp16 = flag("fp16");
        bool bf16 = autoBf16 ? false : *asBool(*b, m_coercion);
        if (autoBf16 && !fp16.value_or(false)) {
            bf16 = gpuBf16;
            if (!gpuBf16 && !fp16 && !on("float16"))
                fp16 = true;
        }
        if (bf16)
            fp16 = false;
        const bool bfloat16 = on("bfloat16");
        const DType weights = bf16 || bfloat16      ? DType::Bf16
            : fp16.value_or(false) || on("float16") ? DType::Fp16
                                                    : DType::Fp32;
        const bool autocastBf16 = bf16 || bfloat16, autocastFp16 = fp16.value_or(false) && !bf16;
        const bool adapters = m_run.finetune.method != FinetuneMethod::Full;
        m_run.precision = detail::trainerPrecision(weights, autocastBf16, autocastFp16, adapters);
        applied("bf16, fp16",
            std::string(autoBf16 ? "auto"
                    : bf16       ? "true"
                                 : "false")
                + ", " + (fp16.value_or(false) ? "true" : "false"),
            "the model loaded in " + std::string(toString(weights))
                + (autocastBf16        ? " under bf16 autocast"
                        : autocastFp16 ? " under fp16 autocast"
                                       : "")
                + (autoBf16 ? std::string(" (auto: the scenario's GPU ") + (gpuBf16 ? "has" : "lacks") + " bf16)" : "")
                + ": run.precision = " + std::string(toString(m_run.precision)));
    }

    /// loaders/model.py _set_attention_config: attn_implementation, then flex, flash, sdp, eager; else transformers'
    /// default (sdpa).
    void attention()
    {
        std::string a = text("attn_implementation").value_or("");
        if (a.empty())
            a = on("flex_attention")    ? "flex_attention"
                : on("flash_attention") ? "flash_attention_2"
                : on("eager_attention") ? "eager"
                                        : "sdpa";
        if (on("xformers_attention"))
            refuse("xformers_attention", "axolotl's xformers patch is not modelled: expected flash_attention");
        m_flash = a == "flash_attention_2" || a == "flash_attention_3" || a == "flex_attention"
            || a.starts_with("kernels-community/");
        if (a == "eager")
            m_run.attention = AttentionImpl::Eager;
        else if (a == "sdpa" || m_flash)
            m_run.attention = AttentionImpl::Flash;
        else
            refuse("attn_implementation",
                "expected sdpa, eager, flash_attention_2, flash_attention_3 or flex_attention, got \"" + a + "\"");
        // _configure_embedding_dtypes: a full fine-tune keeps its norms, embeddings and LM head in fp32 unless flash or
        // flex attention or Cut Cross Entropy casts them back.
        if (m_run.finetune.method == FinetuneMethod::Full && !m_flash && !(m_cce && cceOn())
            && m_run.precision != Precision::Fp32)
            refuse("flash_attention",
                "a full fine-tune without flash or flex attention keeps the norms, the embeddings and the LM head in "
                "fp32 (loaders/model.py _configure_embedding_dtypes): not modelled; expected flash_attention: true");
        applied("attention", a, std::string("run.attention = ") + (a == "eager" ? "eager" : "flash"));
    }
    bool cceOn() const { return !find("cut_cross_entropy") || on("cut_cross_entropy"); }

    /// validation.py check_batch_size_fields and normalize_config; the shape AxolotlTrainer's multipack sampler and
    /// collators give (core/trainers/base.py _create_multipack_sampler, utils/collators/batching.py).
    void batch()
    {
        const bool mbsGiven = find("micro_batch_size"), gasGiven = find("gradient_accumulation_steps"),
                   bsGiven = find("batch_size");
        if (int(mbsGiven) + int(gasGiven) + int(bsGiven) < 2)
            refuse("micro_batch_size",
                "axolotl requires two of micro_batch_size, gradient_accumulation_steps and batch_size (validation.py)");
        if (gasGiven && bsGiven)
            refuse("batch_size", "axolotl refuses gradient_accumulation_steps and batch_size together");
        const Count mbs = integer("micro_batch_size", 1, 1'000'000).value_or(1);
        const Count gas = gasGiven ? *integer("gradient_accumulation_steps", 1, 1'000'000)
                                   : std::max<Count>(1, *integer("batch_size", 1, 1'000'000'000) / mbs);
        m_run.gradientAccumulationSteps = gas;
        const Count seq = integer("sequence_len", 1, 1LL << 30).value_or(512);
        const Count seq64 = ceilDiv(seq, 64) * 64;
        const bool packing = on("sample_packing");
        const std::optional<bool> pad = flag("pad_to_sequence_len");
        bool flatten = false;
        if (const json* f = find("batch_flattening"))
            flatten = f->is_string() && f->get<std::string>() == "auto" ? m_flash && !packing && mbs > 1
                                                                        : on("batch_flattening");
        if (packing && on("multipack_real_batches"))
            refuse("multipack_real_batches", "separate packed rows per micro-batch are not modelled: expected false");
        std::string shape;
        if (packing) {
            if (!m_flash)
                refuse("sample_packing",
                    "packing without flash or flex attention builds a block-diagonal tokens x tokens mask "
                    "(monkeypatch for Llama) that is not modelled; expected flash_attention: true");
            m_run.microBatchSize = 1;
            m_run.sequenceLength = checkedMul(mbs, seq64);
            shape = "one packed row of micro_batch_size x sequence_len rounded to 64 (multipack, padding-free)";
        } else if (flatten) {
            m_run.microBatchSize = 1;
            m_run.sequenceLength = checkedMul(mbs, seq);
            shape = "one flattened row (batch_flattening)";
        } else {
            m_run.microBatchSize = mbs;
            m_run.sequenceLength = pad == false ? seq : seq64;
            shape = "padded to the longest sample, rounded to 64: sequence_len at the peak"
                + (mbs > 1 && !m_flash ? std::string(detail::kPaddingMaskCaveat) : std::string());
        }
        applied("micro_batch_size, sequence_len", formatCount(mbs) + ", " + formatCount(seq),
            "run.micro_batch_size " + formatCount(m_run.microBatchSize) + " x sequence_length "
                + formatCount(m_run.sequenceLength) + " (" + shape + ")");
        applied("gradient_accumulation_steps", formatCount(gas), "run.gradient_accumulation_steps");
    }

    /// core/builders/base.py: an optimizer that is not axolotl's own goes to TrainingArguments.optim.
    void optimizer()
    {
        const std::string optim = text("optimizer").value_or("adamw_torch_fused"); // schemas/training.py
        if (optim == "sgd" && find("optim_args"))
            refuse("optim_args", "SGD's arguments (momentum) are not read: expected none with optimizer sgd");
        detail::applyTrainerOptimizer(m_run, optim, "optimizer");
        if (find("optim_args") && optim != "sgd")
            m_out.ignored.push_back("optim_args: the optimizer's hyper-parameters keep no other states");
        applied("optimizer", optim,
            "run.optimizer = " + std::string(toString(m_run.optimizer))
                + (m_run.optimizerImpl ? ", optimizer_impl " + std::string(toString(*m_run.optimizerImpl)) : ""));
    }

    /// gradient_checkpointing (default false): every decoder layer; "offload" variants move activations to the host.
    void checkpointing()
    {
        const json* g = find("gradient_checkpointing");
        if (g && g->is_string() && (g->get<std::string>() == "offload" || g->get<std::string>() == "offload_disk"))
            refuse("gradient_checkpointing",
                "\"" + g->get<std::string>()
                    + "\" offloads activations to the host (not modelled): expected true or false");
        if (const json* o = find("activation_offloading"); o && active("activation_offloading", *o))
            refuse("activation_offloading",
                "TRL's OffloadActivations around the whole step, loss included, is not modelled: expected false");
        const bool c = on("gradient_checkpointing");
        m_run.checkpointing = { c ? Checkpointing::Kind::Full : Checkpointing::Kind::None, 0 };
        applied("gradient_checkpointing", c ? "true" : "false",
            std::string("run.checkpointing = ") + (c ? "full" : "none"));
        if (find("unfrozen_parameters"))
            refuse("unfrozen_parameters", "training a subset of the parameters is not modelled: expected none");
        if (find("rl"))
            refuse("rl",
                "preference and RL trainers keep other tensors (reference model, several sequences): expected none");
    }

    /// Liger (integrations/liger/plugin.py: each kernel as configured) and Cut Cross Entropy (no logits, default on).
    void loss()
    {
        if (on("chunked_cross_entropy"))
            refuse("chunked_cross_entropy",
                "axolotl's chunked loss keeps the full 16-bit logits and upcasts one chunk at a time in a compiled "
                "function (not modelled): expected false");
        if (m_cce && cceOn()) {
            m_run.loss = LossKind::Fused;
            applied("cut_cross_entropy", "true",
                "run.loss = fused (no logits; counted as Liger's fused function, whose gradient buffers CCE does not "
                "keep: a slight overestimate)");
        }
        if (m_liger) {
            // integrations/liger/plugin.py applies each kernel as configured (off unless set).
            const char* normKey = nullptr;
            for (const char* k : { "liger_rms_norm", "liger_layer_norm", "liger_glu_activation", "liger_swiglu" })
                if (!normKey && on(k))
                    normKey = k;
            const std::string what = detail::applyLiger(m_run, on("liger_fused_linear_cross_entropy"),
                on("liger_cross_entropy"), normKey != nullptr, "liger_cross_entropy", normKey ? normKey : "");
            applied("plugins", "LigerPlugin", what);
        }
    }

    /// `deepspeed`: axolotl json.load()s a path; an inline mapping goes through the DeepSpeed import.
    void deepSpeed()
    {
        if (const json* ds = inlineDeepSpeed())
            detail::applyInlineDeepSpeed(m_sc, *ds, m_out);
    }

    Scenario& m_sc;
    RunSpec& m_run;
    bool m_liger = false, m_cce = false, m_flash = false;
};

} // namespace

ConfigImport applyAxolotlConfig(Scenario& scenario, const json& config)
{
    ConfigImport out;
    Scenario next = scenario; // all or nothing: a refusal leaves the scenario as it was
    Reader(next, config, out).apply();
    scenario = std::move(next);
    return out;
}

} // namespace vramlab
