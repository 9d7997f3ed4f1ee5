#!/usr/bin/python3
"""Figures of an attnspec HDF5 report: an SVG and a PNG per figure, figures.tsv, figures.json.

The contract with `attnspec report render` and the manifest layout are in reports/SCHEMA.md
("Figures"). Reads the report with h5py, draws with matplotlib (Agg backend), and writes
deterministic files: two runs on one report give byte-identical SVG and PNG.
"""

import argparse
import errno
import importlib
import json
import math
import os
import sys
import warnings

EXIT_OK, EXIT_USAGE, EXIT_DATA, EXIT_MISSING = 0, 64, 65, 66
EXIT_NO_DEPS, EXIT_BUG, EXIT_CANNOT_CREATE, EXIT_IO = 69, 70, 73, 74

SCHEMA_MAJOR = "1"  # reports/SCHEMA.md: "1.0"; any 1.x is read, anything else refused
MAX_VALUES = 10_000_000  # values one dataset may hold for a figure (refused above: exit 65)
FIDELITY_CLAIM = 0.985
WIDTH_IN = 6.5  # page width
# Okabe-Ito, in the order categories take them; markers as well as colours.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
VERDICTS = {  # verdict -> (colour, marker, legend label)
    "holds": ("#0072B2", "o", "holds"),
    "violated": ("#D55E00", "X", "violated"),
    "inconclusive": ("#E69F00", "^", "inconclusive"),
    "not_applicable": ("#999999", "s", "not applicable"),
}
KAPPA_LABEL = "κ (strict, dimensionless)"
EXAMPLES = """examples:
  attnspec verify --all --out /tmp/r/verify.h5
  scripts/render_figures.py --report /tmp/r/verify.h5 --out /tmp/r/figures
  attnspec neumann --out /tmp/r/neumann.h5
  scripts/render_figures.py --report /tmp/r/neumann.h5 --out /tmp/r/neumann-figures

writes DIR/<id>.svg, DIR/<id>.png, DIR/figures.tsv and DIR/figures.json (reports/SCHEMA.md,
"Figures"). Exit codes: 0 written (a report with nothing to plot: an empty manifest), 64 usage,
65 malformed report or unknown schema_version, 66 report missing or unreadable, 69 matplotlib,
h5py or numpy cannot be imported, 70 internal error, 73 DIR cannot be created, 74 I/O error."""


