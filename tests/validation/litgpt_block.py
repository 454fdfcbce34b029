#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Measures what lit-gpt's own LoRA model keeps for backward and compares it with vramlab-cli.

Needs a lit-gpt checkout at 8641822b3249bb94f068c254aa5d13decbc9f0a0 (`--litgpt DIR`, the
directory that holds `lit_gpt/`); nothing of it is copied here. Lightning is stubbed (only
the model code runs), flash_attn_func is stood in for by a function that keeps what it keeps
(q, k, v, out and an fp32 log-sum-exp), and the measurement runs on the CPU. Three things
PyTorch 1.13 on a CPU keeps that PyTorch 2 on a GPU does not are subtracted, each named:
mean()'s input in RMSNorm, the dropout mask in the input dtype instead of bool, and the
float64 wrapped scalars (CPU tensors on a GPU run). The model's RoPE tables are buffers
in lit-gpt; VRAM Lab lists them with the activations, so they are added back.
Exit 0: equal to the byte; 1: different; 77: no lit-gpt source given.
"""
import argparse, json, math, os, subprocess, sys, tempfile

STUBS = {
    "lightning_utilities/__init__.py": "",
    "lightning_utilities/core/__init__.py": "",
    "lightning_utilities/core/imports.py": "class RequirementCache:\n    def __init__(self, *a, **k): pass\n    def __bool__(self): return False\n",
    "lightning/__init__.py": "class Fabric: pass\n",
    "lightning/fabric/__init__.py": "",
    "lightning/fabric/strategies/__init__.py": "class FSDPStrategy: pass\n",
    "lightning/fabric/utilities/__init__.py": "",
    "lightning/fabric/utilities/load.py": "def _lazy_load(*a, **k): pass\n",
    "torch_utils_device_stub.py": "",
}


# Block kinds: Llama-style (RMSNorm, SwiGLU, sequential) and the two GPT-NeoX-style parallel
# blocks of the published cases (Phi-1.5: one shared LayerNorm; StableLM-Alpha: two).
KINDS = {
    "llama": ({"_norm_class": "RMSNorm", "_mlp_class": "LLaMAMLP", "intermediate_size": 176, "bias": False,
               "rotary_percentage": 1.0, "parallel_residual": False},
              {"mlp": "swiglu", "norm": "rmsnorm", "ffn_hidden_size": 176, "bias": False}),
    "phi": ({"_norm_class": "LayerNorm", "_mlp_class": "GptNeoxMLP", "intermediate_size": 256, "bias": True,
             "rotary_percentage": 0.5, "parallel_residual": True, "shared_attention_norm": True},
            {"mlp": "gelu", "norm": "layernorm", "ffn_hidden_size": 256, "bias": True,
             "parallel_residual": True, "shared_attention_norm": True}),
    "neox": ({"_norm_class": "LayerNorm", "_mlp_class": "GptNeoxMLP", "intermediate_size": 256, "bias": True,
              "rotary_percentage": 0.25, "parallel_residual": True, "shared_attention_norm": False},
             {"mlp": "gelu", "norm": "layernorm", "ffn_hidden_size": 256, "bias": True, "parallel_residual": True}),
}


def measure(litgpt: str, kind: str, batch: int, seq: int, chunk: int) -> int:
    import torch
    stubs = tempfile.mkdtemp()
    for path, text in STUBS.items():
        os.makedirs(os.path.dirname(os.path.join(stubs, path)) or stubs, exist_ok=True)
        with open(os.path.join(stubs, path), "w") as f:
            f.write(text)
    # lit_gpt/__init__.py insists on lightning 2.1 and utils.py imports torch.utils._device
    # (PyTorch 2): load the modules from copies with those two lines neutralized.
    pkg = os.path.join(stubs, "lit_gpt")
    os.makedirs(pkg)
    for name in ("config.py", "model.py", "lora.py", "utils.py", "rmsnorm.py"):
        with open(os.path.join(litgpt, "lit_gpt", name)) as f:
            text = f.read().replace("import torch.utils._device", "pass")
        with open(os.path.join(pkg, name), "w") as f:
            f.write(text)
    open(os.path.join(pkg, "__init__.py"), "w").close()
    sys.path[:0] = [stubs]
    import lit_gpt.model as M
    from lit_gpt.lora import GPT, Config, mark_only_lora_as_trainable
    from lit_gpt.utils import chunked_cross_entropy

    class Flash(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v):
            s = (q @ k.transpose(-1, -2)).float() / math.sqrt(q.shape[-1])
            s = s.masked_fill(torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).triu(1), float("-inf"))
            lse = torch.logsumexp(s, -1)
            out = torch.softmax(s, -1).to(q.dtype) @ v
            ctx.save_for_backward(q, k, v, out, lse)
            return out

        @staticmethod
        def backward(ctx, g):
            q, k, v, _, _ = ctx.saved_tensors
            return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)

    # flash_attn_func takes (B, T, nh, hs) and returns that layout; the model reshapes it.
    M.CausalSelfAttention.scaled_dot_product_attention = lambda self, q, k, v, mask=None: Flash.apply(q, k, v).transpose(1, 2)

    cfg = Config(n_layer=2, n_head=4, n_embd=64, block_size=seq, vocab_size=512, padded_vocab_size=512,
                 n_query_groups=4, r=8, alpha=16, dropout=0.05, to_query=True, to_value=True, **KINDS[kind][0])
    torch.manual_seed(0)
    model = GPT(cfg).to(torch.bfloat16)
    mark_only_lora_as_trainable(model)
    model.max_seq_length = seq
    ids = torch.randint(0, 512, (batch, seq))
    owned = {p.data_ptr() for p in model.parameters()} | {b.data_ptr() for b in model.buffers()}
    kept, artefacts = {}, 0

    def pack(t):
        nonlocal artefacts
        st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        if st.data_ptr() in owned or st.data_ptr() in kept:
            return t
        kept[st.data_ptr()] = st.nbytes()
        name = t.grad_fn.__class__.__name__ if t.grad_fn is not None else ""
        if name == "MulBackward0" and t.dim() == 3 and t.shape[-1] == cfg.n_embd:  # x * x kept by 1.13's mean
            artefacts += st.nbytes()
        elif t.dtype == torch.float64 and t.dim() == 0:                             # wrapped scalar
            artefacts += st.nbytes()
        elif t.grad_fn is None and t.dtype == torch.bfloat16 and t.dim() == 2 and t.shape[-1] == cfg.n_embd:
            artefacts += st.nbytes() // 2                                           # dropout mask: 2 B, not 1
        elif t.grad_fn is None and t.dtype == torch.bfloat16 and t.dim() == 3 and t.shape[-1] == 1:
            artefacts -= st.nbytes()                                                # LayerNorm mean/rstd: fp32 on a GPU
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        logits = model(ids, lm_head_chunk_size=chunk)
        logits[-1] = logits[-1][..., :-1, :]
        chunked_cross_entropy(logits, ids[..., 1:], chunk_size=chunk)
    rope_tables = 2 * seq * (cfg.n_embd // cfg.n_head) * 2
    return sum(kept.values()) - artefacts + rope_tables


def estimate(cli: str, kind: str, batch: int, seq: int, chunk: int) -> int:
    doc = {"format": "vramlab.scenario", "version": 1, "name": "litgpt-block",
           "model": {"vocab_size": 512, "hidden_size": 64, "num_layers": 2, "num_heads": 4, "position": "rope",
                     "tied_embeddings": False, **KINDS[kind][1]},
           "run": {"framework": "litgpt", "sequence_length": seq, "micro_batch_size": batch, "precision": "bf16",
                   "attention": "flash", "loss": "chunked", "loss_chunks_tokens": chunk,
                   "finetune": {"method": "lora", "rank": 8, "alpha": 16, "dropout": 0.05, "targets": ["q", "v"]}}}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    out = subprocess.run([cli, "estimate", f.name, "--json"], capture_output=True, text=True, check=True).stdout
    os.unlink(f.name)
    return json.loads(out)["per_gpu_bytes"]["activations"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--litgpt", default=os.environ.get("VRAMLAB_LITGPT_SRC"))
    args = ap.parse_args()
    if not args.litgpt:
        print("no lit-gpt source (--litgpt or VRAMLAB_LITGPT_SRC): skipped")
        return 77
    bad = 0
    for kind, batch, seq, chunk in (("llama", 1, 40, 16), ("llama", 2, 40, 16), ("llama", 1, 33, 8),
                                    ("phi", 1, 40, 16), ("phi", 2, 40, 16), ("neox", 2, 40, 16)):
        got, want = estimate(args.cli, kind, batch, seq, chunk), measure(args.litgpt, kind, batch, seq, chunk)
        print(f"{kind} batch {batch} seq {seq} chunk {chunk}: measured {want} B, estimated {got} B, "
              f"{'equal' if got == want else 'DIFFERENT'}")
        bad += got != want
        sys.path = [p for p in sys.path if not p.startswith(tempfile.gettempdir())]
        for mod in [m for m in sys.modules if m == "lit_gpt" or m.startswith("lit_gpt.") or m.startswith("lightning")]:
            del sys.modules[mod]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
