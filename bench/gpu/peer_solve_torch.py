#!/usr/bin/env python3
"""PyTorch peer of bench_neumann_cusolver: C V = (I - gamma A)^{-1} (gamma A V) by
torch.linalg.solve on the CUDA device, float64.

Usage: peer_solve_torch.py FILE_A FILE_V N D GAMMA REPS
FILE_A holds A (N x N), FILE_V holds V (N x D), column-major float64 (what the C++ side wrote).
Prints the median seconds of REPS timed calls (after one warm-up) of forming the right-hand side
and the solve, inputs already on the device; "nan" when torch or a CUDA device is missing.
"""
import statistics
import sys
import time


def main():
    fa, fv = sys.argv[1], sys.argv[2]
    n, d = int(sys.argv[3]), int(sys.argv[4])
    gamma, reps = float(sys.argv[5]), int(sys.argv[6])
    try:
        import numpy as np
        import torch
    except ImportError:
        print("nan")
        return 0
    if not torch.cuda.is_available():
        print("nan")
        return 0
    a = torch.from_numpy(np.fromfile(fa, dtype=np.float64).reshape(n, n).T.copy()).cuda()
    v = torch.from_numpy(np.fromfile(fv, dtype=np.float64).reshape(d, n).T.copy()).cuda()
    eye = torch.eye(n, dtype=torch.float64, device="cuda")

    def run():
        m = eye - gamma * a
        return torch.linalg.solve(m, gamma * (a @ v))

    run()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    print(statistics.median(times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
