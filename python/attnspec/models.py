"""The attention heads of a PyTorch model, analysed as ``attnspec verify``'s real-model analysis
analyses the embedded MiniLM (docs/python.md, "Models").

``analyze(model, inputs)`` finds the self-attention blocks, captures the hidden states entering
each block on the given inputs with forward pre-hooks, writes them with the weights as a model
input file (``attnspec import``'s schema, reports/SCHEMA.md "Model input files"), runs the checks
``thm3.4-model``, ``model-infsa`` and ``model-weights-kappa`` on every (layer, head, sentence)
through the library's run loop (the code ``attnspec verify ... --thorough`` runs), and returns one
row per (layer, head, sentence). ``analyze_arrays`` does the same from numpy arrays (no PyTorch).

Conventions (docs/MATH.md): tokens are rows; head h of a layer is output features h d ... h d + d
- 1 of PyTorch's (out, in) query/key/value weights, transposed to W (D x d), with its biases;
s = 1/sqrt(d) unless given. The theorem check thm3.4-model tests the bias-free form of SC
Thm 3.4 (our reconstruction, proofs/thm_3_4_model.md); model-infsa uses Q and K with biases.
"""

import math
import os
import sys
import tempfile
import time

import numpy as np

from . import _core, checks
from ._errors import DataError, UnavailableError, UsageError, make
from ._spectrum import spectrum
from ._table import table

#: The checks an analysis runs (``attnspec verify`` names), in report order.
ANALYSIS_CHECKS = ("thm3.4-model", "model-infsa", "model-weights-kappa")

_HEAD_COUNT_NAMES = ("num_attention_heads", "num_heads", "n_heads", "n_head")


class AttentionBlock:
    """One self-attention block of a model: ``name`` (its module path), ``module``, ``heads``
    and the ``query``, ``key``, ``value`` ``nn.Linear`` layers."""

    __slots__ = ("name", "module", "heads", "query", "key", "value")

    def __init__(self, name, module, heads, query, key, value):
        self.name, self.module, self.heads = name, module, heads
        self.query, self.key, self.value = query, key, value

    def __repr__(self):
        return "AttentionBlock(%r, heads=%d, D=%d)" % (self.name, self.heads,
                                                        self.query.in_features)


def _torch():
    try:
        import torch
    except ImportError as e:
        raise make(UnavailableError, "analyze needs PyTorch (pip install torch): %s" % e,
                   "model") from e
    return torch


def _head_count(module, model):
    for owner in (module, getattr(module, "config", None), getattr(model, "config", None)):
        if owner is None:
            continue
        for n in _HEAD_COUNT_NAMES:
            v = getattr(owner, n, None)
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                return v
    return None


def find_attention(model):
    """The self-attention blocks of ``model`` in module order: every module with ``query``,
    ``key`` and ``value`` ``nn.Linear`` layers of one input width (Hugging Face BERT's
    ``BertSelfAttention``, ViT's ``ViTSelfAttention``, and any module of that shape) and a head
    count (attribute ``num_attention_heads``, ``num_heads``, ``n_heads`` or ``n_head`` of the
    module, its ``config`` or the model's ``config``). ``DataError`` when a block has no head
    count or its widths do not split into heads; an empty list when nothing matches."""
    torch = _torch()
    blocks = []
    for name, m in model.named_modules():
        q, k, v = (getattr(m, a, None) for a in ("query", "key", "value"))
        if not all(isinstance(x, torch.nn.Linear) for x in (q, k, v)):
            continue
        if not q.in_features == k.in_features == v.in_features:
            raise make(DataError, "%s: query, key, value take %d, %d, %d features; attnspec "
                       "analyses self-attention (one X for all three)"
                       % (name, q.in_features, k.in_features, v.in_features), "model")
        heads = _head_count(m, model)
        if heads is None:
            raise make(DataError, "%s has query/key/value layers but no head count (an "
                       "attribute %s)" % (name, " or ".join(_HEAD_COUNT_NAMES)), "model")
        for lin, n in ((q, "query"), (k, "key"), (v, "value")):
            if lin.out_features % heads:
                raise make(DataError, "%s.%s has %d output features, not a multiple of %d heads"
                           % (name, n, lin.out_features, heads), "model")
        if not q.out_features == k.out_features == v.out_features:
            raise make(DataError, "%s: query, key, value give %d, %d, %d features; attnspec's "
                       "heads have one width d" % (name, q.out_features, k.out_features,
                                                   v.out_features), "model")
        blocks.append(AttentionBlock(name, m, heads, q, k, v))
    return blocks


def _float64(t):
    return t.detach().to(device="cpu").double().numpy().copy()


