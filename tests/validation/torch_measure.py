#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Measure what one eager PyTorch training step really holds, for a VRAM Lab scenario.

This is the measuring half of the validation suite: it builds the scenario's decoder in
plain eager PyTorch on the CPU, runs one training step and returns the report subset that
`vramlab-cli estimate FILE --json` must reproduce:

    params.total, params.trainable
    per_gpu_bytes.weights            bytes of the parameters (a tied matrix once)
    per_gpu_bytes.gradients          bytes of every .grad after backward
    per_gpu_bytes.optimizer_states   bytes of the optimizer's tensor state after one step
    per_gpu_bytes.activations        bytes of the tensors autograd saved for backward
                                     during the forward pass (each storage once,
                                     parameters left out)

The `eager` profile is defined by /work/shared/reference/torch_reference.py: for every
configuration that script reads, this module keeps exactly the same tensors for backward
(run_validation.py checks it byte for byte). Because of that, the modeling code below
follows the reference operation by operation, including choices that look arbitrary:
they decide which tensors autograd keeps, for instance

  * RMSNorm squares an fp32 copy and *sums* (1.13's mean would keep its input while
    PyTorch 2's does not), then multiplies by a Python float, which keeps a 0-dim scalar;
  * attention scores are divided by a Python float, softmax runs in fp32 and is cast back;
  * dropout keeps a 1-byte bool mask, as CUDA's fused kernel does (the CPU kernel of
    PyTorch 1.13 would keep a mask in the activation dtype).

Beyond the reference it reads: `mlp: geglu`, `qkv_bias`, checkpointing `selective` and
`{"every": k}`, optimizers `sgd` and `sgd-momentum`, and `model.moe`.

Usage: torch_measure.py SCENARIO.json     (prints the report subset as JSON)
Needs Debian's python3-torch (1.13); run it with /usr/bin/python3.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import sys
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as torch_checkpoint

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
OPTIMIZERS = ("adamw", "adam", "sgd", "sgd-momentum")


class ScenarioError(ValueError):
    """A scenario this module cannot measure; the message names the key path."""


# --------------------------------------------------------------------------------------
# Reading the scenario
# --------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class MoeConfig:
    num_experts: int
    top_k: int
    shared_experts: int
    expert_width: int
    first_dense_layers: int


@dataclasses.dataclass(frozen=True)
class Config:
    """The flat view of a scenario that the model code needs."""
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    mlp: str               # swiglu | geglu | gelu
    norm: str              # rmsnorm | layernorm
    position: str          # rope | learned
    max_positions: int
    bias: bool             # every attention and MLP linear
    qkv_bias: bool         # q, k, v projections only
    tied: bool
    dropout: float
    seq: int
    batch: int
    dtype: torch.dtype
    optimizer: str
    checkpoint: str        # none | full | selective | every
    checkpoint_every: int  # blocks per checkpointed segment (full = 1)
    moe: Optional[MoeConfig]
    # run.loss as the plain framework computes it (core/src/activation_model.cpp lossTensors):
    # upcast | native | chunked; chunks of loss_chunk_positions positions, upcast per chunk or not.
    loss: str = "upcast"
    loss_chunk_positions: int = 0
    loss_chunk_upcast: bool = True


def _get(obj: dict, key: str, path: str, kind, default=None, required=False):
    """Reads obj[key], checking its JSON type, so errors can name the key path."""
    if key not in obj:
        if required:
            raise ScenarioError(f"{path}.{key}: required")
        return default
    value = obj[key]
    # bool is an int in Python; an integer key must not accept true/false.
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ScenarioError(f"{path}.{key}: expected an integer, got {value!r}")
    if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ScenarioError(f"{path}.{key}: expected a number, got {value!r}")
    if kind is bool and not isinstance(value, bool):
        raise ScenarioError(f"{path}.{key}: expected true or false, got {value!r}")
    if kind is str and not isinstance(value, str):
        raise ScenarioError(f"{path}.{key}: expected a string, got {value!r}")
    return value


def _choice(obj: dict, key: str, path: str, allowed, default):
    value = _get(obj, key, path, str, default)
    if value not in allowed:
        raise ScenarioError(f"{path}.{key}: expected one of {', '.join(allowed)}, got {value!r}")
    return value


