"""attnspec.models (analyze, analyze_arrays) and Results.to_report against the CLI: the same model
file run by `attnspec verify ... --thorough` gives the same report (report show --json equal but
for the file name and provenance) and the same numbers to the bit; the rows carry enclosures that
contain their values; with PyTorch, a model built from MiniLM's weights gives the rows of the
embedded dataset."""
import os
import subprocess

import numpy as np
import pytest

from cli_support import run_cli

attnspec = pytest.importorskip("attnspec", reason="the package is not installed "
                               "(bash scripts/python-env.sh builds it into a venv)")

CHECKS = ["thm3.4-model", "model-infsa"]
HEADS = 2           # heads 0 and 1 of layer 0
SENTENCES = [0, 2]  # the two shortest sentences (11 and 15 tokens)


def _show(cli, path):
    doc = run_cli(cli, "report", "show", str(path))
    for k in ("file", "provenance"):
        doc.pop(k, None)
    return doc


@pytest.fixture(scope="module")
def minilm():
    return attnspec.datasets.load("minilm-l6")


@pytest.fixture(scope="module")
def small(minilm):
    """Layer 0 of MiniLM cut to 2 heads and 2 sentences, as analyze_arrays takes it."""
    hs = [minilm.head(0, h, 0) for h in range(HEADS)]
    w = {}
    for n in "QKV":
        w["W_" + n] = np.hstack([getattr(h, "W_" + n) for h in hs])
        w["b_" + n] = np.concatenate([getattr(h, "b_" + n) for h in hs])
    hidden = [[minilm.head(0, 0, s).X for s in SENTENCES]]
    return [w], hidden


@pytest.fixture(scope="module")
def analysis(small, tmp_path_factory):
    d = tmp_path_factory.mktemp("analysis")
    os.mkdir(d / "ds")
    layers, hidden = small
    a = attnspec.models.analyze_arrays(layers, hidden, HEADS, name="small", threads=2,
                                       progress=False, keep_model_file=d / "ds" / "small.h5")
    return a, d


def test_to_report_is_the_cli_report(cli, tmp_path):
    sel = "minilm-l6:0:0:0"
    r = attnspec.checks.run(CHECKS, quick=False, dataset=sel, embedded="", threads=2)
    assert r.to_report(tmp_path / "py.h5") == str(tmp_path / "py.h5")
    run_cli(cli, "verify", *CHECKS, "--dataset", sel, "--thorough", "--threads", "1",
            "--quiet", "--out", str(tmp_path / "cli.h5"), as_json=False)
    assert _show(cli, tmp_path / "py.h5") == _show(cli, tmp_path / "cli.h5")
    # and the report reads back through the package
    back = attnspec.reports.read(tmp_path / "py.h5")
    assert back.kind == "verify"


def test_to_report_refuses_an_unwritable_path(tmp_path):
    r = attnspec.checks.run("thm3.5", trials=1, threads=1)
    with pytest.raises(attnspec.OutputError):
        r.to_report(tmp_path / "no-such-dir" / "r.h5")
    assert not (tmp_path / "no-such-dir").exists()


def test_analyze_arrays_rows_hold_their_enclosures(analysis):
    a, _ = analysis
    rows = a.rows
    n = HEADS * len(SENTENCES)
    assert len(rows["layer"]) == n
    assert sorted(zip(rows["head"], rows["sentence"])) == sorted(
        (h, s) for h in range(HEADS) for s in range(len(SENTENCES)))
    for c in ("kappa_J", "kappa_WQ", "kappa_WK", "kappa_WV", "bound"):
        v, lo, hi = (np.asarray(rows[c + x], dtype=float) for x in ("", "_lo", "_hi"))
        assert np.all(lo <= v) and np.all(v <= hi), c
        assert np.all(lo > 0), c
    assert set(np.asarray(rows["verdict"])) <= {"holds", "violated", "inconclusive",
                                                 "not_applicable"}
    assert np.all(np.isfinite(np.asarray(rows["cos_left"], dtype=float)))


