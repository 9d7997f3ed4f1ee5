#!/usr/bin/env python3
"""PyTorch peer of bench_spec_attention_cuda: the same SpecA forward (fp32, projections included)
on the same inputs (the file the bench writes), timed two ways on the GPU with CUDA events:
torch.nn.functional.scaled_dot_product_attention and the eager softmax(s Q K^T) V path.
Prints one line "peer sdpa_ms X eager_ms Y" (medians); exit 69 without torch or a CUDA device."""
import argparse
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("peer: PyTorch not installed", file=sys.stderr)
        return 69
    if not torch.cuda.is_available():
        print("peer: no CUDA device for PyTorch", file=sys.stderr)
        return 69
    raw = open(a.inputs, "rb").read()
    N, D, d, H = np.frombuffer(raw, dtype=np.int64, count=4)
    s = float(np.frombuffer(raw, dtype=np.float64, count=1, offset=32)[0])
    X = np.frombuffer(raw, dtype=np.float32, count=N * D, offset=40).reshape(N, D)
    W = np.frombuffer(raw, dtype=np.float32, count=D * 3 * H * d, offset=40 + 4 * N * D)
    W = W.reshape(D, 3 * H * d)
    dev = torch.device("cuda")
    x = torch.from_numpy(X.copy()).to(dev)
    w = torch.from_numpy(W.copy()).to(dev)

    def heads(p):  # N x (3 H d) -> three tensors H x N x d
        q, k, v = p.split(H * d, dim=1)
        return [t.reshape(N, H, d).transpose(0, 1) for t in (q, k, v)]

    def sdpa():
        q, k, v = heads(x @ w)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=s)

    def eager():
        q, k, v = heads(x @ w)
        return torch.softmax(s * (q @ k.transpose(1, 2)), dim=-1) @ v

    def median_ms(f):
        for _ in range(3):
            f()
        times = []
        for _ in range(a.runs):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            f()
            e1.record()
            torch.cuda.synchronize()
            times.append(e0.elapsed_time(e1))
        return float(np.median(times))

    with torch.no_grad():
        print(f"peer sdpa_ms {median_ms(sdpa):.4f} eager_ms {median_ms(eager):.4f} "
              f"(torch {torch.__version__}, {torch.cuda.get_device_name(0)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