def _positive(value: int, where: str) -> int:
    if value < 1:
        raise ScenarioError(f"{where}: must be at least 1, got {value}")
    return value


def _read_checkpointing(run: dict) -> tuple[str, int]:
    value = run.get("checkpointing", "none")
    if isinstance(value, dict):
        every = _positive(_get(value, "every", "run.checkpointing", int, required=True),
                          "run.checkpointing.every")
        return "every", every
    if value == "full":
        return "full", 1
    if value in ("none", "selective"):
        return value, 0
    raise ScenarioError('run.checkpointing: expected none, full, selective or {"every": k}, '
                        f"got {value!r}")


def _read_moe(model: dict, ffn: int, layers: int) -> Optional[MoeConfig]:
    moe = model.get("moe")
    if moe is None:
        return None
    if not isinstance(moe, dict):
        raise ScenarioError("model.moe: expected an object")
    experts = _get(moe, "num_experts", "model.moe", int, 0)
    if experts == 0:
        return None  # num_experts 0 is how a dense model is written
    top_k = _positive(_get(moe, "top_k", "model.moe", int, required=True), "model.moe.top_k")
    if top_k > experts:
        raise ScenarioError(f"model.moe.top_k: {top_k} is more than num_experts {experts}")
    dense = _get(moe, "first_dense_layers", "model.moe", int, 0)
    if not 0 <= dense <= layers:
        raise ScenarioError(f"model.moe.first_dense_layers: must be within 0..{layers}")
    if _get(moe, "layer_interval", "model.moe", int, 1) != 1:
        raise ScenarioError("model.moe.layer_interval: the reference builds experts in every layer after "
                            "first_dense_layers; an interleaved placement is not built (expected 1)")
    shared = _get(moe, "shared_experts", "model.moe", int, 0)
    if shared < 0:
        raise ScenarioError(f"model.moe.shared_experts: must not be negative, got {shared}")
    width = _positive(_get(moe, "expert_ffn_hidden_size", "model.moe", int, ffn),
                      "model.moe.expert_ffn_hidden_size")
    return MoeConfig(num_experts=experts, top_k=top_k, shared_experts=shared,
                     expert_width=width, first_dense_layers=dense)