class Failure(Exception):
    """Ends the run with one line on stderr and an exit code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class ReportError(Failure):
    """A malformed report (exit 65)."""

    def __init__(self, message):
        super().__init__(EXIT_DATA, message)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Failure(EXIT_USAGE, "render_figures.py: " + message + " (see --help)")


def parse_args(argv):
    p = Parser(prog="render_figures.py", epilog=EXAMPLES,
               formatter_class=argparse.RawDescriptionHelpFormatter,
               description="Render the figures of an attnspec HDF5 report (SVG and PNG).")
    p.add_argument("--report", required=True, metavar="F.h5", help="attnspec report to read")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for the figures")
    return p.parse_args(argv)


def import_deps():
    """Imports numpy, h5py and matplotlib (Agg) into globals; exit 69 when one is missing."""
    global np, h5py, plt, mcolors
    modules = {}
    for name in ("numpy", "h5py", "matplotlib", "matplotlib.pyplot", "matplotlib.colors"):
        try:
            modules[name] = importlib.import_module(name)
        except ImportError as e:  # also a broken install
            raise Failure(EXIT_NO_DEPS, "render_figures.py: cannot import %s (%s): install "
                          "python3-matplotlib, python3-h5py and python3-numpy "
                          "(scripts/install-deps.sh)" % (name, first_line(e))) from None
        if name == "matplotlib":
            modules[name].use("Agg")
            warnings.simplefilter("ignore")  # stderr: one line (or none) per run
    np, h5py = modules["numpy"], modules["h5py"]
    plt, mcolors = modules["matplotlib.pyplot"], modules["matplotlib.colors"]
    plt.rcParams.update({
        "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "xtick.labelsize": 9,
        "ytick.labelsize": 9, "legend.fontsize": 9, "figure.titlesize": 10,
        "axes.grid": True, "grid.alpha": 0.3, "grid.linewidth": 0.5,
        "svg.hashsalt": "attnspec-figures", "svg.fonttype": "path", "savefig.dpi": 150,
        "image.cmap": "viridis", "axes.prop_cycle": plt.cycler(color=PALETTE),
    })


# ---------------------------------------------------------------------------------------------
# Reading: every error names the file and the object.


class Report:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.f = None

    def open(self):
        if not os.path.exists(self.path):
            raise Failure(EXIT_MISSING, "%s: no such file" % self.path)
        if not os.access(self.path, os.R_OK) or os.path.isdir(self.path):
            raise Failure(EXIT_MISSING, "%s: cannot read the file" % self.path)
        try:
            self.f = h5py.File(self.path, "r")
        except OSError as e:
            raise ReportError("%s: not an HDF5 file (%s)" % (self.path, first_line(e))) from None
        version = self.attr("/", "schema_version", str, None)
        if version is None:
            self.fail("/", "no attribute 'schema_version': not an attnspec report")
        if version.split(".")[0] != SCHEMA_MAJOR or not version.replace(".", "").isdigit():
            self.fail("/", "schema_version '%s' is not supported (this script reads %s.x, "
                      "reports/SCHEMA.md)" % (version, SCHEMA_MAJOR))

    def fail(self, obj, what):
        raise ReportError("%s: %s: %s" % (self.path, obj, what))

    def get(self, path, kind=None):
        """The object at path (None when absent); links out of the file are refused."""
        node = self.f
        parts = [p for p in path.split("/") if p]
        try:
            for i, part in enumerate(parts):
                if not isinstance(node, h5py.Group) or part not in node:
                    return None
                link = node.get(part, getlink=True)
                if isinstance(link, h5py.ExternalLink):
                    self.fail("/" + "/".join(parts[:i + 1]), "external link refused")
                node = node[part]
        except (KeyError, OSError, RuntimeError, ValueError) as e:
            self.fail(path, "cannot be read (%s)" % first_line(e))
        if kind is not None and not isinstance(node, kind):
            self.fail(path, "is not a %s" % ("group" if kind is h5py.Group else "dataset"))
        return node

    def has(self, path):
        return self.get(path) is not None

    def children(self, path):
        g = self.get(path, h5py.Group)
        return [] if g is None else list(g.keys())

    def attr(self, path, name, kind, default=KeyError):
        obj = self.get(path) if path != "/" else self.f
        if obj is None or name not in obj.attrs:
            if default is KeyError:
                self.fail(path, "attribute '%s' is missing" % name)
            return default
        try:
            value = obj.attrs[name]
        except (OSError, RuntimeError, TypeError, ValueError) as e:
            self.fail(path, "attribute '%s' cannot be read (%s)" % (name, first_line(e)))
        if isinstance(value, np.ndarray):
            if value.size != 1:
                self.fail(path, "attribute '%s' holds %d values, expected one" % (name, value.size))
            value = value.reshape(-1)[0]
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        try:
            return kind(value)
        except (TypeError, ValueError):
            self.fail(path, "attribute '%s' is %r, expected %s" % (name, value, kind.__name__))

    def dataset(self, path, n):
        ds = self.get(path, h5py.Dataset)
        if ds is None:
            self.fail(path, "is missing")
        if len(ds.shape) != 1 or (n is not None and ds.shape[0] != n):
            self.fail(path, "has shape %s, expected (%s,)" % (tuple(ds.shape), "n" if n is None else n))
        if ds.is_virtual or ds.external:
            self.fail(path, "stores its data outside the file (virtual or external storage)")
        if ds.shape[0] > MAX_VALUES:
            self.fail(path, "holds %d values, above the %d a figure reads" % (ds.shape[0], MAX_VALUES))
        return ds

    def numbers(self, path, n=None):
        """A 1-D numeric column as float64; text that parses as numbers is accepted."""
        ds = self.dataset(path, n)
        try:
            if h5py.check_string_dtype(ds.dtype) is not None:
                return np.array([float(s) for s in ds.asstr()[()]], dtype=float)
            if ds.dtype.kind not in "fiu":
                self.fail(path, "is of type %s, expected numbers" % ds.dtype)
            return np.asarray(ds[()], dtype=float)
        except ValueError:
            self.fail(path, "holds text, expected numbers")
        except (OSError, RuntimeError, TypeError) as e:
            self.fail(path, "cannot be read (%s)" % first_line(e))

    def labels(self, path, n=None):
        """A 1-D column of category labels (text, or numbers written with %g)."""
        ds = self.dataset(path, n)
        try:
            if h5py.check_string_dtype(ds.dtype) is not None:
                return [str(s) for s in ds.asstr()[()]]
            if ds.dtype.kind not in "fiu":
                self.fail(path, "is of type %s, expected text or numbers" % ds.dtype)
            return ["%g" % v for v in ds[()]]
        except (OSError, RuntimeError, TypeError, ValueError, UnicodeDecodeError) as e:
            self.fail(path, "cannot be read (%s)" % first_line(e))

    def table(self, check, axes, columns):
        """An experiment table (reports/SCHEMA.md, "Experiments"): named axes and columns."""
        base = "/checks/%s" % check
        rows = self.attr(base, "rows", int)
        if rows < 0:
            self.fail(base, "attribute 'rows' is %d" % rows)
        t = {a: self.labels("%s/table/%s" % (base, a), rows) for a in axes}
        t.update({c: self.numbers("%s/table/%s" % (base, c), rows) for c in columns})
        t["rows"] = rows
        return t


def first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


# ---------------------------------------------------------------------------------------------
# Figures


class Figure:
    """One figure: id (file stem), section, caption, the numbers it plots, the matplotlib figure."""

    def __init__(self, fid, section, caption, data, fig):
        self.id, self.section, self.caption, self.data, self.fig = fid, section, caption, data, fig


def new_figure(rows=1, cols=1, height=3.4, **kw):
    fig, axes = plt.subplots(rows, cols, figsize=(WIDTH_IN, height), layout="constrained",
                             squeeze=False, **kw)
    return fig, axes


def as_list(values):
    """numpy values to JSON-ready floats: inf, -inf and nan as strings (the CLI's convention)."""
    out = []
    for v in np.asarray(values, dtype=float).tolist():
        out.append(v if math.isfinite(v) else ("nan" if math.isnan(v) else
                                                ("inf" if v > 0 else "-inf")))
    return out


def fmt(x):
    return "%.3g" % x


def positive_finite(*arrays):
    mask = np.ones(np.shape(arrays[0]), dtype=bool)
    for a in arrays:
        mask &= np.isfinite(a) & (a > 0)
    return mask


def order_of(labels):
    """Distinct labels in numeric order when all are numbers, else in order of appearance."""
    seen = list(dict.fromkeys(labels))
    try:
        return sorted(seen, key=float)
    except ValueError:
        return seen


def symlog_lambda(ax, lambdas):
    """λ axis: linear near 0 (λ = 0 is a point of every sweep), logarithmic from 0.1 on."""
    ax.set_xscale("symlog", linthresh=0.1, linscale=0.4)
    ax.set_xlim(-0.04, max(0.2, 1.4 * float(np.nanmax(lambdas))) if len(lambdas) else 1.0)
    ax.set_xlabel("λ (dimensionless)")


def legend_below(fig, handles, ncol):
    """One legend for the figure, centred below its panels (the layout leaves room for it)."""
    rows = (len(handles) + ncol - 1) // ncol
    frac = (0.1 + 0.2 * rows) / fig.get_figheight()
    fig.get_layout_engine().set(rect=(0, frac, 1, 1 - frac))
    fig.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False,
               bbox_to_anchor=(0.5, 0))


