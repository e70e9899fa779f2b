#!/usr/bin/env python3
"""Times kernels, layers, attention and whole training steps on the local NVIDIA GPU with PyTorch.

The way the public data in models/data was measured (NeuSight: single PyTorch ops timed with CUDA
events; DeepBench: cuBLAS / cuDNN kernels; Justus et al.: one layer's forward or training step), on
shapes drawn from those same tables, so the rows join them under one schema. Never needed by tests or
CI; run it where a GPU is lent (models/measure/README.md).

    python3 models/measure/measure_gpu.py --out DIR [--budget SECONDS] [--gpu CATALOGUE_ID]
    python3 models/measure/measure_gpu.py --list          # shape counts only, no GPU or torch needed

Writes DIR/{gemm,conv,stream,layers,attention,e2e,kernels}.csv and DIR/meta.json, one row at a
time (a run stopped early keeps what it measured). Each section has a share of the time budget;
shapes are visited in a fixed pseudo-random order, so a truncated section is still a fair sample.
"""

import argparse
import csv
import gzip
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "models", "data")
PRESETS = os.path.join(ROOT, "core", "data", "presets")
SEED = 2026

# Shapes drawn per source (before the time budget cuts a section short).
LIMITS = {"neusight-linear": 700, "neusight-bmm": 500, "deepbench-gemm": 1000, "neusight-conv": 250,
          "deepbench-conv": 1000, "elementwise": 500, "normalization": 300, "layers_dense": 250,
          "layers_conv": 200}
# Share of the budget per section, in run order (unused time carries over to the next section).
SHARES = [("meta", 0.03), ("gemm", 0.17), ("e2e", 0.24), ("attention", 0.10), ("conv", 0.18),
          ("layers", 0.16), ("stream", 0.07), ("final", 0.05)]
KERNEL_PRECISIONS = ["fp32", "tf32", "bf16"]
FIRST_RUN = 0  # --first-run: e2e.json runs before this index are skipped (measured by an earlier call)


def read_table(name):
    """Rows of models/data/<name>.csv.gz as dicts of strings."""
    with gzip.open(os.path.join(DATA, name + ".csv.gz"), "rt", newline="") as f:
        return list(csv.DictReader(f))


def sample_unique(rows, key, limit, seed_offset=0):
    """The distinct values of key(row), in a fixed pseudo-random order, at most `limit` of them."""
    seen = {}
    for r in rows:
        seen.setdefault(key(r), r)
    keys = sorted(seen)
    random.Random(SEED + seed_offset).shuffle(keys)
    return keys[:limit]


def gemm_shapes():
    rows = read_table("gemm")
    out = []
    for i, src in enumerate(["neusight-linear", "neusight-bmm", "deepbench"]):
        sel = [r for r in rows if r["source"] == src]
        key = lambda r: (int(r["batch"]), int(r["m"]), int(r["n"]), int(r["k"]), int(r["trans_a"]), int(r["trans_b"]))
        limit = LIMITS["deepbench-gemm" if src == "deepbench" else src]
        out += [(src, s) for s in sample_unique(sel, key, limit, i)]
    # Interleave sources so a cut section keeps all three.
    by = {}
    for src, s in out:
        by.setdefault(src, []).append(s)
    mixed = []
    for i in range(max(len(v) for v in by.values())):
        for src in ["neusight-linear", "neusight-bmm", "deepbench"]:
            if i < len(by[src]):
                mixed.append((src, by[src][i]))
    return mixed


def conv_shapes():
    rows = read_table("conv")
    cols = ["batch", "c_in", "c_out", "kernel_h", "kernel_w", "in_h", "in_w", "stride_h", "stride_w", "pad_h", "pad_w"]
    key = lambda r: tuple(int(r[c]) for c in cols)
    deep = sample_unique([r for r in rows if r["source"] == "deepbench"], key, LIMITS["deepbench-conv"], 3)
    neu = sample_unique([r for r in rows if r["source"] == "neusight"], key, LIMITS["neusight-conv"], 4)
    mixed = []
    for i in range(max(len(deep), len(neu))):
        if i < len(deep):
            mixed.append(("deepbench", dict(zip(cols, deep[i]))))
        if i < len(neu):
            mixed.append(("neusight", dict(zip(cols, neu[i]))))
    return mixed


