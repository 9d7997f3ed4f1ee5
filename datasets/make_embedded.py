#!/usr/bin/env python3
"""Regenerate datasets/embedded/attention_heads.h5 (small attention heads for the default run).

Deterministic: numpy PCG64 with the seeds below; run with /usr/bin/python3 (Debian's numpy + h5py):
    /usr/bin/python3 datasets/make_embedded.py datasets/embedded/attention_heads.h5
Layout: the attention input schema (reports/SCHEMA.md, "Attention input files") with named heads
and one X per head: /heads/<name>/{X, W_Q, W_K, W_V} row-major, attrs s (logit scale), seed,
family, description. The heads group does not track creation order (readers list it by name);
keep it so, or the order of the embedded regimes in `attnspec verify` changes.
"""
import sys

import h5py
import numpy as np


def layernorm(x):
    x = x - x.mean(axis=1, keepdims=True)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True))


def geometric_weights(rng, D, d, kappa):
    r = min(D, d)
    U, _ = np.linalg.qr(rng.standard_normal((D, r)))
    V, _ = np.linalg.qr(rng.standard_normal((d, r)))
    s = kappa ** (-np.arange(r) / max(r - 1, 1))
    return U @ np.diag(s) @ V.T


def heads():
    out = []
    rng = np.random.Generator(np.random.PCG64(101))
    N, D, d = 16, 32, 8
    out.append(("iid-gauss-16x32x8", 101, "gaussian", "i.i.d. N(0,1) tokens, N(0,1/D) weights, N < D",
                rng.standard_normal((N, D)), *(rng.standard_normal((D, d)) / np.sqrt(D) for _ in range(3))))
    rng = np.random.Generator(np.random.PCG64(102))
    N, D, d = 24, 16, 4
    out.append(("layernorm-24x16x4", 102, "layernorm", "layer-normed tokens, N > D",
                layernorm(rng.standard_normal((N, D))),
                *(rng.standard_normal((D, d)) / np.sqrt(D) for _ in range(3))))
    rng = np.random.Generator(np.random.PCG64(103))
    N, D, d = 12, 12, 4
    mu = rng.standard_normal(D)
    mu /= np.linalg.norm(mu)
    X = 2.0 * mu + 0.5 * rng.standard_normal((N, D))  # tokens sharing a mean direction
    out.append(("shared-mean-12x12x4", 103, "shared-mean:mu=2", "tokens with a shared mean direction (as trained features)",
                X, *(rng.standard_normal((D, d)) / np.sqrt(D) for _ in range(3))))
    rng = np.random.Generator(np.random.PCG64(104))
    N, D, d = 10, 6, 3
    out.append(("ill-conditioned-w-10x6x3", 104, "spectrum:geometric,kappa=1e4",
                "Gaussian tokens, weights with kappa = 1e4, N > D",
                rng.standard_normal((N, D)), *(geometric_weights(rng, D, d, 1e4) for _ in range(3))))
    return out


def main(path):
    with h5py.File(path, "w", track_order=True) as f:
        f.attrs["schema_version"] = "1.0"
        f.attrs["kind"] = "attnspec-input"
        f.attrs["generator"] = "datasets/make_embedded.py"
        g = f.create_group("heads")
        for name, seed, family, desc, X, WQ, WK, WV in heads():
            h = g.create_group(name)
            for k, v in (("X", X), ("W_Q", WQ), ("W_K", WK), ("W_V", WV)):
                h.create_dataset(k, data=np.ascontiguousarray(v, dtype=np.float64), track_times=False)
            h.attrs["s"] = 1.0
            h.attrs["seed"] = str(seed)
            h.attrs["family"] = family
            h.attrs["description"] = desc


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "datasets/embedded/attention_heads.h5")