# --- summary ---------------------------------------------------------------------------------


def fig_summary(rep, theorem_checks):
    counts = {k: [] for k in VERDICTS}
    for c in theorem_checks:
        for k in VERDICTS:
            counts[k].append(rep.attr("/checks/" + c, "n_" + k, int))
    fig, axes = new_figure(height=0.9 + 0.28 * len(theorem_checks))
    ax = axes[0][0]
    y = np.arange(len(theorem_checks))
    left = np.zeros(len(theorem_checks))
    hatches = {"violated": "xx", "inconclusive": "..", "not_applicable": "//"}
    for k, (colour, _, label) in VERDICTS.items():
        ax.barh(y, counts[k], left=left, color=colour, label=label, hatch=hatches.get(k),
                edgecolor="white", linewidth=0.5)
        left += np.array(counts[k])
    kinds = [rep.attr("/checks/" + c, "kind", str, "theorem") for c in theorem_checks]
    ax.set_yticks(y, [c if k == "theorem" else "%s (%s)" % (c, k)
                      for c, k in zip(theorem_checks, kinds)])
    ax.invert_yaxis()
    ax.set_xlabel("instances (count)")
    ax.set_title("Verdicts per check")
    ax.grid(axis="y", visible=False)
    legend_below(fig, ax.get_legend_handles_labels()[0], 4)
    n_viol = sum(1 for v in counts["violated"] if v > 0)
    n_read = sum(1 for k in kinds if k != "theorem")
    caption = ("Instances per verdict for each of the %d theorem checks and %d reading(s) of a "
               "theorem (marked); %d check(s) with a violated instance. Experiments are drawn "
               "apart." % (len(theorem_checks) - n_read, n_read, n_viol))
    data = {"checks": theorem_checks, "kinds": kinds}
    data.update({"n_" + k: v for k, v in counts.items()})
    return Figure("summary-verdicts", "summary", caption, data, fig)


# --- κ(J) against the Thm 3.4 bound ----------------------------------------------------------


def figs_kappa_bound(fid, section, title, kappa, bound, verdicts, robust=None):
    """Scatter of κ(J) against the bound, log-log, with y = x; violated points marked (none
    without a plottable point).

    robust: per row 1 (robust violation), 0 (fragile) or NaN (unclassified / not violated)."""
    keep = positive_finite(kappa, bound)
    if not keep.any():
        return []
    fig, axes = new_figure(height=4.2)
    ax = axes[0][0]
    for v, (colour, marker, label) in VERDICTS.items():
        m = keep & np.array([x == v for x in verdicts])
        if not m.any():
            continue
        if v == "violated" and robust is not None:
            fragile = m & (robust == 0)
            ax.scatter(bound[m & ~fragile], kappa[m & ~fragile], s=36, marker=marker, c=colour,
                       label="violated (%d)" % (m & ~fragile).sum(), zorder=3)
            if fragile.any():
                ax.scatter(bound[fragile], kappa[fragile], s=36, marker="D", facecolors="none",
                           edgecolors=colour, label="violated, fragile (%d)" % fragile.sum(),
                           zorder=3)
            continue
        ax.scatter(bound[m], kappa[m], s=14 if v == "holds" else 30, marker=marker, c=colour,
                   alpha=0.7 if v == "holds" else 1.0, label="%s (%d)" % (label, m.sum()),
                   linewidths=0)
    lo = min(kappa[keep].min(), bound[keep].min()) / 2
    hi = max(kappa[keep].max(), bound[keep].max()) * 2
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8, linestyle="--", label="κ(J) = bound")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Thm 3.4 bound on κ(J) (dimensionless)")
    ax.set_ylabel("κ(J) " + KAPPA_LABEL[2:])
    ax.set_title(title)
    ax.legend(loc="upper left")
    n_viol = int(sum(1 for v in verdicts if v == "violated"))
    n_na = sum(1 for v, k in zip(verdicts, keep) if v == "not_applicable" and not k)
    caption = ("κ(J) against the Thm 3.4 bound for %d instance(s); points above the dashed line "
               "violate it (%d violated). Not drawn: %d not applicable, %d with an infinite or "
               "non-positive side." % (keep.sum(), n_viol, n_na, len(kappa) - keep.sum() - n_na))
    data = {"kappa_J": as_list(kappa[keep]), "bound": as_list(bound[keep]),
            "verdict": [v for v, k in zip(verdicts, keep) if k], "not_plotted": int((~keep).sum())}
    if robust is not None:
        data["violation_robust"] = as_list(robust[keep])
    return [Figure(fid, section, caption, data, fig)]


def thm34_robustness(rep, check, verdicts):
    """violation_robust of each violated instance from its record (NaN where not recorded)."""
    robust = np.full(len(verdicts), np.nan)
    for i, v in enumerate(verdicts):
        path = "/checks/%s/records/instance_%d/values" % (check, i)
        if v == "violated" and rep.has(path):
            robust[i] = rep.attr(path, "violation_robust", float, np.nan)
    return robust


def figs_thm34(rep, check):
    base = "/checks/%s/instances" % check
    verdicts = rep.labels(base + "/verdict")
    n = len(verdicts)
    kappa, bound = rep.numbers(base + "/lhs", n), rep.numbers(base + "/rhs", n)
    robust = thm34_robustness(rep, check, verdicts)
    return figs_kappa_bound("verify-%s-kappa-bound" % check, "verify/" + check,
                            "κ(J) vs the Thm 3.4 bound (random and searched instances)",
                            kappa, bound, verdicts, robust)


def figs_model_kappa_j(rep, check):
    t = rep.table(check, ["layer", "head", "sentence", "verdict"], ["kappa_J", "bound"])
    return figs_kappa_bound("verify-%s-kappa-bound" % check, "verify/" + check,
                            "κ(J) vs the Thm 3.4 bound on the model's heads",
                            t["kappa_J"], t["bound"], t["verdict"])