def stream_shapes():
    ew = sample_unique(read_table("elementwise"), lambda r: (r["op"], int(r["elements"])), LIMITS["elementwise"], 5)
    nm = sample_unique(read_table("normalization"), lambda r: (r["op"], int(r["rows"]), int(r["cols"])),
                       LIMITS["normalization"], 6)
    return [("elementwise", s) for s in ew] + [("normalization", s) for s in nm]


def layer_shapes():
    dense = sample_unique(read_table("layers_dense"),
                          lambda r: (r["activation"], int(r["batch"]), int(r["d_in"]), int(r["d_out"])),
                          LIMITS["layers_dense"], 7)
    conv = sample_unique(read_table("layers_conv"),
                         lambda r: (r["activation"], int(r["batch"]), int(r["c_in"]), int(r["c_out"]), int(r["kernel"]),
                                    int(r["image_size"]), int(r["stride"]), r["padding"], int(r["bias"])),
                         LIMITS["layers_conv"], 8)
    mixed = []
    for i in range(max(len(dense), len(conv))):
        if i < len(dense):
            mixed.append(("dense", dense[i]))
        if i < len(conv):
            mixed.append(("conv", conv[i]))
    return mixed


def attention_shapes():
    out = []
    for seq in [512, 1024, 2048, 4096, 8192, 256]:
        for batch, heads in [(8, 16), (2, 32)]:
            for head_dim in [128, 64]:
                for causal in [1, 0]:
                    out.append((batch, heads, seq, head_dim, causal))
    return out


def e2e_runs():
    with open(os.path.join(HERE, "e2e.json")) as f:
        return json.load(f)["runs"]


class Writer:
    """One CSV under the output folder, a row at a time, flushed (a killed run keeps its rows)."""

    def __init__(self, out, name, header):
        self.f = open(os.path.join(out, name), "w", newline="")
        self.w = csv.writer(self.f, lineterminator="\n")
        self.w.writerow(header)
        self.rows = 0

    def row(self, values):
        self.w.writerow([fmt(v) for v in values])
        self.f.flush()
        self.rows += 1


def fmt(v):
    if isinstance(v, float):
        return "%.6g" % v if v == v else ""
    return "" if v is None else str(v)


# ---------------------------------------------------------------------------------------------
# Everything below needs torch and a GPU.


class Gpu:
    def __init__(self):
        import torch

        self.torch = torch
        self.dev = torch.device("cuda")

    def set_precision(self, precision):
        """fp32: strict IEEE FP32 (TF32 off for cuBLAS and cuDNN); tf32: TF32 on for both; bf16: TF32 off."""
        torch = self.torch
        mode = "tf32" if precision == "tf32" else "ieee"
        if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
            torch.backends.cuda.matmul.fp32_precision = mode
        else:
            torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        if hasattr(torch.backends.cudnn, "conv") and hasattr(torch.backends.cudnn.conv, "fp32_precision"):
            torch.backends.cudnn.conv.fp32_precision = mode
        else:
            torch.backends.cudnn.allow_tf32 = mode == "tf32"

    def dtype(self, precision):
        return self.torch.bfloat16 if precision == "bf16" else self.torch.float32

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def time_call(self, fn, target_ms=8.0, min_reps=3, max_reps=15):
        """Median time in ms of fn() on the GPU, each call between its own pair of CUDA events."""
        torch = self.torch
        fn()
        torch.cuda.synchronize()
        s, e = self.event(), self.event()
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        estimate = s.elapsed_time(e)
        reps = int(min(max_reps, max(min_reps, target_ms / max(estimate, 1e-3))))
        starts = [self.event() for _ in range(reps)]
        ends = [self.event() for _ in range(reps)]
        for i in range(reps):
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(a.elapsed_time(b) for a, b in zip(starts, ends)), reps

    def free(self):
        self.torch.cuda.empty_cache()


def nvidia_smi(query):
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=" + query, "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=20).stdout.strip()
    except Exception as exc:  # noqa: BLE001 - reported, not fatal
        return "unavailable: %s" % exc


