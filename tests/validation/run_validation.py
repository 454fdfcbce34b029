#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check vramlab-cli's estimates against what eager PyTorch really holds.

For each small configuration below this script writes a scenario file, measures one
training step with torch_measure (in this process) and asks the CLI for its estimate
(`vramlab-cli estimate FILE --json`). Parameters, weights, gradients and optimizer
states must match exactly; activations within ACTIVATION_TOLERANCE (relative). MoE
models are compared on everything but activations, which depend on routing.

With --reference, every configuration the reference script can read is also measured by
/work/shared/reference/torch_reference.py, and torch_measure must give exactly its
numbers: that ties this suite's measurement to the ground truth of the `eager` profile.

Usage: run_validation.py --cli PATH/TO/vramlab-cli
                         [--reference PATH/TO/torch_reference.py] [--out DIR] [--only TEXT]
Exits 0 when everything passes, 1 on any failure, 2 on bad arguments, and 77 when
PyTorch cannot be imported (ctest's SKIP_RETURN_CODE).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import torch  # noqa: F401  (only to find out whether the suite can run at all)
except ImportError as e:
    print(f"run_validation: PyTorch is not available ({e}); skipping.\n"
          "Install Debian's python3-torch and run with /usr/bin/python3.", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch_measure  # noqa: E402  (needs torch, imported above)

ACTIVATION_TOLERANCE = 0.005   # 0.5 %, relative to the measured bytes
REFERENCE_PYTHON = "/usr/bin/python3"
EXACT_KEYS = (("params", "total"), ("per_gpu_bytes", "weights"),
              ("per_gpu_bytes", "gradients"), ("per_gpu_bytes", "optimizer_states"))
ACTIVATIONS = ("per_gpu_bytes", "activations")


# --------------------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------------------

# A tiny Llama-style base; every configuration states only how it differs. Sizes stay
# small so that the whole suite runs in seconds on two CPU cores.
BASE_MODEL = {
    "vocab_size": 512, "hidden_size": 64, "num_layers": 2, "num_heads": 4,
    "ffn_hidden_size": 176, "mlp": "swiglu", "norm": "rmsnorm", "position": "rope",
    "bias": False, "tied_embeddings": False, "dropout": 0.0,
}
BASE_RUN = {
    "mode": "training", "sequence_length": 32, "micro_batch_size": 2, "precision": "fp32",
    "optimizer": "adamw", "checkpointing": "none", "attention": "eager",
}
GPT2_STYLE = {"mlp": "gelu", "norm": "layernorm", "position": "learned", "bias": True,
              "max_position_embeddings": 128}


def scenario(name: str, model: dict | None = None, run: dict | None = None) -> dict:
    m = {**BASE_MODEL, **(model or {})}
    if m.get("position") == "learned":
        m.setdefault("max_position_embeddings", 128)
    return {"format": "vramlab.scenario", "version": 1, "name": name,
            "model": m, "run": {**BASE_RUN, **(run or {})}}


def moe(experts, top_k, shared=0, width=48, dense=0) -> dict:
    return {"moe": {"num_experts": experts, "top_k": top_k, "shared_experts": shared,
                    "expert_ffn_hidden_size": width, "first_dense_layers": dense}}


CONFIGS = [
    # The two shared examples, with their known reference numbers.
    {"format": "vramlab.scenario", "version": 1, "name": "llama-tiny",
     "model": {"vocab_size": 1000, "hidden_size": 256, "num_layers": 2, "num_heads": 8,
               "num_kv_heads": 2, "ffn_hidden_size": 688, "mlp": "swiglu",
               "norm": "rmsnorm", "position": "rope", "bias": False,
               "tied_embeddings": False, "dropout": 0.0},
     "run": {**BASE_RUN, "sequence_length": 128, "precision": "bf16"}},
    {"format": "vramlab.scenario", "version": 1, "name": "gpt2-tiny",
     "model": {"vocab_size": 1200, "hidden_size": 128, "num_layers": 2, "num_heads": 4,
               "ffn_hidden_size": 512, "mlp": "gelu", "norm": "layernorm",
               "position": "learned", "max_position_embeddings": 64, "bias": True,
               "tied_embeddings": True, "dropout": 0.1},
     "run": {**BASE_RUN, "sequence_length": 64, "checkpointing": "full"}},

    # Attention shapes.
    scenario("mha-fp32"),
    scenario("mha-bf16", run={"precision": "bf16"}),

    # run.loss (the plain loop): 16-bit cross-entropy, torchtune-style chunks upcast one at a
    # time, LitGPT-style 16-bit chunks (12 + 12 + 8 positions), chunks in fp32.
    scenario("loss-native-bf16", run={"precision": "bf16", "loss": "native"}),
    scenario("loss-chunked-upcast-bf16", run={"precision": "bf16", "loss": "chunked", "loss_chunks": 4}),
    scenario("loss-chunked-16bit-bf16", run={"precision": "bf16", "loss": "chunked", "loss_chunks_tokens": 12,
                                              "loss_dtype": "bf16"}),
    scenario("loss-chunked-fp32", run={"loss": "chunked", "loss_chunks": 3}),
    scenario("gqa-fp32", {"num_heads": 8, "num_kv_heads": 2}),
    scenario("gqa-bf16-b1", {"num_heads": 8, "num_kv_heads": 4},
             {"precision": "bf16", "micro_batch_size": 1}),
    scenario("mqa-fp32", {"num_kv_heads": 1}),
    scenario("mqa-bf16-seq37", {"num_heads": 8, "num_kv_heads": 1},
             {"precision": "bf16", "sequence_length": 37}),
    scenario("head-dim-32-gqa", {"head_dim": 32, "num_kv_heads": 2}),
    scenario("head-dim-8-bf16", {"hidden_size": 96, "num_heads": 6, "head_dim": 8},
             {"precision": "bf16"}),

    # MLP, norm, bias and position variants.
    scenario("gelu-rms-rope", {"mlp": "gelu"}),
    scenario("geglu-rms-rope", {"mlp": "geglu"}),
    scenario("geglu-layernorm-bf16", {"mlp": "geglu", "norm": "layernorm"},
             {"precision": "bf16"}),
    scenario("layernorm-swiglu", {"norm": "layernorm"}),
    scenario("gpt2-style-fp32", GPT2_STYLE),
    scenario("gpt2-style-bf16-seq61", GPT2_STYLE, {"precision": "bf16", "sequence_length": 61}),
    scenario("bias-swiglu-rope", {"bias": True}),
    scenario("qkv-bias-gqa", {"qkv_bias": True, "num_heads": 8, "num_kv_heads": 2}),
    scenario("qkv-bias-bf16-selective", {"qkv_bias": True, "num_kv_heads": 2},
             {"precision": "bf16", "checkpointing": "selective"}),
    scenario("learned-rms-swiglu", {"position": "learned", "max_position_embeddings": 40},
             {"sequence_length": 37}),
    scenario("tied-rope", {"tied_embeddings": True}),
    scenario("tied-learned-layernorm-bf16", {**GPT2_STYLE, "tied_embeddings": True},
             {"precision": "bf16"}),

    # Dropout, batch and sequence shapes, depth.
    scenario("dropout-rope-fp32", {"dropout": 0.1}),
    scenario("dropout-gqa-bf16", {"dropout": 0.2, "num_kv_heads": 2}, {"precision": "bf16"}),
    scenario("b1-seq37-fp32", run={"micro_batch_size": 1, "sequence_length": 37}),
    scenario("b3-seq37-bf16", run={"micro_batch_size": 3, "sequence_length": 37,
                                   "precision": "bf16"}),
    scenario("b1-seq127-l1", {"num_layers": 1}, {"micro_batch_size": 1, "sequence_length": 127}),
    scenario("l3-geglu-seq13", {"num_layers": 3, "mlp": "geglu"}, {"sequence_length": 13}),
    scenario("l4-gqa-bf16", {"num_layers": 4, "num_kv_heads": 2}, {"precision": "bf16"}),

    # Checkpointing.
    scenario("ckpt-full-fp32", run={"checkpointing": "full"}),
    scenario("ckpt-full-gqa-bf16", {"num_heads": 8, "num_kv_heads": 2},
             {"checkpointing": "full", "precision": "bf16"}),
    scenario("ckpt-full-l1-learned", {**GPT2_STYLE, "num_layers": 1},
             {"checkpointing": "full", "sequence_length": 37}),
    scenario("ckpt-selective-fp32", run={"checkpointing": "selective"}),
    scenario("ckpt-selective-mqa-bf16", {"num_kv_heads": 1},
             {"checkpointing": "selective", "precision": "bf16"}),
    scenario("ckpt-selective-dropout-gpt2", {**GPT2_STYLE, "dropout": 0.1},
             {"checkpointing": "selective"}),
    scenario("ckpt-every2-l4", {"num_layers": 4}, {"checkpointing": {"every": 2}}),
    scenario("ckpt-every2-l3-bf16", {"num_layers": 3},
             {"checkpointing": {"every": 2}, "precision": "bf16"}),
    scenario("ckpt-every3-l4-dropout", {"num_layers": 4, "dropout": 0.1},
             {"checkpointing": {"every": 3}, "sequence_length": 37}),

    # Optimizers.
    scenario("adam-fp32", run={"optimizer": "adam"}),
    scenario("sgd-fp32", run={"optimizer": "sgd"}),
    scenario("sgd-gpt2-bf16", GPT2_STYLE, {"optimizer": "sgd", "precision": "bf16"}),
    scenario("sgd-momentum-fp32", run={"optimizer": "sgd-momentum"}),
    scenario("sgd-momentum-bf16-tied", {"tied_embeddings": True},
             {"optimizer": "sgd-momentum", "precision": "bf16"}),

    # Mixture of experts (activations not compared).
    scenario("moe-mixtral-like", moe(4, 2)),
    scenario("moe-deepseek-like-bf16", {**moe(8, 2, shared=1, width=32, dense=1),
                                        "num_layers": 3, "num_kv_heads": 2},
             {"precision": "bf16"}),
    scenario("moe-shared2-sgd-momentum", moe(4, 1, shared=2, width=24),
             {"optimizer": "sgd-momentum", "checkpointing": "full"}),
    scenario("moe-tied-every2", {**moe(6, 2, dense=1), "num_layers": 4, "tied_embeddings": True},
             {"checkpointing": {"every": 2}, "precision": "bf16"}),
]


def is_moe(doc: dict) -> bool:
    return doc["model"].get("moe", {}).get("num_experts", 0) > 0


def reference_reads(doc: dict) -> bool:
    """Whether torch_reference.py reads this scenario with the same meaning.

    The reference ignores keys it does not know (qkv_bias, moe) and treats every mlp
    other than swiglu as gelu, so such files would silently describe another model."""
    m, r = doc["model"], doc["run"]
    return (r.get("precision", "bf16") in ("fp32", "bf16")
            and r.get("optimizer", "adamw") in ("adamw", "adam")
            and r.get("checkpointing", "none") in ("none", "full")
            and r.get("attention", "eager") == "eager"
            and r.get("loss", "upcast") == "upcast"
            and m.get("mlp", "swiglu") in ("swiglu", "gelu")
            and not m.get("qkv_bias", False) and not is_moe(doc))


# --------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------

def run_json(cmd: list[str], timeout: float = 120) -> tuple[dict | None, str]:
    """Runs a command that prints one JSON object; returns (object, error text)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()
        return None, f"exit {proc.returncode}: {err[-1] if err else '(no stderr)'}"
    try:
        return json.loads(proc.stdout), ""
    except json.JSONDecodeError as e:
        return None, f"stdout is not JSON ({e})"


def lookup(report: dict, path: tuple) -> object:
    value = report
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def compare(doc: dict, measured: dict, estimate: dict | None, cli_error: str,
            ref: dict | None, ref_error: str) -> dict:
    """Compares one configuration; returns a row for the table."""
    row = {"name": doc["name"], "moe": is_moe(doc), "problems": [],
           "measured": lookup(measured, ACTIVATIONS), "estimated": None, "rel": None,
           "ref": "-"}
    problems = row["problems"]

    if ref is not None or ref_error:
        if ref is None:
            problems.append(f"reference failed: {ref_error}")
            row["ref"] = "error"
        else:
            diffs = [f"{'.'.join(p)} ours {lookup(measured, p)} != reference {lookup(ref, p)}"
                     for p in EXACT_KEYS + (ACTIVATIONS,) if lookup(measured, p) != lookup(ref, p)]
            problems += [f"torch_measure differs from the reference: {d}" for d in diffs]
            row["ref"] = "DIFF" if diffs else "equal"

    if estimate is None:
        problems.append(f"vramlab-cli failed: {cli_error}")
        return row
    for path in EXACT_KEYS:
        want, got = lookup(measured, path), lookup(estimate, path)
        if got != want:
            problems.append(f"{'.'.join(path)}: estimated {got}, measured {want}")
    got = lookup(estimate, ACTIVATIONS)
    row["estimated"] = got
    if not isinstance(got, int) or isinstance(got, bool):
        problems.append(f"per_gpu_bytes.activations: expected an integer, got {got!r}")
    elif not row["moe"]:
        row["rel"] = (got - row["measured"]) / row["measured"]
        if abs(row["rel"]) > ACTIVATION_TOLERANCE:
            problems.append(f"activations: estimated {got}, measured {row['measured']} "
                            f"({row['rel']:+.4%}, tolerance {ACTIVATION_TOLERANCE:.1%})")
    return row


def print_table(rows: list[dict]) -> None:
    width = max(len(r["name"]) for r in rows)
    print(f"{'config':<{width}}  {'measured':>12}  {'estimated':>12}  {'rel. error':>11}"
          f"  {'reference':>9}  result")
    for r in rows:
        est = "-" if r["estimated"] is None else str(r["estimated"])
        rel = "n/a (MoE)" if r["moe"] else ("-" if r["rel"] is None else f"{r['rel']:+.4%}")
        print(f"{r['name']:<{width}}  {r['measured']:>12}  {est:>12}  {rel:>11}  {r['ref']:>9}"
              f"  {'FAIL' if r['problems'] else 'ok'}")
        for p in r["problems"]:
            print(f"{'':<{width}}    - {p}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True, help="path to vramlab-cli")
    parser.add_argument("--reference", help="path to torch_reference.py (optional)")
    parser.add_argument("--out", help="directory to keep the scenario and result files in")
    parser.add_argument("--only", help="run only the configurations whose name contains this")
    args = parser.parse_args(argv)

    cli = Path(args.cli)
    if not (cli.is_file() and os.access(cli, os.X_OK)):
        print(f"run_validation: --cli {cli}: not an executable file", file=sys.stderr)
        return 2
    if args.reference and not Path(args.reference).is_file():
        print(f"run_validation: --reference {args.reference}: no such file", file=sys.stderr)
        return 2
    configs = [c for c in CONFIGS if not args.only or args.only in c["name"]]
    if not configs:
        print(f"run_validation: no configuration matches --only {args.only!r}", file=sys.stderr)
        return 2

    started = time.monotonic()
    tmp = None
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="vramlab-validation-")
        out = Path(tmp.name)

    paths = {}
    for doc in configs:
        paths[doc["name"]] = out / f"{doc['name']}.json"
        paths[doc["name"]].write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")

    # The reference pays PyTorch's import (~1.5 s) per file, far more than all in-process
    # measurements together, so its runs go to worker threads while this thread measures.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
    ref_jobs = {}
    if args.reference:
        for doc in configs:
            if reference_reads(doc):
                cmd = [REFERENCE_PYTHON, args.reference, str(paths[doc["name"]])]
                ref_jobs[doc["name"]] = pool.submit(run_json, cmd)

    rows, results = [], {}
    for doc in configs:
        name = doc["name"]
        measured = torch_measure.measure(copy.deepcopy(doc))
        estimate, cli_error = run_json([str(cli), "estimate", str(paths[name]), "--json"])
        ref, ref_error = ref_jobs[name].result() if name in ref_jobs else (None, "")
        rows.append(compare(doc, measured, estimate, cli_error, ref, ref_error))
        results[name] = {"measured": measured, "estimate": estimate, "reference": ref,
                         "problems": rows[-1]["problems"]}
    pool.shutdown()

    if args.out:
        (out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if tmp is not None:
        tmp.cleanup()

    print_table(rows)
    print(f"({len(ref_jobs)} configurations also checked against the reference; "
          f"{time.monotonic() - started:.1f} s)")
    compared = [r for r in rows if r["rel"] is not None]
    if compared:
        worst = max(compared, key=lambda r: abs(r["rel"]))
        print(f"worst activation error: {abs(worst['rel']):.4%} (config {worst['name']})")
    else:
        print("worst activation error: n/a (no activation estimate compared)")
    failed = sum(1 for r in rows if r["problems"])
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