def _sentences_of(x, mask):
    """The rows of a captured (B, N, D) or (N, D) hidden state, one (N_b, D) array per batch
    item, padding rows (mask 0) dropped."""
    x = _float64(x)
    if x.ndim == 2:
        x = x[None]
    if x.ndim != 3:
        raise make(DataError, "a captured hidden state has shape %s, expected (batch, tokens, D)"
                   % (x.shape,), "inputs")
    out = []
    for b in range(x.shape[0]):
        rows = x[b]
        if mask is not None:
            keep = np.asarray(mask[b], dtype=bool)
            if keep.shape != (rows.shape[0],):
                raise make(DataError, "attention_mask has shape %s, expected (batch, %d)"
                           % (tuple(np.shape(mask)), rows.shape[0]), "inputs")
            rows = rows[keep]
        out.append(rows)
    return out


def capture(model, inputs, blocks=None):
    """Runs ``model`` on each item of ``inputs`` under ``torch.no_grad()`` and returns the hidden
    states entering each attention block: ``hidden[l][s]``, an (N_s, D) float64 array for block l
    and sentence s. An item is a tensor (``model(item)``), a tuple (``model(*item)``) or a dict
    (``model(**item)``; its ``attention_mask``, when present, drops padding rows); a batch of B
    makes B sentences. ``inputs`` may be a single item."""
    torch = _torch()
    blocks = find_attention(model) if blocks is None else blocks
    if not blocks:
        raise make(DataError, "no self-attention block found in %s (a module with query, key, "
                   "value nn.Linear layers and a head count)" % type(model).__name__, "model")
    if isinstance(inputs, (dict, tuple)) or hasattr(inputs, "shape"):
        inputs = [inputs]
    hidden = [[] for _ in blocks]
    mask = [None]

    def hook_for(i):
        def hook(_module, args, kwargs):
            x = args[0] if args else kwargs.get("hidden_states")
            if x is None:
                raise make(DataError, "%s was called without hidden states" % blocks[i].name,
                           "model")
            hidden[i].extend(_sentences_of(x, mask[0]))
        return hook

    handles = [b.module.register_forward_pre_hook(hook_for(i), with_kwargs=True)
               for i, b in enumerate(blocks)]
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            for item in inputs:
                if isinstance(item, dict):
                    m = item.get("attention_mask")
                    mask[0] = None if m is None else np.asarray(m.detach().cpu()).reshape(
                        -1, np.shape(m)[-1])
                    model(**item)
                elif isinstance(item, tuple):
                    mask[0] = None
                    model(*item)
                else:
                    mask[0] = None
                    model(item)
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    counts = {len(h) for h in hidden}
    if len(counts) != 1 or 0 in counts:
        raise make(DataError, "the blocks saw %s sentences; every block must run once per "
                   "sentence" % sorted(counts), "inputs")
    return hidden


def block_weights(block):
    """The block's weights as ``attnspec import``'s plain layout: ``W_Q``, ``W_K``, ``W_V``
    (D x H d, PyTorch's weight transposed) and ``b_Q``, ``b_K``, ``b_V`` (H d,; zeros when a
    layer has no bias), float64."""
    out = {}
    for lin, n in ((block.query, "Q"), (block.key, "K"), (block.value, "V")):
        out["W_" + n] = _float64(lin.weight).T.copy()
        out["b_" + n] = (_float64(lin.bias) if lin.bias is not None
                         else np.zeros(lin.out_features))
    return out


class Analysis:
    """What ``analyze`` returns.

    * ``rows``: one row per (layer, head, sentence) — a pandas DataFrame when pandas is installed,
      else a dict of numpy arrays — with columns ``layer``, ``head``, ``sentence``, ``N``;
      ``kappa_WQ``, ``kappa_WQ_lo``, ``kappa_WQ_hi`` (and WK, WV): κ of the head's weight (strict,
      2-norm) and its certified enclosure (``attnspec.spectrum``); ``kappa_J``, ``kappa_J_lo``,
      ``kappa_J_hi``: κ(J) of the weight Jacobian, bias-free form, strict, with its enclosure;
      ``method``: how κ(J) was computed; ``bound``, ``bound_lo``, ``bound_hi``: SC Thm 3.4's
      bound (our reconstruction); ``verdict`` (holds | violated | inconclusive |
      not_applicable), ``margin`` = bound − κ(J), ``ratio`` = κ(J)/bound (a not_applicable row,
      whose hypothesis failed, has no enclosures: NaN, and its point values where computed); ``cos_left``,
      ``cos_right``: cosine of the Linear-InfSA weights with the left / right Perron vector of
      Â (model-infsa, biases kept), ``rho``: ρ(Â).
    * ``results``: the ``checks.Results`` of the run (every record, with conventions and notes);
    * ``to_report(path)``: the same HDF5 as ``attnspec verify thm3.4-model model-infsa
      model-weights-kappa --dataset NAME --thorough`` on the same model file
      (``attnspec report render`` draws it);
    * ``seconds``: wall time of capture + checks; ``model_file``: the model input file when
      ``keep_model_file`` was given (else None: it lived in a temporary directory).
    """

    def __init__(self, rows, results, seconds, model_file):
        self.rows, self.results, self.seconds, self.model_file = rows, results, seconds, model_file

    def to_report(self, path):
        """Writes the report (``checks.Results.to_report``); returns ``path``."""
        return self.results.to_report(path)

    def __repr__(self):
        n = len(self.rows["layer"])
        return "Analysis(%d rows, %s, %.1f s)" % (n, self.results.verdicts, self.seconds)


