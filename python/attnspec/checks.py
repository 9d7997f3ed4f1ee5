"""The theorem checks of ``attnspec verify``, from Python: the same registry, the same runs (the
library's run loop and scheduler, so the same verdicts and numbers for the same seed), the same
replay of a stored counterexample.

::

    import attnspec
    for c in attnspec.checks.list():
        print(c.name, c.kind, c.source)
    res = attnspec.checks.run(["thm3.5", "lemma3.7"], seed=7)
    print(res.verdicts)                   # {"thm3.5": "holds", "lemma3.7": "holds"}
    res["thm3.5"].instances               # one row per instance (DataFrame or dict of arrays)
    r = attnspec.checks.replay("reports/reference/verify.counterexamples/thm3.4-instance_257.h5")
    print(r.verdict, r.comparisons[0].margin)

Verdicts are the strings "holds", "violated", "inconclusive" and "not_applicable" (docs/MATH.md;
proofs/<stem>.md for each statement): ``holds`` and ``violated`` are proved by the enclosures of
both sides, ``inconclusive`` when they overlap, ``not_applicable`` when a hypothesis fails. A
comparison's ``margin`` is rhs - lhs for <= and < (>= 0 is room), |lhs - rhs| for =; ``ratio`` is
lhs / rhs. Both are in the units of the compared quantities (most are dimensionless: condition
numbers and their bounds).
"""

import builtins
import math
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

import numpy as np

from . import _core, _interrupt
from ._errors import UsageError, make
from ._table import table

#: The verdict strings, in the library's order (base/check.hpp, Verdict).
VERDICTS = ("holds", "violated", "inconclusive", "not_applicable")

#: The master seed of ``attnspec verify`` (RunOptions::seed).
DEFAULT_SEED = 20251


@dataclass(frozen=True)
class CheckInfo:
    """One row of the registry (``attnspec verify --list``): ``kind`` is "theorem" (its
    violations are findings), "reading" (an alternative reading of an informal claim, probed to
    map where it holds) or "experiment" (a table, no verdict); ``source`` where the
    reconstructed statement comes from (docs/SOURCES.md); ``statement`` its file
    (proofs/<stem>.md); ``needs_dataset``: it runs on a model dataset (minilm-l6);
    ``replayable``: ``replay`` can re-run its stored records."""

    name: str
    kind: str
    source: str
    summary: str
    statement: str
    needs_dataset: bool = False
    replayable: bool = False


def list():  # noqa: A001 (the issue's name: checks.list())
    """The registered checks, in the registry's order (the order of ``verify --all``)."""
    return [CheckInfo(name=d["name"], kind=d["kind"], source=d["source"], summary=d["summary"],
                      statement=d["statement"], needs_dataset=d["needs_dataset"],
                      replayable=d["replayable"]) for d in _core.list_checks()]


@dataclass(frozen=True)
class Comparison:
    """One claim ``lhs relation rhs`` ("<=", "=" or "<") between enclosed quantities: the
    computed values, their enclosures [lo, hi], the verdict the enclosures prove, ``margin`` and
    ``ratio`` (module docstring) and ``basis`` (how the verdict was reached)."""

    name: str
    relation: str
    lhs_name: str
    lhs: float
    lhs_lo: float
    lhs_hi: float
    rhs_name: str
    rhs: float
    rhs_lo: float
    rhs_hi: float
    margin: float
    ratio: float
    verdict: str
    basis: str
    attainable: bool = False


@dataclass(frozen=True)
class Record:
    """One instance of a check (a CheckResult): its regime and seed (the seed draws it again),
    the verdict, the hypotheses as (name, met, detail), the comparisons, the named tolerances as
    (name, value, reason), the conventions, every computed factor in ``values``. A replayed
    record also names the ``file`` and ``group`` it came from and its check's ``kind`` and
    ``source``."""

    check: str
    claim: str
    regime: str
    seed: int
    verdict: str
    hypotheses: Tuple[Tuple[str, bool, str], ...]
    comparisons: Tuple[Comparison, ...]
    tolerances: Tuple[Tuple[str, float, str], ...]
    conventions: Dict[str, str]
    values: Dict[str, float]
    note: str = ""
    file: str = ""
    group: str = ""
    kind: str = ""
    source: str = ""

    def comparison(self, name):
        """The comparison called ``name`` (KeyError when the record has none)."""
        for c in self.comparisons:
            if c.name == name:
                return c
        raise KeyError("%s has no comparison %r (it has %s)"
                       % (self.check, name, [c.name for c in self.comparisons]))


def _record(d, **extra):
    return Record(check=d["check"], claim=d["claim"], regime=d["regime"], seed=d["seed"],
                  verdict=d["verdict"], hypotheses=tuple(d["hypotheses"]),
                  comparisons=tuple(Comparison(**c) for c in d["comparisons"]),
                  tolerances=tuple(d["tolerances"]), conventions=dict(d["conventions"]),
                  values=dict(d["values"]), note=d["note"], **extra)


