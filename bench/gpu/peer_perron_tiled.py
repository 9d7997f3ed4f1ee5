#!/usr/bin/env python3
"""PyTorch peer of bench/gpu/bench_perron_tiled_cuda.cpp: one matrix-free product z = A+ x with
A+ = ReLU(Q K^T / d) in float64, chunked over rows (never N x N in memory: a chunk of rows at a
time, relu(Q_rows K^T / d) x), eager, on the same shapes and the same inputs (Q, K entries in
[0.5, 1): every score positive; the timing does not depend on the values). Prints one line:
`seconds <median of the timed runs>`; exit 69 when torch or a CUDA device is missing.

usage: peer_perron_tiled.py --tokens N --dim D [--chunk C] [--reps R]
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=65536)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--chunk", type=int, default=4096)  # rows: 2 GiB of scores at N = 65536
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("peer_perron_tiled: torch not installed", file=sys.stderr)
        return 69
    if not torch.cuda.is_available():
        print("peer_perron_tiled: no CUDA device", file=sys.stderr)
        return 69
    g = torch.Generator(device="cuda").manual_seed(a.seed)
    shape = (a.tokens, a.dim)
    q = 0.5 + 0.5 * torch.rand(shape, generator=g, device="cuda", dtype=torch.float64)
    k = 0.5 + 0.5 * torch.rand(shape, generator=g, device="cuda", dtype=torch.float64)
    x = torch.ones(a.tokens, device="cuda", dtype=torch.float64)
    z = torch.empty_like(x)

    def run():
        for r0 in range(0, a.tokens, a.chunk):
            r1 = min(r0 + a.chunk, a.tokens)
            z[r0:r1] = torch.relu(q[r0:r1] @ k.T / a.dim) @ x
        return z

    run()
    torch.cuda.synchronize()
    times = []
    for _ in range(a.reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    times.sort()
    print("seconds %.9g" % times[len(times) // 2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