class _StderrProgress:
    """``[check] done/total, elapsed, estimate left`` on stderr, at most every 0.5 s."""

    def __init__(self):
        self.t0 = time.monotonic()
        self.last = 0.0

    def __call__(self, check, done, total):
        now = time.monotonic()
        if done < total and now - self.last < 0.5:
            return
        self.last = now
        el = now - self.t0
        left = el / done * (total - done) if done else float("nan")
        sys.stderr.write("attnspec.analyze: [%s] %d/%d, %.1f s, ~%.0f s left\n"
                         % (check, done, total, el, left))


def _kappa_columns(layers, heads, d):
    cols = {}
    for n in ("Q", "K", "V"):
        for suffix in ("", "_lo", "_hi"):
            cols["kappa_W%s%s" % (n, suffix)] = {}
    for li, w in enumerate(layers):
        for h in range(heads):
            for n in ("Q", "K", "V"):
                k = spectrum(w["W_" + n][:, h * d:(h + 1) * d]).kappa
                cols["kappa_W%s" % n][li, h] = k.value
                cols["kappa_W%s_lo" % n][li, h] = k.lo
                cols["kappa_W%s_hi" % n][li, h] = k.hi
    return cols


def _rows(results, layers, heads, d):
    thm = results["thm3.4-model"]
    infsa = results["model-infsa"].table
    key = list(zip(np.asarray(infsa["layer"]).astype(int), np.asarray(infsa["head"]).astype(int),
                   np.asarray(infsa["sentence"]).astype(int)))
    at = {k: i for i, k in enumerate(key)}
    kw = _kappa_columns(layers, heads, d)
    cols = {c: [] for c in ("layer", "head", "sentence", "N")}
    cols.update({c: [] for c in kw})
    cols.update({c: [] for c in ("kappa_J", "kappa_J_lo", "kappa_J_hi", "method", "bound",
                                 "bound_lo", "bound_hi", "verdict", "margin", "ratio", "rho",
                                 "cos_left", "cos_right")})
    nan = math.nan
    for r in thm.records:
        li, h, s = (int(r.values[k]) for k in ("layer", "head", "sentence"))
        cols["layer"].append(li), cols["head"].append(h), cols["sentence"].append(s)
        cols["N"].append(int(r.values["N"]))
        for c, per in kw.items():
            cols[c].append(per[li, h])
        cols["method"].append(r.conventions.get("svd", "")), cols["verdict"].append(r.verdict)
        if r.comparisons:
            c = r.comparisons[0]
            got = (c.lhs, c.lhs_lo, c.lhs_hi, c.rhs, c.rhs_lo, c.rhs_hi, c.margin, c.ratio)
        else:  # not applicable (a hypothesis fails, e.g. J rank-deficient): values only
            got = (r.values.get("kappa(J)", nan), nan, nan, r.values.get("bound", nan), nan,
                   nan, nan, nan)
        for c, v in zip(("kappa_J", "kappa_J_lo", "kappa_J_hi", "bound", "bound_lo",
                         "bound_hi", "margin", "ratio"), got):
            cols[c].append(float(v))
        i = at.get((li, h, s))
        for c in ("rho", "cos_left", "cos_right"):
            cols[c].append(float(infsa[c][i]) if i is not None else math.nan)
    return table(cols, dtypes={"layer": np.int64, "head": np.int64, "sentence": np.int64,
                               "N": np.int64, "method": str, "verdict": str})


def _check_layers(layers, hidden, heads):
    if not isinstance(heads, int) or isinstance(heads, bool) or heads < 1:
        raise make(UsageError, "heads must be a positive integer, got %r" % (heads,), "heads")
    if not layers or len(layers) != len(hidden):
        raise make(DataError, "%d layers of weights but %d of hidden states"
                   % (len(layers), len(hidden)), "hidden")
    S = {len(h) for h in hidden}
    if len(S) != 1 or 0 in S:
        raise make(DataError, "every layer needs the same number (>= 1) of sentences, got %s"
                   % sorted(len(h) for h in hidden), "hidden")


