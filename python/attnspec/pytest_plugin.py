"""attnspec's pytest plugin: run your kernel's tests over attnspec's stress cases.

Registered through the ``pytest11`` entry point (pyproject.toml), so it is active wherever
attnspec is installed; it does nothing until a test asks for the ``attnspec_case`` fixture.
Such a test is parametrised over the cases the options select::

    def test_my_kernel(attnspec_case):
        c = attnspec_case                       # c.q, c.k, c.v (c.do; c.tq, c.tk, c.tv)
        out = my_attention(c.q, c.k, c.v, causal=c.causal)
        c.assert_attention_close(out)           # AssertionError with the verdict and worst elements

The same case checks the other operations on q, k, v: ``c.assert_vjp_close(dq, dk, dv)`` (for
``c.do``), ``c.assert_jvp_close(do_t)`` (for ``c.tq``, ``c.tk``, ``c.tv``),
``c.assert_linear_infsa_close(out)``, ``c.assert_pure_infsa_close(out)`` and
``c.assert_neumann_close(out)`` (the InfSA family: ``--attnspec-gamma``, ``--attnspec-eps``; they
take no mask, so on a masked case they skip with that reason). ``spec-attention`` has other inputs
(X and the weights) and no fixture. Under ``--attnspec-mask=boolean|additive`` the case carries
``c.mask``, the array your kernel must apply (attnspec.testing.stress_mask: bool, True = the key
takes part, or float added to the scaled logits with -inf hiding a key; PyTorch SDPA's
``attn_mask`` conventions; fully masked rows included), and the ``assert_*`` methods check with
it; ``c.mask`` is None otherwise (then ``c.causal`` says which).

Options (docs/ci/README.md):

``--attnspec-cases=stress|stress-infsa|stress-neumann|NAME[,NAME...]``
    the stress generators (``stress``: attention's, attnspec.testing.stress_cases();
    ``stress-infsa``: linear_infsa_cases(), which add relu-zero and dominant-key;
    ``stress-neumann``: neumann_cases(), which add rank-one; a NAME from any of them; default
    ``gaussian``);
``--attnspec-dtype=fp16|bf16|tf32|fp32|fp64``
    the storage dtype the cases are rounded to and checked at (default ``fp32``);
``--attnspec-accumulate=fp32|fp64`` (default ``fp32``), ``--attnspec-factor=F`` (default 2);
``--attnspec-gamma=G`` (default 0.95), ``--attnspec-eps=E`` (default 1e-6): the InfSA family's
    parameters (neumann: G in (0, 1), E > 0);
``--attnspec-shape=N,d|H,N,d|B,H,N,d`` (default ``2,128,64``);
``--attnspec-seeds=S[,S...]`` (default ``0``);
``--attnspec-mask=none|causal|both|boolean|additive`` (default ``none``; ``both``: none and
    causal; ``boolean``, ``additive``: the generated mask of each case, ``c.mask``);
``--attnspec-repro=DIR``
    on a failed check, write a reproducer ``DIR/<test node id>.repro.npz`` (characters other than
    letters, digits, ``_ . -`` replaced by ``_``): the case's arrays, the
    kernel's output and a ``case`` JSON (the CLI's reproducer layout, with generator, seed and
    shape), which ``attnspec check-kernel OP --inputs R --output R`` (the ``replay`` command in the
    JSON) re-checks.

A test's id names its case (``test_my_kernel[spike-v-s0-causal]``); with ``--junitxml`` each
test's record carries the properties ``attnspec_case``, ``attnspec_seed``, ``attnspec_shape``,
``attnspec_dtype``, ``attnspec_mask`` and, once a check ran, ``attnspec_verdict`` (and
``attnspec_reproducer`` when one was written).
"""

import json
import os
import re

import pytest

_DEFAULTS = {"cases": "gaussian", "dtype": "fp32", "accumulate": "fp32", "factor": "2",
             "shape": "2,128,64", "seeds": "0", "mask": "none", "repro": "", "gamma": "0.95",
             "eps": "1e-6"}