@dataclass(frozen=True)
class Regime:
    """The counts of one regime (instance family) of a run and the worst and median ratio of its
    headline comparison (NaN when none)."""

    regime: str
    holds: int
    violated: int
    inconclusive: int
    not_applicable: int
    worst_ratio: float
    median_ratio: float

    @property
    def n(self):
        return self.holds + self.violated + self.inconclusive + self.not_applicable


@dataclass(frozen=True)
class CheckRun:
    """The run of one check: its verdict (the worst over its instances; "not_applicable" only
    when every instance is), ``kind``, ``claim``, ``source``, master ``seed``, ``headline`` (the
    comparison the table's lhs, rhs, margin and ratio are of), the regimes, every record, and
    ``instances``: one row per instance with the columns of a report's
    /checks/<check>/instances (regime, verdict, seed, lhs, rhs, margin, ratio; reports/SCHEMA.md),
    a pandas DataFrame when pandas is installed, else a dict of numpy arrays. An experiment
    (kind "experiment") has no verdict that counts; its result table is ``table``."""

    check: str
    kind: str
    claim: str
    source: str
    seed: int
    verdict: str
    headline: str
    seconds: float
    search_effort: str
    regimes: Tuple[Regime, ...]
    records: Tuple[Record, ...] = field(repr=False)
    instances: object = field(repr=False)
    table: object = field(default=None, repr=False)

    def count(self, verdict):
        """How many instances have ``verdict`` (one of VERDICTS)."""
        if verdict not in VERDICTS:
            raise make(UsageError, "verdict must be one of %s, got %r" % (VERDICTS, verdict),
                       "verdict")
        return sum(1 for r in self.records if r.verdict == verdict)


def _instances(t):
    return table({"regime": t["regime"], "verdict": t["verdict"], "seed": t["seed"],
                  "lhs": t["lhs"], "rhs": t["rhs"], "margin": t["margin"], "ratio": t["ratio"]},
                 dtypes={"seed": np.uint64, "regime": str, "verdict": str})


def _run(d):
    experiment = None
    if "table" in d:
        experiment = table(d["table"]["columns"])
    return CheckRun(check=d["check"], kind=d["kind"], claim=d["claim"], source=d["source"],
                    seed=d["seed"], verdict=d["verdict"], headline=d["headline"],
                    seconds=d["seconds"], search_effort=d["search_effort"],
                    regimes=tuple(Regime(*r) for r in d["regimes"]),
                    records=tuple(_record(r) for r in d["records"]),
                    instances=_instances(d["instances"]), table=experiment)


class Results:
    """The runs of ``run``, in the order asked: ``runs``, ``verdicts`` (name -> verdict),
    ``results[name]`` one CheckRun, and ``instances``: every run's instance table stacked, with a
    first column ``check``."""

    def __init__(self, runs, handle=None, call=None):
        self.runs = tuple(runs)
        self.verdicts = {r.check: r.verdict for r in self.runs}
        self._handle, self._call = handle, call

    def to_report(self, path):
        """Writes these runs as ``attnspec verify`` writes its report: the same HDF5 layout
        (reports/SCHEMA.md), written atomically (nothing is left at ``path`` if writing fails;
        an older file there survives), every violated record (up to 64 per check) as a
        replayable instance file in the companion directory ``<path without .h5>.counterexamples/``.
        ``attnspec report show|render`` and ``attnspec.reports.read`` read it. The provenance
        command line is the Python call. Errors: ``OutputError`` (exit class 73/74) for a path
        that cannot be written. Returns ``path``."""
        if self._handle is None:
            raise make(UsageError, "to_report: these Results were not made by checks.run",
                       "path")
        path = str(path)
        _core.write_check_report(self._handle, path, self._call or "python: attnspec.checks.run")
        return path

    def __getitem__(self, name):
        for r in self.runs:
            if r.check == name:
                return r
        raise KeyError("no run of %r (ran %s)" % (name, [r.check for r in self.runs]))

    def __iter__(self):
        return iter(self.runs)

    def __len__(self):
        return len(self.runs)

    def __repr__(self):
        return "Results(%s)" % ", ".join("%s: %s" % kv for kv in self.verdicts.items())

    @property
    def instances(self):
        cols = {"check": [], "regime": [], "verdict": [], "seed": [], "lhs": [], "rhs": [],
                "margin": [], "ratio": []}
        for run in self.runs:
            t = run.instances
            n = len(t["regime"])
            cols["check"].extend([run.check] * n)
            for k in builtins.list(cols)[1:]:
                cols[k].extend(np.asarray(t[k]).tolist())
        return table(cols, dtypes={"seed": np.uint64, "check": str, "regime": str,
                                   "verdict": str, "lhs": np.float64, "rhs": np.float64,
                                   "margin": np.float64, "ratio": np.float64})


def _count(x, name, lo, hi):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not lo <= x <= hi:
        raise make(UsageError, "%s must be an integer in [%d, %d], got %r" % (name, lo, hi, x),
                   name)
    return int(x)


