#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Measure Hugging Face transformers + PEFT training steps on a CUDA GPU beside vramlab-cli's hf-transformers estimate.

A Llama-architecture model built from a config (random weights: nothing is downloaded) runs one training step per
case: full fine-tuning and LoRA as a plain loop runs them over a bf16 model (no autocast), LoRA under autocast (as
Trainer's bf16=True through accelerate), LoRA with dropout on every linear, LoRA with gradient checkpointing, and,
where bitsandbytes is installed, QLoRA as peft's prepare_model_for_kbit_training leaves the model, with and without
gradient checkpointing (run.finetune.kbit_preparation "peft", modelled from the source under autocast and not yet
checked on a GPU). For each it records torch.cuda's allocator counters

    after the model and optimizer are set up    -> weights (+ adapters)
    after forward and loss                       -> saved activations (what backward will read), forward peak
    over backward and the optimizer step         -> step peak

and, with --list, every tensor autograd saves in the first decoder layer (unique storages: shape, dtype, the op that
saved it), which is the tensor-by-tensor ground truth the hf-transformers profile is read from.

The estimate is `vramlab-cli estimate FILE --json` of the same scenario (framework "hf-transformers", attention
"flash" for SDPA); its activations and peak less the CUDA context are compared, as ratios, not judged: this is a
recording for tests/data/recorded/, made where a GPU is lent.

Usage: hf_peft_steps.py --cli PATH/TO/vramlab-cli [--out RESULTS.json] [--only TEXT] [--list]
Exits 0 after recording, 2 on bad arguments, and 77 when PyTorch, a CUDA device, transformers or peft is missing
(ctest's SKIP_RETURN_CODE).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import torch
except ImportError as e:
    print(f"hf_peft_steps: PyTorch is not available ({e}); skipping.", file=sys.stderr)
    sys.exit(77)
if not torch.cuda.is_available():
    print("hf_peft_steps: no CUDA device visible to PyTorch; skipping.", file=sys.stderr)
    sys.exit(77)
try:
    import transformers
    import peft
except ImportError as e:
    print(f"hf_peft_steps: transformers and peft are needed ({e}); skipping.", file=sys.stderr)
    sys.exit(77)
try:
    import bitsandbytes  # noqa: F401  (QLoRA cases only)
    HAVE_BNB = True
except ImportError:
    HAVE_BNB = False

# Llama-3.2-1B's shapes with 8 of its 16 layers and a 32k vocabulary, so that one step fits any lent GPU and the
# logits do not hide the layers.
MODEL = {"vocab_size": 32000, "hidden_size": 2048, "num_layers": 8, "num_heads": 32, "num_kv_heads": 8,
         "head_dim": 64, "ffn_hidden_size": 8192, "mlp": "swiglu", "norm": "rmsnorm", "position": "rope",
         "bias": False, "tied_embeddings": False, "dropout": 0.0, "max_position_embeddings": 8192}
SEQ, BATCH = 1024, 2

# name: (precision, finetune or None, autocast, gradient checkpointing, qlora)
CASES = {
    "full bf16": ("bf16", None, False, False, False),
    "lora q,v bf16": ("bf16", {"method": "lora", "rank": 16, "alpha": 32, "targets": ["q", "v"], "dropout": 0.0},
                      False, False, False),
    "lora q,v autocast": ("mixed-bf16", {"method": "lora", "rank": 16, "alpha": 32, "targets": ["q", "v"],
                                         "dropout": 0.0}, True, False, False),
    "lora all dropout bf16": ("bf16", {"method": "lora", "rank": 16, "alpha": 32, "targets": ["all-linear"],
                                       "dropout": 0.05}, False, False, False),
    "lora q,v bf16 checkpointing": ("bf16", {"method": "lora", "rank": 16, "alpha": 32, "targets": ["q", "v"],
                                             "dropout": 0.0}, False, True, False),
    "qlora all prepared autocast": ("mixed-bf16", {"method": "qlora", "rank": 16, "alpha": 32,
                                                   "targets": ["all-linear"], "dropout": 0.0}, True, True, True),
    "qlora all prepared autocast no checkpointing": ("mixed-bf16", {"method": "qlora", "rank": 16, "alpha": 32,
                                                                    "targets": ["all-linear"], "dropout": 0.0},
                                                     True, False, True),
}
PEFT_TARGETS = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj", "up": "up_proj",
                "down": "down_proj"}


def scenario(name: str) -> dict:
    precision, finetune, _, checkpointing, _ = CASES[name]
    run = {"mode": "training", "framework": "hf-transformers", "sequence_length": SEQ, "micro_batch_size": BATCH,
           "precision": precision, "optimizer": "adamw", "attention": "flash",
           "checkpointing": "full" if checkpointing else "none"}
    if finetune:
        run["finetune"] = dict(finetune)
        if finetune["method"] == "qlora":  # build() calls PEFT's prepare_model_for_kbit_training itself
            run["finetune"]["kbit_preparation"] = "peft"
    return {"format": "vramlab.scenario", "version": 1, "name": f"hf_peft_steps {name}", "model": MODEL,
            "run": run}


def llama_config():
    return transformers.LlamaConfig(
        vocab_size=MODEL["vocab_size"], hidden_size=MODEL["hidden_size"], num_hidden_layers=MODEL["num_layers"],
        num_attention_heads=MODEL["num_heads"], num_key_value_heads=MODEL["num_kv_heads"],
        head_dim=MODEL["head_dim"], intermediate_size=MODEL["ffn_hidden_size"],
        max_position_embeddings=MODEL["max_position_embeddings"], tie_word_embeddings=False,
        attn_implementation="sdpa")


def build(name: str, dev, tmp: Path):
    _, finetune, _, checkpointing, qlora = CASES[name]
    torch.manual_seed(0)
    if qlora:
        # A quantized model loads from a checkpoint: save the random one once, load it in 4 bits.
        path = tmp / "llama"
        if not path.exists():
            transformers.LlamaForCausalLM(llama_config()).to(torch.bfloat16).save_pretrained(path)
        quant = transformers.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                bnb_4bit_use_double_quant=True,
                                                bnb_4bit_compute_dtype=torch.bfloat16)
        model = transformers.LlamaForCausalLM.from_pretrained(path, quantization_config=quant,
                                                              torch_dtype=torch.bfloat16, device_map={"": dev.index},
                                                              attn_implementation="sdpa")
        model = peft.prepare_model_for_kbit_training(model, use_gradient_checkpointing=checkpointing)
    else:
        model = transformers.LlamaForCausalLM(llama_config()).to(torch.bfloat16).to(dev)
        if checkpointing:
            model.gradient_checkpointing_enable()  # the version's default kwargs, as Trainer passes None
            if finetune:
                model.enable_input_require_grads()
    if finetune:
        targets = ("all-linear" if finetune["targets"] == ["all-linear"]
                   else [PEFT_TARGETS[t] for t in finetune["targets"]])
        cfg = peft.LoraConfig(r=finetune["rank"], lora_alpha=finetune["alpha"], lora_dropout=finetune["dropout"],
                              target_modules=targets, task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, cfg)
    model.train()
    return model