# --- λ sweeps ---------------------------------------------------------------------------------


def figs_speca_sweep(rep, check):
    """specA-sweep: median κ(J) ratio and median max probability against λ, per cell."""
    cols = ["median_kappa_ratio", "median_max_prob"]
    t = rep.table(check, ["tokens", "placement", "scale", "lambda"], cols)
    if not t["rows"]:
        return []
    lam = np.array([float_or_fail(rep, check, "lambda", s) for s in t["lambda"]])
    scales, tokens, places = (order_of(t[a]) for a in ("scale", "tokens", "placement"))
    fig, axes = new_figure(2, len(scales), height=5.6, sharex=True)
    curves = []
    for j, scale in enumerate(scales):
        for ti, tok in enumerate(tokens):
            for pi, place in enumerate(places):
                rows = [r for r in range(t["rows"]) if (t["scale"][r], t["tokens"][r],
                                                       t["placement"][r]) == (scale, tok, place)]
                if not rows:
                    continue
                rows.sort(key=lambda r: lam[r])
                curve = {"scale": scale, "tokens": tok, "placement": place,
                         "lambda": as_list(lam[rows])}
                style = dict(color=PALETTE[ti % 8], marker=MARKERS[pi % 8], markersize=4,
                             linestyle="-" if pi == 0 else "--", linewidth=1.2)
                for i, c in enumerate(cols):
                    curve[c] = as_list(t[c][rows])
                    axes[i][j].plot(lam[rows], t[c][rows], label="%s, C on %s" % (
                        tok, placement_text(place)), **style)
                curves.append(curve)
        axes[0][j].set_title("logit scale " + scale.replace("sqrt(d)", "√d").replace("=", " = "))
        axes[0][j].set_yscale("log")
        axes[0][j].axhline(1.0, color="black", linewidth=0.8, linestyle=":")
        symlog_lambda(axes[1][j], lam)
        axes[1][j].set_ylim(0, 1.05)
    axes[0][0].set_ylabel("median κ(J)/κ(J at λ=0)\n(strict, dimensionless)")
    axes[1][0].set_ylabel("median max attention\nprobability (dimensionless)")
    legend_below(fig, axes[0][0].get_legend_handles_labels()[0], 3)
    caption = ("SpecA (C = λI): median ratio κ(J at λ)/κ(J at 0) (top; gaps: rank-deficient J) "
               "and median largest attention probability (bottom), per token distribution and "
               "the weights corrected (%s)." % " or ".join("W_" + p for p in places))
    return [Figure("verify-%s-lambda" % check, "verify/" + check, caption, {"curves": curves}, fig)]


def placement_text(place):
    """'QKV' -> $W_{Q,K,V}$, 'Q' -> $W_Q$ (the weights the correction is added to)."""
    return "$W_{%s}$" % ",".join(place) if place.isalpha() else place


def float_or_fail(rep, check, column, text):
    try:
        return float(text)
    except ValueError:
        rep.fail("/checks/%s/table/%s" % (check, column), "holds '%s', expected a number" % text)