def analyze_arrays(layers, hidden, heads, *, scale=None, name="model", threads=None,
                   seed=checks.DEFAULT_SEED, progress=True, keep_model_file=None):
    """The analysis of ``analyze`` from arrays: ``layers[l]`` a dict of ``W_Q``, ``W_K``,
    ``W_V`` (D x H d) and ``b_Q``, ``b_K``, ``b_V`` (H d,) as ``block_weights`` gives them,
    ``hidden[l][s]`` the (N_s, D) hidden states entering layer l for sentence s, ``heads`` = H,
    ``scale`` the logit scale (None: 1/sqrt(d)). ``threads`` as ``checks.run``; ``progress``:
    True (stderr), False, or a callable ``progress(check, done, total)``; ``keep_model_file``: a
    path where the model input file is kept (re-run it with ``ATTNSPEC_DATASETS=<its folder>
    attnspec verify thm3.4-model model-infsa model-weights-kappa --dataset <its stem>
    --thorough``). Returns an ``Analysis``."""
    _check_layers(layers, hidden, heads)
    if not isinstance(name, str) or not name or any(c in name for c in ":/\\") or \
            name.startswith("."):
        raise make(UsageError, "name %r must be a non-empty file stem without ':' or '/'"
                   % (name,), "name")
    t0 = time.monotonic()
    cb = _StderrProgress() if progress is True else (progress or None)
    with tempfile.TemporaryDirectory(prefix="attnspec-analyze-") as tmp:
        ckpt = os.path.join(tmp, "weights.npz")
        arrays = {}
        for li, w in enumerate(layers):
            for k in ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V"):
                arrays["layer%d/%s" % (li, k)] = np.ascontiguousarray(w[k], dtype=np.float64)
        np.savez(ckpt, **arrays)
        xs = os.path.join(tmp, "hidden.npz")
        np.savez(xs, **{"layer%d_sentence%d" % (li, s): np.ascontiguousarray(x, np.float64)
                        for li, per in enumerate(hidden) for s, x in enumerate(per)})
        ddir = os.path.join(tmp, "datasets")
        os.mkdir(ddir)
        model_file = os.path.join(ddir, name + ".h5")
        info = _core.import_checkpoint(ckpt, model_file, xs, heads, scale, name,
                                       "python: attnspec.models.analyze_arrays")
        old = os.environ.get("ATTNSPEC_DATASETS")
        os.environ["ATTNSPEC_DATASETS"] = ddir  # the run loop resolves --dataset NAME here
        try:
            results = checks.run(list(ANALYSIS_CHECKS), quick=False, seed=seed, threads=threads,
                                 dataset=name, embedded="", progress=cb)
        finally:
            if old is None:
                del os.environ["ATTNSPEC_DATASETS"]
            else:
                os.environ["ATTNSPEC_DATASETS"] = old
        rows = _rows(results, layers, heads, info["d"])
        kept = None
        if keep_model_file is not None:
            kept = str(keep_model_file)
            with open(model_file, "rb") as src, open(kept, "wb") as dst:
                dst.write(src.read())
    return Analysis(rows, results, time.monotonic() - t0, kept)


def analyze(model, inputs, *, scale=None, name="model", threads=None, seed=checks.DEFAULT_SEED,
            progress=True, keep_model_file=None):
    """Analyses every attention head of a PyTorch ``model`` on ``inputs``: finds the
    self-attention blocks (``find_attention``), captures the hidden states entering each
    (``capture``; ``inputs`` as there: one item per sentence, or batches with an attention mask),
    and returns ``analyze_arrays``'s ``Analysis``: one row per (layer, head, sentence) with κ of
    W_Q, W_K, W_V and κ(J) with their enclosures and method, the Thm 3.4 bound and verdict, and
    the Linear-InfSA fidelity. Every block must have the same head count and widths. ``scale``:
    the model's logit scale (None: 1/sqrt(d), BERT's and ViT's). Progress on stderr (``progress=
    False`` silences it). Errors: ``UnavailableError`` without PyTorch, ``DataError`` for a
    model with no block found or blocks that differ."""
    blocks = find_attention(model)
    hidden = capture(model, inputs, blocks)
    heads = {b.heads for b in blocks}
    if len(heads) != 1:
        raise make(DataError, "the blocks have different head counts %s" % sorted(heads),
                   "model")
    layers = [block_weights(b) for b in blocks]
    return analyze_arrays(layers, hidden, heads.pop(), scale=scale, name=name, threads=threads,
                          seed=seed, progress=progress, keep_model_file=keep_model_file)
