// SPDX-License-Identifier: MIT
// vramlab-cli: estimate, sweep and fit LLM memory from the command line (core only, no Qt).
#include "command_main.h"
#include "commands.h"

namespace {

const char* const kUsage = R"(usage: vramlab-cli COMMAND [ARGS]

Where GPU memory and compute go when an LLM is trained, fine-tuned or served.

commands:
  estimate FILE [--json]          memory per GPU by component, FLOPs, step time, verdict
  sweep FILE --param KEY --from A --to B --points N [--log] [--csv|--json]
                                  KEY: run.sequence_length, run.micro_batch_size,
                                  run.gradient_accumulation_steps, run.parallelism.gpus,
                                  run.context_length, run.batch_size, run.finetune.rank
  fit FILE --max micro_batch_size|sequence_length|context_length|batch_size [--json]
  fit FILE --min-gpus [--json]    largest size / fewest GPUs whose peak fits run.gpu
  timeline FILE [--step 1|2] [--json|--csv]
                                  one training step as allocations and frees: what is
                                  alive after each, and where the peak is
  plan FILE [--gpus N] [--global-batch B] [--top K] [--max-tp T] [--max-pp P]
       [--no-offload] [--json]
                                  fastest setups that fit: ZeRO x TP x PP x micro-batch x
                                  checkpointing x offload, ranked by estimated step time
  presets [--json]                built-in models and their parameter counts
  import-hf CONFIG.json [-o OUT.json] [--name NAME]
                                  scenario from a Hugging Face config.json
  validate FILE                   check a scenario file (exit 0 valid, 2 invalid)
  --version, --help

Bad input exits 2 with one line on stderr naming the file, the key and what was expected.
)";

} // namespace

int main(int argc, char** argv)
{
    using namespace vramlab;
    return commandMain("vramlab-cli", kUsage, VRAMLAB_VERSION, argc, argv,
                       [](const std::string& cmd, const std::vector<std::string>& rest) -> std::optional<int> {
                           if (cmd == "estimate")
                               return cli::runEstimate(rest);
                           if (cmd == "sweep")
                               return cli::runSweep(rest);
                           if (cmd == "fit")
                               return cli::runFit(rest);
                           if (cmd == "timeline")
                               return cli::runTimeline(rest);
                           if (cmd == "plan")
                               return cli::runPlan(rest);
                           if (cmd == "presets")
                               return cli::runPresets(rest);
                           if (cmd == "import-hf")
                               return cli::runImportHf(rest);
                           if (cmd == "validate")
                               return cli::runValidate(rest);
                           return std::nullopt;
                       });
}