def section_meta(g, out, gpu_id, deadline):
    torch = g.torch
    props = torch.cuda.get_device_properties(0)
    meta = {
        "gpu": gpu_id,
        "device_name": props.name,
        "multiprocessors": props.multi_processor_count,
        "memory_bytes": props.total_memory,
        "l2_cache_bytes": getattr(props, "L2_cache_size", None),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": sys.version.split()[0],
        "nvidia_smi_before": nvidia_smi("driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu"),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cudnn_benchmark": False,
    }
    for mod in ["transformers", "torchvision"]:
        try:
            meta[mod] = __import__(mod).__version__
        except Exception as exc:  # noqa: BLE001
            meta[mod] = "unavailable: %s" % exc
    # Ceilings on this machine: dense matmul per precision, device-to-device copy.
    n = 8192
    for p in KERNEL_PRECISIONS:
        g.set_precision(p)
        a = torch.randn(n, n, device=g.dev, dtype=g.dtype(p))
        b = torch.randn(n, n, device=g.dev, dtype=g.dtype(p))
        ms, _ = g.time_call(lambda: torch.mm(a, b), target_ms=200, max_reps=10)
        meta["matmul_8192_tflops_" + p] = 2 * n ** 3 / ms / 1e9
        del a, b
    x = torch.empty(2 ** 30, dtype=torch.float32, device=g.dev)
    y = torch.empty_like(x)
    ms, _ = g.time_call(lambda: y.copy_(x), target_ms=50)
    meta["copy_gbs_read_plus_write"] = 2 * x.numel() * 4 / ms / 1e6
    del x, y
    g.free()
    return meta


def section_gemm(g, out, gpu_id, deadline):
    torch = g.torch
    import torch.nn.functional as F

    w = Writer(out, "gemm.csv", ["source", "gpu", "precision", "batch", "m", "n", "k", "trans_a", "trans_b", "time_ms", "reps"])
    for src, (batch, m, n, k, ta, tb) in gemm_shapes():
        if time.time() > deadline:
            break
        for p in KERNEL_PRECISIONS:
            g.set_precision(p)
            dt = g.dtype(p)
            if src == "neusight-linear":
                x = torch.randn(m, k, device=g.dev, dtype=dt)
                wt = torch.randn(n, k, device=g.dev, dtype=dt)
                fn = lambda: F.linear(x, wt)
                name = "prenet-linear"
            elif src == "neusight-bmm":
                x = torch.randn(batch, m, k, device=g.dev, dtype=dt)
                wt = torch.randn(batch, k, n, device=g.dev, dtype=dt)
                fn = lambda: torch.bmm(x, wt)
                name = "prenet-bmm"
            else:
                x = torch.randn(k, m, device=g.dev, dtype=dt).t() if ta else torch.randn(m, k, device=g.dev, dtype=dt)
                wt = torch.randn(n, k, device=g.dev, dtype=dt).t() if tb else torch.randn(k, n, device=g.dev, dtype=dt)
                fn = lambda: torch.mm(x, wt)
                name = "prenet-gemm"
            ms, reps = g.time_call(fn)
            w.row([name, gpu_id, p, batch, m, n, k, ta, tb, ms, reps])
            del x, wt
    return w.rows