def test_analyze_arrays_equals_the_cli_on_its_model_file(analysis, cli):
    a, d = analysis
    env = dict(os.environ, ATTNSPEC_DATASETS=str(d / "ds"))
    out = d / "cli.h5"
    p = subprocess.run([cli, "verify", *attnspec.models.ANALYSIS_CHECKS, "--dataset", "small",
                        "--thorough", "--threads", "1", "--quiet", "--out", str(out)],
                       env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    a.to_report(d / "py.h5")
    assert _show(cli, d / "py.h5") == _show(cli, out)


def test_analyze_arrays_gives_the_embedded_datasets_numbers(analysis, minilm):
    """The imported heads are MiniLM's (float32 values, exact in float64): κ(J) and the bound
    of each row are those of `verify thm3.4-model --dataset minilm-l6:0:h:s`, bit for bit."""
    a, _ = analysis
    by_unit = {}
    for h in range(HEADS):
        for s in SENTENCES:
            ref = attnspec.checks.run("thm3.4-model", quick=False, embedded="", threads=1,
                                      dataset="minilm-l6:0:%d:%d" % (h, s))["thm3.4-model"]
            (r,) = ref.records
            by_unit[(h, s)] = r.comparisons[0]
    rows = a.rows
    for i in range(len(rows["layer"])):
        c = by_unit[(int(rows["head"][i]), SENTENCES[int(rows["sentence"][i])])]
        assert float(rows["kappa_J"][i]) == c.lhs
        assert (float(rows["kappa_J_lo"][i]), float(rows["kappa_J_hi"][i])) == (c.lhs_lo,
                                                                                 c.lhs_hi)
        assert float(rows["bound"][i]) == c.rhs


def test_analyze_arrays_refuses_bad_shapes(small):
    layers, hidden = small
    with pytest.raises(attnspec.DataError, match="layers of weights"):
        attnspec.models.analyze_arrays(layers, hidden + hidden, HEADS, progress=False)
    with pytest.raises(attnspec.UsageError, match="heads"):
        attnspec.models.analyze_arrays(layers, hidden, 0, progress=False)
    with pytest.raises(attnspec.UsageError, match="name"):
        attnspec.models.analyze_arrays(layers, hidden, HEADS, name="a:b", progress=False)
    with pytest.raises(attnspec.DataError):  # 3 does not divide H d = 64
        attnspec.models.analyze_arrays(layers, hidden, 3, progress=False)


def test_progress_callback_sees_every_instance(small):
    layers, hidden = small
    seen = []
    attnspec.models.analyze_arrays(layers, [hidden[0][:1]], HEADS, threads=1,
                                   progress=lambda c, done, total: seen.append((c, done, total)))
    last = {c: (done, total) for c, done, total in seen}
    assert last["thm3.4-model"] == (HEADS, HEADS)


def test_analyze_without_torch_says_so():
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(attnspec.UnavailableError, match="PyTorch"):
            attnspec.analyze(object(), [])
    else:
        pytest.skip("PyTorch is installed: the refusal does not apply")


def _torch_minilm_layer(minilm, heads):
    """A one-block PyTorch encoder with BERT's self-attention names, holding MiniLM's layer 0
    heads 0..heads-1: the hidden state entering the block is the model's input."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")

    class SelfAttention(torch.nn.Module):
        def __init__(self, D, H, d):
            super().__init__()
            self.num_attention_heads, self.d = H, d
            self.query = torch.nn.Linear(D, H * d, dtype=torch.float64)
            self.key = torch.nn.Linear(D, H * d, dtype=torch.float64)
            self.value = torch.nn.Linear(D, H * d, dtype=torch.float64)

        def forward(self, hidden_states):
            B, N, _ = hidden_states.shape
            split = (lambda t: t.view(B, N, self.num_attention_heads, self.d).transpose(1, 2))
            q, k, v = (split(f(hidden_states)) for f in (self.query, self.key, self.value))
            p = torch.softmax(q @ k.transpose(-1, -2) / self.d ** 0.5, dim=-1)
            return (p @ v).transpose(1, 2).reshape(B, N, -1)

    class Encoder(torch.nn.Module):
        def __init__(self, D, H, d):
            super().__init__()
            self.attention = torch.nn.Module()
            self.attention.self = SelfAttention(D, H, d)

        def forward(self, x):
            return self.attention.self(x)

    hs = [minilm.head(0, h, 0) for h in range(heads)]
    m = Encoder(minilm.D, heads, minilm.d)
    with torch.no_grad():
        for n, lin in (("Q", m.attention.self.query), ("K", m.attention.self.key),
                       ("V", m.attention.self.value)):
            lin.weight.copy_(torch.from_numpy(np.hstack([getattr(h, "W_" + n) for h in hs]).T))
            lin.bias.copy_(torch.from_numpy(np.concatenate([getattr(h, "b_" + n) for h in hs])))
    return torch, m


def test_analyze_torch_model_equals_analyze_arrays(minilm, analysis):
    torch, m = _torch_minilm_layer(minilm, HEADS)
    blocks = attnspec.models.find_attention(m)
    assert [(b.name, b.heads) for b in blocks] == [("attention.self", HEADS)]
    xs = [torch.from_numpy(minilm.head(0, 0, s).X)[None] for s in SENTENCES]
    a = attnspec.analyze(m, xs, threads=2, progress=False)
    ref, _ = analysis
    for c in ("kappa_J", "kappa_J_lo", "kappa_J_hi", "bound", "kappa_WQ_hi", "cos_left"):
        assert np.array_equal(np.asarray(a.rows[c]), np.asarray(ref.rows[c])), c


def test_analyze_torch_refuses_a_block_without_head_count():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    m = torch.nn.Module()
    m.query, m.key, m.value = (torch.nn.Linear(8, 8) for _ in range(3))
    with pytest.raises(attnspec.DataError, match="head count"):
        attnspec.models.find_attention(m)
