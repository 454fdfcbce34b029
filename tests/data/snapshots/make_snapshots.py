#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the memory snapshots the tests read, in exactly the dict format that
torch.cuda.memory._dump_snapshot() pickles (torch/cuda/memory.py `_snapshot`: segments with
blocks, device_traces with alloc / free_requested / free_completed / segment_alloc ...), for
one small training step whose numbers can be computed by hand, plus hostile pickles the
reader must refuse. No GPU and no torch needed: python3 make_snapshots.py [OUT_DIR].

The files are committed; the tests never run this script. Regenerate after a change and
commit the output (the output is deterministic).

The step (MiB, allocated after each event):
  setup   W1 4, W2 2 (module.to)                        6
  input   x 1 (train.py, no module frame)               7
  forward h 3 (saved), tmp 0.5 (freed in forward),
          logits 2 (saved)                              12
  backward dlogits 2, W2.grad 2 (AccumulateGrad), free logits, dh 3,
          W1.grad 4, free dh, free h, free dlogits      13 (peak 21 at W1.grad)
  optimizer (step 1) exp_avg + exp_avg_sq: 4+4+2+2 (_init_group)   25
          foreach temporaries 6 (_multi_tensor_adam)    31  <- peak of step 1
          free them                                     25
  zero_grad frees W1.grad, W2.grad; free x              18
Step 2 (the `step2_*` files: recording starts after step 1, so weights and Adam states are
alive before the trace, without stacks) has no _init_group: its peak is 33 MiB at W1.grad
in backward (18 before the trace + x 1 + h 3 + dlogits 2 + W2.grad 2 + dh 3 + W1.grad 4).
"""
import os
import pickle
import struct
import sys

MiB = 1024 * 1024
TORCH = "/usr/lib/python3/dist-packages/torch"


def frame(filename, line, name):
    return {"filename": filename, "line": line, "name": name}


# Stacks, innermost frame first (as PyTorch records them). One list object per stack: the
# pickle memo shares it between the entries, as in a real snapshot.
SETUP = [frame(f"{TORCH}/nn/modules/module.py", 1160, "convert"), frame(f"{TORCH}/nn/modules/module.py", 810, "_apply"),
         frame(f"{TORCH}/nn/modules/module.py", 1174, "to"), frame("/work/train.py", 20, "main")]
INPUT = [frame("/work/train.py", 25, "main")]
FWD = lambda line: [frame(f"{TORCH}/nn/modules/linear.py", 114, "forward"),
                    frame(f"{TORCH}/nn/modules/module.py", 1527, "_call_impl"),
                    frame("/work/model.py", line, "forward"), frame(f"{TORCH}/nn/modules/module.py", 1527, "_call_impl"),
                    frame("/work/train.py", 27, "main")]
FWD_H, FWD_TMP, FWD_LOGITS = FWD(12), FWD(13), FWD(14)
ENGINE = [frame("??", 0, "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&)"),
          frame("??", 0, "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"),
          frame("??", 0, "start_thread")]
BWD = [frame("??", 0, "at::native::mm(at::Tensor const&, at::Tensor const&)")] + ENGINE
GRAD = [frame("??", 0, "torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor>&&)")] + ENGINE
OPT_INIT = [frame(f"{TORCH}/optim/adam.py", 99, "_init_group"), frame(f"{TORCH}/optim/adam.py", 150, "step"),
            frame(f"{TORCH}/optim/optimizer.py", 280, "wrapper"), frame("/work/train.py", 31, "main")]
OPT_TMP = [frame(f"{TORCH}/optim/adam.py", 500, "_multi_tensor_adam"), frame(f"{TORCH}/optim/adam.py", 200, "adam"),
           frame(f"{TORCH}/optim/adam.py", 160, "step"), frame(f"{TORCH}/optim/optimizer.py", 280, "wrapper"),
           frame("/work/train.py", 31, "main")]
ZERO_GRAD = [frame(f"{TORCH}/optim/optimizer.py", 420, "zero_grad"), frame("/work/train.py", 32, "main")]
FREE_X = [frame("/work/train.py", 33, "main")]

SEGMENT = 32 * MiB
BASE = 0x7F0000000000


class Recorder:
    """A bump allocator over 32 MiB segments that records PyTorch's trace entries."""

    def __init__(self, device=0, new_format=True, segments=()):
        self.device, self.new_format = device, new_format
        self.trace, self.segments, self.live = [], [], {}
        self.time_us = 1_700_000_000_000_000
        for base in segments:  # segments that exist before the trace
            self.segments.append({"address": base, "size": SEGMENT, "used": 0})

    def entry(self, action, addr, size, frames):
        self.time_us += 100
        e = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": self.time_us, "frames": frames}
        if self.new_format:
            e["compile_context"] = "N/A"
            e["user_metadata"] = ""
        return e

    def alloc(self, name, size, frames, record=True):
        seg = self.segments[-1] if self.segments else None
        if seg is None or seg["used"] + size > seg["size"]:
            base = BASE + (self.device << 36) + len(self.segments) * SEGMENT
            seg = {"address": base, "size": SEGMENT, "used": 0}
            self.segments.append(seg)
            if record:
                self.trace.append(self.entry("segment_alloc", base, SEGMENT, frames))
        addr = seg["address"] + seg["used"]
        seg["used"] += size
        self.live[name] = (addr, size, frames if record else [])
        if record:
            self.trace.append(self.entry("alloc", addr, size, frames))

    def free(self, name, frames):
        addr, size, _ = self.live.pop(name)
        self.trace.append(self.entry("free_requested", addr, size, frames))
        self.trace.append(self.entry("free_completed", addr, size, frames))

    def dump_segments(self):
        out = []
        for seg in self.segments:
            blocks, cursor = [], seg["address"]
            for addr, size, frames in sorted(v for v in self.live.values() if seg["address"] <= v[0] < seg["address"] + seg["size"]):
                if addr > cursor:
                    blocks.append({"address": cursor, "size": addr - cursor, "requested_size": 0, "state": "inactive", "frames": []})
                blocks.append({"address": addr, "size": size, "requested_size": size, "state": "active_allocated", "frames": frames})
                cursor = addr + size
            end = seg["address"] + seg["size"]
            if cursor < end:
                blocks.append({"address": cursor, "size": end - cursor, "requested_size": 0, "state": "inactive", "frames": []})
            allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
            s = {"device": self.device, "address": seg["address"], "total_size": seg["size"], "allocated_size": allocated,
                 "active_size": allocated, "requested_size": allocated, "stream": 0, "segment_type": "large",
                 "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": blocks}
            out.append(s)
        return out