def section_conv(g, out, gpu_id, deadline):
    torch = g.torch
    import torch.nn.functional as F

    w = Writer(out, "conv.csv", ["source", "gpu", "precision", "direction", "batch", "c_in", "c_out", "kernel_h", "kernel_w",
                                 "in_h", "in_w", "stride_h", "stride_w", "pad_h", "pad_w", "time_ms", "reps"])
    aten_bwd = torch.ops.aten.convolution_backward
    for src, c in conv_shapes():
        if time.time() > deadline:
            break
        stride, pad = [c["stride_h"], c["stride_w"]], [c["pad_h"], c["pad_w"]]
        for p in KERNEL_PRECISIONS:
            g.set_precision(p)
            dt = g.dtype(p)
            x = torch.randn(c["batch"], c["c_in"], c["in_h"], c["in_w"], device=g.dev, dtype=dt)
            wt = torch.randn(c["c_out"], c["c_in"], c["kernel_h"], c["kernel_w"], device=g.dev, dtype=dt)
            y = F.conv2d(x, wt, None, stride, pad)
            gy = torch.randn_like(y)
            passes = {
                "fwd": lambda: F.conv2d(x, wt, None, stride, pad),
                "bwd_data": lambda: aten_bwd(gy, x, wt, None, stride, pad, [1, 1], False, [0, 0], 1, [True, False, False]),
                "bwd_filter": lambda: aten_bwd(gy, x, wt, None, stride, pad, [1, 1], False, [0, 0], 1, [False, True, False]),
            }
            for direction, fn in passes.items():
                ms, reps = g.time_call(fn)
                w.row(["prenet-conv", gpu_id, p, direction, c["batch"], c["c_in"], c["c_out"], c["kernel_h"], c["kernel_w"],
                       c["in_h"], c["in_w"], c["stride_h"], c["stride_w"], c["pad_h"], c["pad_w"], ms, reps])
            del x, wt, y, gy
    return w.rows


def section_stream(g, out, gpu_id, deadline):
    torch = g.torch
    import torch.nn.functional as F

    w = Writer(out, "stream.csv", ["source", "gpu", "precision", "table", "op", "elements", "rows", "cols", "time_ms", "reps"])
    unary = {"relu": F.relu, "gelu": F.gelu, "tanh": torch.tanh}
    binary = {"add": torch.add, "mul": torch.mul, "div": torch.div, "pow": torch.pow}
    for table, shape in stream_shapes():
        if time.time() > deadline:
            break
        for p in ["fp32", "bf16"]:
            dt = g.dtype(p)
            if table == "elementwise":
                op, n = shape
                a = torch.rand(n, device=g.dev, dtype=dt) + 0.5
                b = torch.rand(n, device=g.dev, dtype=dt) + 0.5
                fn = (lambda: unary[op](a)) if op in unary else (lambda: binary[op](a, b))
                ms, reps = g.time_call(fn)
                w.row(["prenet-" + op, gpu_id, p, table, op, n, "", "", ms, reps])
            else:
                op, rows, cols = shape
                a = torch.randn(rows, cols, device=g.dev, dtype=dt)
                weight = torch.ones(cols, device=g.dev, dtype=dt)
                bias = torch.zeros(cols, device=g.dev, dtype=dt)
                fn = (lambda: F.softmax(a, dim=-1)) if op == "softmax" else (lambda: F.layer_norm(a, (cols,), weight, bias))
                ms, reps = g.time_call(fn)
                w.row(["prenet-" + op, gpu_id, p, table, op, rows * cols, rows, cols, ms, reps])
                b = None
            del a, b
    return w.rows


def tf_same_pad(size, kernel, stride):
    """TensorFlow 'SAME' padding (before, after) along one axis."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def time_training(g, step_parts, reps_target_ms=30.0, min_reps=3, max_reps=12):
    """Median forward, backward, optimizer and whole-step times (ms) of a training step.

    step_parts() returns (forward, backward, optimizer) callables for one step; forward returns the
    loss. Each step's phases are split by CUDA events recorded between them."""
    torch = g.torch
    fwd, bwd, opt = step_parts

    def one(events=None):
        if events:
            events[0].record()
        loss = fwd()
        if events:
            events[1].record()
        bwd(loss)
        if events:
            events[2].record()
        opt()
        if events:
            events[3].record()

    one()
    one()
    torch.cuda.synchronize()
    ev = [g.event() for _ in range(4)]
    one(ev)
    torch.cuda.synchronize()
    reps = int(min(max_reps, max(min_reps, reps_target_ms / max(ev[0].elapsed_time(ev[3]), 1e-3))))
    all_ev = [[g.event() for _ in range(4)] for _ in range(reps)]
    for e in all_ev:
        one(e)
    torch.cuda.synchronize()
    med = lambda i, j: statistics.median(e[i].elapsed_time(e[j]) for e in all_ev)
    return med(0, 1), med(1, 2), med(2, 3), med(0, 3), reps