_HELP = {
    "cases": "stress cases of the attnspec_case fixture: 'stress' (all) or NAME[,NAME...] "
             "(default gaussian)",
    "dtype": "storage dtype of the cases and their checks: fp16, bf16, tf32, fp32, fp64 "
             "(default fp32)",
    "accumulate": "accumulation dtype of the checks: fp32 or fp64 (default fp32)",
    "factor": "allowed error = F x baseline error + floor (default 2)",
    "shape": "shape of q, k, v: N,d or H,N,d or B,H,N,d (default 2,128,64)",
    "seeds": "seeds of the cases, S[,S...] (default 0)",
    "mask": "none, causal, both (none and causal), boolean or additive (a generated mask, "
            "c.mask) (default none)",
    "repro": "directory for the reproducers (.repro.npz) of failed checks (default: none)",
    "gamma": "gamma of linear-infsa, pure-infsa and neumann (default 0.95)",
    "eps": "eps of linear-infsa, pure-infsa and neumann (default 1e-6)",
}


def pytest_addoption(parser):
    group = parser.getgroup("attnspec", "attnspec kernel checks (the attnspec_case fixture)")
    for name, default in _DEFAULTS.items():
        group.addoption("--attnspec-" + name, action="store", default=default,
                        metavar=name.upper(), help=_HELP[name])


def _option(config, name):
    return str(config.getoption("--attnspec-" + name))


def _cases(config):
    """(name, seed, mask) for every selected case, in order (mask: none, causal, boolean or
    additive); pytest.UsageError on bad options."""
    from . import testing

    groups = {"stress": testing.stress_cases(), "stress-infsa": testing.linear_infsa_cases(),
              "stress-neumann": testing.neumann_cases()}
    known = groups["stress-neumann"]  # every generator's name
    text = _option(config, "cases")
    names = groups.get(text) or tuple(n.strip() for n in text.split(",") if n.strip())
    for n in names:
        if n not in known:
            raise pytest.UsageError("--attnspec-cases: unknown case %r (expected stress, "
                                    "stress-infsa, stress-neumann or names from %s)"
                                    % (n, ", ".join(known)))
    try:
        seeds = tuple(int(s) for s in _option(config, "seeds").split(","))
    except ValueError:
        raise pytest.UsageError("--attnspec-seeds expects integers S[,S...], got %r"
                                % _option(config, "seeds")) from None
    masks = {"none": ("none",), "causal": ("causal",), "both": ("none", "causal"),
             "boolean": ("boolean",), "additive": ("additive",)}
    mask = _option(config, "mask")
    if mask not in masks:
        raise pytest.UsageError("--attnspec-mask expects none, causal, both, boolean or "
                                "additive, got %r" % mask)
    if _option(config, "dtype") not in testing.DTYPES:
        raise pytest.UsageError("--attnspec-dtype expects one of %s, got %r"
                                % (", ".join(testing.DTYPES), _option(config, "dtype")))
    if _option(config, "accumulate") not in ("fp32", "fp64"):
        raise pytest.UsageError("--attnspec-accumulate expects fp32 or fp64, got %r"
                                % _option(config, "accumulate"))
    _infsa_params(config)
    return [(n, s, c) for n in names for s in seeds for c in masks[mask]]


def _infsa_params(config):
    """(gamma, eps) of the InfSA family's checks; pytest.UsageError when not numbers."""
    try:
        return float(_option(config, "gamma")), float(_option(config, "eps"))
    except ValueError:
        raise pytest.UsageError("--attnspec-gamma and --attnspec-eps expect numbers, got %r and "
                                "%r" % (_option(config, "gamma"), _option(config, "eps"))) from None


def _shape(config):
    try:
        shape = tuple(int(x) for x in re.split("[,x]", _option(config, "shape")))
    except ValueError:
        shape = ()
    if not 2 <= len(shape) <= 4 or min(shape) < 1:
        raise pytest.UsageError("--attnspec-shape expects N,d or H,N,d or B,H,N,d, got %r"
                                % _option(config, "shape"))
    return shape


def _factor(config):
    try:
        f = float(_option(config, "factor"))
    except ValueError:
        f = float("nan")
    if not f >= 1 or f == float("inf"):
        raise pytest.UsageError("--attnspec-factor expects a finite number >= 1, got %r"
                                % _option(config, "factor"))
    return f


def pytest_configure(config):
    """Checks the --attnspec-* options once, before collection (a bad value: usage error, exit
    4). The defaults are valid: attnspec is not imported unless an option was given."""
    if any(_option(config, n) != d for n, d in _DEFAULTS.items()):
        _cases(config), _shape(config), _factor(config)


def _case_id(name, seed, mask):
    return "%s-s%d%s" % (name, seed, "" if mask == "none" else "-" + mask)


def pytest_generate_tests(metafunc):
    if "attnspec_case" in metafunc.fixturenames:
        cases = _cases(metafunc.config)
        metafunc.parametrize("attnspec_case", cases, ids=[_case_id(*c) for c in cases],
                             indirect=True)