def step(r, setup):
    """One training step; `setup`: weights and Adam states are created in the trace (step 1)."""
    if setup:
        r.alloc("W1", 4 * MiB, SETUP)
        r.alloc("W2", 2 * MiB, SETUP)
    r.alloc("x", 1 * MiB, INPUT)
    r.alloc("h", 3 * MiB, FWD_H)
    r.alloc("tmp", MiB // 2, FWD_TMP)
    r.free("tmp", FWD_TMP)
    r.alloc("logits", 2 * MiB, FWD_LOGITS)
    r.alloc("dlogits", 2 * MiB, BWD)
    r.alloc("W2.grad", 2 * MiB, GRAD)
    r.free("logits", BWD)
    r.alloc("dh", 3 * MiB, BWD)
    r.alloc("W1.grad", 4 * MiB, GRAD)
    r.free("dh", BWD)
    r.free("h", BWD)
    r.free("dlogits", BWD)
    if setup:
        for name, size in (("W1.exp_avg", 4), ("W1.exp_avg_sq", 4), ("W2.exp_avg", 2), ("W2.exp_avg_sq", 2)):
            r.alloc(name, size * MiB, OPT_INIT)
    r.alloc("foreach", 6 * MiB, OPT_TMP)
    r.free("foreach", OPT_TMP)
    r.free("W1.grad", ZERO_GRAD)
    r.free("W2.grad", ZERO_GRAD)
    r.free("x", FREE_X)


def settings():
    return {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False", "max_split_size": -1,
            "garbage_collection_threshold": 0.0, "expandable_segments": False,
            "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
            "pinned_use_cuda_host_register": False, "roundup_power2_divisions": {"1": 0, "2": 0}}


def step1(new_format):
    r = Recorder(new_format=new_format)
    step(r, setup=True)
    s = {"segments": r.dump_segments(), "device_traces": [r.trace]}
    if new_format:
        s["allocator_settings"] = settings()
        s["external_annotations"] = []
    return s


def step2(drop_first=0):
    """Recording starts after step 1: weights and states are alive, without stacks."""
    r = Recorder()
    for name, size in (("W1", 4), ("W2", 2), ("W1.exp_avg", 4), ("W1.exp_avg_sq", 4), ("W2.exp_avg", 2), ("W2.exp_avg_sq", 2)):
        r.alloc(name, size * MiB, SETUP, record=False)
    step(r, setup=False)
    trace = r.trace[drop_first:]
    r1 = Recorder(device=1)  # a second GPU: one 1 MiB buffer in its own 32 MiB segment
    r1.alloc("buf", 1 * MiB, INPUT)
    return {"segments": r.dump_segments() + r1.dump_segments(), "device_traces": [trace, r1.trace],
            "allocator_settings": settings(), "external_annotations": []}


def write(out, name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


class Evil:
    def __reduce__(self):
        return (os.system, ("echo this would run",))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    # Snapshots as _dump_snapshot writes them (pickle.dump: protocol 4 by default in Python
    # 3.8-3.13, 5 from 3.14); protocol 2 with the older format (no compile_context).
    write(out, "step1_protocol2.pickle", pickle.dumps(step1(False), protocol=2))
    write(out, "step1_protocol4.pickle", pickle.dumps(step1(True), protocol=4))
    write(out, "step2_protocol5.pickle", pickle.dumps(step2(), protocol=5))
    write(out, "step2_protocol0.pickle", pickle.dumps(step2(), protocol=0))
    # The history ring buffer passed max_entries: the first 4 entries (x, h, tmp allocated
    # and tmp's free_requested) are gone, so the trace begins by freeing tmp.
    write(out, "step2_wrapped.pickle", pickle.dumps(step2(drop_first=4), protocol=4))
    # Recorded with _record_memory_history(enabled="state"): segments only, empty traces.
    s = step1(True)
    s["device_traces"] = [[]]
    write(out, "segments_only.pickle", pickle.dumps(s, protocol=4))

    hostile = os.path.join(out, "hostile")
    os.makedirs(hostile, exist_ok=True)
    # Would run os.system when unpickled by Python: GLOBAL + REDUCE, and STACK_GLOBAL.
    write(hostile, "global_reduce.pickle", pickle.dumps({"segments": Evil()}, protocol=2))
    write(hostile, "stack_global.pickle", pickle.dumps({"segments": Evil()}, protocol=4))
    write(hostile, "global_protocol0.pickle", pickle.dumps({"segments": Evil()}, protocol=0))
    # One refused opcode each, after a harmless prefix (offsets in the tests).
    write(hostile, "build.pickle", b"\x80\x02}}b.")
    write(hostile, "inst.pickle", b"(ios\nsystem\n.")
    write(hostile, "obj.pickle", b"\x80\x02(]o.")
    write(hostile, "newobj.pickle", b"\x80\x02])\x81.")
    write(hostile, "newobj_ex.pickle", b"\x80\x04])}\x92.")
    write(hostile, "ext1.pickle", b"\x80\x02\x82\x01.")
    write(hostile, "ext2.pickle", b"\x80\x02\x83\x01\x00.")
    write(hostile, "ext4.pickle", b"\x80\x02\x84\x01\x00\x00\x00.")
    write(hostile, "persid.pickle", b"P1\n.")
    write(hostile, "binpersid.pickle", b"\x80\x02K\x01Q.")
    write(hostile, "next_buffer.pickle", b"\x80\x05\x97.")
    write(hostile, "readonly_buffer.pickle", b"\x80\x05]\x98.")
    # Bombs: lists nested 5,000 deep; 5,000 open MARKs; 2^41 values through the memo.
    write(hostile, "deep_lists.pickle", b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b".")
    write(hostile, "deep_marks.pickle", b"\x80\x02" + b"(" * 5000 + b"N.")
    x = ["a"]
    for _ in range(40):
        x = [x, x]
    write(hostile, "memo_bomb.pickle", pickle.dumps(x, protocol=2))
    cyclic = []
    cyclic.append(cyclic)
    write(hostile, "cycle.pickle", pickle.dumps(cyclic, protocol=2))
    # A real snapshot cut in the middle; forged lengths.
    whole = pickle.dumps(step1(True), protocol=4)
    write(hostile, "truncated.pickle", whole[: len(whole) // 2])
    whole = pickle.dumps(step1(False), protocol=2)
    write(hostile, "truncated_protocol2.pickle", whole[:1000])
    write(hostile, "huge_binunicode.pickle", b"\x80\x02X\xff\xff\xff\xffabc.")
    write(hostile, "huge_binunicode8.pickle", b"\x80\x04\x8d" + struct.pack("<Q", 1 << 62) + b"abc.")
    write(hostile, "huge_frame.pickle", b"\x80\x04\x95" + struct.pack("<Q", 1 << 40) + b"N.")
    write(hostile, "huge_long4.pickle", b"\x80\x02\x8b" + struct.pack("<i", 1 << 30) + b"\x01.")
    write(hostile, "wide_long1.pickle", pickle.dumps(1 << 64, protocol=2))
    write(hostile, "not_a_pickle.pickle", b"PK\x03\x04 this is a zip file\n")
    write(hostile, "empty.pickle", b"")
    # Well-formed pickles of the wrong shape.
    bad = step1(True)
    bad["device_traces"][0][3]["size"] = "abc"
    write(hostile, "size_is_a_string.pickle", pickle.dumps(bad, protocol=4))
    bad = step1(True)
    bad["segments"] = {"not": "a list"}
    write(hostile, "segments_not_a_list.pickle", pickle.dumps(bad, protocol=4))
    bad = step1(True)
    bad["device_traces"][0][5]["size"] = -5
    write(hostile, "negative_size.pickle", pickle.dumps(bad, protocol=4))
    write(hostile, "not_a_snapshot.pickle", pickle.dumps({"weights": [1, 2, 3]}, protocol=4))


if __name__ == "__main__":
    main()