def section_layers(g, out, gpu_id, deadline):
    torch = g.torch
    import torch.nn.functional as F

    w = Writer(out, "layers.csv", ["source", "gpu", "precision", "layer", "activation", "batch", "d_in", "d_out", "c_in",
                                   "c_out", "kernel", "image_size", "stride", "padding", "bias", "optimizer",
                                   "forward_ms", "backward_ms", "optimizer_ms", "step_ms", "reps"])
    acts = {"none": lambda t: t, "relu": F.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid}
    for layer, shape in layer_shapes():
        if time.time() > deadline:
            break
        for p in KERNEL_PRECISIONS:
            g.set_precision(p)
            autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=p == "bf16")
            if layer == "dense":
                act, batch, d_in, d_out = shape
                mod = torch.nn.Linear(d_in, d_out).to(g.dev)
                x = torch.randn(batch, d_in, device=g.dev)
                cols = [act, batch, d_in, d_out, "", "", "", "", "", "", ""]
                call = lambda: acts[act](mod(x))
            else:
                act, batch, c_in, c_out, kernel, size, stride, padding, bias = shape
                mod = torch.nn.Conv2d(c_in, c_out, kernel, stride, bias=bool(bias)).to(g.dev)
                x = torch.randn(batch, c_in, size, size, device=g.dev, requires_grad=True)
                pads = tf_same_pad(size, kernel, stride) if padding == "same" else (0, 0)
                cols = [act, batch, "", "", c_in, c_out, kernel, size, stride, padding, bias]
                call = lambda: acts[act](mod(F.pad(x, (pads[0], pads[1], pads[0], pads[1])) if pads != (0, 0) else x))
            with torch.no_grad(), autocast:
                ms, reps = g.time_call(call)
            w.row(["prenet-layer", gpu_id, p, layer] + cols + ["none", ms, "", "", ms, reps])
            with autocast:
                target = torch.zeros_like(call().float())
            for name, make in [("sgd", lambda ps: torch.optim.SGD(ps, lr=1e-3)),
                               ("adam", lambda ps: torch.optim.Adam(ps, lr=1e-3))]:
                opt = make(mod.parameters())

                def fwd():
                    opt.zero_grad(set_to_none=True)
                    x.grad = None  # the conv layer's input gradient, fresh each step as in Justus et al.
                    with autocast:
                        return F.mse_loss(call().float(), target)

                f, b, o, s, reps = time_training(g, (fwd, lambda loss: loss.backward(), opt.step))
                w.row(["prenet-layer", gpu_id, p, layer] + cols + [name, f, b, o, s, reps])
            del mod, x, target, opt
    return w.rows


