"""The named datasets: real model heads with their inputs (``attnspec dataset list``).

A dataset is an HDF5 file in ``dataset_directory()`` ($ATTNSPEC_DATASETS, else the source tree's
datasets/embedded), e.g. ``minilm-l6``: all-MiniLM-L6-v2's 6 layers x 12 heads with biases, on
the hidden states of 8 sentences (datasets/README.md). ``load(name)`` reads the catalogue entry;
heads are read when asked for, by the loader ``--dataset NAME:layer:head:sentence`` uses, so a
head from here gives the CLI's numbers.
"""

from . import _core
from ._errors import DataError, make
from ._head import Head


def dataset_directory():
    """Where the named datasets are read from."""
    return _core.dataset_directory()


def list():  # noqa: A001 (the issue's name: datasets.list())
    """The names of the datasets that can be loaded (files that could not be catalogued are left
    out; ``catalogue()`` lists them with the reason)."""
    return [e["name"] for e in _core.list_datasets() if not e["problem"]]


def catalogue():
    """Every dataset file's catalogue entry as a dict (``problem`` says why one is unusable)."""
    return _core.list_datasets()


class Dataset:
    """A named dataset: ``layers`` x ``heads`` attention heads (width ``D``, head width ``d``,
    logit scale ``s``) and, for a model file, its ``sentences`` (texts, ``n_tokens``). Every
    catalogue field is in ``info``. ``head(layer, head, sentence)`` loads one head on the hidden
    states of one sentence; ``heads(...)`` every head a selection names."""

    def __init__(self, info):
        self.info = info
        self.name = info["name"]
        self.layers, self.n_heads = info["layers"], info["heads"]
        self.D, self.d, self.s = info["D"], info["d"], info["s"]
        self.sentences = tuple(info["sentence_text"])
        self.n_tokens = tuple(info["n_tokens"])

    def __repr__(self):
        return "Dataset(%r: %d layers x %d heads, D=%d, d=%d, %d sentences)" % (
            self.name, self.layers, self.n_heads, self.D, self.d, len(self.sentences))

    def _selector(self, layer, head, sentence):
        parts = [self.name]
        for v in (layer, head, sentence):
            parts.append("*" if v is None else str(int(v)))
        return ":".join(parts)

    def heads(self, layer=None, head=None, sentence=None):
        """Every (layer, head, sentence) the selection names (None: all), in that order, as a
        list of ``(label, Head)``; label e.g. "minilm-l6:L0:H3:S2"."""
        sel = self._selector(layer, head, sentence)
        if not self.sentences:  # a heads-layout file: one layer, no sentence part
            sel = sel.rsplit(":", 1)[0]
        return [(label, Head._wrap(h)) for (_l, _h, _s, label, h) in _core.load_heads(sel)]

    def head(self, layer, head, sentence=0):
        """One head on one sentence's hidden states (X of N_s tokens; biases and s of the
        model)."""
        got = self.heads(layer, head, sentence if self.sentences else None)
        if len(got) != 1:
            raise make(DataError, "%s selects %d heads, expected one" % (
                self._selector(layer, head, sentence), len(got)))
        return got[0][1]


def load(name):
    """The dataset ``name`` (``InputNotFoundError``, listing the known names, when there is no
    such dataset)."""
    return Dataset(_core.find_dataset(name))