class Case:
    """One stress case: ``q``, ``k``, ``v`` (numpy arrays in the dtype's numpy type: float16 for
    fp16, float64 for fp64, float32 otherwise; the values exact in the dtype), the cotangent
    ``do`` and the tangents ``tq``, ``tk``, ``tv`` (made on first use), and its identity:
    ``name``, ``seed``, ``shape``, ``dtype``, ``causal``, ``mask`` (None, or the boolean or
    additive mask array), ``mask_kind``, ``id``. ``assert_attention_close``,
    ``assert_vjp_close`` and ``assert_jvp_close`` check a kernel's output on it with the
    options' dtype, accumulation, factor and mask, and remember the output and the verdict for
    the reproducer."""

    def __init__(self, name, seed, shape, dtype, mask, accumulate, factor, gamma=0.95,
                 eps=1e-6):
        from . import testing

        self._testing = testing
        self.name, self.seed, self.shape, self.dtype = name, seed, tuple(shape), dtype
        # mask: "none", "causal", "boolean" or "additive" (True / False: causal or none)
        kind = ("causal" if mask else "none") if isinstance(mask, bool) else mask
        self.mask_kind, self.causal = kind, kind == "causal"
        self.mask = (testing.stress_mask(kind, seed, self.shape, dtype)
                     if kind in ("boolean", "additive") else None)
        self.accumulate, self.factor = accumulate, factor
        self.gamma, self.eps = gamma, eps
        self.id = _case_id(name, seed, kind)
        # The generators share their names' arrays (neumann's list holds every name).
        make = (testing.stress_case if name in testing.stress_cases()
                else testing.stress_neumann_case)
        self.q, self.k, self.v = make(name, seed, self.shape, dtype)
        self._vjp = self._jvp = None
        self.op = None          # the operation last checked
        self.outputs = {}       # its output arrays, by the CLI's names
        self.result = None      # its KernelCheck or VjpCheck

    @property
    def do(self):
        if self._vjp is None:
            self._vjp = self._testing.stress_vjp_case(self.name, self.seed, self.shape, self.dtype)
        return self._vjp[3]

    def _tangents(self):
        if self._jvp is None:
            self._jvp = self._testing.stress_jvp_case(self.name, self.seed, self.shape, self.dtype)
        return self._jvp[3:]

    tq = property(lambda self: self._tangents()[0])
    tk = property(lambda self: self._tangents()[1])
    tv = property(lambda self: self._tangents()[2])

    def _kwargs(self):
        return dict(dtype=self.dtype, accumulate=self.accumulate, causal=self.causal,
                    mask=self.mask, factor=self.factor)

    def _finish(self, op, outputs, result):
        self.op, self.outputs, self.result = op, outputs, result
        if not result.passed:
            raise AssertionError("attnspec case %s (dtype %s, shape %s): %s"
                                 % (self.id, self.dtype, self.shape, result.message()))
        return result

    def assert_attention_close(self, out, lse=None):
        """attnspec.testing.assert_attention_close(out, q, k, v, lse=lse) at the case's settings."""
        r = self._testing.check_attention_output(out, self.q, self.k, self.v, lse=lse,
                                                 **self._kwargs())
        outputs = {"o": out} if lse is None else {"o": out, "lse": lse}
        return self._finish("attention", outputs, r)

    def assert_vjp_close(self, dq, dk, dv):
        """attnspec.testing.assert_vjp_close for the cotangent ``do`` of the case."""
        r = self._testing.check_vjp_output(dq, dk, dv, self.q, self.k, self.v, self.do,
                                           **self._kwargs())
        return self._finish("attention-vjp", {"dq": dq, "dk": dk, "dv": dv}, r)

    def assert_jvp_close(self, do_t):
        """attnspec.testing.assert_jvp_close for the tangents ``tq``, ``tk``, ``tv``."""
        r = self._testing.check_jvp_output(do_t, self.q, self.k, self.v, self.tq, self.tk,
                                           self.tv, **self._kwargs())
        return self._finish("attention-jvp", {"do_t": do_t}, r)

    def _infsa(self, op, check, out):
        if self.mask_kind != "none":
            pytest.skip("%s takes no mask: case %s is %s" % (op, self.id, self.mask_kind))
        r = check(out, self.q, self.k, self.v, gamma=self.gamma, eps=self.eps, dtype=self.dtype,
                  accumulate=self.accumulate, factor=self.factor)
        return self._finish(op, {"o": out}, r)

    def assert_linear_infsa_close(self, out):
        """attnspec.testing.assert_linear_infsa_close(out, q, k, v) with the options' gamma and
        eps (skips a causal case: the operation has no mask)."""
        return self._infsa("linear-infsa", self._testing.check_linear_infsa_output, out)

    def assert_pure_infsa_close(self, out):
        """attnspec.testing.assert_pure_infsa_close at the case's settings (as above)."""
        return self._infsa("pure-infsa", self._testing.check_pure_infsa_output, out)

    def assert_neumann_close(self, out):
        """attnspec.testing.assert_neumann_close at the case's settings (as above)."""
        return self._infsa("neumann", self._testing.check_neumann_output, out)

    def write_reproducer(self, path):
        """Writes the last check's reproducer to ``path`` (a .npz: inputs, outputs and the
        ``case`` JSON, the layout of ``attnspec check-kernel``'s reproducers) and returns the
        JSON as a dict."""
        import numpy as np

        inputs = {"q": self.q, "k": self.k, "v": self.v}
        if self.op == "attention-vjp":
            inputs["do"] = self.do
        if self.op == "attention-jvp":
            inputs.update(tq=self.tq, tk=self.tk, tv=self.tv)
        arrays = {n: self._testing._f64(a, n, allow_nonfinite=True)
                  for n, a in list(inputs.items()) + list(self.outputs.items())}
        if self.mask is not None:  # boolean as 0/1 (the CLI reads either)
            arrays["mask"] = np.asarray(self.mask, dtype=np.float64)
        r = self.result
        infsa = self.op in ("linear-infsa", "pure-infsa", "neumann")
        tensors = {"attention-vjp": None, "attention-jvp": {"do_t": r}}.get(self.op, {"o": r}) \
            or {"dq": r.dq, "dk": r.dk, "dv": r.dv}
        scale = next(iter(tensors.values())).scale
        mask = self.mask_kind
        params = ("--gamma %r --eps %r" % (float(self.gamma), float(self.eps)) if infsa
                  else "--mask %s --scale %r" % (mask, scale))
        replay = ("attnspec check-kernel %s --inputs %s --output %s --dtype %s --accumulate %s "
                  "%s --factor %r"
                  % (self.op, path, path, self.dtype, self.accumulate, params,
                     float(self.factor)))
        case = {"op": self.op, "dtype": self.dtype, "accumulate": self.accumulate, "mask": mask,
                "scale": scale, "factor": float(self.factor), "verdict": r.verdict,
                "summary": r.summary, "generator": self.name, "seed": self.seed,
                "shape": list(self.shape), "replay": replay,
                "worst": {n: {"verdict": t.verdict,
                              "worst_by_bound": [_element(e) for e in t.worst_by_bound],
                              "worst_by_rule": [_element(e) for e in t.worst_by_rule]}
                          for n, t in tensors.items()}}
        tmp = path + ".tmp.npz"
        np.savez(tmp, case=np.array(json.dumps(case).encode()), **arrays)
        os.replace(tmp, path)
        return case