def section_attention(g, out, gpu_id, deadline):
    torch = g.torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    w = Writer(out, "attention.csv", ["source", "gpu", "precision", "impl", "direction", "batch", "heads", "seq_q", "seq_k",
                                      "head_dim", "causal", "time_ms", "reps"])
    g.set_precision("bf16")

    def eager(q, k, v, causal, mask):
        scores = torch.matmul(q, k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
        if causal:
            scores = scores.masked_fill(mask, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)

    for batch, heads, seq, d, causal in attention_shapes():
        if time.time() > deadline:
            break
        q, k, v = (torch.randn(batch, heads, seq, d, device=g.dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        go = torch.randn(batch, heads, seq, d, device=g.dev, dtype=torch.bfloat16)
        mask = torch.ones(seq, seq, device=g.dev, dtype=torch.bool).triu(1) if causal else None
        impls = {
            "flash": lambda: _with(sdpa_kernel(SDPBackend.FLASH_ATTENTION),
                                   lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))),
            "sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal)),
        }
        if batch * heads * seq * seq <= 2 ** 31:
            impls["eager"] = lambda: eager(q, k, v, causal, mask)
        for impl, fwd in impls.items():
            with torch.no_grad():
                ms, reps = g.time_call(fwd)
            w.row(["prenet-attention", gpu_id, "bf16", impl, "fwd", batch, heads, seq, seq, d, causal, ms, reps])
            times = []
            for _ in range(5):
                o = fwd()
                s, e = g.event(), g.event()
                s.record()
                torch.autograd.grad(o, (q, k, v), go)
                e.record()
                torch.cuda.synchronize()
                times.append(s.elapsed_time(e))
                del o
            w.row(["prenet-attention", gpu_id, "bf16", impl, "bwd", batch, heads, seq, seq, d, causal,
                   statistics.median(times[1:]), 4])
        del q, k, v, go, mask
        g.free()
    return w.rows


def _with(ctx, fn):
    with ctx:
        return fn()


def build_e2e_model(g, run):
    """(model, make_batch, loss_of) for one run of e2e.json."""
    torch = g.torch
    if run.get("torchvision"):
        import torchvision

        with g.dev:
            model = getattr(torchvision.models, run["torchvision"])()
        size = run["image_size"]
        x = torch.randn(run["batch"], 3, size, size, device=g.dev)
        y = torch.randint(0, 1000, (run["batch"],), device=g.dev)
        if run.get("channels_last"):
            model = model.to(memory_format=torch.channels_last)
            x = x.to(memory_format=torch.channels_last)
        return model.to(g.dev), lambda m: torch.nn.functional.cross_entropy(m(x), y)
    import transformers

    if "preset" in run:
        with open(os.path.join(PRESETS, run["preset"] + ".json")) as f:
            preset = json.load(f)
        hf = dict(preset["model"]["hf_config"])
    else:
        hf = dict(run["hf_config"])
    model_type = hf.pop("model_type")
    cfg = transformers.AutoConfig.for_model(model_type, **hf)
    impl = {"flash": "sdpa", "eager": "eager"}[run["attention"]]
    auto = {"causal_lm": transformers.AutoModelForCausalLM, "masked_lm": transformers.AutoModelForMaskedLM,
            "image_classification": transformers.AutoModelForImageClassification}[run["task"]]
    with g.dev:  # built on the GPU: a billion parameters initialised on the host take many seconds
        try:
            model = auto.from_config(cfg, attn_implementation=impl)
        except TypeError:
            cfg._attn_implementation = impl
            model = auto.from_config(cfg)
    model = model.to(g.dev)
    b = run["batch"]
    if run["task"] == "image_classification":
        size = hf.get("image_size", 224)
        x = torch.randn(b, 3, size, size, device=g.dev)
        y = torch.randint(0, hf.get("num_labels", 1000), (b,), device=g.dev)
        return model, lambda m: m(pixel_values=x, labels=y).loss
    ids = torch.randint(0, cfg.vocab_size, (b, run["seq_len"]), device=g.dev)
    return model, lambda m: m(input_ids=ids, labels=ids).loss


def section_e2e(g, out, gpu_id, deadline):
    torch = g.torch
    w = Writer(out, "e2e.csv", ["name", "gpu", "precision", "attention_impl", "batch", "seq_len", "forward_ms", "backward_ms",
                                "optimizer_ms", "step_ms", "step_ms_min", "step_ms_max", "reps", "peak_memory_gb",
                                "parameters"])
    kw = Writer(out, "kernels.csv", ["name", "kernel", "calls", "device_us_per_step"])
    for run in e2e_runs()[FIRST_RUN:]:
        if time.time() > deadline:
            break
        try:
            g.set_precision(run["precision"])
            model, loss_of = build_e2e_model(g, run)
            model.train()
            params = sum(p.numel() for p in model.parameters())
            if run["optimizer"] == "momentum":
                opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
            else:
                opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
            autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=run["precision"] == "bf16")

            def fwd():
                opt.zero_grad(set_to_none=True)
                with autocast:
                    return loss_of(model)

            parts = (fwd, lambda loss: loss.backward(), opt.step)
            torch.cuda.reset_peak_memory_stats()
            f, b, o, s, reps = time_training(g, parts, reps_target_ms=2000, min_reps=5, max_reps=10)
            # Spread of whole steps, timed back to back.
            steps = []
            for _ in range(5):
                e0, e1 = g.event(), g.event()
                e0.record()
                loss = fwd()
                loss.backward()
                opt.step()
                e1.record()
                torch.cuda.synchronize()
                steps.append(e0.elapsed_time(e1))
            peak = torch.cuda.max_memory_allocated() / 1e9
            impl = getattr(getattr(model, "config", None), "_attn_implementation", "") or ""
            w.row([run["name"], gpu_id, run["precision"], impl, run["batch"], run.get("seq_len", run.get("image_size")),
                   f, b, o, s, min(steps), max(steps), reps, peak, params])
            if run.get("profile"):
                profile_kernels(g, kw, run["name"], fwd, opt)
            print("  e2e %-28s step %8.2f ms (fwd %.2f bwd %.2f opt %.2f) peak %.1f GB" % (run["name"], s, f, b, o, peak),
                  flush=True)
        except Exception:  # noqa: BLE001 - one run's failure (out of memory, API drift) must not end the others
            print("  e2e %s failed:\n%s" % (run["name"], traceback.format_exc(limit=3)), flush=True)
        finally:
            model = opt = loss_of = loss = None
            g.free()
    return w.rows


