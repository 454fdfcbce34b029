// SPDX-License-Identifier: MIT
// vramlab-cli: estimate, sweep and fit LLM memory from the command line (core only, no Qt).
#include "command_main.h"
#include "commands.h"
#include "serve_commands.h"
#include "vramlab/version.h"

#include <array>

namespace {

const char* const kUsage = R"(usage: vramlab-cli COMMAND [ARGS]   (vramlab-cli COMMAND --help: that command's usage)

Where GPU memory and compute go when an LLM is trained, fine-tuned or served.

commands:
  estimate FILE [--json]          memory per GPU by component, FLOPs, step time, verdict
  estimate --preset P --KEY V     the same for keys given on the command line (see estimate --help)
  sweep FILE --param KEY --from A --to B --points N [--log] [--csv|--json]
                                  KEY: run.sequence_length, run.micro_batch_size,
                                  run.gradient_accumulation_steps, run.parallelism.gpus,
                                  run.context_length, run.batch_size, run.finetune.rank
  fit FILE --max micro_batch_size|sequence_length|context_length|batch_size [--json]
  fit FILE --min-gpus [--json]    largest size / fewest GPUs whose peak fits run.gpu
                                  (exit 3 when no value fits)
  serve-estimate FILE [--batch N] [--context L] [--prompt P] [--json]
                                  a serving scenario as its engine budgets it (vLLM,
                                  SGLang, llama.cpp): KV cache, concurrency, startup
                                  lines, TTFT/TPOT roofline
  timeline FILE [--step 1|2] [--json|--csv]
                                  one training step as allocations and frees: what is
                                  alive after each, and where the peak is
  plan FILE [--gpus N] [--global-batch B] [--top K] [--max-tp T] [--max-pp P]
       [--no-offload] [--json]
                                  fastest setups that fit: ZeRO x TP x PP x micro-batch x
                                  checkpointing x offload, ranked by estimated step time
  plan SERVING.json --gpus G --concurrency C [--context L] [--prompt P] [--max-tpot-ms T]
       [--max-ttft-ms T] [--min-tokens-per-s R] [--top K] [--json]
                                  vLLM/SGLang deployments (TP x PP x DP replicas, KV
                                  dtype) that start, hold C requests and meet the limits
  presets [--json]                built-in models and their parameter counts
  gpus [--json]                   the GPU catalog: memory, TFLOP/s, bandwidths
  keys [--json]                   every scenario key: kind, accepted values, unit, meaning
  import-hf CONFIG.json [-o OUT.json] [--name NAME]
                                  scenario from a Hugging Face config.json
  import-deepspeed DS.json --into SCENARIO.json [-o OUT.json]
                                  the scenario with a DeepSpeed config's run settings
  import-torchtitan TRAIN.toml --into SCENARIO.json [-o OUT.json]
                                  the scenario with a torchtitan config's model and run
  import-trl SFT.yaml --into SCENARIO.json [-o OUT.json]
                                  the scenario with a TRL (trl sft --config) YAML's run
  import-axolotl CONFIG.yml --into SCENARIO.json [-o OUT.json]
                                  the scenario with an axolotl config's run
  validate FILE                   check a scenario file (exit 0 valid, 2 invalid)
  snapshot FILE.pickle [--scenario S.json] [--json] [--csv CURVE.csv]
                                  a PyTorch memory snapshot: peaks, what was alive, by
                                  category and why; beside the scenario's simulated step
  --version, --help

Bad input exits 2 with one line on stderr naming the file, the key and what was expected.
)";

using Run = int (*)(const std::vector<std::string>&);

struct Command {
    const char* name;
    Run run;
    const char* usage; ///< what `vramlab-cli NAME --help` prints
};

