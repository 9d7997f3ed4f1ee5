#!/usr/bin/env python3
"""Offline unit tests of make_minilm.py (no network, no package, no wheel):
    /usr/bin/python3 -m unittest discover -s datasets/minilm -p 'test_*.py'
"""
import json
import math
import os
import struct
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_minilm as mm  # noqa: E402

VOCAB = "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cafe", "un", "##aff", "##able",
                   "##s", "play", ",", ".", "'", "s", "!", "中", "x"])


def safetensors_blob(tensors, corrupt=None):
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, arr in tensors.items():
        raw = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if corrupt:
        corrupt(header)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def tiny_model(rng, D=8, heads=2, ffn=16, vocab=len(VOCAB.splitlines()), layers=1):
    t = {"embeddings.word_embeddings.weight": rng.standard_normal((vocab, D)),
         "embeddings.position_embeddings.weight": rng.standard_normal((16, D)),
         "embeddings.token_type_embeddings.weight": rng.standard_normal((2, D)),
         "embeddings.LayerNorm.weight": 1 + 0.1 * rng.standard_normal(D),
         "embeddings.LayerNorm.bias": 0.1 * rng.standard_normal(D)}
    for l in range(layers):
        p = f"encoder.layer.{l}."
        shapes = {"attention.self.query": (D, D), "attention.self.key": (D, D),
                  "attention.self.value": (D, D), "attention.output.dense": (D, D),
                  "intermediate.dense": (ffn, D), "output.dense": (D, ffn)}
        for name, shape in shapes.items():
            t[p + name + ".weight"] = rng.standard_normal(shape) / math.sqrt(shape[1])
            t[p + name + ".bias"] = 0.1 * rng.standard_normal(shape[0])
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[p + ln + ".weight"] = 1 + 0.1 * rng.standard_normal(D)
            t[p + ln + ".bias"] = 0.1 * rng.standard_normal(D)
    config = {"num_hidden_layers": layers, "num_attention_heads": heads, "hidden_size": D,
              "layer_norm_eps": 1e-12, "hidden_act": "gelu"}
    return mm.MiniLM(t, config), t


class TokenizerTest(unittest.TestCase):
    def setUp(self):
        self.tok = mm.WordPieceTokenizer(VOCAB)

    def test_basic_lowercases_strips_accents_and_splits_punctuation(self):
        self.assertEqual(self.tok.basic("The CAFÉ's\tplay,\u200bthe."),
                         ["the", "cafe", "'", "s", "play", ",", "the", "."])

    def test_wordpiece_greedy_longest_match_and_unknown(self):
        self.assertEqual(self.tok.wordpiece("unaffables"), ["un", "##aff", "##able", "##s"])
        self.assertEqual(self.tok.wordpiece("unzz"), ["[UNK]"])
        self.assertEqual(self.tok.wordpiece("x" * 101), ["[UNK]"])

    def test_encode_adds_cls_sep_and_handles_cjk(self):
        tokens, ids = self.tok.encode("the 中x!")
        self.assertEqual(tokens, ["[CLS]", "the", "中", "x", "!", "[SEP]"])
        self.assertEqual(ids.tolist(), [2, 4, 16, 17, 15, 3])

    def test_encode_refuses_more_than_64_tokens(self):
        with self.assertRaises(SystemExit) as cm:
            self.tok.encode("the " * 63)
        self.assertIn("more than 64", str(cm.exception))



class CommittedFileTest(unittest.TestCase):
    """The committed datasets/embedded/minilm-l6.h5 is the output of this script's SENTENCES."""

    def setUp(self):
        import h5py
        self.f = h5py.File(mm.DEFAULT_OUT, "r")
        self.addCleanup(self.f.close)

    def strings(self, path):
        return [t.decode() if isinstance(t, bytes) else t for t in self.f[path][:]]

    def test_sentences_tokens_and_shapes_agree(self):
        f = self.f
        self.assertEqual(self.strings("sentences/text"), mm.SENTENCES)
        n = f["sentences/n_tokens"][:]
        tokens = [self.strings(f"sentences/tokens/{i}") for i in range(len(n))]
        # a vocabulary of just the stored pieces reproduces the same greedy WordPiece split
        vocab = sorted({"[CLS]", "[SEP]", "[UNK]"}.union(*tokens))
        tok = mm.WordPieceTokenizer("\n".join(vocab))
        for i, text in enumerate(mm.SENTENCES):
            self.assertEqual(tok.encode(text)[0], tokens[i])
            self.assertEqual(len(tokens[i]), n[i])
            self.assertEqual(f[f"sentences/token_ids/{i}"].shape, (n[i],))
        self.assertLessEqual(n.min(), 12)
        self.assertGreaterEqual(n.max(), 48)
        self.assertLessEqual(n.max(), mm.MAX_TOKENS)
        L, H, D, d = (int(f.attrs[k]) for k in ("layers", "heads", "D", "d"))
        self.assertEqual((L, H, D, d), (6, 12, 384, 32))
        for l in range(L):
            self.assertEqual(len(f[f"layers/{l}/heads"]), H)
            for name in ("W_Q", "W_K", "W_V"):
                self.assertEqual(f[f"layers/{l}/heads/{H - 1}/{name}"].shape, (D, d))
            for i in range(len(n)):
                self.assertEqual(f[f"layers/{l}/inputs/{i}"].shape, (n[i], D))
        self.assertEqual(f.attrs["regenerate"], mm.REGENERATE)
        self.assertEqual(f.attrs["s"], 1 / math.sqrt(d))
        E = f["sentences/embedding"][:]
        np.testing.assert_allclose(np.linalg.norm(E, axis=1), 1, atol=1e-12)


