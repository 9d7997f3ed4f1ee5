// attnspec import, end to end: a BERT-named safetensors (with config.json) and NumPy .npz files
// written by /usr/bin/python3 at test time, imported, then read back with h5py and compared with
// the original arrays (transpose, head split, biases, inputs, root attributes, sha256); exit codes
// and messages for what cannot be imported.
#include <fstream>
#include <iterator>

#include "test_support.hpp"

using namespace attnspec::test;

namespace {

// Writes bert/model.safetensors (+ config.json, 2 heads), orig.npz (the PyTorch arrays),
// states.npz (layer<l>_sentence<s>), shared.npz (X), plain.npz (attnspec orientation + X).
const char* kMake = R"PY(
import json, struct, sys, os
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
D, L = 8, 2
orig, tensors = {}, {}
for l in range(L):
    for r in ('query', 'key', 'value'):
        w = rng.standard_normal((D, D)).astype(np.float32)
        b = rng.standard_normal(D).astype(np.float32)
        orig[f'{l}_{r}_w'], orig[f'{l}_{r}_b'] = w, b
        tensors[f'encoder.layer.{l}.attention.self.{r}.weight'] = w
        tensors[f'encoder.layer.{l}.attention.self.{r}.bias'] = b
    tensors[f'encoder.layer.{l}.attention.output.dense.weight'] = np.eye(D, dtype=np.float32)
tensors['embeddings.position_ids'] = np.arange(4, dtype=np.int64).reshape(1, 4)
header, blob = {'__metadata__': {'format': 'pt'}}, b''
for name, a in tensors.items():
    raw = a.tobytes()
    dt = {'float32': 'F32', 'int64': 'I64'}[str(a.dtype)]
    header[name] = {'dtype': dt, 'shape': list(a.shape), 'data_offsets': [len(blob), len(blob) + len(raw)]}
    blob += raw
h = json.dumps(header).encode()
os.makedirs(d + '/bert', exist_ok=True)
with open(d + '/bert/model.safetensors', 'wb') as f:
    f.write(struct.pack('<Q', len(h)) + h + blob)
json.dump({'num_attention_heads': 2, '_name_or_path': 'test/tiny-bert'}, open(d + '/bert/config.json', 'w'))
np.savez(d + '/orig.npz', **orig)
states = {f'layer{l}_sentence{s}': rng.standard_normal((3 + 2 * s, D)) for l in range(L) for s in range(2)}
np.savez_compressed(d + '/states.npz', **states)
np.savez(d + '/shared.npz', X=rng.standard_normal((4, D)).astype(np.float32))
np.savez(d + '/narrow.npz', X=np.ones((4, D - 1)))
np.savez(d + '/plain.npz', **{'W_Q': orig['0_query_w'].T, 'W_K': orig['0_key_w'].T,
         'W_V': orig['0_value_w'].T, 'X': states['layer0_sentence1']})
)PY";

// Checks out.h5 against orig.npz: argv out, H, layers (comma list of source layers), inputs file.
const char* kCheck = R"PY(
import sys, hashlib, math
import h5py, numpy as np
d, out, H, layers, inputs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
layers = [int(x) for x in layers.split(',')]
o = np.load(d + '/orig.npz')
f = h5py.File(out, 'r')
a = f.attrs
assert a['kind'] == 'attnspec-input' and a['layout'] == 'model', dict(a)
ck = d + '/bert/model.safetensors'
assert a['origin'] == ck + ' (sha256 ' + hashlib.sha256(open(ck, 'rb').read()).hexdigest() + ')', a['origin']
assert a['licence'] == 'unknown (user checkpoint)' and a['model'] == 'test/tiny-bert'
D = 8; dh = D // H
assert abs(a['s'] - 1 / math.sqrt(dh)) < 1e-15, a['s']
assert a['source_layers'] == ','.join(map(str, layers))
assert sorted(f['layers'].keys(), key=int) == [str(i) for i in range(len(layers))]
for i, l in enumerate(layers):
    g = f[f'layers/{i}']
    assert g.attrs['source_layer'] == l
    assert len(g['heads']) == H
    for h in range(H):
        for r, k in (('query', 'Q'), ('key', 'K'), ('value', 'V')):
            W = g[f'heads/{h}/W_{k}'][()]
            b = g[f'heads/{h}/b_{k}'][()]
            assert W.shape == (D, dh) and W.dtype == np.float64
            assert np.array_equal(W, o[f'{l}_{r}_w'].T[:, h*dh:(h+1)*dh]), (l, h, r)
            assert np.array_equal(b, o[f'{l}_{r}_b'][h*dh:(h+1)*dh]), (l, h, r)
    if inputs == 'none':
        assert 'inputs' not in g
    else:
        st = np.load(inputs)
        for s in g['inputs']:
            want = st['X'] if 'X' in st else st[f'layer{l}_sentence{s}']
            assert np.array_equal(g['inputs/' + s][()], want), (l, s)
assert a['inputs'] == inputs
print('import-ok')
)PY";

}  // namespace

