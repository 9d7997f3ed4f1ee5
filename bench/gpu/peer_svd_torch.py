#!/usr/bin/env python3
"""PyTorch peer of bench_svd_cusolver: torch.linalg.svdvals on the CUDA device, float64.

Usage: peer_svd_torch.py FILE BATCH ROWS COLS REPS
FILE holds BATCH column-major ROWS x COLS float64 matrices back to back (what the C++ side wrote).
Prints the median seconds of REPS timed calls (after one warm-up), the input already on the
device, synchronised around each call; prints "nan" when torch or a CUDA device is missing.
"""
import statistics
import sys
import time


def main():
    path, batch, rows, cols, reps = sys.argv[1], *map(int, sys.argv[2:6])
    try:
        import numpy as np
        import torch
    except ImportError:
        print("nan")
        return 0
    if not torch.cuda.is_available():
        print("nan")
        return 0
    a = np.fromfile(path, dtype=np.float64).reshape(batch, cols, rows).transpose(0, 2, 1)
    x = torch.from_numpy(np.ascontiguousarray(a)).cuda()
    if batch == 1:
        x = x[0]
    torch.linalg.svdvals(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.linalg.svdvals(x)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    print(statistics.median(times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