def quartiles(values):
    """(25 %, median, 75 %) over the finite values; NaN when there are none."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return (math.nan,) * 3
    return tuple(float(q) for q in np.percentile(v, [25, 50, 75]))


def figs_model_speca(rep, check):
    """κ(J) and max probability against λ on the model: median over heads and sentences."""
    t = rep.table(check, ["layer", "head", "sentence"], ["lambda", "kappa_J", "max_prob"])
    if not t["rows"]:
        return []
    layers, lambdas = order_of(t["layer"]), sorted(set(t["lambda"].tolist()))
    fig, axes = new_figure(1, 2, height=3.4)
    per_layer = {}
    for i, layer in enumerate(layers):
        sel = np.array([x == layer for x in t["layer"]])
        q = [quartiles(t["kappa_J"][sel & (t["lambda"] == lam)]) for lam in lambdas]
        p = [quartiles(t["max_prob"][sel & (t["lambda"] == lam)])[1] for lam in lambdas]
        style = dict(color=PALETTE[i % 8], marker=MARKERS[i % 8], markersize=4, linewidth=1.2)
        axes[0][0].plot(lambdas, [x[1] for x in q], label="layer " + layer, **style)
        axes[0][0].fill_between(lambdas, [x[0] for x in q], [x[2] for x in q],
                                color=PALETTE[i % 8], alpha=0.15, linewidth=0)
        axes[0][1].plot(lambdas, p, **style)
        n_inf = [int(np.isinf(t["kappa_J"][sel & (t["lambda"] == lam)]).sum()) for lam in lambdas]
        per_layer[layer] = {"lambda": as_list(lambdas), "kappa_J_q25": as_list([x[0] for x in q]),
                            "kappa_J_median": as_list([x[1] for x in q]),
                            "kappa_J_q75": as_list([x[2] for x in q]),
                            "max_prob_median": as_list(p), "kappa_J_infinite": n_inf}
    axes[0][0].set_yscale("log")
    axes[0][0].set_ylabel("κ(J) " + KAPPA_LABEL[2:])
    axes[0][1].set_ylabel("median max attention\nprobability (dimensionless)")
    axes[0][1].set_ylim(0, 1.05)
    for ax in axes[0]:
        symlog_lambda(ax, lambdas)
    axes[0][0].set_title("κ(J) of SpecA, trained heads")
    axes[0][1].set_title("Softmax saturation")
    legend_below(fig, axes[0][0].get_legend_handles_labels()[0], min(len(layers), 6))
    caption = ("SpecA (C = λI) on the model's heads: median over heads and sentences per layer "
               "(band: 25-75 %% of the finite κ(J)), %d rows." % t["rows"])
    return [Figure("verify-%s-lambda" % check, "verify/" + check, caption,
                   {"layers": per_layer}, fig)]


# --- κ(W) before/after corrections: heatmaps per layer × head -------------------------------


def correction_title(c):
    if c == "none":
        return "none: κ(W)"
    if c.startswith("lambda:"):
        return "W + λI, λ = " + c.split(":", 1)[1]
    return "SVD (Thm 3.5)" if c == "svd" else c


def kappa_grid(t, matrix, correction, layers, heads):
    """(layers × heads) grids of κ before, κ after the correction and 'helped' (NaN: no row)."""
    grids = {k: np.full((len(layers), len(heads)), np.nan)
             for k in ("kappa_before", "kappa_after", "helped")}
    li, hi = {x: i for i, x in enumerate(layers)}, {x: i for i, x in enumerate(heads)}
    for r in range(t["rows"]):
        if t["matrix"][r] == matrix and t["correction"][r] == correction:
            for k, grid in grids.items():
                grid[li[t["layer"][r]], hi[t["head"][r]]] = t[k][r]
    if correction == "none":
        grids["kappa_after"] = grids["kappa_before"]
    return grids


def figs_weights_kappa(rep, check):
    t = rep.table(check, ["layer", "head", "matrix", "correction"],
                  ["kappa_before", "kappa_after", "helped"])
    layers, heads = order_of(t["layer"]), order_of(t["head"])
    corrections = list(dict.fromkeys(t["correction"]))
    grids = {m: {c: kappa_grid(t, m, c, layers, heads) for c in corrections}
             for m in order_of(t["matrix"])}
    finite = np.concatenate([g["kappa_after"][positive_finite(g["kappa_after"])]
                             for per in grids.values() for g in per.values()] + [np.ones(0)])
    if finite.size == 0:
        return []
    norm = mcolors.LogNorm(vmin=finite.min(), vmax=max(finite.max(), finite.min() * 1.01))
    return [fig_kappa_heatmap(check, m, grids[m], layers, heads, norm) for m in grids]


def fig_kappa_heatmap(check, matrix, grids, layers, heads, norm):
    cols = min(3, len(grids))
    rows = (len(grids) + cols - 1) // cols
    fig, axes = new_figure(rows, cols, height=0.6 + 2.1 * rows, sharex=True, sharey=True)
    cmap = plt.get_cmap("viridis").with_extremes(bad="#bbbbbb")
    data = {"layers": layers, "heads": heads, "kappa": {}, "helped": {}, "raised": {}}
    for k, (c, g) in enumerate(grids.items()):
        ax = axes[k // cols][k % cols]
        image = ax.imshow(np.ma.masked_invalid(g["kappa_after"]), norm=norm, cmap=cmap,
                          aspect="auto", interpolation="nearest")
        hurt = np.argwhere(g["kappa_after"] > g["kappa_before"])
        if hurt.size:
            ax.scatter(hurt[:, 1], hurt[:, 0], s=12, marker="o", facecolors="white",
                       edgecolors="black", linewidths=0.6, label="κ raised")
        ax.set_title(correction_title(c))
        ax.grid(False)
        data["kappa"][c] = [as_list(row) for row in g["kappa_after"]]
        data["helped"][c] = [as_list(row) for row in g["helped"]]
        data["raised"][c] = len(hurt)
    for k in range(len(grids), rows * cols):
        axes[k // cols][k % cols].set_visible(False)
    step = max(1, (len(heads) + 5) // 6)
    for ax in axes[-1]:
        ax.set_xticks(range(0, len(heads), step), heads[::step])
        ax.set_xlabel("head")
    for row in axes:
        row[0].set_yticks(range(len(layers)), layers)
        row[0].set_ylabel("layer")
    bar = fig.colorbar(image, ax=axes, shrink=0.9)
    bar.set_label("κ($W_%s$) (strict, dimensionless, log scale)" % matrix)
    dot = plt.Line2D([], [], marker="o", linestyle="none", markerfacecolor="white",
                     markeredgecolor="black", label="κ raised by the correction")
    legend_below(fig, [dot], 1)
    caption = ("κ(W_%s) per layer and head before and after each correction (one colour scale "
               "for Q, K and V); white dots: the correction raised κ (%s)." % (matrix, ", ".join(
                   "%s: %d" % (c, n) for c, n in data["raised"].items() if c != "none")))
    return Figure("verify-%s-W_%s" % (check, matrix), "verify/" + check, caption, data, fig)


# --- fidelity ---------------------------------------------------------------------------------


def claim_line(ax):
    ax.axhline(FIDELITY_CLAIM, color="black", linewidth=0.8, linestyle="--",
               label="%g (claimed)" % FIDELITY_CLAIM)


def figs_model_infsa(rep, check):
    """Linear-InfSA fidelity on the model: cos against the Perron vectors per layer, and by N."""
    t = rep.table(check, ["layer", "head", "sentence"], ["N", "cos_left", "cos_right"])
    if not t["rows"]:
        return []
    layers = order_of(t["layer"])
    fig, axes = new_figure(1, 2, height=3.6)
    ax, ax_n = axes[0]
    per_layer = {}
    for i, layer in enumerate(layers):
        sel = np.array([x == layer for x in t["layer"]])
        entry = {"N": as_list(t["N"][sel])}
        for k, (side, colour) in enumerate((("cos_left", PALETTE[0]), ("cos_right", PALETTE[1]))):
            v = t[side][sel]
            entry[side] = as_list(v)
            v = v[np.isfinite(v)]
            if v.size:
                box = ax.boxplot(v, positions=[i + (k - 0.5) * 0.36], widths=0.3,
                                 patch_artist=True, manage_ticks=False,
                                 flierprops=dict(marker=MARKERS[k], markersize=3),
                                 medianprops=dict(color="black"))
                box["boxes"][0].set(facecolor=colour, alpha=0.6)
        dodge = (i - (len(layers) - 1) / 2) * 0.015 * np.ptp(t["N"])
        ax_n.scatter(t["N"][sel] + dodge, t["cos_left"][sel], s=14, marker=MARKERS[i % 8],
                     color=PALETTE[i % 8], label="layer " + layer, linewidths=0)
        per_layer[layer] = entry
    ax.set_xticks(range(len(layers)), layers)
    ax.set_xlabel("layer")
    ax.set_ylabel("cos(a, Perron vector) (dimensionless)")
    ax.set_title("By layer")
    ax_n.set_xlabel("N (tokens)")
    ax_n.set_title("Left vector, by sentence length")
    ax_n.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    for a in (ax, ax_n):
        claim_line(a)
    boxes = [plt.Rectangle((0, 0), 1, 1, facecolor=c, alpha=0.6, edgecolor="black", label=l)
             for c, l in ((PALETTE[0], "left vector"), (PALETTE[1], "right vector"))]
    legend_below(fig, boxes + ax_n.get_legend_handles_labels()[0], 5)
    caption = ("Linear-InfSA fidelity on the model's Q, K over %d (layer, head, sentence) rows: "
               "cos against the left and right Perron vectors; %.0f %% of the left cosines reach "
               "%g." % (t["rows"], 100 * np.mean(t["cos_left"] >= FIDELITY_CLAIM), FIDELITY_CLAIM))
    return [Figure("verify-%s-fidelity" % check, "verify/" + check, caption,
                   {"layers": per_layer}, fig)]


def figs_fidelity(rep):
    base = "/fidelity"
    fam = rep.labels(base + "/family")
    n = len(fam)
    N = rep.numbers(base + "/N", n)
    cos = {s: rep.numbers("%s/%s" % (base, s), n) for s in ("cos_left", "cos_right")}
    sides = [s for s in cos if np.isfinite(cos[s]).any()]
    if not n or not sides:
        return []
    families = order_of(fam)
    Ns = sorted(set(N.tolist()))
    fig, axes = new_figure(1, len(sides), height=3.4, sharey=True)
    data = {"families": {}}
    for i, f in enumerate(families):
        sel = np.array([x == f for x in fam])
        data["families"][f] = {"N": as_list(N[sel])}
        for j, s in enumerate(sides):
            data["families"][f][s] = as_list(cos[s][sel])
            x = np.array([Ns.index(v) for v in N[sel]]) + (i - (len(families) - 1) / 2) * 0.12
            axes[0][j].scatter(x, cos[s][sel], s=16, marker=MARKERS[i % 8], color=PALETTE[i % 8],
                               label=f, linewidths=0)
    for j, s in enumerate(sides):
        ax = axes[0][j]
        claim_line(ax)
        ax.set_xticks(range(len(Ns)), ["%g" % v for v in Ns])
        ax.set_xlabel("N (tokens)")
        ax.set_title("%s Perron vector" % ("left" if s == "cos_left" else "right"))
    axes[0][0].set_ylabel("cos(a, Perron vector) (dimensionless)")
    legend_below(fig, axes[0][0].get_legend_handles_labels()[0], 4)
    caption = ("Linear-InfSA fidelity: cosine of the Linear-InfSA weights with the Perron "
               "vector(s) of Â, %d records, by N and data family." % n)
    return [Figure("fidelity-cos", "fidelity", caption, data, fig)]


# --- Neumann truncation -----------------------------------------------------------------------


def figs_neumann(rep, g="/neumann", fid="neumann-truncation", label=""):
    base = g + "/truncation"
    K = rep.numbers(base + "/K")
    err, bound = rep.numbers(base + "/error", len(K)), rep.numbers(base + "/bound", len(K))
    if not len(K):
        return []
    target = rep.attr(base, "target", float, math.nan)
    k_target = rep.attr(base, "K_for_target", int, -1)
    fig, axes = new_figure(height=3.4)
    ax = axes[0][0]
    ax.plot(K, err, marker="o", color=PALETTE[0], label=r"$\Vert\mathcal{N} - \mathcal{N}_K\Vert_2$ (measured)")
    ax.plot(K, bound, marker="s", linestyle="--", color=PALETTE[1],
            label=r"$(\gamma\Vert\hat A\Vert_2)^{K+1}/(1 - \gamma\Vert\hat A\Vert_2)$ (bound)")
    if math.isfinite(target) and target > 0:
        ax.axhline(target, color="black", linewidth=0.8, linestyle=":",
                   label="target %g (K = %s)" % (target, k_target if k_target >= 0 else "none"))
    ax.set_yscale("log")
    ax.set_xlabel("truncation order K")
    ax.set_ylabel("truncation error (2-norm, dimensionless)")
    ax.set_title("%sNeumann truncation error (γ = %s)" % (label + ": " if label else "",
                                                          fmt(rep.attr(g, "gamma", float))))
    ax.legend()
    caption = ("Truncation error of the Neumann series against its bound, N = %d; the bound "
               "uses the upper enclosure of ‖Â‖₂." % rep.attr(g, "N", int))
    if label:
        caption = label + ": " + caption
    data = {"K": as_list(K), "error": as_list(err), "bound": as_list(bound),
            "target": as_list([target])[0], "K_for_target": k_target}
    return [Figure(fid, "neumann", caption, data, fig)]


# --- singular values: jacobian --svd full, cond -----------------------------------------------

MAX_SPECTRA = 6  # heads drawn: all up to this many, else the extremes of κ(J)


def chosen_heads(kappas):
    """Indices of the heads to draw: all when few, else the largest and smallest κ."""
    if len(kappas) <= MAX_SPECTRA:
        return list(range(len(kappas)))
    order = sorted(range(len(kappas)), key=lambda h: (kappas[h], h))
    return sorted(order[:MAX_SPECTRA // 2] + order[-(MAX_SPECTRA // 2):])


def figs_jacobian(rep):
    heads = sorted((h for h in rep.children("/jacobian") if h.startswith("head_")),
                   key=lambda h: int(h[5:]) if h[5:].isdigit() else h)
    spectra, names, kappas, extremes = [], [], [], []
    for h in heads:
        base = "/jacobian/%s/spectrum" % h
        if not rep.has(base):
            continue
        name = rep.attr("/jacobian/" + h, "name", str, h[5:])
        kappa = rep.attr(base + "/kappa_strict", "value", float, math.nan)
        if rep.attr(base, "mode", str) == "full":
            spectra.append(rep.numbers(base + "/gram_sigma"))
            names.append(name)
            kappas.append(kappa)
        else:
            extremes.append((name, rep.attr(base + "/sigma_max", "sigma", float),
                             rep.attr(base + "/sigma_min", "sigma", float), kappa))
    if not spectra:
        return [fig_jacobian_extremes(rep, extremes)] if extremes else []
    pick = chosen_heads(kappas)
    fig, axes = new_figure(height=3.4)
    ax = axes[0][0]
    for k, i in enumerate(pick):
        s = spectra[i]
        idx = np.arange(1, len(s) + 1)
        ok = positive_finite(s)
        ax.plot(idx[ok], s[ok], marker=MARKERS[k % 8], markersize=3, color=PALETTE[k % 8],
                linewidth=1.0, label="head %s (κ = %s)" % (names[i], fmt(kappas[i])))
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_xlabel("singular value index i")
    ax.set_ylabel(r"$\sigma_i(J)$ (units of J)")
    ax.set_title("Singular values of J (wrt %s)" % rep.attr("/jacobian", "wrt", str, "weights"))
    ax.legend(ncol=2 if len(pick) > 3 else 1)
    which = ("all %d heads with a full spectrum" % len(pick) if len(pick) == len(spectra) else
             "the %d heads of largest and smallest κ(J) out of %d" % (len(pick), len(spectra)))
    caption = ("Singular values of the Jacobian, from its Gram matrix, for %s; zero or "
               "negative values are not drawn on the log scale." % which)
    data = {"heads": [names[i] for i in pick], "sigma": [as_list(spectra[i]) for i in pick],
            "kappa_strict": as_list([kappas[i] for i in pick])}
    return [Figure("jacobian-spectra", "jacobian", caption, data, fig)]


def fig_jacobian_extremes(rep, extremes):
    """Extremal spectra (--svd extremal): σ_max and σ_min of J per head."""
    names, smax, smin, kappa = (list(x) for x in zip(*extremes))
    fig, axes = new_figure(height=3.2)
    ax = axes[0][0]
    x = np.arange(len(names))
    ax.scatter(x, smax, marker="^", color=PALETTE[0], label=r"$\sigma_{\max}(J)$", zorder=3)
    ax.scatter(x, smin, marker="v", color=PALETTE[3], label=r"$\sigma_{\min}(J)$", zorder=3)
    ax.vlines(x, np.minimum(smin, smax), smax, color="#999999", linewidth=0.8)
    ax.set_yscale("log")
    step = max(1, (len(names) + 11) // 12)
    long_names = max(len(n) for n in names) > 4
    ax.set_xticks(x[::step], names[::step], rotation=25 if long_names else 0,
                  ha="right" if long_names else "center")
    ax.set_xlabel("head")
    ax.set_ylabel("singular value (units of J)")
    ax.set_title("Extreme singular values of J (wrt %s)"
                 % rep.attr("/jacobian", "wrt", str, "weights"))
    ax.legend()
    caption = ("Largest and smallest singular value of the Jacobian per head (extremal mode); "
               "their ratio is κ(J) (strict): %s." % ", ".join(
                   "%s: %s" % (n, fmt(k)) for n, k in zip(names, kappa)))
    data = {"heads": names, "sigma_max": as_list(smax), "sigma_min": as_list(smin),
            "kappa_strict": as_list(kappa)}
    return Figure("jacobian-extremes", "jacobian", caption, data, fig)


def figs_cond(rep, g="/cond", fid="cond-sigma", label=""):
    sigma = rep.numbers(g + "/sigma")
    n = len(sigma)
    lo, hi = rep.numbers(g + "/sigma_lo", n), rep.numbers(g + "/sigma_hi", n)
    if not n:
        return []
    fig, axes = new_figure(height=3.2)
    ax = axes[0][0]
    idx = np.arange(1, n + 1)
    ok = positive_finite(sigma)
    ax.plot(idx[ok], sigma[ok], marker="o", markersize=3, color=PALETTE[0], label=r"$\sigma_i$")
    band = positive_finite(lo, hi)
    ax.fill_between(idx[band], lo[band], hi[band], color=PALETTE[0], alpha=0.25, linewidth=0,
                    label="certified enclosure")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_xlabel("singular value index i")
    ax.set_ylabel(r"$\sigma_i$ (units of the matrix)")
    ax.set_title("Singular values of %s" % (label or rep.attr(g, "dataset", str, "the matrix")))
    ax.legend()
    kappa = rep.attr(g + "/kappa_strict", "value", float, math.nan)
    caption = "Singular values with their certified enclosures; κ (strict) = %s, method %s." % (
        fmt(kappa), rep.attr(g, "method", str, "unknown"))
    if label:
        caption = label + ": " + caption
    data = {"sigma": as_list(sigma), "sigma_lo": as_list(lo), "sigma_hi": as_list(hi),
            "kappa_strict": as_list([kappa])[0]}
    return [Figure(fid, "cond", caption, data, fig)]


# ---------------------------------------------------------------------------------------------
# The report's sections, in page order

THEOREM_FIGURES = {"thm3.4": figs_thm34}
EXPERIMENT_FIGURES = {
    "specA-sweep": figs_speca_sweep, "model-weights-kappa": figs_weights_kappa,
    "model-kappa-J": figs_model_kappa_j, "model-speca-lambda": figs_model_speca,
    "model-infsa": figs_model_infsa,
}
GROUP_FIGURES = [("jacobian", figs_jacobian), ("cond", figs_cond), ("neumann", figs_neumann),
                 ("fidelity", figs_fidelity)]


MAX_DATASET_FIGURES = 6


def dataset_figures(rep, notes):
    """cond / neumann over the heads of a dataset (--dataset): /heads/<k>/neumann and
    /heads/<k>/<matrix>/cond, one figure per group for the first MAX_DATASET_FIGURES groups."""
    if rep.has("/cond") or rep.has("/neumann") or not rep.has("/heads"):
        return []
    labels = list(rep.labels("/dataset_heads")) if rep.has("/dataset_heads") else []
    groups = []
    for h in sorted(rep.children("/heads"), key=lambda x: (len(x), x)):
        hg = "/heads/" + h
        label = labels[int(h)] if h.isdigit() and int(h) < len(labels) else "head " + h
        if rep.has(hg + "/neumann"):
            groups.append((figs_neumann, hg + "/neumann", "neumann-truncation-" + h, label))
        for m in rep.children(hg):
            if rep.has(hg + "/" + m + "/cond"):
                groups.append((figs_cond, hg + "/" + m + "/cond", "cond-sigma-%s-%s" % (h, m),
                               label + " " + m))
    if len(groups) > MAX_DATASET_FIGURES:
        notes.append("dataset run: figures for the first %d of %d groups"
                     % (MAX_DATASET_FIGURES, len(groups)))
    figures = []
    for handler, g, fid, label in groups[:MAX_DATASET_FIGURES]:
        figures += handler(rep, g, fid, label)
    return figures


def collect(rep, notes):
    """Every figure the report has data for; notes say what was present but not drawn."""
    figures, theorems = [], []
    for c in rep.children("/checks"):
        if rep.get("/checks/" + c, h5py.Group) is None:
            continue
        if rep.attr("/checks/" + c, "kind", str, "theorem") == "experiment":
            handler = EXPERIMENT_FIGURES.get(c)
            if handler is None:
                notes.append("experiment '%s': no figure for it" % c)
        else:
            theorems.append(c)
            handler = THEOREM_FIGURES.get(c)
        drawn = handler(rep, c) if handler else []
        if handler and not drawn:
            notes.append("check '%s': nothing to plot" % c)
        figures += drawn
    if theorems:
        figures.insert(0, fig_summary(rep, theorems))
    for group, handler in GROUP_FIGURES:
        if rep.has("/" + group):
            drawn = handler(rep)
            figures += drawn
            if not drawn:
                notes.append("/%s: nothing to plot" % group)
    figures += dataset_figures(rep, notes)
    for name in rep.children("/"):
        if name.replace("_", "-").startswith("gpu-check"):
            notes.append("/%s: gpu-check report present; its CPU-vs-GPU figure is not drawn yet"
                         % name)
    return figures


# ---------------------------------------------------------------------------------------------
# Writing


def output_failure(path, e):
    code = EXIT_IO if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG) else \
        EXIT_CANNOT_CREATE
    return Failure(code, "render_figures.py: cannot write %s (%s)" % (path, e.strerror or e))


def prepare_out(path):
    """DIR exists (created if needed) and is writable, checked before the report is read."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise Failure(EXIT_CANNOT_CREATE,
                      "render_figures.py: %s exists and is not a directory" % path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise output_failure(path, e) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise Failure(EXIT_CANNOT_CREATE, "render_figures.py: %s is not writable" % path)