const std::array<Command, 16> kCommands = { {
    { "estimate", vramlab::cli::runEstimate, R"(usage: vramlab-cli estimate FILE [--json] [--KEY VALUE ...]
       vramlab-cli estimate --preset NAME [--KEY VALUE ...] [--json]

Memory per GPU by component (weights, master weights, gradients, optimizer states,
activations, KV cache, overhead), the peak of the step, FLOPs, step time and whether it
fits run.gpu. --json prints the report object of the scenario spec.
--KEY VALUE sets one scenario key (every key `vramlab-cli keys` lists, e.g.
--run.parallelism.zero_stage 3), on FILE's scenario or, without a file, on the defaults;
short forms: --preset --gpu --mode --method --rank --seq --micro-batch --accumulation
--precision --optimizer --checkpointing --attention --framework --loss --compile --gpus
--zero --tp --pp. VALUE is JSON where it parses (8192, true, {"every": 2}), else text.
Example: vramlab-cli estimate --preset llama-3-8b --gpu rtx-4090 --method qlora --seq 8192
Exit 0; bad input exits 2 with one line on stderr.
)" },
    { "sweep", vramlab::cli::runSweep,
        R"(usage: vramlab-cli sweep FILE --param KEY --from A --to B --points N [--log] [--csv|--json]

Estimates the scenario at N values of KEY from A to B (--log: spaced by ratio), everything
else as the file says. KEY: run.sequence_length, run.micro_batch_size,
run.gradient_accumulation_steps, run.parallelism.gpus, run.context_length, run.batch_size,
run.finetune.rank. At most 1,000,000 points. Without --csv or --json: a table for people,
sizes in binary units (GiB), fits yes or no.
)" },
    { "fit", vramlab::cli::runFit,
        R"(usage: vramlab-cli fit FILE --max micro_batch_size|sequence_length|context_length|batch_size [--json]
       vramlab-cli fit FILE --min-gpus [--json]

The largest value whose peak fits run.gpu (the next one does not), or the fewest GPUs
(a multiple of tensor x pipeline parallel) that fit. Exit 0 with an answer, 3 when no
value fits (and the output says what the smallest one needs), 2 on bad input.
A serving scenario (run.mode "serving") takes --max concurrency [--context L],
--max context [--concurrency C], --min-gpus [--concurrency C] (tensor parallel) or
--max gpu_layers (llama.cpp).
)" },
    { "serve-estimate", vramlab::cli::runServeEstimate,
        R"(usage: vramlab-cli serve-estimate FILE [--batch N] [--context L] [--prompt P] [--json]

A scenario with run.mode "serving" as its engine budgets GPU memory (run.serving.engine:
vllm by version, sglang, llama.cpp, hf-generate): the budget, weights as loaded, the
profiling activation peak, non-torch memory, CUDA graphs, the KV cache in tokens and
blocks, the maximum concurrency at max_model_len, and the engine's own startup lines to
compare with a log; then prefill (TTFT) and decode (TPOT, tokens/s) as a roofline for N
sequences at L tokens (default: as many as the cache holds, at most max_num_seqs).
estimate FILE on a serving scenario prints the same. --json: {"serving": {...}}.
)" },
    { "timeline", vramlab::cli::runTimeline, R"(usage: vramlab-cli timeline FILE [--step 1|2] [--json|--csv]

One training step as allocations and frees (step 2 by default: optimizer states from the
start; step 1: created at its end), what is alive after each event, and where the peak is.
At most 200,000 events.
)" },
    { "plan", vramlab::cli::runPlan,
        R"(usage: vramlab-cli plan FILE [--gpus N] [--global-batch B] [--top K] [--max-tp T] [--max-pp P] [--no-offload] [--json]

The fastest setups that fit run.gpu: ZeRO stage x tensor parallel (with sequence
parallelism) x pipeline parallel x micro-batch x checkpointing x offload, ranked by
estimated step time; each row names every setting it applies and why it wins or loses.

usage: vramlab-cli plan SERVING.json --gpus G --concurrency C [--context L] [--prompt P]
       [--max-tpot-ms T] [--max-ttft-ms T] [--min-tokens-per-s R] [--top K] [--json]

A serving scenario (vLLM or SGLang): every deployment of G GPUs (tensor parallel dividing
the heads within 8 GPUs, vLLM pipeline stages, data-parallel replicas for the rest; the
KV cache in the scenario's dtype or fp8), each with the engine's own accounting. Those
that start, hold C requests of L tokens (default: max_model_len) and meet every limit
(TPOT and TTFT in milliseconds, output tokens per second of all replicas) are ranked by
TPOT; the rest are listed with why. Exit 3 when none fits.
)" },
    { "presets", vramlab::cli::runPresets, R"(usage: vramlab-cli presets [--json]

The built-in models with their parameter counts (computed and published).
)" },
    { "gpus", vramlab::cli::runGpus, R"(usage: vramlab-cli gpus [--json]

The GPU catalog: the names run.gpu accepts, memory as the driver reports it, dense
TFLOP/s by dtype, memory, GPU-to-GPU and host bandwidths.
)" },
    { "keys", vramlab::cli::runKeys, R"(usage: vramlab-cli keys [--json]

Every key a scenario file may hold, from the table the reader, the writer and the window
share: its kind, the values it accepts (range or choices), its unit and what it means.
Keys marked "refused" change memory in ways not modelled yet: only the value shown loads.
)" },
    { "import-hf", vramlab::cli::runImportHf, R"(usage: vramlab-cli import-hf CONFIG.json [-o OUT.json] [--name NAME]

A scenario from a Hugging Face config.json (printed, or written to OUT.json). A config
with keys VRAM Lab cannot account for is refused, naming them.
)" },
    { "import-deepspeed", vramlab::cli::runImportDeepSpeed,
        R"(usage: vramlab-cli import-deepspeed DS.json --into SCENARIO.json [-o OUT.json]

The scenario with a DeepSpeed config's run settings (framework deepspeed): ZeRO stage,
offload, buckets, precision, micro-batch, accumulation, optimizer (printed, or written to
OUT.json, never over SCENARIO.json). The model and the GPU count stay the scenario's.
Each key mapped and each key left out (and why) is listed on stderr; a key that changes
memory in a way VRAM Lab does not model is refused, naming it. Hugging Face's "auto"
keeps the scenario's value (the buckets Trainer derives from the model are derived).
)" },
    { "import-torchtitan", vramlab::cli::runImportTorchtitan,
        R"(usage: vramlab-cli import-torchtitan TRAIN.toml --into SCENARIO.json [-o OUT.json]

The scenario with a torchtitan training config as torchtitan@9dec370ad26b reads it (a
train_configs/*.toml; every key it leaves out takes that version's default): the model
(llama3 8B, 70B, 405B), the parallel degrees (data_parallel_shard_degree -1 fills the
scenario's GPU count), FSDP2 and its bf16 parameters, checkpointing, compile, float8, the
pipeline schedule and micro-batches, loss parallelism and the optimizer (printed, or written
to OUT.json, never over SCENARIO.json). The GPU and the GPU count stay the scenario's.
Each key mapped and each key left out (and why) is listed on stderr; a key that changes
memory in a way VRAM Lab does not model, or that the version does not have, is refused.
)" },
    { "import-trl", vramlab::cli::runImportTrl,
        R"(usage: vramlab-cli import-trl SFT.yaml --into SCENARIO.json [-o OUT.json]

The scenario with a TRL config as `trl sft --config SFT.yaml` reads it at TRL v0.25.1 with
transformers v4.57.1 (every key it leaves out takes that version's default): the batch and
its shape (max_length, packing, padding-free), the precision the load dtype and bf16/fp16
make together, the optimizer, gradient checkpointing, LoRA/QLoRA/DoRA, Liger's fused loss,
num_processes, and an inline deepspeed config or one of TRL's shipped accelerate_config
names (printed, or written to OUT.json, never over SCENARIO.json). The model and the GPU stay
the scenario's. Each key mapped and each key left out (and why) is listed on stderr; a key
that changes memory in a way VRAM Lab does not model, or that trl sft would reject, is
refused, naming it. The YAML is read as plain data: tags, anchors and aliases are refused.
)" },
    { "import-axolotl", vramlab::cli::runImportAxolotl,
        R"(usage: vramlab-cli import-axolotl CONFIG.yml --into SCENARIO.json [-o OUT.json]

The scenario with an axolotl config as `axolotl train CONFIG.yml` reads it at axolotl
v0.13.0 (transformers v4.57.1, PEFT, bitsandbytes 0.48.2; every key it leaves out takes that
version's default): the batch and its shape (sequence_len, multipack sample packing), the
precision bf16 auto resolves to on the scenario's GPU, the optimizer, gradient
checkpointing, LoRA/QLoRA/DoRA as axolotl loads them, Liger's and Cut Cross Entropy's fused
losses, and an inline deepspeed config (printed, or written to OUT.json, never over
SCENARIO.json). The model and the GPUs stay the scenario's. Keys axolotl's schema does not
have are listed as dropped, as axolotl drops them; a key that changes memory in a way VRAM
Lab does not model, or that axolotl refuses, is refused, naming it.
)" },
    { "validate", vramlab::cli::runValidate, R"(usage: vramlab-cli validate FILE

Checks a scenario file: exit 0 when valid, 2 with one line naming the key when not.
)" },
    { "snapshot", vramlab::cli::runSnapshot,
        R"(usage: vramlab-cli snapshot FILE.pickle [--scenario S.json] [--json] [--csv CURVE.csv]

A PyTorch memory snapshot (torch.cuda.memory._dump_snapshot) read without running any of
it: pickle opcodes that import or call (GLOBAL, REDUCE, ...) are refused. Prints the peak
allocated and reserved bytes, the largest blocks alive at the peak with their category
(weights, gradients, optimizer states, activations, temporaries, other) and the rule that
decided it, and the bytes by category. --scenario: beside the scenario's simulated step,
peak and categories measured against predicted, and why they differ. --csv: the allocated
and reserved curves to CURVE.csv. Exit 0; a refused or invalid file exits 2.
)" },
} };

} // namespace

int main(int argc, char** argv)
{
    using namespace vramlab;
    return commandMain("vramlab-cli", kUsage, VRAMLAB_VERSION, argc, argv,
        [](const std::string& cmd, const std::vector<std::string>& rest) -> std::optional<int> {
            for (const Command& c : kCommands) {
                if (cmd != c.name)
                    continue;
                for (const std::string& w : rest)
                    if (w == "--help" || w == "-h") {
                        writeStandardOutput(c.usage);
                        return 0;
                    }
                return c.run(rest);
            }
            return std::nullopt;
        });
}