def saved_tensors_of_first_layer(model, ids, autocast: bool) -> list:
    """Every unique storage autograd saves while decoder layer 0 runs its forward."""
    layer = next(m for n, m in model.named_modules() if n.endswith("layers.0"))
    seen, rows, active = set(), [], [False]

    def pack(t):
        if active[0]:
            key = (t.untyped_storage().data_ptr(), t.dtype)
            if key not in seen:
                seen.add(key)
                rows.append({"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                             "bytes": t.untyped_storage().nbytes(),
                             "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None})
        return t

    pre = layer.register_forward_pre_hook(lambda *a: active.__setitem__(0, True))
    post = layer.register_forward_hook(lambda *a: active.__setitem__(0, False))
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), \
                torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            model(input_ids=ids, labels=ids)
    finally:
        pre.remove()
        post.remove()
    return rows


def measure(name: str, dev, tmp: Path, listing: bool) -> dict:
    autocast = CASES[name][2]
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(dev)
    start = torch.cuda.memory_allocated(dev)
    model = build(name, dev, tmp)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-4)  # Trainer's adamw_torch (foreach) before torch 2.8
    ids = torch.randint(0, MODEL["vocab_size"], (BATCH, SEQ), device=dev)
    torch.cuda.synchronize(dev)
    weights = torch.cuda.memory_allocated(dev) - start
    listing_rows = saved_tensors_of_first_layer(model, ids, autocast) if listing else None
    torch.cuda.synchronize(dev)
    before = torch.cuda.memory_allocated(dev)
    torch.cuda.reset_peak_memory_stats(dev)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
        loss = model(input_ids=ids, labels=ids).loss
    torch.cuda.synchronize(dev)
    activations = torch.cuda.memory_allocated(dev) - before
    forward_peak = torch.cuda.max_memory_allocated(dev) - start
    loss.backward()
    del loss
    optimizer.step()
    torch.cuda.synchronize(dev)
    step_peak = torch.cuda.max_memory_allocated(dev) - start
    result = {"weights": weights, "activations": activations, "forward_peak": forward_peak,
              "step_peak": max(forward_peak, step_peak),
              "trainable_params": sum(p.numel() for p in params)}
    if listing_rows is not None:
        result["first_layer_saved"] = listing_rows
    del model, optimizer, ids, params
    torch.cuda.empty_cache()
    return result


