#!/usr/bin/env python3
"""Times the three GEMMs of a linear layer with and without 16-byte-aligned row lengths.

A controlled experiment beside measure_gpu.py: the same layer (tokens x d_in -> d_out) is timed with
d_out and d_in at a multiple of 8 elements and one element off it (50257 vs 50264, 30522 vs 30528, 767
vs 768, ...), in FP32, TF32 and BF16, for the forward GEMM, the input-gradient GEMM and the
weight-gradient GEMM, as PyTorch runs them (F.linear and the two products its backward computes). It
measures what a misaligned vocabulary or width costs, which the random shapes of the public tables
confound with everything else. Never needed by tests or CI.

    python3 models/measure/alignment.py --out DIR [--gpu CATALOGUE_ID]

Writes DIR/alignment.csv: gpu, precision, pass, tokens, d_in, d_out, time_ms, reps.
"""

import argparse
import csv
import os
import statistics

TOKENS = [2048, 8192, 16384]
# (d_in, d_out) pairs: each misaligned width beside its aligned neighbour.
WIDTHS = [(768, 50257), (768, 50264), (1024, 30522), (1024, 30528), (767, 4096), (768, 4096),
          (4096, 4095), (4096, 4096), (1024, 1001), (1024, 1000), (2048, 32001), (2048, 32000)]
PRECISIONS = ["fp32", "tf32", "bf16"]


def set_precision(torch, precision):
    mode = "tf32" if precision == "tf32" else "ieee"
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = mode
    else:
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"


def time_call(torch, fn, target_ms=20.0, max_reps=20):
    """Median ms of fn() over back-to-back calls, each between its own CUDA events."""
    fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    torch.cuda.synchronize()
    reps = int(min(max_reps, max(3, target_ms / max(s.elapsed_time(e), 1e-3))))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in zip(starts, ends)), reps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="measured-out")
    ap.add_argument("--gpu", default="h200")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "alignment.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "precision", "pass", "tokens", "d_in", "d_out", "time_ms", "reps"])
        for precision in PRECISIONS:
            set_precision(torch, precision)
            dtype = torch.bfloat16 if precision == "bf16" else torch.float32
            for tokens in TOKENS:
                for d_in, d_out in WIDTHS:
                    x = torch.randn(tokens, d_in, device="cuda", dtype=dtype)
                    wt = torch.randn(d_out, d_in, device="cuda", dtype=dtype)
                    dy = torch.randn(tokens, d_out, device="cuda", dtype=dtype)
                    passes = {"fwd": lambda: F.linear(x, wt), "bwd_data": lambda: dy @ wt,
                              "bwd_weight": lambda: dy.t() @ x}
                    for name, fn in passes.items():
                        ms, reps = time_call(torch, fn)
                        w.writerow([args.gpu, precision, name, tokens, d_in, d_out, "%.6g" % ms, reps])
                        f.flush()
                    del x, wt, dy
                    torch.cuda.empty_cache()
                print("alignment: %s %d tokens done" % (precision, tokens), flush=True)


if __name__ == "__main__":
    main()