def read_scenario(doc: dict) -> Config:
    """Maps a version-1 scenario onto Config, with the spec's (and reference's) defaults."""
    if doc.get("format", "vramlab.scenario") != "vramlab.scenario" or doc.get("version", 1) != 1:
        raise ScenarioError("format/version: expected a vramlab.scenario of version 1")
    model, run = doc.get("model"), doc.get("run")
    if not isinstance(model, dict) or not isinstance(run, dict):
        raise ScenarioError("model, run: both objects are required")

    # Only a single-device, full-parameter training step is measured here.
    _choice(run, "mode", "run", ("training",), "training")
    _choice(run, "attention", "run", ("eager",), "eager")
    finetune, par = run.get("finetune", {}), run.get("parallelism", {})
    if not isinstance(finetune, dict) or not isinstance(par, dict):
        raise ScenarioError("run.finetune, run.parallelism: expected objects")
    if finetune.get("method", "full") != "full":
        raise ScenarioError("run.finetune.method: only full fine-tuning is measured")
    for key in ("gpus", "tensor_parallel", "pipeline_parallel"):
        if par.get(key, 1) != 1:
            raise ScenarioError(f"run.parallelism.{key}: only 1 is measured (one device)")
    for key in ("offload_optimizer", "offload_params"):
        if par.get(key, False):
            raise ScenarioError(f"run.parallelism.{key}: offloading is not measured")

    def size(key, default=None):
        value = _get(model, key, "model", int, default, required=default is None)
        return _positive(value, f"model.{key}")

    vocab, hidden, layers = size("vocab_size"), size("hidden_size"), size("num_layers")
    heads, ffn = size("num_heads"), size("ffn_hidden_size")
    kv_heads = size("num_kv_heads", heads)
    if heads % kv_heads:
        raise ScenarioError(f"model.num_kv_heads: {kv_heads} does not divide num_heads {heads}")
    # The reference floors hidden/heads; do the same so both read any file alike.
    head_dim = size("head_dim", max(hidden // heads, 1))
    position = _choice(model, "position", "model", ("rope", "learned"), "rope")
    if position == "rope" and head_dim % 2:
        raise ScenarioError(f"model.head_dim: RoPE needs an even head_dim, got {head_dim}")

    seq = _positive(_get(run, "sequence_length", "run", int, required=True), "run.sequence_length")
    max_positions = _get(model, "max_position_embeddings", "model", int, seq)
    if position == "learned" and max_positions < seq:
        raise ScenarioError(f"model.max_position_embeddings: {max_positions} is shorter "
                            f"than run.sequence_length {seq}")
    checkpoint, every = _read_checkpointing(run)
    if _get(run, "framework", "run", str, "plain") != "plain":
        raise ScenarioError("run.framework: only the plain loop is measured here")
    loss = _choice(run, "loss", "run", ("upcast", "native", "chunked"), "upcast")
    chunk_positions, chunk_upcast = 0, True
    if loss == "chunked":
        chunks = _get(run, "loss_chunks", "run", int, 0)
        tokens = _get(run, "loss_chunks_tokens", "run", int, 0)
        # torchtune h.chunk(n, dim=1): ceil(s / n) positions; LitGPT x.split(k, dim=1): k positions.
        chunk_positions = min(tokens, seq) if tokens else -(-seq // (chunks or 8))
        chunk_upcast = _choice(run, "loss_dtype", "run", ("fp32", "bf16", "fp16"), "fp32") == "fp32"
    dropout = float(_get(model, "dropout", "model", float, 0.0))
    if not 0.0 <= dropout < 1.0:
        raise ScenarioError(f"model.dropout: expected 0 <= p < 1, got {dropout}")

    return Config(
        vocab=vocab, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads,
        head_dim=head_dim, ffn=ffn,
        mlp=_choice(model, "mlp", "model", ("swiglu", "geglu", "gelu"), "swiglu"),
        norm=_choice(model, "norm", "model", ("rmsnorm", "layernorm"), "rmsnorm"),
        position=position,
        max_positions=max_positions,
        bias=_get(model, "bias", "model", bool, False),
        qkv_bias=_get(model, "qkv_bias", "model", bool, False),
        tied=_get(model, "tied_embeddings", "model", bool, False),
        dropout=dropout, seq=seq,
        batch=_positive(_get(run, "micro_batch_size", "run", int, 1), "run.micro_batch_size"),
        # The reference's default precision is pure bf16; keep it for files without one.
        dtype=DTYPES[_choice(run, "precision", "run", tuple(DTYPES), "bf16")],
        optimizer=_choice(run, "optimizer", "run", OPTIMIZERS, "adamw"),
        checkpoint=checkpoint, checkpoint_every=every,
        moe=_read_moe(model, ffn, layers),
        loss=loss, loss_chunk_positions=chunk_positions, loss_chunk_upcast=chunk_upcast)


# --------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------

class _BoolMaskDropout(torch.autograd.Function):
    """Dropout that keeps a bool mask for backward, which is what a GPU run keeps.

    Written as a Function so that its forward is invisible to autograd: only the mask
    is saved, not the intermediate products."""

    @staticmethod
    def forward(ctx, x, p):
        keep = torch.rand(x.shape, device=x.device) >= p
        ctx.save_for_backward(keep)
        ctx.scale = 1.0 / (1.0 - p)
        return x * keep.to(x.dtype) * ctx.scale

    @staticmethod
    def backward(ctx, grad):
        (keep,) = ctx.saved_tensors
        return grad * keep.to(grad.dtype) * ctx.scale, None


def maybe_dropout(x: torch.Tensor, p: float) -> torch.Tensor:
    # p == 0 must add no node at all: the estimate's "no dropout" keeps nothing extra.
    return _BoolMaskDropout.apply(x, p) if p > 0 else x


class RMSNorm(nn.Module):
    """Llama's RMSNorm: statistics in fp32, result cast back before the weight."""

    def __init__(self, size: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        io_dtype = x.dtype
        x32 = x.to(torch.float32)
        mean_square = x32.pow(2).sum(-1, keepdim=True) * (1.0 / x32.shape[-1])
        normalized = x32 * torch.rsqrt(mean_square + self.eps)
        return self.weight * normalized.to(io_dtype)


def make_norm(cfg: Config) -> nn.Module:
    return RMSNorm(cfg.hidden) if cfg.norm == "rmsnorm" else nn.LayerNorm(cfg.hidden)


def rope_tables(seq: int, head_dim: int, dtype: torch.dtype, device) -> tuple:
    """cos and sin of every (position, frequency), made once per forward.

    All layers share these two tensors, so they are counted once however many layers
    multiply by them; they never require grad."""
    inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, dtype=torch.float32,
                                             device=device) / head_dim))
    angles = torch.outer(torch.arange(seq, device=device).float(), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


def attention_core(q, k, v, dropout_p: float):
    """Softmax attention from post-RoPE q and head-repeated k, v to probs @ v.

    This is exactly the part that `selective` checkpointing recomputes in backward."""
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(head_dim)
    causal = torch.full((seq, seq), float("-inf"), device=q.device).triu(1).to(scores.dtype)
    probs = F.softmax((scores + causal).float(), dim=-1).to(q.dtype)
    probs = maybe_dropout(probs, dropout_p)
    return probs @ v


class SelfAttention(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        qkv_bias = cfg.bias or cfg.qkv_bias
        q_width, kv_width = cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden, q_width, bias=qkv_bias)
        self.k_proj = nn.Linear(cfg.hidden, kv_width, bias=qkv_bias)
        self.v_proj = nn.Linear(cfg.hidden, kv_width, bias=qkv_bias)
        self.o_proj = nn.Linear(q_width, cfg.hidden, bias=cfg.bias)

    def _heads(self, projected, count):
        batch, seq, _ = projected.shape
        return projected.view(batch, seq, count, self.cfg.head_dim).transpose(1, 2)

    def project(self, x, rope):
        """q, k, v split into heads, RoPE applied (shared with gpu_training_steps' SDPA)."""
        cfg = self.cfg
        q = self._heads(self.q_proj(x), cfg.heads)
        k = self._heads(self.k_proj(x), cfg.kv_heads)
        v = self._heads(self.v_proj(x), cfg.kv_heads)
        if rope is not None:
            q, k = apply_rope(q, *rope), apply_rope(k, *rope)
        return q, k, v

    def forward(self, x, rope):
        cfg = self.cfg
        batch, seq, _ = x.shape
        q, k, v = self.project(x, rope)
        if cfg.kv_heads != cfg.heads:
            # GQA/MQA as common eager code does it: materialize K/V for every query head.
            group = cfg.heads // cfg.kv_heads
            k = k.repeat_interleave(group, dim=1)
            v = v.repeat_interleave(group, dim=1)
        if cfg.checkpoint == "selective":
            # Reentrant checkpoint keeps only its tensor inputs q, k, v.
            out = torch_checkpoint.checkpoint(attention_core, q, k, v, cfg.dropout,
                                              use_reentrant=True)
        else:
            out = attention_core(q, k, v, cfg.dropout)
        out = out.transpose(1, 2).reshape(batch, seq, cfg.heads * cfg.head_dim)
        return maybe_dropout(self.o_proj(out), cfg.dropout)


class FeedForward(nn.Module):
    """One MLP: swiglu/geglu (gate, up, down) or gelu (up, down)."""

    def __init__(self, hidden: int, width: int, kind: str, bias: bool, dropout: float):
        super().__init__()
        self.kind, self.dropout = kind, dropout
        if kind != "gelu":
            self.gate = nn.Linear(hidden, width, bias=bias)
        self.up = nn.Linear(hidden, width, bias=bias)
        self.down = nn.Linear(width, hidden, bias=bias)

    def forward(self, x):
        if self.kind == "swiglu":
            y = self.down(F.silu(self.gate(x)) * self.up(x))
        elif self.kind == "geglu":
            y = self.down(F.gelu(self.gate(x), approximate="tanh") * self.up(x))
        else:
            y = self.down(F.gelu(self.up(x), approximate="tanh"))
        return maybe_dropout(y, self.dropout)


class MoeFeedForward(nn.Module):
    """Routed SwiGLU experts plus always-on shared experts.

    Only the parameter, gradient and optimizer numbers of MoE models are validated (the
    saved activations depend on routing), so this favors simplicity: every expert runs
    on every token and is weighted by its (mostly zero) routing weight. That way every
    expert receives a .grad and optimizer state after a single step, as all of them do
    in a real run after a few steps, whatever the tiny batch happens to route."""

    def __init__(self, cfg: Config):
        super().__init__()
        moe = cfg.moe
        self.top_k, self.dropout = moe.top_k, cfg.dropout
        self.router = nn.Linear(cfg.hidden, moe.num_experts, bias=False)
        expert = functools.partial(FeedForward, cfg.hidden, moe.expert_width, "swiglu",
                                   cfg.bias, 0.0)
        self.experts = nn.ModuleList(expert() for _ in range(moe.num_experts))
        self.shared = nn.ModuleList(expert() for _ in range(moe.shared_experts))

    def forward(self, x):
        route = F.softmax(self.router(x).float(), dim=-1)
        top_w, top_idx = route.topk(self.top_k, dim=-1)
        top_w = top_w / top_w.sum(-1, keepdim=True)
        weights = torch.zeros_like(route).scatter(-1, top_idx, top_w).to(x.dtype)
        y = torch.zeros_like(x)
        for shared in self.shared:
            y = y + shared(x)
        for e, expert in enumerate(self.experts):
            y = y + expert(x) * weights[..., e:e + 1]
        return maybe_dropout(y, self.dropout)


class DecoderBlock(nn.Module):
    def __init__(self, cfg: Config, index: int):
        super().__init__()
        self.attn_norm, self.mlp_norm = make_norm(cfg), make_norm(cfg)
        self.attn = SelfAttention(cfg)
        if cfg.moe is not None and index >= cfg.moe.first_dense_layers:
            self.mlp = MoeFeedForward(cfg)
        else:
            self.mlp = FeedForward(cfg.hidden, cfg.ffn, cfg.mlp, cfg.bias, cfg.dropout)

    def forward(self, x, rope=None):
        x = x + self.attn(self.attn_norm(x), rope)
        return x + self.mlp(self.mlp_norm(x))


def _run_blocks(blocks, x, rope):
    for block in blocks:
        x = block(x, rope)
    return x


class DecoderLM(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
        self.pos_embed = (nn.Embedding(cfg.max_positions, cfg.hidden)
                          if cfg.position == "learned" else None)
        self.blocks = nn.ModuleList(DecoderBlock(cfg, i) for i in range(cfg.layers))
        self.final_norm = make_norm(cfg)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)
        if cfg.tied:
            self.lm_head.weight = self.embed.weight

    def forward(self, ids):
        cfg = self.cfg
        x = self.embed(ids)
        if self.pos_embed is not None:
            x = x + self.pos_embed(torch.arange(ids.shape[1], device=ids.device))
        x = maybe_dropout(x, cfg.dropout)
        rope = (rope_tables(ids.shape[1], cfg.head_dim, x.dtype, ids.device)
                if cfg.position == "rope" else None)

        if cfg.checkpoint in ("full", "every"):
            # The tables travel inside a tuple, so the reentrant checkpoint does not count
            # them among its tensor inputs: each segment keeps only its input x.
            step = cfg.checkpoint_every
            for start in range(0, len(self.blocks), step):
                segment = self.blocks[start:start + step]
                # A lone block is passed itself, exactly as the reference does for `full`.
                fn = segment[0] if len(segment) == 1 else functools.partial(_run_blocks, segment)
                x = torch_checkpoint.checkpoint(fn, x, rope, use_reentrant=True)
        else:
            x = _run_blocks(self.blocks, x, rope)

        h = self.final_norm(x)
        if cfg.loss == "upcast":
            logits = self.lm_head(h).float()
            return F.cross_entropy(logits.view(-1, logits.shape[-1]), ids.view(-1))
        if cfg.loss == "native":
            logits = self.lm_head(h)
            return F.cross_entropy(logits.view(-1, logits.shape[-1]), ids.view(-1))
        # Chunked: every chunk's logits from the LM head, then one cross-entropy per chunk.
        # torchtune CEWithChunkedOutputLoss: each chunk upcast, reduction "sum", divided by
        # the int64 count of tokens. LitGPT chunked_cross_entropy: 16-bit chunks, reduction
        # "none", torch.cat(...).mean(); here .sum(), because PyTorch 1.13's mean keeps its
        # input (as the reference's RMSNorm notes) and PyTorch 2's does not.
        step = cfg.loss_chunk_positions
        chunks = [self.lm_head(h[:, start:start + step]) for start in range(0, ids.shape[1], step)]
        targets = [ids[:, start:start + step].reshape(-1) for start in range(0, ids.shape[1], step)]
        if cfg.loss_chunk_upcast:
            total = sum(F.cross_entropy(c.float().reshape(-1, c.shape[-1]), t, reduction="sum")
                        for c, t in zip(chunks, targets))
            return total / (ids != -100).sum()
        return torch.cat([F.cross_entropy(c.reshape(-1, c.shape[-1]), t, reduction="none")
                          for c, t in zip(chunks, targets)]).sum()


# --------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------

def _storage(t: torch.Tensor):
    # PyTorch 2 has untyped_storage(); 1.13's storage() is a TypedStorage with the same
    # data_ptr() and nbytes().
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()


class SavedTensorTally:
    """Pack hook that adds up the storages autograd saves, each storage once.

    Views (k^T, a reshaped input) share their base's storage and add nothing; a saved
    view of a parameter counts as the parameter, which is accounted as weights."""

    def __init__(self, parameters):
        self._parameter_storages = {_storage(p).data_ptr() for p in parameters}
        self._bytes_by_storage: dict[int, int] = {}
        self.first_seen: list[tuple] = []  # (shape, dtype, storage bytes), for --saved

    def pack(self, t):
        storage = _storage(t)
        key = storage.data_ptr()
        if key not in self._parameter_storages and key not in self._bytes_by_storage:
            self._bytes_by_storage[key] = storage.nbytes()
            self.first_seen.append((tuple(t.shape), str(t.dtype).replace("torch.", ""),
                                    storage.nbytes()))
        # Keeping the tensor itself also keeps its storage alive, so no address can be
        # reused by a later saved tensor during this forward.
        return t

    @staticmethod
    def unpack(t):
        return t

    @property
    def total_bytes(self) -> int:
        return sum(self._bytes_by_storage.values())


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _make_optimizer(name: str, params):
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4)
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-4)
    return torch.optim.SGD(params, lr=1e-4, momentum=0.9)