def estimate(cli: str, doc: dict) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    out = subprocess.run([cli, "estimate", f.name, "--json"], capture_output=True, text=True)
    Path(f.name).unlink()
    if out.returncode != 0:
        return {"refused": out.stderr.strip()}
    rep = json.loads(out.stdout)
    context = sum(p["bytes"] for p in rep["overhead_parts"] if p["key"] == "cuda_context")
    return {**rep["per_gpu_bytes"], "peak_without_context": rep["peak_bytes"] - context,
            "warnings": rep.get("warnings", [])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True, help="path to vramlab-cli")
    parser.add_argument("--out", help="write the results here (JSON)")
    parser.add_argument("--only", default="", help="run only cases whose name contains this")
    parser.add_argument("--list", action="store_true", help="record the first layer's saved tensors")
    args = parser.parse_args(argv)
    dev = torch.device("cuda", 0)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in CASES:
            if args.only not in name:
                continue
            if CASES[name][4] and not HAVE_BNB:
                print(f"skip {name}: bitsandbytes is not installed")
                continue
            doc = scenario(name)
            try:
                measured = measure(name, dev, Path(tmp), args.list)
            except Exception as e:  # a case that cannot run here is recorded, not fatal
                results.append({"case": name, "error": f"{type(e).__name__}: {e}"})
                print(f"error {name}: {type(e).__name__}: {e}")
                continue
            predicted = estimate(args.cli, doc)
            results.append({"case": name, "scenario": doc, "measured": measured, "estimated": predicted})
            if "refused" in predicted:
                print(f"{name:<32} refused by vramlab-cli: {predicted['refused']}")
                continue
            act = measured["activations"] / predicted["activations"] if predicted.get("activations") else 0
            peak = measured["step_peak"] / predicted["peak_without_context"]
            print(f"{name:<32} activations x{act:.3f}  step peak x{peak:.3f} of the estimate")
    record = {"format": "vramlab.hf_peft_steps", "version": 1, "device": torch.cuda.get_device_name(0),
              "torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
              "bitsandbytes": bitsandbytes.__version__ if HAVE_BNB else None, "results": results}
    if args.out:
        Path(args.out).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
