"""Issue 31's attention targets, measured side by side in one process, ratios printed:

  forward  the reference + tolerance of `check-kernel attention` (attnspec.testing.
           check_attention_output: float64 reference a block of 64 rows at a time through
           BLAS on every core, rounding bound, baseline at the declared precision) at (B, H, N, d) = (1, 16, 4096, 64) against a float64
           PyTorch attention on the math path (softmax(s Q K^T) V, one head at a time as the
           math path does), same inputs: target ratio <= 3.
  vjp      check_vjp_output at the same size against PyTorch's float64 autograd of that
           attention (forward + backward): target ratio <= 4.

The kernel output checked is PyTorch's own float32 result (so the check also runs its
comparison and verdict). Run with the package's venv and PyTorch (ATTNSPEC_PY_TORCH=1 bash
scripts/python-env.sh --no-test):
  build/python/venv/bin/python bench/python/bench_check_kernel.py [forward|vjp ...]
        [--n 4096] [--heads 16] [--repeat R] [--threads T]
Medians of R runs (default 3).
"""

import argparse
import os
import resource
import statistics
import time

import numpy as np
import torch

import attnspec
from attnspec import testing


def median_wall(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def torch_attention(q, k, v, s):
    return torch.softmax(s * q @ k.transpose(-1, -2), dim=-1) @ v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("parts", nargs="*", help="any of [forward, vjp] (default: all)")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    a.parts = a.parts or ["forward", "vjp"]
    for part in a.parts:
        if part not in ("forward", "vjp"):
            ap.error("unknown part %r" % part)
    torch.set_num_threads(a.threads)
    H, N, d = a.heads, a.n, a.d
    s = 1 / np.sqrt(d)
    rng = np.random.default_rng(31)
    q, k, v, do = (rng.standard_normal((1, H, N, d)).astype(np.float32) for _ in range(4))
    tq, tk, tv = (torch.from_numpy(x.astype(np.float64)) for x in (q, k, v))
    print("attnspec %s, torch %s, %d threads, (B, H, N, d) = (1, %d, %d, %d), %d runs"
          % (attnspec.__version__, torch.__version__, a.threads, H, N, d, a.repeat))
    if "forward" in a.parts:
        out = torch_attention(*(torch.from_numpy(x) for x in (q, k, v)), s).numpy()
        t_peer, _ = median_wall(
            lambda: [torch_attention(tq[0, h], tk[0, h], tv[0, h], s) for h in range(H)],
            a.repeat)
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t_ours, chk = median_wall(lambda: testing.check_attention_output(out, q, k, v),
                                  a.repeat)
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print("forward: PyTorch float64 math path %.2f s; attnspec reference + tolerance "
              "%.2f s (verdict %s); ratio %.2f (target <= 3); peak RSS grew %.0f MiB "
              "(inputs %.0f MiB; an N x N per head would be %.0f MiB)"
              % (t_peer, t_ours, chk.verdict, t_ours / t_peer, (rss1 - rss0) / 1024,
                 4 * q.nbytes / 2**20, N * N * 8 / 2**20))
    if "vjp" in a.parts:
        tdo = torch.from_numpy(do.astype(np.float64))

        def peer():
            x = [t.clone().requires_grad_(True) for t in (tq, tk, tv)]
            for h in range(H):
                o = torch_attention(x[0][0, h], x[1][0, h], x[2][0, h], s)
                o.backward(tdo[0, h])
            return [t.grad for t in x]

        t_peer, grads = median_wall(peer, a.repeat)
        dq, dk, dv = (g.numpy().astype(np.float32) for g in grads)
        t_ours, chk = median_wall(lambda: testing.check_vjp_output(dq, dk, dv, q, k, v, do),
                                  a.repeat)
        print("vjp: PyTorch float64 autograd (forward + backward) %.2f s; attnspec reference + "
              "tolerance %.2f s (verdict %s); ratio %.2f (target <= 4)"
              % (t_peer, t_ours, chk.verdict, t_ours / t_peer))


if __name__ == "__main__":
    main()