def _element(e):
    return {"index": list(e.index), "got": e.got, "reference": e.reference, "error": e.error,
            "bound": e.bound, "allowed": e.allowed, "baseline": e.baseline}


@pytest.fixture
def attnspec_case(request):
    """The stress case this test instance runs on (Case); parametrised by the --attnspec-*
    options."""
    name, seed, mask = request.param
    config = request.config
    gamma, eps = _infsa_params(config)
    case = Case(name, seed, _shape(config), _option(config, "dtype"), mask,
                _option(config, "accumulate"), _factor(config), gamma, eps)
    request.node._attnspec_case = case
    for key, value in (("case", name), ("seed", seed), ("shape", ",".join(map(str, case.shape))),
                       ("dtype", case.dtype), ("mask", mask)):
        request.node.user_properties.append(("attnspec_" + key, value))
    return case


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    case = getattr(item, "_attnspec_case", None)
    if case is None or report.when != "call" or case.result is None:
        return
    props = [("attnspec_verdict", case.result.verdict)]
    directory = _option(item.config, "repro")
    if report.failed and directory and not case.result.passed:
        os.makedirs(directory, exist_ok=True)
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid).strip("_")
        path = os.path.join(directory, stem + ".repro.npz")
        case.write_reproducer(path)
        props.append(("attnspec_reproducer", path))
        report.sections.append(("attnspec reproducer", path))
    item.user_properties.extend(props)
    report.user_properties = list(item.user_properties)
