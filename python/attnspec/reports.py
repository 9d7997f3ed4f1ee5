"""attnspec's HDF5 reports (reports/SCHEMA.md), read and rendered by the library's report code,
so what ``attnspec report show`` and ``attnspec report render`` give::

    import attnspec
    r = attnspec.reports.read("reports/reference/verify.h5")
    print(r.kind, r.verdicts)                  # "verify", {"thm3.3": "holds", ...}
    print(r.summary)                           # the page's summary lines
    print(r.text)                              # the text of `attnspec report show`
    attnspec.reports.render("reports/reference/verify.h5", "/tmp/verify-page")

A report's ``kind`` is the one its top-level group marks: verify (check runs), jacobian, cond,
neumann, fidelity, or a dataset run of cond / neumann. Every kind has a ``page``: the title's
kind, the summary lines a reader acts on, and sections with tables whose cells are formatted as
the rendered page prints them (with the digits their enclosures support). A verify report also
has its check runs (``checks``: verdict, counts, regimes, the stored records' headlines) and
experiments (``experiments``: their result tables). Errors: ``InputNotFoundError`` for a missing
file, ``DataError`` for a file that is not an attnspec report of a schema this version reads.
"""

from dataclasses import dataclass, field
from typing import Dict, Tuple

import numpy as np

from . import _core
from ._table import table


@dataclass(frozen=True)
class StoredComparison:
    """The headline of a stored comparison: ``lhs relation rhs`` and its verdict and basis."""

    name: str
    lhs_name: str
    lhs: float
    relation: str
    rhs_name: str
    rhs: float
    verdict: str
    basis: str


@dataclass(frozen=True)
class StoredRecord:
    """A stored full record of a check run (its group in the file, regime, seed as written,
    verdict, whether it is the run's tightest instance, its comparisons). ``violation_robust``:
    1 robust, 0 fragile, NaN when the record does not classify its violation; ``sigma_ratio``
    sigma_min/sigma_max(J) of an attention record (NaN when absent); ``replays_from_seed``:
    whether its seed draws it again (else it replays from its stored inputs only)."""

    group: str
    check: str
    regime: str
    seed: str
    verdict: str
    is_worst: bool
    violation_robust: float
    sigma_ratio: float
    replays_from_seed: bool
    comparisons: Tuple[StoredComparison, ...]


def _record(d):
    return StoredRecord(group=d["group"], check=d["check"], regime=d["regime"], seed=d["seed"],
                        verdict=d["verdict"], is_worst=d["is_worst"],
                        violation_robust=d["violation_robust"], sigma_ratio=d["sigma_ratio"],
                        replays_from_seed=d["replays_from_seed"],
                        comparisons=tuple(StoredComparison(*c) for c in d["comparisons"]))


@dataclass(frozen=True)
class StoredRun:
    """A stored check run (/checks/<name>): verdict, kind, claim, source, instances, counts per
    verdict (holds, violated, inconclusive, not_applicable), seconds, ``regimes`` (a table:
    regime, the four counts, worst_ratio, median_ratio of the headline comparison) and the
    stored full ``records``."""

    name: str
    kind: str
    verdict: str
    claim: str
    source: str
    headline: str
    search_effort: str
    instances: int
    counts: Dict[str, int]
    seconds: float
    regimes: object = field(repr=False)
    records: Tuple[StoredRecord, ...] = field(repr=False)


_VERDICTS = ("holds", "violated", "inconclusive", "not_applicable")


def _regimes(rows):
    names = ("regime",) + _VERDICTS + ("worst_ratio", "median_ratio")
    return table({n: [r[i] for r in rows] for i, n in enumerate(names)},
                 dtypes={"regime": str, **{v: np.int64 for v in _VERDICTS},
                         "worst_ratio": np.float64, "median_ratio": np.float64})


def _run(d):
    return StoredRun(name=d["name"], kind=d["kind"], verdict=d["verdict"], claim=d["claim"],
                     source=d["source"], headline=d["headline"], search_effort=d["search_effort"],
                     instances=d["instances"], counts=dict(zip(_VERDICTS, d["counts"])),
                     seconds=d["seconds"], regimes=_regimes(d["regimes"]),
                     records=tuple(_record(r) for r in d["records"]))


@dataclass(frozen=True)
class StoredExperiment:
    """A stored experiment (a check of kind "experiment": a table, no verdict): its result
    ``table`` (axes as text columns, measured values as float columns), table-wide
    ``attributes`` (conventions and findings) and example records."""

    name: str
    claim: str
    source: str
    seed: str
    instances: int
    seconds: float
    table: object = field(repr=False)
    attributes: Dict[str, str] = field(repr=False)
    records: Tuple[StoredRecord, ...] = field(repr=False)


