"""attnspec.testing for the Neumann kernel: a plain numpy float32 kernel (np.linalg.solve) passes
every stress case at fp32 and fp16 in both forms ((I - G)^-1 G v and (I - G)^-1 v - v), the
planted faults (the series cut after two hops, the identity kept, Â normalised by its largest
entry, a relative error of 1e-4 in a few fp32 elements) do not pass, and the verdicts and
numbers equal the CLI's `check-kernel neumann` on the same files."""
import numpy as np
import pytest

import attnspec.testing as at
from cli_support import num, run_cli, same

SHAPE = (2, 48, 16)


def plain_neumann(q, k, v, gamma=0.95, eps=1e-6, form="gv", fault=None):
    """The Neumann kernel in float32, A+ stored in q's dtype, output in q's dtype; ``form`` "gv"
    solves (I - G) o = G v, "xv" returns (I - G)^-1 v - v; ``fault`` plants one."""
    out_type = q.dtype
    qf, kf, vf = (x.astype(np.float32) for x in (q, k, v))
    a = np.maximum(np.float32(0), qf @ np.swapaxes(kf, -1, -2) / np.float32(q.shape[-1]))
    a = a.astype(out_type).astype(np.float32)
    if fault == "max_norm":
        den = a.max((-2, -1))
    else:
        den = np.sqrt((a * a).sum((-2, -1))) + np.float32(eps)
    g = np.float32(gamma) * a / den[..., None, None]
    m = np.eye(q.shape[-2], dtype=np.float32) - g
    if fault == "two_hops":
        o = g @ vf + g @ (g @ vf)
    elif fault == "identity_kept":
        o = np.linalg.solve(m, vf)
    elif form == "xv":
        o = np.linalg.solve(m, vf) - vf
    else:
        o = np.linalg.solve(m, g @ vf)
    if fault == "rel_1e4":
        flat = o.reshape(-1)
        flat[np.argmax(np.abs(flat))] *= np.float32(1 + 1e-4)
        flat[3::97] *= np.float32(1 + 1e-4)
    return o.astype(out_type)


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
@pytest.mark.parametrize("form", ["gv", "xv"])
def test_neumann_a_plain_kernel_passes_every_stress_case(dtype, form):
    t = at.check_neumann(lambda q, k, v: plain_neumann(q, k, v, form=form), dtype=dtype,
                         shape=SHAPE, seeds=(0, 1))
    verdicts = list(t["verdict"])
    assert len(verdicts) == len(at.neumann_cases()) * 2 and "rank-one" in at.neumann_cases()
    assert verdicts == ["pass"] * len(verdicts), t
    assert max(t["worst_bound_ratio"]) < 1


@pytest.mark.parametrize("fault", ["two_hops", "identity_kept", "max_norm", "rel_1e4"])
def test_neumann_planted_faults_do_not_pass(fault):
    q, k, v = at.stress_neumann_case("gaussian", 5, SHAPE, "fp32")
    out = plain_neumann(q, k, v, fault=fault)
    r = at.check_neumann_output(out, q, k, v)
    assert r.verdict == ("fail" if fault == "rel_1e4" else "wrong"), r.summary
    with pytest.raises(AssertionError, match="neumann kernel check"):
        at.assert_neumann_close(out, q, k, v)


def test_neumann_baseline_passes_and_parameters_are_checked():
    q, k, v = at.stress_neumann_case("rank-one", 3, SHAPE, "bf16")
    o = at.baseline_neumann(q, k, v, dtype="bf16")
    assert at.assert_neumann_close(o, q, k, v, dtype="bf16").baseline_bound_ratio <= 1
    for bad in ({"gamma": 1.0}, {"gamma": 0.0}, {"eps": 0.0}):
        with pytest.raises(at.DataError):
            at.check_neumann_output(o, q, k, v, **bad)


def test_neumann_verdict_and_numbers_equal_the_cli(cli, tmp_path):
    inp, outp = str(tmp_path / "in.npz"), str(tmp_path / "out.npz")
    run_cli(cli, "check-kernel", "neumann", "--generate", "rank-one", "--seed", "2",
            "--shape", "2,32,16", "--inputs", inp, "--dtype", "fp16")
    with np.load(inp) as f:
        q, k, v = f["q"], f["k"], f["v"]
    outs = (plain_neumann(q, k, v, gamma=0.9), plain_neumann(q, k, v, gamma=0.9, form="xv"),
            plain_neumann(q, k, v, gamma=0.9, fault="identity_kept"))
    verdicts = []
    for out in outs:
        np.savez(outp, o=out)
        c = run_cli(cli, "check-kernel", "neumann", "--inputs", inp, "--output", outp,
                    "--dtype", "fp16", "--gamma", "0.9", codes=(0, 1))
        r = at.check_neumann_output(out, q, k, v, gamma=0.9, dtype="fp16")
        assert c["verdict"] == r.verdict
        verdicts.append(r.verdict)
        for key in ("worst_rule_ratio", "worst_bound_ratio", "tensor_error", "tensor_allowed"):
            assert same(num(c[key]), getattr(r, key)), key
    assert verdicts == ["pass", "pass", "wrong"]
