"""attnspec's pytest plugin (python/attnspec/pytest_plugin.py), run on a small user test file with
pytester: --attnspec-cases parametrises a test over the stress cases, a plain numpy kernel passes,
a planted wrong one (scale 1/d) fails with the verdict and worst elements in its message, the
JUnit XML carries the case properties, and the reproducer of the failure re-checks to the same
verdict through the CLI."""
import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import attnspec.testing as at
from cli_support import run_cli

pytest_plugins = ["pytester"]

USER_TESTS = '''
import numpy as np


def attention(q, k, v, causal, scale=None):
    """A plain float32 kernel (logits, softmax, P V in float32)."""
    d = q.shape[-1]
    s = np.float32(1 / np.sqrt(d) if scale is None else scale)
    logits = np.einsum("...id,...jd->...ij", q, k).astype(np.float32) * s
    if causal:
        n = logits.shape[-1]
        logits = np.where(np.tril(np.ones((n, n), bool)), logits, np.float32(-np.inf))
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p = p / p.sum(-1, keepdims=True)
    return np.einsum("...ij,...jd->...id", p, v).astype(q.dtype)


def test_plain(attnspec_case):
    c = attnspec_case
    c.assert_attention_close(attention(c.q, c.k, c.v, c.causal))


def test_planted_scale(attnspec_case):
    c = attnspec_case
    c.assert_attention_close(attention(c.q, c.k, c.v, c.causal, scale=1 / c.q.shape[-1]))
'''

OPTIONS = ["--attnspec-shape=1,24,8", "-p", "no:cacheprovider"]


def test_stress_parametrises_every_case(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    r = pytester.runpytest("--collect-only", "-q", "--attnspec-cases=stress",
                           "--attnspec-seeds=0,3", "--attnspec-mask=both", *OPTIONS)
    ids = [line.split("::")[1] for line in r.outlines if "::test_plain[" in line]
    expected = ["test_plain[%s-s%d%s]" % (n, s, c) for n in at.stress_cases() for s in (0, 3)
                for c in ("", "-causal")]
    assert ids == expected


def _run_user_tests(pytester, tmp_path, *args):
    pytester.makepyfile(test_user=USER_TESTS)
    repro, junit = tmp_path / "repro", tmp_path / "junit.xml"
    r = pytester.runpytest("--attnspec-repro=%s" % repro, "--junitxml=%s" % junit, *args,
                           *OPTIONS)
    cases = ET.parse(junit).getroot().iter("testcase")
    props = {c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}
             for c in cases}
    return r, props, repro


def test_plain_kernel_passes_and_planted_one_fails_with_a_reproducer(pytester, tmp_path):
    r, props, repro = _run_user_tests(pytester, tmp_path, "--attnspec-cases=gaussian,spike-v",
                                      "--attnspec-mask=causal")
    r.assert_outcomes(passed=2, failed=2)
    text = "\n".join(r.outlines)
    assert "attnspec case gaussian-s0-causal" in text
    assert "attention kernel check: wrong" in text and "rounding bound" in text

    assert props["test_plain[spike-v-s0-causal]"]["attnspec_verdict"] == "pass"
    bad = props["test_planted_scale[spike-v-s0-causal]"]
    assert bad["attnspec_case"] == "spike-v" and bad["attnspec_verdict"] == "wrong"
    assert bad["attnspec_shape"] == "1,24,8" and bad["attnspec_mask"] == "causal"

    files = sorted(os.listdir(repro))
    assert len(files) == 2 and all(f.endswith(".repro.npz") for f in files)
    z = np.load(bad["attnspec_reproducer"])
    case = json.loads(z["case"].item().decode())
    assert case["generator"] == "spike-v" and case["seed"] == 0 and case["verdict"] == "wrong"
    assert case["worst"]["o"]["worst_by_bound"]
    assert z["o"].shape == z["q"].shape and z["q"].dtype == np.float64


def test_the_cli_replays_a_reproducer_to_the_same_verdict(pytester, tmp_path, cli):
    r, props, _ = _run_user_tests(pytester, tmp_path, "--attnspec-cases=heavy-tail",
                                  "--attnspec-seeds=4", "-k", "planted")
    r.assert_outcomes(failed=1)
    path = props["test_planted_scale[heavy-tail-s4]"]["attnspec_reproducer"]
    case = json.loads(np.load(path)["case"].item().decode())
    args = case["replay"].split()[1:]  # the command the reproducer holds, without "attnspec"
    d = run_cli(cli, *args, codes=(1,))
    assert d["verdict"] == case["verdict"] == "wrong" and d["summary"] == case["summary"]


