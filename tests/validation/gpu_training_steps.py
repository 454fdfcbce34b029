#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Measure real training steps on a CUDA GPU and compare them with vramlab-cli's estimate.

For small and mid-size Llama- and GPT-2-style models, each with eager and SDPA
attention, with and without full activation checkpointing, this script runs one pure-bf16
AdamW step on the GPU (the models of torch_measure.py, so the eager tensors are the ones
the `eager` profile counts) and records torch.cuda.memory_allocated / max_memory_allocated

    after the model is on the device          -> weights
    around the forward pass                   -> saved activations, forward peak
    around the backward pass                  -> gradients, backward peak
    around the optimizer step                 -> optimizer states, optimizer peak

and `vramlab-cli estimate FILE --json` for the same scenario (attention "eager" or
"flash"). PyTorch's allocator sees neither the CUDA context nor NCCL, so the estimate's
step peak is compared without its cuda_context part.

Weights, gradients and optimizer states must match the estimate within STATE_TOLERANCE
(the allocator rounds each tensor up to 512 B); activations and peaks are recorded with
their ratio to the estimate, for the README, not judged.

Usage: gpu_training_steps.py --cli PATH/TO/vramlab-cli [--out RESULTS.json] [--only TEXT]
Exits 0 when the states match, 1 when one does not, 2 on bad arguments, and 77 when
PyTorch or a CUDA device is missing (ctest's SKIP_RETURN_CODE).
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
    import torch.nn.functional as F
except ImportError as e:
    print(f"gpu_training_steps: PyTorch is not available ({e}); skipping.", file=sys.stderr)
    sys.exit(77)
if not torch.cuda.is_available():
    print("gpu_training_steps: no CUDA device visible to PyTorch; skipping.", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch_measure  # noqa: E402

STATE_TOLERANCE = 0.01  # relative
# enable_gqa (PyTorch 2.5+) lets SDPA read the shared K/V heads without repeating them.
SDPA_HAS_GQA = tuple(int(x) for x in torch.__version__.split(".")[:2]) >= (2, 5)

LLAMA = {"mlp": "swiglu", "norm": "rmsnorm", "position": "rope", "bias": False,
         "tied_embeddings": False, "dropout": 0.0}
GPT2 = {"mlp": "gelu", "norm": "layernorm", "position": "learned", "bias": True,
        "tied_embeddings": True, "dropout": 0.0, "max_position_embeddings": 1024}
MODELS = {
    # name: (model keys, sequence length, micro-batch)
    "gpt2-small-124m": ({**GPT2, "vocab_size": 50257, "hidden_size": 768, "num_layers": 12,
                         "num_heads": 12, "ffn_hidden_size": 3072}, 1024, 4),
    "gpt2-medium-355m": ({**GPT2, "vocab_size": 50257, "hidden_size": 1024, "num_layers": 24,
                          "num_heads": 16, "ffn_hidden_size": 4096}, 1024, 4),
    "llama-style-160m": ({**LLAMA, "vocab_size": 32000, "hidden_size": 768, "num_layers": 12,
                          "num_heads": 12, "num_kv_heads": 4, "ffn_hidden_size": 2048}, 2048, 2),
    "llama-style-1.1b": ({**LLAMA, "vocab_size": 32000, "hidden_size": 2048, "num_layers": 22,
                          "num_heads": 32, "num_kv_heads": 4, "ffn_hidden_size": 5632}, 2048, 2),
}


def scenario(model: str, attention: str, checkpointing: str) -> dict:
    keys, seq, batch = MODELS[model]
    return {"format": "vramlab.scenario", "version": 1,
            "name": f"{model} {attention} checkpointing={checkpointing}",
            "model": keys,
            "run": {"mode": "training", "sequence_length": seq, "micro_batch_size": batch,
                    "precision": "bf16", "optimizer": "adamw", "checkpointing": checkpointing,
                    "attention": attention}}


def sdpa_forward(self, x, rope):
    """torch_measure.SelfAttention.forward with one fused SDPA kernel (FlashAttention on
    sm80+) instead of the eager softmax, and K/V not repeated for GQA."""
    cfg = self.cfg
    batch, seq, _ = x.shape
    q, k, v = self.project(x, rope)
    gqa = cfg.kv_heads != cfg.heads
    if gqa and not SDPA_HAS_GQA:
        k = k.repeat_interleave(cfg.heads // cfg.kv_heads, dim=1)
        v = v.repeat_interleave(cfg.heads // cfg.kv_heads, dim=1)
    extra = {"enable_gqa": True} if gqa and SDPA_HAS_GQA else {}
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, **extra)
    out = out.transpose(1, 2).reshape(batch, seq, cfg.heads * cfg.head_dim)
    return self.o_proj(out)


def measure_step(doc: dict, attention: str) -> dict:
    """One training step on cuda:0; bytes as torch.cuda's allocator counts them."""
    run = dict(doc["run"], attention="eager")  # torch_measure reads eager scenarios only
    cfg = torch_measure.read_scenario({**doc, "run": run})
    torch_measure.SelfAttention.forward = (sdpa_forward if attention == "flash"
                                           else EAGER_FORWARD)
    dev = torch.device("cuda", 0)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(dev)
    start = torch.cuda.memory_allocated(dev)
    torch.manual_seed(0)
    model = torch_measure.DecoderLM(cfg).to(cfg.dtype).to(dev)
    ids = torch.randint(0, cfg.vocab, (cfg.batch, cfg.seq), device=dev)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    torch.cuda.synchronize(dev)
    weights = torch.cuda.memory_allocated(dev) - start

    def phase(fn):
        torch.cuda.synchronize(dev)
        before = torch.cuda.memory_allocated(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        result = fn()
        torch.cuda.synchronize(dev)
        return result, torch.cuda.memory_allocated(dev) - before, torch.cuda.max_memory_allocated(dev) - start

    loss, activations, forward_peak = phase(lambda: model(ids))
    _, backward_delta, backward_peak = phase(loss.backward)
    del loss
    _, optimizer_delta, optimizer_peak = phase(optimizer.step)
    result = {"weights": weights, "activations": activations, "forward_peak": forward_peak,
              # backward frees the activations while it writes the gradients
              "gradients": sum(p.grad.numel() * p.grad.element_size() for p in model.parameters()),
              "backward_delta": backward_delta, "backward_peak": backward_peak,
              "optimizer_states": optimizer_delta, "optimizer_peak": optimizer_peak,
              "step_peak": max(forward_peak, backward_peak, optimizer_peak)}
    del model, optimizer, ids
    torch.cuda.empty_cache()
    return result


EAGER_FORWARD = torch_measure.SelfAttention.forward


def estimate(cli: str, doc: dict) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    out = subprocess.run([cli, "estimate", f.name, "--json"], capture_output=True, text=True, check=True)
    Path(f.name).unlink()
    rep = json.loads(out.stdout)
    context = sum(p["bytes"] for p in rep["overhead_parts"] if p["key"] == "cuda_context")
    return {**rep["per_gpu_bytes"], "peak_without_context": rep["peak_bytes"] - context}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True, help="path to vramlab-cli")
    parser.add_argument("--out", help="write the results here (JSON)")
    parser.add_argument("--only", default="", help="run only cases whose name contains this")
    args = parser.parse_args(argv)

    results, failures = [], 0
    for model in MODELS:
        for attention in ("eager", "flash"):
            for checkpointing in ("none", "full"):
                doc = scenario(model, attention, checkpointing)
                if args.only not in doc["name"]:
                    continue
                measured, predicted = measure_step(doc, attention), estimate(args.cli, doc)
                row = {"case": doc["name"], "measured": measured, "estimated": predicted, "ok": True}
                for key in ("weights", "gradients", "optimizer_states"):
                    if abs(measured[key] - predicted[key]) > STATE_TOLERANCE * predicted[key]:
                        row["ok"] = False
                ratio_act = measured["activations"] / predicted["activations"] if predicted["activations"] else 0
                ratio_peak = measured["step_peak"] / predicted["peak_without_context"]
                failures += not row["ok"]
                results.append(row)
                print(f"{'ok  ' if row['ok'] else 'FAIL'} {doc['name']:<48} activations x{ratio_act:.3f} "
                      f"step peak x{ratio_peak:.3f} of the estimate")
    record = {"format": "vramlab.gpu_training_steps", "version": 1,
              "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "results": results}
    if args.out:
        Path(args.out).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
