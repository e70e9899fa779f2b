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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_gpu import Gpu  # noqa: E402 - the same precision switches and event timing

TOKENS = [2048, 8192, 16384]
# (d_in, d_out) pairs: each misaligned width beside its aligned neighbour.
WIDTHS = [(768, 50257), (768, 50264), (1024, 30522), (1024, 30528), (767, 4096), (768, 4096),
          (4096, 4095), (4096, 4096), (1024, 1001), (1024, 1000), (2048, 32001), (2048, 32000)]
PRECISIONS = ["fp32", "tf32", "bf16"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="measured-out")
    ap.add_argument("--gpu", default="h200")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F

    g = Gpu()

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "alignment.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "precision", "pass", "tokens", "d_in", "d_out", "time_ms", "reps"])
        for precision in PRECISIONS:
            g.set_precision(precision)
            dtype = g.dtype(precision)
            for tokens in TOKENS:
                for d_in, d_out in WIDTHS:
                    x = torch.randn(tokens, d_in, device="cuda", dtype=dtype)
                    wt = torch.randn(d_out, d_in, device="cuda", dtype=dtype)
                    dy = torch.randn(tokens, d_out, device="cuda", dtype=dtype)
                    passes = {"fwd": lambda: F.linear(x, wt), "bwd_data": lambda: dy @ wt,
                              "bwd_weight": lambda: dy.t() @ x}
                    for name, fn in passes.items():
                        ms, reps = g.time_call(fn, target_ms=20.0, max_reps=20)
                        w.writerow([args.gpu, precision, name, tokens, d_in, d_out, "%.6g" % ms, reps])
                        f.flush()
                    del x, wt, dy
                    g.free()
                print("alignment: %s %d tokens done" % (precision, tokens), flush=True)


if __name__ == "__main__":
    main()
