#!/usr/bin/env python3
"""PyTorch peer of bench/gpu/bench_linear_infsa_cuda.cpp: Linear-InfSA (docs/MATH.md §3) written
the way the public code writes it, eager, on the same shapes and the same input distribution
(uniform [-0.25, 1), seeded; the timing does not depend on the values). Prints one line:
`seconds <median of the timed runs>`; exit 69 when torch or a CUDA device is missing.

usage: peer_linear_infsa.py --tokens N --heads H --dim D [--dtype float32|bfloat16] [--reps R]
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=331776)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("peer_linear_infsa: torch not installed", file=sys.stderr)
        return 69
    if not torch.cuda.is_available():
        print("peer_linear_infsa: no CUDA device", file=sys.stderr)
        return 69
    dt = getattr(torch, a.dtype)
    g = torch.Generator(device="cuda").manual_seed(a.seed)
    shape = (a.heads, a.tokens, a.dim)

    def draw():
        return (torch.rand(shape, generator=g, device="cuda") * 1.25 - 0.25).to(dt)

    q, k, v = draw(), draw(), draw()
    gamma, eps = 0.95, 1e-6

    def run():
        qt = q.float() / a.dim ** 0.5
        kt = k.float() / a.dim ** 0.5
        e = qt.norm(dim=-1, keepdim=True)
        w = e / (e.sum(dim=1, keepdim=True) + eps)
        qbar = (w * qt).sum(dim=1, keepdim=True)
        s = torch.relu((kt * qbar).sum(dim=-1, keepdim=True))
        att = s / (s.sum(dim=1, keepdim=True) + eps)
        return gamma * (att * v.float()).sum(dim=1)

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