def _names(names):
    if names is None:
        return []
    if isinstance(names, str):
        return [names]
    names = builtins.list(names)
    if not names or not all(isinstance(n, str) for n in names):
        raise make(UsageError, "names: give check names (strings) or None for every check, got "
                   "%r" % (names,), "names")
    return names


def run(names=None, quick=True, seed=DEFAULT_SEED, threads=None, *, trials=None, regimes=None,
        shape=None, time_budget=None, dataset=None, embedded=None, progress=None):
    """Runs checks as ``attnspec verify NAMES... --seed SEED --threads THREADS`` does and returns
    their ``Results`` (verdict per check, records, instance tables).

    * ``names``: a check name, a list of them, or None for every check (``verify --all``; the
      real-model checks only with a dataset);
    * ``quick``: True runs each check's default grid, False its thorough one (``--thorough``:
      more instances, larger shapes);
    * ``seed``: the master seed (instance i uses a seed derived from it: the same seed gives the
      same instances and numbers, for any ``threads``);
    * ``threads``: workers (None: every core, as the CLI);
    * ``trials``: exactly this many instances per check (``--trials``); ``regimes``: only
      regimes whose name contains one of these strings; ``shape``: (A, B) instead of the grid;
      ``time_budget``: seconds per check after which no instance starts;
    * ``dataset``: the model dataset of the real-model checks (None: "minilm-l6" when present,
      "" none); ``embedded``: the heads file joining the attention checks (None: the embedded
      one, "" none);
    * ``progress``: None, or a callable ``progress(check, done, total)`` called as instances
      finish (from the runner threads, one call at a time, with the GIL held; an exception it
      raises is reported as unraisable and the run goes on).

    Errors: ``UsageError`` for an unknown check or option value, ``DataError`` for a shape above
    the memory budget, ``InputNotFoundError`` for a dataset that does not exist. The GIL is
    released while the checks run; Ctrl-C raises KeyboardInterrupt at once and the run stops at
    its next instance (_interrupt.py)."""
    names = _names(names)
    if not isinstance(quick, bool):
        raise make(UsageError, "quick must be True or False, got %r" % (quick,), "quick")
    seed = _count(seed, "seed", 0, 2**64 - 1)
    threads = 0 if threads is None else _count(threads, "threads", 1, 4096)
    trials = 0 if trials is None else _count(trials, "trials", 1, 2**31 - 1)
    regimes = [] if regimes is None else ([regimes] if isinstance(regimes, str)
                                          else [str(r) for r in regimes])
    if shape is None:
        shape = []
    else:
        shape = [_count(s, "shape", 1, 2**31 - 1) for s in shape]
        if len(shape) != 2:
            raise make(UsageError, "shape must be (A, B), got %r" % (shape,), "shape")
    time_budget = 0.0 if time_budget is None else float(time_budget)
    if not (time_budget >= 0 and math.isfinite(time_budget)):
        raise make(UsageError, "time_budget must be >= 0 seconds, got %r" % (time_budget,),
                   "time_budget")
    dataset = _core.default_model_dataset() if dataset is None else str(dataset)
    embedded = _core.default_embedded_heads() if embedded is None else str(embedded)
    handle, runs = _interrupt.call(_core.run_checks, names, trials, seed, not quick, threads,
                                   regimes, shape, time_budget, dataset, embedded, progress)
    call = ("python: attnspec.checks.run(names=%r, quick=%r, seed=%d, threads=%d, trials=%d, "
            "regimes=%r, shape=%r, time_budget=%r, dataset=%r, embedded=%r)"
            % (names, quick, seed, threads, trials, regimes, shape, time_budget, dataset,
               embedded))
    return Results((_run(d) for d in runs), handle, call)


def replay(path, check=None, record=None):
    """Re-runs one stored record from its stored inputs, as ``attnspec verify CHECK --instance
    PATH [--record RECORD]``: ``path`` is an instance file (a counterexample ``verify`` wrote
    beside its report, e.g. reports/reference/verify.counterexamples/thm3.4-instance_257.h5;
    ``check`` defaults to the one it holds) or a report (then ``check`` is required, and
    ``record`` names the group under /checks/<check>/records, default the first violated one,
    else the first). Returns the replayed ``Record`` (its ``file``, ``group``, ``kind`` and
    ``source`` set). Errors: ``InputNotFoundError`` for a missing file, ``DataError`` for a file
    that is not an attnspec report or instance file, or lacks the record; ``UsageError`` for an
    unknown check or one that cannot replay."""
    path = str(path)
    if check is None:
        check = _core.instance_check(path)
        if not check:
            raise make(UsageError, "replay: %s is not an instance file: name the check "
                       "(check=...)" % path, "check")
    d = _core.replay_check(path, str(check), "" if record is None else str(record))
    return _record(d, file=d["file"], group=d["group"], kind=d["kind"], source=d["source"])