class SafetensorsTest(unittest.TestCase):
    def test_reads_back_what_was_written(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        b = np.array([1.5, -2.0], dtype=np.float32)
        t = mm.read_safetensors(safetensors_blob({"a": a, "b": b}))
        np.testing.assert_array_equal(t["a"], a)
        np.testing.assert_array_equal(t["b"], b)
        self.assertNotIn("__metadata__", t)

    def test_rejects_offsets_that_do_not_fit_the_shape(self):
        def bad(h):
            h["a"]["shape"] = [3, 3]
        with self.assertRaises(SystemExit) as cm:
            mm.read_safetensors(safetensors_blob({"a": np.zeros((2, 3))}, corrupt=bad))
        self.assertIn("do not fit shape", str(cm.exception))

    def test_rejects_a_header_longer_than_the_file(self):
        with self.assertRaises(SystemExit):
            mm.read_safetensors(struct.pack("<Q", 1000) + b"{}")


class ForwardTest(unittest.TestCase):
    def setUp(self):
        self.model, self.t = tiny_model(np.random.default_rng(7))

    def test_head_blocks_are_the_transposed_output_rows(self):
        # head h of Q = x W^T + b is columns h*d..h*d+d-1 of the fused projection
        x = np.random.default_rng(1).standard_normal((5, self.model.D))
        fused = x @ self.t["encoder.layer.0.attention.self.query.weight"].T \
            + self.t["encoder.layer.0.attention.self.query.bias"]
        for h in range(self.model.heads):
            (Wq, _, _), (bq, _, _) = self.model.head_weights(0, h)
            self.assertEqual(Wq.shape, (self.model.D, self.model.d))
            np.testing.assert_allclose(x @ Wq + bq, fused[:, h * self.model.d:(h + 1) * self.model.d],
                                       rtol=0, atol=1e-12)

    def test_layernorm_output_has_the_affine_moments(self):
        x = self.model.embed(np.array([2, 4, 5, 3]))
        g, b = self.t["embeddings.LayerNorm.weight"], self.t["embeddings.LayerNorm.bias"]
        z = (x - b) / g
        np.testing.assert_allclose(z.mean(axis=1), 0, atol=1e-12)
        np.testing.assert_allclose((z * z).mean(axis=1), 1, atol=1e-9)

    def test_gelu_is_the_exact_erf_form(self):
        x = np.array([-3.0, -0.5, 0.0, 0.7, 4.0])
        want = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x]
        np.testing.assert_allclose(0.5 * x * (1 + mm.erf(x / math.sqrt(2))), want, rtol=1e-15)

    def test_attention_rows_do_not_depend_on_token_order_beyond_positions(self):
        # with the position embeddings zeroed, permuting tokens permutes every hidden state
        self.model.t["embeddings.position_embeddings.weight"][:] = 0
        ids = np.array([2, 4, 5, 6, 3])
        perm = np.array([4, 2, 0, 3, 1])
        inputs, pooled = self.model.run(ids)
        inputs_p, pooled_p = self.model.run(ids[perm])
        self.assertEqual(len(inputs), 1)
        np.testing.assert_allclose(self.model.layer(inputs[0], 0)[perm],
                                   self.model.layer(inputs_p[0], 0), atol=1e-12)
        np.testing.assert_allclose(pooled, pooled_p, atol=1e-12)
        self.assertAlmostEqual(float(np.linalg.norm(pooled)), 1.0, places=12)


if __name__ == "__main__":
    unittest.main()