DERIVATIVE_TESTS = '''
import attnspec.testing as at


def test_vjp(attnspec_case):
    c = attnspec_case
    dq, dk, dv = at.baseline_vjp(c.q, c.k, c.v, c.do, dtype=c.dtype, causal=c.causal)
    c.assert_vjp_close(dq.astype(c.q.dtype), (dk / 4).astype(c.k.dtype), dv.astype(c.v.dtype))


def test_jvp(attnspec_case):
    c = attnspec_case
    do_t = at.baseline_jvp(c.q, c.k, c.v, c.tq, c.tk, c.tv, dtype=c.dtype, causal=c.causal)
    c.assert_jvp_close(do_t.astype(c.q.dtype))
'''


def test_derivatives_check_and_replay(pytester, tmp_path, cli):
    pytester.makepyfile(test_deriv=DERIVATIVE_TESTS)
    repro, junit = tmp_path / "repro", tmp_path / "junit.xml"
    r = pytester.runpytest("--attnspec-cases=near-ties", "--attnspec-dtype=bf16",
                           "--attnspec-repro=%s" % repro, "--junitxml=%s" % junit, *OPTIONS)
    r.assert_outcomes(passed=1, failed=1)  # the jvp baseline passes, the vjp's dK / 4 does not
    assert "attention-vjp kernel check: wrong" in "\n".join(r.outlines)
    (name,) = os.listdir(repro)
    path = str(repro / name)
    z = np.load(path)
    assert sorted(z.files) == ["case", "dk", "do", "dq", "dv", "k", "q", "v"]
    case = json.loads(z["case"].item().decode())
    assert case["op"] == "attention-vjp" and case["worst"]["dk"]["verdict"] == "wrong"
    d = run_cli(cli, *case["replay"].split()[1:], codes=(1,))
    assert d["verdict"] == case["verdict"] and d["outputs"]["dk"]["verdict"] == "wrong"


def test_bad_options_are_usage_errors(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    r = pytester.runpytest("--attnspec-cases=gaussian,nope", *OPTIONS)
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown case 'nope'" in "\n".join(r.errlines)


INFSA_TESTS = '''
import attnspec.testing as at


def test_linear(attnspec_case):
    c = attnspec_case
    out = at.baseline_linear_infsa(c.q, c.k, c.v, gamma=c.gamma, eps=c.eps, dtype=c.dtype)
    c.assert_linear_infsa_close(out.astype(c.q.dtype))


def test_linear_gamma_twice(attnspec_case):
    c = attnspec_case
    out = at.baseline_linear_infsa(c.q, c.k, c.v, gamma=2 * c.gamma, eps=c.eps, dtype=c.dtype)
    c.assert_linear_infsa_close(out.astype(c.q.dtype))


def test_pure(attnspec_case):
    c = attnspec_case
    out = at.baseline_pure_infsa(c.q, c.k, c.v, gamma=c.gamma, eps=c.eps, dtype=c.dtype)
    c.assert_pure_infsa_close(out.astype(c.q.dtype))


def test_neumann(attnspec_case):
    c = attnspec_case
    out = at.baseline_neumann(c.q, c.k, c.v, gamma=c.gamma, eps=c.eps, dtype=c.dtype)
    c.assert_neumann_close(out.astype(c.q.dtype))
'''


def test_infsa_family_checks_skips_causal_and_replays(pytester, tmp_path, cli):
    pytester.makepyfile(test_infsa=INFSA_TESTS)
    repro, junit = tmp_path / "repro", tmp_path / "junit.xml"
    r = pytester.runpytest("--attnspec-cases=rank-one", "--attnspec-mask=both",
                           "--attnspec-gamma=0.9", "--attnspec-repro=%s" % repro,
                           "--junitxml=%s" % junit, "-rs", *OPTIONS)
    # rank-one is a neumann case: the three correct kernels pass, gamma twice does not; the
    # causal instances skip (the InfSA family has no mask).
    r.assert_outcomes(passed=3, failed=1, skipped=4)
    text = "\n".join(r.outlines)
    assert "linear-infsa kernel check: wrong" in text
    assert "takes no mask: case rank-one-s0-causal is causal" in text
    (name,) = os.listdir(repro)
    case = json.loads(np.load(str(repro / name))["case"].item().decode())
    assert case["op"] == "linear-infsa" and case["generator"] == "rank-one"
    assert "--gamma 0.9 --eps 1e-06" in case["replay"] and "--mask" not in case["replay"]
    d = run_cli(cli, *case["replay"].split()[1:], codes=(1,))
    assert d["verdict"] == case["verdict"] and d["summary"] == case["summary"]


def test_infsa_case_groups_and_bad_gamma(pytester):
    pytester.makepyfile(test_infsa=INFSA_TESTS)
    r = pytester.runpytest("--collect-only", "-q", "--attnspec-cases=stress-neumann", *OPTIONS)
    ids = [line.split("::")[1] for line in r.outlines if "::test_neumann[" in line]
    assert ids == ["test_neumann[%s-s0]" % n for n in at.neumann_cases()]
    r = pytester.runpytest("--attnspec-gamma=x", *OPTIONS)
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "--attnspec-gamma and --attnspec-eps expect numbers" in "\n".join(r.errlines)