def measure_config(cfg: Config, device="cpu", saved_log=None) -> dict:
    """Runs one step; with saved_log (a file), lists each counted storage there."""
    torch.manual_seed(0)  # only MoE routing depends on values; keep it repeatable anyway
    model = DecoderLM(cfg).to(cfg.dtype).to(device)
    params = list(model.parameters())  # a tied matrix appears once
    ids = torch.randint(0, cfg.vocab, (cfg.batch, cfg.seq), device=device)

    tally = SavedTensorTally(params)
    with torch.autograd.graph.saved_tensors_hooks(tally.pack, tally.unpack):
        loss = model(ids)
    activations = tally.total_bytes
    if saved_log is not None:
        for shape, dtype, nbytes in tally.first_seen:
            print(f"saved {dtype:>8} {str(list(shape)):<22} {nbytes:>12} bytes", file=saved_log)

    loss.backward()
    gradients = sum(_nbytes(p.grad) for p in params if p.grad is not None)

    optimizer = _make_optimizer(cfg.optimizer, params)
    optimizer.step()
    # 0-dim entries (Adam's step counter) are bookkeeping, not per-parameter state.
    optimizer_states = sum(_nbytes(v) for state in optimizer.state.values()
                           for v in state.values() if torch.is_tensor(v) and v.dim() > 0)

    total = sum(p.numel() for p in params)
    return {
        "format": "vramlab.torch_measure", "version": 1,
        "params": {"total": total, "trainable": total},
        "per_gpu_bytes": {"weights": sum(_nbytes(p) for p in params),
                          "gradients": gradients,
                          "optimizer_states": optimizer_states,
                          "activations": activations},
    }


def measure(scenario: dict) -> dict:
    """Measures one training step of a scenario dict; returns the report subset."""
    return measure_config(read_scenario(scenario))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", help="scenario file (vramlab.scenario version 1)")
    parser.add_argument("--device", default="cpu", help="torch device (default cpu)")
    parser.add_argument("--saved", action="store_true",
                        help="list every counted saved storage on stderr, in forward order")
    args = parser.parse_args(argv)
    try:
        with open(args.scenario, encoding="utf-8") as f:
            doc = json.load(f)
        result = measure_config(read_scenario(doc), args.device,
                                sys.stderr if args.saved else None)
    except (OSError, json.JSONDecodeError, ScenarioError) as e:
        print(f"torch_measure: {args.scenario}: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
