#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Measures what PEFT's own DoRA layer keeps for backward and compares it with vramlab-cli.

Needs a PEFT checkout at 77daa8d3b7de (v0.18.0; `--peft DIR`, the directory that holds
`src/peft/tuners/lora/dora.py`, or VRAMLAB_PEFT_SRC); only that file is loaded, its two
imports from peft.utils stubbed as they behave for a 16-bit nn.Linear base
(dequantize_module_weight returns the parameter, gather_params_ctx does nothing, transpose
as PEFT's). The adapted linear around it is PEFT's lora Linear.forward and
DoraLinearVariant.forward (tuners/lora/layer.py, variants.py@77daa8d3), restated below line by
line. One adapted projection of a bf16 model, q (64 -> 64) or v (64 -> 32: 2 KV heads), rank 8,
input 2 x 16 tokens that
needs its gradient, as the hidden states of a LoRA run do; bf16 without autocast and
mixed-bf16 under CPU autocast, dropout 0 and 0.05. PyTorch 1.13 on a CPU keeps dropout's mask
in the input's type (a GPU keeps bool): it is counted at 1 B an element, as VRAM Lab does;
its wrapped Python scalars (float64) are left out. What counts is what the graph still holds
when the layer's forward has returned (the weight norm's own graph is gone by then).
Exit 0: equal to the byte; 1: different; 77: no PEFT source given.
"""
import argparse, contextlib, gc, importlib.util, json, os, subprocess, sys, tempfile, types, weakref

HIDDEN, HEADS, KV_HEADS, RANK, BATCH, SEQ = 64, 4, 2, 8, 2, 16
OUT = {"q": HIDDEN, "v": HIDDEN // HEADS * KV_HEADS}


def load_dora(peft: str):
    import torch
    # The two peft.utils imports dora.py makes, as they behave for an nn.Linear base (integrations.py,
    # other.py@77daa8d3): the weight is the parameter itself; no ZeRO-3 gathering.
    utils = types.ModuleType("peft.utils")
    integ = types.ModuleType("peft.utils.integrations")
    integ.dequantize_module_weight = lambda module: module.weight
    integ.gather_params_ctx = lambda *a, **k: contextlib.nullcontext()
    other = types.ModuleType("peft.utils.other")
    other.transpose = lambda weight, fan_in_fan_out: weight.T if fan_in_fan_out else weight
    for name, mod in (("peft", types.ModuleType("peft")), ("peft.utils", utils),
                      ("peft.utils.integrations", integ), ("peft.utils.other", other)):
        sys.modules[name] = mod
    path = os.path.join(peft, "src", "peft", "tuners", "lora", "dora.py")
    spec = importlib.util.spec_from_file_location("peft_dora", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.DoraLinearLayer


def measure(peft: str, target: str, autocast: bool, dropout: float) -> int:
    import torch
    torch.manual_seed(0)
    DoraLinearLayer = load_dora(peft)
    out_features = OUT[target]
    base = torch.nn.Linear(HIDDEN, out_features, bias=False).to(torch.bfloat16).requires_grad_(False)
    # PEFT's adapters are fp32 (cast_adapter_dtype, autocast_adapter_dtype=True); B non-zero as after training.
    lora_A = torch.nn.Linear(HIDDEN, RANK, bias=False)
    lora_B = torch.nn.Linear(RANK, out_features, bias=False)
    scaling = 16 / RANK
    dora = DoraLinearLayer(fan_in_fan_out=False)
    dora.update_layer(base_layer=base, lora_A=lora_A.weight, lora_B=lora_B.weight, scaling=scaling)
    drop = torch.nn.Dropout(dropout) if dropout > 0 else torch.nn.Identity()
    owned = {p.data_ptr() for p in (base.weight, lora_A.weight, lora_B.weight, dora.weight)}

    def forward(x):
        # tuners/lora/layer.py@77daa8d3 Linear.forward, one adapter with the DoRA variant.
        result = base(x)
        torch_result_dtype = result.dtype
        x = x.to(lora_A.weight.dtype)  # _cast_input_dtype
        # tuners/lora/variants.py@77daa8d3 DoraLinearVariant.forward (training).
        if isinstance(drop, torch.nn.Identity):
            base_result = result
        else:
            x = drop(x)
            base_result = None
        result = result + dora(x, lora_A=lora_A, lora_B=lora_B, scaling=scaling, base_layer=base,
                               base_result=base_result)
        return result.to(torch_result_dtype)

    x = torch.randn(BATCH, SEQ, HIDDEN, dtype=torch.bfloat16, requires_grad=True)
    kept = {}

    def pack(t):
        st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        ptr = st.data_ptr()
        if ptr in owned or ptr == x.data_ptr():
            return t
        if t.dtype == torch.float64 and t.dim() == 0:  # a wrapped Python scalar (scaling): a CPU artefact
            return t
        if ptr not in kept:
            nbytes = st.nbytes() if hasattr(st, "nbytes") else st.size() * t.element_size()
            # Dropout's mask: in the input's type on a CPU with PyTorch 1.13, bool (1 B) on a GPU.
            if dropout > 0 and t.grad_fn is None and t.shape == (BATCH, SEQ, HIDDEN) and t.is_floating_point():
                values = torch.unique(t.float())
                scale = torch.tensor(1.0 / (1 - dropout), dtype=torch.float32)
                if bool(((values == 0) | torch.isclose(values, scale)).all()):
                    nbytes = t.numel()
            kept[ptr] = (nbytes, [])
        # The same storage may be saved through several views (a weight's .t() per use): alive while any is.
        kept[ptr][1].append(weakref.ref(t))
        return t

    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), ctx:
        out = forward(x)
    gc.collect()
    # What the graph still holds once the layer's forward returned: the norm's own graph (x_eye, lora_A's output
    # on it) went with lora_weight, a local of DoraLinearLayer.forward.
    alive = sum(nbytes for nbytes, refs in kept.values() if any(ref() is not None for ref in refs))
    out.float().sum().backward()  # the graph is whole: backward runs
    return alive


def estimate(cli: str, target: str, autocast: bool, dropout: float) -> int:
    doc = {"format": "vramlab.scenario", "version": 1, "name": "dora-linear",
           "model": {"vocab_size": 512, "hidden_size": HIDDEN, "num_layers": 1, "num_heads": HEADS,
                     "num_kv_heads": KV_HEADS,
                     "ffn_hidden_size": 128, "mlp": "swiglu", "norm": "rmsnorm", "position": "rope"},
           "run": {"framework": "hf-transformers", "sequence_length": SEQ, "micro_batch_size": BATCH,
                   "precision": "mixed-bf16" if autocast else "bf16", "attention": "flash",
                   "finetune": {"method": "lora", "rank": RANK, "alpha": 16, "dropout": dropout, "targets": [target],
                                "dora": True}}}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    out = subprocess.run([cli, "estimate", f.name, "--json"], capture_output=True, text=True, check=True).stdout
    os.unlink(f.name)
    tensors = json.loads(out)["activation_tensors"]
    return sum(t["bytes_each"] for t in tensors
               if t["name"].startswith(f"LoRA {target}:") and "scalar" not in t["name"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--peft", default=os.environ.get("VRAMLAB_PEFT_SRC"))
    args = ap.parse_args()
    if not args.peft:
        print("no PEFT source (--peft or VRAMLAB_PEFT_SRC): skipped")
        return 77
    bad = 0
    for target in ("q", "v"):
        for autocast in (False, True):
            for dropout in (0.0, 0.05):
                got = estimate(args.cli, target, autocast, dropout)
                want = measure(args.peft, target, autocast, dropout)
                print(f"{target} {'mixed-bf16 (autocast)' if autocast else 'bf16'} dropout {dropout}: measured "
                      f"{want} B, estimated {got} B, {'equal' if got == want else 'DIFFERENT'}")
                bad += got != want
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