def profile_kernels(g, kw, name, fwd, opt, steps=2):
    """Per-kernel device time per step of `steps` profiled training steps (top 150 kernels)."""
    torch = g.torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            loss = fwd()
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
    rows = []
    for evt in prof.key_averages():
        us = getattr(evt, "self_device_time_total", None)
        if us is None:
            us = getattr(evt, "self_cuda_time_total", 0)
        if us and us > 0:
            rows.append((us / steps, evt.key, evt.count // steps))
    for us, key, calls in sorted(rows, reverse=True)[:150]:
        kw.row([name, key.replace("\n", " ")[:300], calls, us])


def run_all(args):
    import torch

    if not torch.cuda.is_available():
        sys.exit("measure_gpu: no CUDA device visible to PyTorch")
    torch.backends.cudnn.benchmark = False
    g = Gpu()
    os.makedirs(args.out, exist_ok=True)
    start = time.time()
    budget = args.budget
    sections = {"gemm": section_gemm, "conv": section_conv, "stream": section_stream, "layers": section_layers,
                "attention": section_attention, "e2e": section_e2e}
    meta = {}
    elapsed_share = 0.0
    summary = {}
    chosen = [(name, share) for name, share in SHARES if name in ("meta", "final") or name in args.sections]
    total_share = sum(share for _, share in chosen)
    for name, share in chosen:
        share /= total_share
        elapsed_share += share
        deadline = start + budget * elapsed_share
        t0 = time.time()
        try:
            if name == "meta":
                meta = section_meta(g, args.out, args.gpu, deadline)
                print("meta: %s" % json.dumps(meta, default=str), flush=True)
                summary[name] = "ok"
            elif name == "final":
                meta["nvidia_smi_after"] = nvidia_smi("clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu")
            elif name in sections:
                summary[name] = sections[name](g, args.out, args.gpu, deadline)
        except Exception:  # noqa: BLE001 - report and go on with the next section
            summary[name] = "failed"
            print("section %s failed:\n%s" % (name, traceback.format_exc()), flush=True)
            g.free()
        print("section %-9s %6.1f s  %s" % (name, time.time() - t0, summary.get(name, "")), flush=True)
        meta["sections"] = summary
        meta["seconds"] = round(time.time() - start, 1)
        with open(os.path.join(args.out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True, default=str)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="measured-out")
    ap.add_argument("--budget", type=float, default=420.0, help="seconds for all sections together")
    ap.add_argument("--gpu", default="h200", help="catalogue id of the GPU (core/data/hardware.json)")
    ap.add_argument("--list", action="store_true", help="print the shape counts and exit (no torch needed)")
    ap.add_argument("--sections", default="gemm,e2e,attention,conv,layers,stream",
                    help="comma-separated sections to run (meta and final always run); the budget is shared among them")
    ap.add_argument("--first-run", type=int, default=0, help="skip the e2e.json runs before this index")
    args = ap.parse_args()
    args.sections = set(args.sections.split(","))
    global FIRST_RUN
    FIRST_RUN = args.first_run
    if args.list:
        print("gemm %d, conv %d, stream %d, layers %d, attention %d, e2e %d" % (
            len(gemm_shapes()), len(conv_shapes()), len(stream_shapes()), len(layer_shapes()), len(attention_shapes()),
            len(e2e_runs())))
        return
    run_all(args)


if __name__ == "__main__":
    main()
