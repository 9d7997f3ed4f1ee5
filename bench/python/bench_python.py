"""The Python package's three targets (issue 30), measured side by side in one process, ratios
printed:

  overhead  κ(J) of a MiniLM head through attnspec.spectrum against the CLI's engine time for
            the same head (`attnspec jacobian --dataset ... --svd extremal`, its spectrum's
            `seconds` + `gram_seconds`, wall clock: building J Jᵀ and the solve): target ratio
            ≤ 1.05; also the Python call's wall against that time inside it (what the binding
            adds).
  peer      κ(J) at (N, D, d) = (128, 384, 32) against torch.func.jacrev + torch.linalg.svdvals
            in float64 on the same head, same process: target speed-up ≥ 10; the peer's bare
            σ_max, σ_min are shown beside attnspec's enclosures.
  analyze   attnspec.analyze on a PyTorch MiniLM (bench/python/minilm_torch.py: 6 layers x 12
            heads x 8 sentences) against the CLI's run of the same checks on the embedded
            dataset (`verify thm3.4-model model-infsa model-weights-kappa --dataset minilm-l6
            --thorough`): wall time and peak memory of each, target time ratio ≤ 1.1; the
            captured hidden states against the dataset's.

Run with the package's venv (PyTorch for peer and analyze: ATTNSPEC_PY_TORCH=1 bash
scripts/python-env.sh --no-test):
  build/python/venv/bin/python bench/python/bench_python.py [overhead|peer|analyze ...]
        [--cli build/cli/attnspec] [--repeat R] [--threads T]
Medians of R runs (default 5; the peer and analyze once each unless --repeat is given).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import attnspec

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def median_wall(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def overhead(cli, repeat):
    sel = (0, 3, 7)  # layer 0, head 3, the longest sentence (58 tokens): J is 1856 x 36864
    head = attnspec.datasets.load("minilm-l6").head(*sel)
    walls, inner = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sp = attnspec.spectrum(head, svd="extremal")
        walls.append(time.perf_counter() - t0)
        inner.append(sp.seconds + sp.gram_seconds)
    py = statistics.median(walls)
    # The same head from the caller's C-ordered numpy arrays, read in place (no copy): the
    # library sees strided views of X and the weights.
    viewed = attnspec.Head(np.ascontiguousarray(head.X), np.ascontiguousarray(head.W_Q),
                           np.ascontiguousarray(head.W_K), np.ascontiguousarray(head.W_V),
                           head.b_Q, head.b_K, head.b_V, head.s)
    vwalls = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sv = attnspec.spectrum(viewed, svd="extremal")
        vwalls.append(time.perf_counter() - t0)
    engine, walls = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.run([cli, "jacobian", "--dataset", "minilm-l6:%d:%d:%d" % sel, "--svd",
                            "extremal", "--no-report", "--json"], capture_output=True, text=True,
                           check=True)
        walls.append(time.perf_counter() - t0)
        doc = json.loads(p.stdout)["spectrum"][0]
        engine.append(doc["seconds"] + doc["gram_seconds"])
    cli_doc = json.loads(p.stdout)["spectrum"][0]
    same = cli_doc["kappa_strict"]["value"] == sp.kappa.value
    print("overhead: MiniLM L%d H%d S%d, J %d x %d, svd=extremal, %d runs" % (
        sel + (cli_doc["rows"], cli_doc["cols"], repeat)))
    print("  python attnspec.spectrum wall   median %.3f s (first call %.3f s; engine seconds "
          "inside it median %.3f s)" % (py, walls[0], statistics.median(inner)))
    print("  binding overhead: python wall / its own engine time = %.3f"
          % (py / statistics.median(inner)))
    print("  CLI engine seconds (G + solve)  median %.3f s (CLI process wall %.3f s)"
          % (statistics.median(engine), statistics.median(walls)))
    print("  kappa equal to the bit: %s (%.17g)" % (same, sp.kappa.value))
    print("  ratio python / CLI engine = %.3f (target <= 1.05)"
          % (py / statistics.median(engine)))
    print("  the head from C-order numpy arrays (no copy, strided views): median %.3f s, "
          "ratio to the CLI engine %.3f; kappa %.17g (equal to the CLI's to the bit: %s)"
          % (statistics.median(vwalls), statistics.median(vwalls) / statistics.median(engine),
             sv.kappa.value, cli_doc["kappa_strict"]["value"] == sv.kappa.value))


def peer(repeat, threads):
    import torch
    torch.set_num_threads(threads)
    N, D, d = 128, 384, 32
    rng = np.random.default_rng(30)
    X = rng.standard_normal((N, D))
    W = [rng.standard_normal((D, d)) / np.sqrt(D) for _ in range(3)]
    s = 1 / np.sqrt(d)
    head = attnspec.Head(X, *W, s=s)
    t_ours, sp = median_wall(lambda: attnspec.spectrum(head), repeat)

    Xt = torch.from_numpy(X)

    def attention(w):  # w = [vec W_Q, vec W_K, vec W_V], column-major as attnspec's J
        wq, wk, wv = (w[i * D * d:(i + 1) * D * d].reshape(d, D).T for i in range(3))
        p = torch.softmax(s * (Xt @ wq) @ (Xt @ wk).T, dim=1)
        return (p @ (Xt @ wv)).T.reshape(-1)  # vec A, column-major

    w0 = torch.from_numpy(np.concatenate([Wi.T.reshape(-1) for Wi in W]))

    def run_peer():
        J = torch.func.jacrev(attention)(w0)
        return torch.linalg.svdvals(J)

    t_peer, sv = median_wall(run_peer, repeat)
    smax, smin = float(sv[0]), float(sv[-1])
    print("peer: (N, D, d) = (%d, %d, %d), J %d x %d, float64, torch %s, %d threads, %d run(s)"
          % (N, D, d, N * d, 3 * D * d, torch.__version__, threads, repeat))
    print("  attnspec.spectrum (svd=auto)       %.2f s  kappa %.12g in [%.12g, %.12g] (%s)"
          % (t_ours, sp.kappa.value, sp.kappa.lo, sp.kappa.hi, sp.method))
    print("  jacrev + svdvals                   %.2f s  kappa %.12g (no enclosure)"
          % (t_peer, smax / smin))
    print("  sigma_max peer %.15g  attnspec [%.15g, %.15g]" % (smax, sp.sigma_max.lo,
                                                               sp.sigma_max.hi))
    print("  sigma_min peer %.15g  attnspec [%.15g, %.15g]" % (smin, sp.sigma_min.lo,
                                                               sp.sigma_min.hi))
    print("  speed-up peer / attnspec = %.1f (target >= 10)" % (t_peer / t_ours))


def analyze(cli, threads):
    sys.path.insert(0, HERE)
    import minilm_torch
    model, ids, _ = minilm_torch.load()
    blocks = attnspec.models.find_attention(model)
    hidden = attnspec.models.capture(model, ids, blocks)
    ds = attnspec.datasets.load("minilm-l6")
    worst = 0.0
    for li in range(ds.layers):
        for si in range(len(ds.sentences)):
            X = ds.head(li, 0, si).X
            worst = max(worst, float(np.max(np.abs(hidden[li][si] - X)) / np.max(np.abs(X))))
    print("analyze: MiniLM in PyTorch (%d blocks x %d heads), %d sentences; captured hidden "
          "states vs the embedded float32 ones: max |diff| / max |X| = %.2e"
          % (len(blocks), blocks[0].heads, len(ids), worst))
    t0 = time.perf_counter()
    a = attnspec.analyze(model, ids, threads=threads, progress=False, name="minilm-torch")
    t_py = time.perf_counter() - t0
    rss_py = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cli.h5")
        t0 = time.perf_counter()
        # /usr/bin/time's %M (KiB): RUSAGE_CHILDREN would report at least this process's own
        # peak, which a forked child starts from
        p = subprocess.run(["/usr/bin/time", "-f", "%M", cli, "verify",
                            *attnspec.models.ANALYSIS_CHECKS, "--dataset", "minilm-l6",
                            "--thorough", "--threads", str(threads), "--quiet", "--out", out],
                           check=True, capture_output=True, text=True)
        t_cli = time.perf_counter() - t0
        rss_cli = int(p.stderr.strip().splitlines()[-1]) / 1024
        ref = attnspec.reports.read(out)
    rows = a.rows
    counts = {v: int(np.sum(np.asarray(rows["verdict"]) == v))
              for v in ("holds", "violated", "inconclusive", "not_applicable")}
    cli_counts = {c.name: dict(c.counts) for c in ref.checks}.get("thm3.4-model")
    print("  rows %d; thm3.4-model verdicts: analyze %s, CLI %s" % (len(rows["layer"]), counts,
                                                                      cli_counts))
    print("  attnspec.analyze  %.1f s (capture included), peak RSS %.0f MiB (PyTorch included)"
          % (t_py, rss_py))
    print("  CLI verify        %.1f s, peak RSS %.0f MiB" % (t_cli, rss_cli))
    print("  ratio analyze / CLI = %.3f (target <= 1.1)" % (t_py / t_cli))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("parts", nargs="*", help="any of [overhead, peer, analyze] (default: all)")
    ap.add_argument("--cli", default=os.path.join(REPO, "build", "cli", "attnspec"))
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    args.parts = args.parts or ["overhead", "peer", "analyze"]
    for part in args.parts:
        if part not in ("overhead", "peer", "analyze"):
            ap.error("unknown part %r" % part)
    print("attnspec %s, BLAS %s (%s)" % (attnspec.__version__, attnspec.blas_info()["core"],
                                         attnspec.blas_info()["library"].split(" ")[1]))
    for part in args.parts:
        if part == "overhead":
            overhead(args.cli, args.repeat or 5)
        elif part == "peer":
            peer(args.repeat or 1, args.threads)
        else:
            analyze(args.cli, args.threads)


if __name__ == "__main__":
    main()