def write_atomically(path, write):
    """write(temp path) then rename onto path: a reader never sees a partial file."""
    temp = os.path.join(os.path.dirname(path), ".%s.tmp.%d" % (os.path.basename(path), os.getpid()))
    try:
        write(temp)
        os.replace(temp, path)
    except OSError as e:
        if os.path.exists(temp):
            os.unlink(temp)
        raise output_failure(path, e) from None


def write_text(path, text):
    def write(temp):
        with open(temp, "w", encoding="utf-8") as f:
            f.write(text)
    write_atomically(path, write)


def one_line(text):
    return " ".join(str(text).split())


def write_all(out, rep, figures, notes):
    rows = ["id\tsection\tsvg\tpng\tcaption"]
    manifest = {"report": rep.name, "schema_version": rep.attr("/", "schema_version", str),
                "figures": {}, "notes": notes}
    for fg in figures:
        svg, png = fg.id + ".svg", fg.id + ".png"
        write_atomically(os.path.join(out, svg), lambda p: fg.fig.savefig(
            p, format="svg", metadata={"Date": None}))
        write_atomically(os.path.join(out, png), lambda p: fg.fig.savefig(
            p, format="png", metadata={"Software": None}))
        plt.close(fg.fig)
        rows.append("\t".join([fg.id, fg.section, svg, png, one_line(fg.caption)]))
        manifest["figures"][fg.id] = {"section": fg.section, "caption": one_line(fg.caption),
                                      "data": fg.data}
    write_text(os.path.join(out, "figures.json"),
               json.dumps(manifest, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    write_text(os.path.join(out, "figures.tsv"), "\n".join(rows) + "\n")


def run(argv):
    args = parse_args(argv)
    import_deps()
    prepare_out(args.out)
    rep = Report(args.report)
    rep.open()
    notes = []
    try:
        figures = collect(rep, notes)
    except (OSError, KeyError) as e:  # h5py's errors on a damaged file
        raise ReportError("%s: cannot be read (%s)" % (args.report, first_line(e))) from None
    write_all(args.out, rep, figures, notes)
    print("render_figures.py: %d figure(s) written to %s" % (len(figures), args.out),
          file=sys.stderr)
    return EXIT_OK


def main(argv):
    try:
        return run(argv)
    except Failure as e:
        print(one_line(e), file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: one line, never a traceback
        print("render_figures.py: internal error (a bug: please report it): %s: %s"
              % (type(e).__name__, first_line(e)), file=sys.stderr)
        return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