def _experiment(d):
    return StoredExperiment(name=d["name"], claim=d["claim"], source=d["source"], seed=d["seed"],
                            instances=d["instances"], seconds=d["seconds"],
                            table=table(d["columns"]), attributes=dict(d["attributes"]),
                            records=tuple(_record(r) for r in d["records"]))


@dataclass(frozen=True)
class PageTable:
    """A table of the page: the convention line said above it and its columns of formatted
    cells (``columns``: name -> list of str, in order)."""

    convention: str
    columns: Dict[str, Tuple[str, ...]]


@dataclass(frozen=True)
class PageSection:
    """A section of the page: ``id`` (as figures.tsv names it), ``title`` and its blocks, each
    ("paragraph", text), ("code", text) or ("table", PageTable)."""

    id: str
    title: str
    blocks: Tuple[tuple, ...] = field(repr=False)

    @property
    def tables(self):
        return [b[1] for b in self.blocks if b[0] == "table"]


def _section(s):
    sid, title, blocks = s
    out = []
    for kind, text, t in blocks:
        if kind == "table":
            out.append(("table", PageTable(t["convention"],
                                           {n: tuple(c) for n, c in zip(t["names"], t["cols"])})))
        else:
            out.append((kind, text))
    return PageSection(id=sid, title=title, blocks=tuple(out))


@dataclass(frozen=True)
class Report:
    """A report as the library reads it: ``kind``, ``provenance`` (name -> text: schema
    version, tool version, git sha, command line, seed, library versions, ...), ``checks``
    (StoredRun, verify reports), ``experiments``, ``other_groups`` (top-level groups other than
    /checks), ``conventions`` (per run: the convention attributes of its records), the page's
    ``header``, ``summary`` and ``sections``, and ``text``, what ``attnspec report show``
    prints."""

    path: str
    kind: str
    provenance: Dict[str, str] = field(repr=False)
    checks: Tuple[StoredRun, ...] = field(repr=False)
    experiments: Tuple[StoredExperiment, ...] = field(repr=False)
    other_groups: Tuple[str, ...] = field(repr=False)
    conventions: Dict[str, Dict[str, str]] = field(repr=False)
    header: Tuple[str, ...] = field(repr=False)
    summary: Tuple[str, ...] = field(repr=False)
    sections: Tuple[PageSection, ...] = field(repr=False)
    text: str = field(repr=False)

    @property
    def verdicts(self):
        """Check name -> verdict of every stored check run (experiments have none)."""
        return {c.name: c.verdict for c in self.checks}

    def section(self, sid):
        """The section whose id is ``sid`` (KeyError when the page has none)."""
        for s in self.sections:
            if s.id == sid:
                return s
        raise KeyError("no section %r (the page has %s)" % (sid, [s.id for s in self.sections]))


def read(path):
    """The report at ``path`` (any kind): its kind, the summary the library reads (the check
    runs of a verify report, with their records' headlines) and its page. Costs the reads of
    ``attnspec report show``: attributes, regime tables, record headers, the sections' data."""
    d = _core.report_read(str(path))
    page = d["page"]
    return Report(path=str(path), kind=d["kind"], provenance=dict(d["provenance"]),
                  checks=tuple(_run(c) for c in d["checks"]),
                  experiments=tuple(_experiment(e) for e in d["experiments"]),
                  other_groups=tuple(d["other_groups"]),
                  conventions={k: dict(v) for k, v in d["conventions"].items()},
                  header=tuple(page["header"]), summary=tuple(page["summary"]),
                  sections=tuple(_section(s) for s in page["sections"]), text=d["text"])


def markdown(path):
    """The page of ``attnspec report render PATH`` (Markdown without figures), as a string."""
    return _core.report_markdown(str(path))


def render(path, out_dir, figures=True):
    """Renders the report at ``path`` as ``attnspec report render PATH --out OUT_DIR`` does:
    OUT_DIR/report.md and, with ``figures``, OUT_DIR/figures/ made by the figures script
    (scripts/render_figures.py with /usr/bin/python3 or $ATTNSPEC_PYTHON: matplotlib and h5py;
    ``UnavailableError`` without them). The directory is written atomically: an existing page
    directory is replaced only when the new one is complete; a path ending in ".md" gets the
    Markdown alone. The target is checked before anything is read (``UsageError`` when it is the
    report, ``OutputError`` when it is a non-empty directory that is not a page). Returns the
    number of figures."""
    return _core.report_render(str(path), str(out_dir), bool(figures))