TEST_CASE("import: a BERT safetensors with config.json becomes the model schema", "[cli][import]") {
    const std::string dir = attnspec::test::temp_dir();
    REQUIRE(python(kMake, dir) == 0);
    const std::string ck = dir + "/bert/model.safetensors";
    auto r = run_cli("import " + ck + " --out " + dir + "/m.h5");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "bert naming"));
    CHECK(has(r.out, "2 x 2 heads (from " + dir + "/bert/config.json), D = 8, d = 4, biases: yes"));
    CHECK(has(r.out, "12 mapped, 3 ignored"));  // 2 layers x 6; dense x 2, position_ids
    CHECK(has(r.out, "hidden states: none (weights only); add them with --inputs F.npz"));
    std::string check;
    const int rc = python(kCheck, dir + " " + dir + "/m.h5 2 0,1 none", &check);
    INFO(check);
    CHECK(rc == 0);
    CHECK(has(check, "import-ok"));

    // --heads overrides config.json; --layers selects; --inputs adds hidden states; --json
    r = run_cli("import " + ck + " --heads 4 --layers 1 --inputs " + dir + "/states.npz --out " +
                dir + "/m1.h5 --json");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "\"command\": \"import\""));
    CHECK(has(r.out, "\"heads_from\": \"--heads\""));
    CHECK(has(r.out, "\"sentences\": [\n    2\n  ]"));
    python(kCheck, dir + " " + dir + "/m1.h5 4 1 " + dir + "/states.npz", &check);
    INFO(check);
    CHECK(has(check, "import-ok"));
    r = run_cli("import " + ck + " --inputs " + dir + "/shared.npz --out " + dir + "/m2.h5");
    REQUIRE(r.code == 0);
    python(kCheck, dir + " " + dir + "/m2.h5 2 0,1 " + dir + "/shared.npz", &check);
    INFO(check);
    CHECK(has(check, "import-ok"));
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("import: a plain npz carries its own X and needs no transpose", "[cli][import]") {
    const std::string dir = attnspec::test::temp_dir();
    REQUIRE(python(kMake, dir) == 0);
    auto r = run_cli("import " + dir +
                     "/plain.npz --heads 2 --name mine --licence CC0 --scale 0.5 "
                     "--out " +
                     dir + "/p.h5");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "plain naming"));
    CHECK(has(r.out, "biases: no"));
    const char* check = R"PY(
import sys, h5py, numpy as np
d = sys.argv[1]
f = h5py.File(d + '/p.h5', 'r'); o = np.load(d + '/orig.npz'); p = np.load(d + '/plain.npz')
assert f.attrs['name'] == 'mine' and f.attrs['licence'] == 'CC0' and f.attrs['s'] == 0.5
assert np.array_equal(f['layers/0/heads/1/W_K'][()], o['0_key_w'].T[:, 4:8])
assert 'b_K' not in f['layers/0/heads/1']
assert np.array_equal(f['layers/0/inputs/0'][()], p['X'])
assert list(f['sentences/n_tokens'][()]) == [5]
print('plain-ok')
)PY";
    std::string c;
    python(check, dir, &c);
    INFO(c);
    CHECK(has(c, "plain-ok"));
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("import: what cannot be imported exits with the documented code", "[cli][import]") {
    const std::string dir = attnspec::test::temp_dir();
    REQUIRE(python(kMake, dir) == 0);
    const std::string ck = dir + "/bert/model.safetensors", out = " --out " + dir + "/x.h5";
    auto r = run_cli("import " + dir + "/missing.safetensors" + out);
    CHECK(r.code == 66);
    r = run_cli("import " + dir + "/plain.npz" + out);  // no config.json beside it
    CHECK(r.code == 64);
    CHECK(has(r.err, "the number of heads is unknown: give --heads H"));
    r = run_cli("import " + ck + " --heads 3" + out);
    CHECK(r.code == 65);
    CHECK(
        has(r.err, "8 output features (D = 8) are not divisible by H = 3 heads (option --heads)"));
    r = run_cli("import " + ck + " --layers 0,7" + out);
    CHECK(r.code == 65);
    CHECK(has(r.err, "layer 7 not found"));
    r = run_cli("import " + ck + " --layers 0,x" + out);
    CHECK(r.code == 64);
    r = run_cli("import " + ck + " --inputs " + dir + "/orig.npz" + out);
    CHECK(r.code == 65);
    CHECK(has(r.err, "is neither X nor layer<l>_sentence<s>"));
    r = run_cli("import " + ck + " --inputs " + dir + "/narrow.npz" + out);
    CHECK(r.code == 65);
    CHECK(has(r.err, "narrow.npz: array 'X' has shape (4, 7), expected (N, 8) with N >= 1"));
    r = run_cli("import " + dir + "/orig.npz --heads 2" + out);
    CHECK(r.code == 65);
    CHECK(has(r.err, "no attention weights found among its 12 tensors (first: 0_query_w"));
    r = run_cli("import " + ck + " --out " + ck);
    CHECK(r.code == 64);
    r = run_cli("import " + ck + " --out " + dir + "/no/such/dir/x.h5");
    CHECK(r.code == 73);
    r = run_cli("import " + ck);
    CHECK(r.code == 64);
    std::ifstream untouched(dir + "/x.h5");
    CHECK_FALSE(untouched.good());  // nothing written by the failed runs
    r = run_cli("import --help");
    CHECK(r.code == 0);
    CHECK(has(r.out, "attnspec import model.safetensors --out minilm.h5"));
    std::system(("rm -rf " + dir).c_str());
}
