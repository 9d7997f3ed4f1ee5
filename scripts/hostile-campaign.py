#!/usr/bin/python3
"""The hostile campaign (issue 34): about 1,150 inputs a hostile user would give attnspec, all
generated in a temp dir (no committed blobs), each run against a built attnspec and judged.

    /usr/bin/python3 scripts/hostile-campaign.py [ATTNSPEC] [--seed S] [--limit N]
                                                [--classes a,b] [--keep DIR] [--list]

ATTNSPEC: the executable (default build/cli/attnspec). Classes: checkpoints (safetensors: long
names, many keys, bad offsets and dtypes, truncation, huge declared shapes, config.json; .npz:
long member names, not a zip, float16/int/object arrays, declared-huge arrays; --inputs),
datasets (odd --dataset selectors; ATTNSPEC_DATASETS at a file, an empty or odd folder),
reports (the reports the CLI writes -- neumann, fidelity, cond, jacobian, verify -- tampered with
h5py: dtypes, shapes, scalars for columns, declared-huge unwritten datasets, text for numbers,
missing groups, schema_version, attributes as arrays; then `report show` / `render`), instance
(counterexample files for `verify CHECK --instance`, tampered the same way; --record), outputs
(missing, unwritable, FIFO, socket, device, 255/256-character names, existing and user folders,
--out ""), fifo (FIFOs and endless devices as inputs), flags (NaN, Inf, signs, huge values,
--max-memory, unknown options, bare words). --limit N keeps at most N cases per class (drawn
with --seed, which also draws the tampering); --keep DIR leaves every case's files in DIR;
--list prints the cases. Needs numpy and h5py (Debian: python3-numpy, python3-h5py).

Cases run one at a time, stdin /dev/null, cwd their own folder (default outputs land there), in
their own session, address space capped at 4 GiB, killed after their wall limit (20 s; 8 s for
FIFOs and outputs). Peak memory is the case's ru_maxrss (os.wait4). A case is CLEAN when:
  * it was not killed (signal or wall limit) and left no process of its session running;
  * its exit code is one of the README's (0 1 2 64 65 66 69 71 72 73 74; 70, an internal error,
    is not), and the one the docs name where they name one (64 for NaN, 73 for a FIFO as --out);
  * on failure (64..74) stderr is one line "attnspec: error: ..." (at most 4 KiB, naming a quoted
    value, path, option, number or NAME, no raw control character), after at most the documented
    log lines (an estimate, a replay's estimate, render's "figures:" line, a note);
  * it took < 10 s (5 s for FIFOs) and < 1 GiB; exit 71 counts as memory not estimated first;
    unless it is work the docs promise ("work": a valid but huge count of draws or trials);
  * nothing is half-written: no ".tmp." name left in its folder; when it failed, its folder is
    exactly as before (no new file, the previous target intact, nothing deleted); an output that
    cannot be created is refused before the work, not at the final rename.
Prints per class: tried, clean, defective, skipped (an input this h5py cannot make), the exit
codes seen; then every defective case with its command, exit code, time, peak memory and the
first 200 characters of stderr. Exit 1 if any case is defective, 2 on a usage or fixture error.
"""
import argparse, collections, hashlib, io, json, os, random, re, resource, shutil, signal
import socket, struct, subprocess, sys, tempfile, threading, time, warnings, zipfile

import h5py
import numpy as np

warnings.filterwarnings("ignore")  # zipfile's "Duplicate name" is a case here
DOCUMENTED = {0, 1, 2, 64, 65, 66, 69, 71, 72, 73, 74}
FAILURES = DOCUMENTED - {0, 1, 2}
GIB = 1 << 30
PRELUDE = re.compile(r"attnspec: (replaying |estimate|N = \d|note:|warning:)|figures: ")
BERT = "encoder.layer.0.attention.self.%s.weight"
CLASSES = ["checkpoints", "datasets", "reports", "instance", "outputs", "fifo", "flags"]


class Case:
    """args: argv after the executable, "{d}" the case's folder, "{b}" the fixtures'; prep(d)
    makes the inputs; check(d, result) returns a reason or None; expect: the allowed codes."""

    def __init__(self, cls, label, args, prep=None, expect=None, check=None, env=None,
                 limit=20.0, fast=10.0, work=False):
        self.cls, self.label, self.args, self.prep, self.expect = cls, label, args, prep, expect
        self.check, self.env, self.limit, self.fast, self.work = check, env or {}, limit, fast, work


# ------------------------------------------------------------------------------ run and judge

def _cap_memory():
    resource.setrlimit(resource.RLIMIT_AS, (4 * GIB, 4 * GIB))


def run(binary, args, cwd, env, limit):
    """(code, killed, seconds, peak bytes, stdout, stderr, left a process running). The peak comes
    from GNU time's %M: a child forked from this (large) process would count its pages."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe, \
            tempfile.NamedTemporaryFile("r") as ft:
        timed = ["/usr/bin/time", "-f", "%M", "-o", ft.name] if os.path.exists("/usr/bin/time") else []
        t0 = time.monotonic()
        p = subprocess.Popen(timed + [binary] + args, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe,
                             cwd=cwd, env=env, start_new_session=True, preexec_fn=_cap_memory)
        killed = []

        def kill():
            killed.append(1)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        timer = threading.Timer(limit, kill)
        timer.start()
        _, status, usage = os.wait4(p.pid, 0)
        seconds = time.monotonic() - t0
        timer.cancel()
        p.returncode = 0  # reaped here: Popen must not wait for it again
        leftover = False
        try:
            os.killpg(p.pid, 0)  # anything of its session still running?
            leftover = True
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        code = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        peak = usage.ru_maxrss
        if timed:  # its last line: the peak in KiB (none when killed)
            last = (ft.read().strip().splitlines() or ["0"])[-1]
            peak = int(last) if last.isdigit() else 0
        fo.seek(0), fe.seek(0)
        return (code, bool(killed), seconds, peak * 1024,
                fo.read().decode("utf-8", "replace"), fe.read().decode("utf-8", "replace"), leftover)


def snapshot(d):
    """Every path under d with its content hash (what a refused run must leave as it was)."""
    snap = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            if os.path.isfile(p) and not os.path.islink(p) and st.st_size < (64 << 20):
                with open(p, "rb") as f:
                    snap[p] = hashlib.sha1(f.read()).hexdigest()
            else:
                snap[p] = "%o %d" % (st.st_mode, st.st_size)
    return snap


def judge(case, d, before, res):
    code, killed, seconds, peak, out, err, leftover = res
    why = []
    if killed:
        if not case.work:
            why.append("killed at the %g s limit" % case.limit)
    elif code > 128:
        why.append("signal %s" % signal.Signals(code - 128).name)
    elif code == 70:
        why.append("exit 70: internal error")
    elif code not in DOCUMENTED:
        why.append("exit %d is not documented" % code)
    elif case.expect and code not in case.expect:
        why.append("expected exit %s" % "/".join(map(str, sorted(case.expect))))
    if leftover:
        why.append("left a process of its session running")
    if not case.work and not killed:
        if code == 71:
            why.append("71: out of memory instead of refused from the declared sizes")
        if seconds > case.fast:
            why.append("took %.1f s" % seconds)
        if peak > GIB:
            why.append("peak %.0f MiB" % (peak / 2**20))
    if code in FAILURES and not killed:
        lines = [line for line in err.splitlines() if line.strip()]
        if not lines:
            why.append("exit %d with an empty stderr" % code)
        elif not lines[-1].startswith("attnspec: error: "):
            why.append("stderr does not end in one 'attnspec: error:' line")
        else:
            msg = lines[-1]
            if any(not PRELUDE.match(line) for line in lines[:-1]):
                why.append("stderr has %d lines" % len(lines))
            if len(msg) > 4096:
                why.append("error line of %d bytes" % len(msg))
            if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", msg):
                why.append("raw control character in the error line")
            if not re.search(r"['\"/0-9:]|--|\b[A-Z]{2,}\b", msg[17:]):
                why.append("the error names nothing")
    temps = [os.path.join(r, n) for r, ds, fs in os.walk(d) for n in ds + fs if ".tmp." in n]
    if temps:
        why.append("temp left: %s" % os.path.relpath(temps[0], d))
    if code in FAILURES and not killed:
        after = snapshot(d)
        if after != before:
            changed = sorted(set(after.items()) ^ set(before.items()))
            why.append("refused but changed %s" % os.path.relpath(changed[0][0], d))
    if case.check and not killed:
        why += [w for w in [case.check(d, res)] if w]
    return why


# ------------------------------------------------------------------------------ inputs

def write(path, data, mode="wb"):
    with open(path, mode) as f:
        f.write(data)


def st(header, data=b""):
    """A safetensors image: the 8-byte little-endian header length, the JSON header, the data."""
    h = header if isinstance(header, (bytes, str)) else json.dumps(header)
    h = h.encode() if isinstance(h, str) else h
    return struct.pack("<Q", len(h)) + h + data


def bert(prefix=""):
    """A BERT-named layer: q, k, v weights of 4 x 4 (F32, 0.25 on the diagonal)."""
    header, data = {}, b""
    for r in ("query", "key", "value"):
        a = (np.eye(4) * 0.25).astype("<f4").tobytes()
        header[prefix + BERT % r] = {"dtype": "F32", "shape": [4, 4],
                                     "data_offsets": [len(data), len(data) + len(a)]}
        data += a
    return header, data


def npy(a):
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=True)
    return buf.getvalue()


def npy_raw(header, data=b"", version=b"\x01\x00"):
    """An .npy member with a header written by hand (anything, not only what numpy writes)."""
    h = header.encode()
    h += b" " * ((-(len(h) + 11)) % 64) + b"\n"
    return b"\x93NUMPY" + version + struct.pack("<H", len(h)) + h + data


def npz(members, method=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members:
            z.writestr(name, data)
    return buf.getvalue()


def plain(**over):
    """Members of a plain .npz checkpoint (W_Q, W_K, W_V of 4 x 4); over replaces or drops one."""
    m = dict({k: np.eye(4) * 0.25 for k in ("W_Q", "W_K", "W_V")}, **over)
    return [(k + ".npy", v if isinstance(v, bytes) else npy(v)) for k, v in m.items()
            if v is not None]


def mksocket(path):
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.close()


def fixtures(binary, b):
    """The files the classes start from, the reports written by the CLI itself."""
    write(b + "/bert.safetensors", st(*bert()))
    rng = np.random.default_rng(1)
    with h5py.File(b + "/mat.h5", "w") as f:
        f["W"] = rng.standard_normal((6, 4))
    with h5py.File(b + "/qk.h5", "w") as f:
        f["Q"], f["K"] = rng.standard_normal((8, 4)), rng.standard_normal((8, 4))
    v = ["verify", "-q", "--fail-on", "never"]
    for args in (["import", "bert.safetensors", "--heads", "2", "--out", "model.h5"],
                 ["neumann", "--tokens", "16", "--dh", "4", "--out", "neumann.h5"],
                 ["fidelity", "--tokens", "16", "--dh", "4", "--draws", "1", "--family",
                  "gaussian", "--out", "fidelity.h5"],
                 ["cond", "--input", "mat.h5", "--matrix", "/W", "--out", "cond.h5"],
                 ["jacobian", "--random", "6,4,2", "--svd", "full", "--out", "jacobian.h5"],
                 v + ["thm3.8-above-sigma1", "--out", "verify.h5"],
                 v + ["thm3.5", "thm3.8", "--trials", "2", "--shard", "0/2", "--out", "s0.h5"],
                 v + ["thm3.5", "thm3.8", "--trials", "2", "--shard", "1/2", "--out", "s1.h5"]):
        r = run(binary, args, b, dict(os.environ), 120)
        if r[0] != 0:
            print("hostile-campaign: a fixture run failed (exit %d): attnspec %s\n%s"
                  % (r[0], " ".join(args), r[5][-2000:]), file=sys.stderr)
            sys.exit(2)
    cx = sorted(os.listdir(b + "/verify.counterexamples"))
    if not cx:
        sys.exit("hostile-campaign: the verify fixture wrote no counterexample file")
    shutil.copy(b + "/verify.counterexamples/" + cx[0], b + "/instance.h5")


# ------------------------------------------------------------------------------ checkpoints

def checkpoints(rng, b):
    cases = []

    def imp(label, make, name="m.safetensors", heads="1"):
        cases.append(Case("checkpoints", label, ["import", "{d}/" + name, "--heads", heads,
                                                 "--out", "{d}/o.h5"],
                          lambda d: write(d + "/" + name, make())))

    def mutated(fn, role="query"):
        def make():
            h, data = bert()
            fn(h[BERT % role])
            return st(h, data)
        return make

    def entries(n, name="model.t_%d.weight"):
        return ",".join('"%s":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}' % (name % i)
                        for i in range(n))
    for n in (100, 1000, 1024, 1025, 5000, 30000, 100000, 1000000):
        imp("a tensor name of %d characters before a BERT name" % n,
            lambda n=n: st(bert("a" * n + ".")[0], bert()[1]))
        imp("an unrelated tensor name of %d characters" % n, lambda n=n: st(
            {"x" * n: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, bytes(4)))
    for n in (1000, 20000, 200000):
        imp("%d unrelated tensors" % n, lambda n=n: st("{" + entries(n) + "}"))
    imp("20000 tensors around a BERT layer",
        lambda: st(json.dumps(bert()[0])[:-1] + "," + entries(20000) + "}", bert()[1]))
    imp("4000 keys of 2500 characters sharing 2490",
        lambda: st("{" + entries(4000, "k" * 2490 + "%d") + "}"))
    for off in ([0, 0], [0, 10**12], [10**12, 10**12 + 64], [-1, 64], [64, 0], [0, 2**64],
                [0, 2**63], [64, 128], [0, 63], ["a", "b"], [0], [0, 1, 2], None, [0.5, 64.5],
                [2**64 - 1, 2**64 - 1]):
        imp("data_offsets %s" % json.dumps(off), mutated(lambda e, o=off: e.update(data_offsets=o)))
    for dt in ("F8", "I32", "U8", "BOOL", "F32 ", "", 5, None, "f32", "F64", "BF16", "F16",
               "I64", "C64", "F8_E4M3"):
        imp("dtype %r" % (dt,), mutated(lambda e, t=dt: e.update(dtype=t)))
    for shape in ([2**31, 2**31], [10**6, 10**6], [-1, 4], [2**64, 1], [0, 4], [2, 2, 4], [16],
                  ["4", "4"], [], [4, 4.5], [2**63, 0], [10**18, 10**18, 10**18]):
        imp("shape %s" % json.dumps(shape), mutated(lambda e, s=shape: e.update(shape=s)))
    imp("the key weight of another shape", mutated(lambda e: e.update(shape=[2, 8]), "key"))
    imp("10^12 bytes of data declared",
        mutated(lambda e: e.update(shape=[500000, 500000], data_offsets=[0, 10**12])))
    h, data = bert()
    whole = st(h, data)
    hl = len(whole) - len(data) - 8
    for cut in (0, 1, 7, 8, 9, 8 + hl // 2, 8 + hl, 9 + hl, len(whole) - 1):
        imp("truncated at byte %d of %d" % (cut, len(whole)), lambda c=cut: whole[:c])
    for hlen in (0, 1, 2**64 - 1, 2**63, (100 << 20) + 1, len(whole) * 2, 2**32):
        imp("header length field %d" % hlen, lambda n=hlen: struct.pack("<Q", n) + whole[8:])
    tensor = '{"%s":{"dtype":"F32","shape":%s,"data_offsets":%s}}'
    for label, text in {
            "not JSON": "hello", "a list": "[]", "a string": '"s"', "an empty object": "{}",
            "a number value": '{"a":1}', "100000 nested lists": "[" * 100000,
            "50000 nested objects": '{"a":' * 50000, "an unterminated string": '{"a',
            "NaN in a shape": tensor % (BERT % "query", "[NaN,4]", "[0,64]"),
            "duplicate keys": json.dumps(h)[:-1] + "," + json.dumps(h)[1:],
            "__metadata__ a string": '{"__metadata__":"x"}',
            "__metadata__ of 1 MB": json.dumps({"__metadata__": {"k": "v" * 10**6}}),
            "__metadata__ an array": '{"__metadata__":[1,2,3]}',
            "an escaped NUL in a name": tensor % ("a\\u0000b", "[0]", "[0,0]"),
            "a lone surrogate escape": tensor % ("\\ud800", "[0]", "[0,0]"),
            "1e400 in the offsets": tensor % ("x", "[1]", "[0,1e400]"),
            "trailing garbage": json.dumps(h) + "garbage",
            "invalid UTF-8": b'{"\xff\xfe":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}',
            "a UTF-8 BOM": b"\xef\xbb\xbf" + json.dumps(h).encode()}.items():
        imp("header: " + label, lambda t=text: st(t, data))
    for label, text in {"absent": None, "garbage": "{{{", "heads 0": "0", "heads -1": "-1",
                        "heads 3 (D = 4)": "3", "heads 1e30": "1e30", "heads a string": '"2"',
                        "heads an array": "[2]", "a directory": "DIR",
                        "10 MB": '2, "x": "%s"' % ("y" * (10 << 20))}.items():
        def prep(d, text=text):
            write(d + "/m.safetensors", whole)
            if text == "DIR":
                os.mkdir(d + "/config.json")
            elif text is not None:
                write(d + "/config.json", text if text == "{{{" else
                      '{"num_attention_heads": %s}' % text, "w")
        cases.append(Case("checkpoints", "config.json: " + label,
                          ["import", "{d}/m.safetensors", "--out", "{d}/o.h5"], prep))
    for n in (1000, 1025, 60000):
        imp(".npz member name of %d characters" % n,
            lambda n=n: npz([("a" * n + ".npy", npy(np.ones((2, 2))))]), "m.npz")
    for label, raw in {"text": b"not a zip archive at all", "empty": b"",
                       "random bytes": bytes(rng.getrandbits(8) for _ in range(4096)),
                       "a safetensors image": whole, "gzip": b"\x1f\x8b\x08\x00" + bytes(64),
                       "a truncated zip": npz(plain())[:300], "a zip without members": npz([]),
                       "a zip end record alone": b"PK\x05\x06" + bytes(18)}.items():
        imp(".npz: " + label, lambda x=raw: x, "m.npz")
    for label, arr in {
            "float16": np.eye(4, dtype="f2"), "int32": np.eye(4, dtype="i4"),
            "int64": np.eye(4, dtype="i8"), "bool": np.eye(4, dtype=bool),
            "complex128": np.eye(4, dtype="c16"), "unicode": np.array(["abcd"] * 4),
            "a pickled object": np.array([{"x": 1}, None], dtype=object),
            "structured": np.zeros(4, dtype=[("a", "f8"), ("b", "f8")]),
            "big-endian f8": np.eye(4, dtype=">f8"), "0-d": np.array(1.0),
            "Fortran order": np.asfortranarray(np.arange(16.0).reshape(4, 4)),
            "3-D": np.ones((2, 4, 4)), "NaN": np.full((4, 4), np.nan),
            "Inf": np.full((4, 4), np.inf), "empty (0, 0)": np.zeros((0, 0)),
            "(4, 5)": np.ones((4, 5)), "absent": None}.items():
        imp(".npz W_Q " + label, lambda a=arr: npz(plain(W_Q=a)), "m.npz", "2")
    big = "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }"
    for label, member in {
            "(187500000, 8) declared": npy_raw(big % "(187500000, 8)", bytes(64)),
            "(10**12, 10**12) declared": npy_raw(big % "(1000000000000, 1000000000000)"),
            "a negative shape": npy_raw(big % "(-4, 4)", bytes(64)),
            "a shape of 2**64": npy_raw(big % "(18446744073709551616, 1)", bytes(64)),
            "a call in the header": npy_raw("{'descr': __import__('os').getcwd(), }"),
            "a header that is not a dict": npy_raw("[1, 2, 3]"),
            "data shorter than declared": npy_raw(big % "(4, 4)", bytes(64)),
            "version 3.0": npy_raw(big % "(4, 4)", bytes(128), b"\x03\x00"),
            "a bad magic": b"\x93NUMPZ" + npy(np.eye(4))[6:],
            "header length 65535": npy(np.eye(4))[:8] + b"\xff\xff" + bytes(100)}.items():
        imp(".npz npy with " + label, lambda m=member: npz(plain(W_Q=m)), "m.npz")
    imp(".npz of 10000 members", lambda: npz([("x%d.npy" % i, npy(np.ones(1)))
                                              for i in range(10000)]), "m.npz")
    imp(".npz with W_Q twice", lambda: npz(plain() + [("W_Q.npy", npy(np.ones((3, 3))))]), "m.npz")
    imp(".npz member ../../escape.npy",
        lambda: npz(plain() + [("../../escape.npy", npy(np.ones(2)))]), "m.npz")
    for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        imp(".npz compressed by method %d" % method, lambda m=method: npz(plain(), m), "m.npz")

    def claims(size):  # the zip records claim `size` bytes uncompressed
        z = bytearray(npz(plain(), zipfile.ZIP_DEFLATED))
        struct.pack_into("<I", z, 22, size)
        struct.pack_into("<I", z, z.rfind(b"PK\x01\x02") + 24, size)
        return bytes(z)
    imp(".npz whose zip claims 1.5e9 bytes", lambda: claims(1500000000), "m.npz")
    imp(".npz whose zip claims 2^32-1 bytes", lambda: claims(2**32 - 1), "m.npz")
    x = lambda a: [("X.npy", npy(a))]
    for label, members in {
            "X of another width": x(np.ones((3, 5))), "X NaN": x(np.full((3, 4), np.nan)),
            "X int32": x(np.ones((3, 4), dtype="i4")), "X of 0 rows": x(np.ones((0, 4))),
            "X 1-D": x(np.ones(4)), "no arrays": [],
            "layer99_sentence0 alone": [("layer99_sentence0.npy", npy(np.ones((3, 4))))],
            "layer0_sentence-1": [("layer0_sentence-1.npy", npy(np.ones((3, 4))))],
            "a sentence index of 20 digits":
                [("layer0_sentence99999999999999999999.npy", npy(np.ones((3, 4))))],
            "X (10**9, 4) declared": [("X.npy", npy_raw(big % "(1000000000, 4)", bytes(64)))]
    }.items():
        cases.append(Case("checkpoints", "--inputs: " + label,
                          ["import", "{b}/bert.safetensors", "--heads", "1", "--inputs",
                           "{d}/in.npz", "--out", "{d}/o.h5"],
                          lambda d, m=members: write(d + "/in.npz", npz(m))))
    return cases


# ------------------------------------------------------------------------------ datasets

def datasets(rng, b):
    cases = []
    sels = ["", ":", "::::", "minilm-l6:", "minilm-l6:::", "minilm-l6:99", "minilm-l6:-1",
            "minilm-l6:0:99", "minilm-l6:0:0:999", "minilm-l6:0:0:0:0", "minilm-l6:1e3",
            "minilm-l6:0x1", "minilm-l6: 1", "minilm-l6:+1", "minilm-l6:18446744073709551616",
            "nosuch", "../etc/passwd", "/etc/passwd", "a" * 100000, "\x1b[31mred",
            "minilm-l6\n", "attention_heads:0:0:0", "MINILM-L6", ".", "..", "minilm-l6.h5",
            "*:0:0", "minilm-l6:0:0:0"]
    cmds = [["cond"], ["neumann"], ["fidelity"], ["jacobian", "-q"]]
    for i, s in enumerate(sels):  # each selector into two of the four commands
        for argv in cmds[i % 2::2]:
            cases.append(Case("datasets", "%s --dataset %r" % (argv[0], s[:40]),
                              argv + ["--no-report", "--dataset", s]))
    for s in ("", "minilm-l6:99", "a" * 100000, "nosuch"):
        cases.append(Case("datasets", "verify --dataset %r" % s[:40], [
            "verify", "model-weights-kappa", "-q", "--fail-on", "never", "--no-report",
            "--dataset", s]))
    for s in ("nosuch", "", "a" * 100000, "\x1b]0;x\x07", "../../etc/passwd"):
        cases.append(Case("datasets", "dataset show %r" % s[:40], ["dataset", "show", s]))

    def tampered(fn):
        def prep(d):
            os.mkdir(d + "/ds")
            shutil.copy(b + "/model.h5", d + "/ds/model.h5")
            with h5py.File(d + "/ds/model.h5", "r+") as f:
                names = []
                f.visit(lambda n: names.append(n) if n.endswith("W_Q") else None)
                fn(f, names[0])
        return prep

    def ds(d, name=None, fn=None):  # the folder ds, with `name` made by fn(path)
        os.mkdir(d + "/ds")
        if name:
            fn(d + "/ds/" + name)
    folders = {
        "a plain file": lambda d: write(d + "/ds", b"x"), "an empty folder": ds,
        "a missing folder": lambda d: None, "an empty string": None,
        "a 0-byte model.h5": lambda d: ds(d, "model.h5", lambda p: write(p, b"")),
        "a text model.h5": lambda d: ds(d, "model.h5", lambda p: write(p, b"hello")),
        "a folder model.h5": lambda d: ds(d, "model.h5", os.mkdir),
        "a dangling model.h5": lambda d: ds(d, "model.h5", lambda p: os.symlink("nowhere", p)),
        "a symlink loop model.h5": lambda d: ds(d, "model.h5", lambda p: os.symlink(p, p)),
        "a file a:b.h5": lambda d: ds(d, "a:b.h5", lambda p: shutil.copy(b + "/model.h5", p)),
        "5000 empty .h5 files": lambda d: ds(d, "x", lambda p: [
            write(d + "/ds/f%d.h5" % i, b"") for i in range(5000)]),
        "W_Q declared 10^5 x 10^5": tampered(lambda f, n: (f.__delitem__(n), f.create_dataset(
            n, shape=(100000, 100000), dtype="f8"))),
        "W_Q a string": tampered(lambda f, n: (f.__delitem__(n), f.__setitem__(n, "abc"))),
        "no root attributes": tampered(lambda f, n: [f.attrs.__delitem__(a) for a in list(f.attrs)]),
    }
    for label, prep in folders.items():
        env = {"ATTNSPEC_DATASETS": "" if prep is None else "{d}/ds"}
        for argv in (["dataset", "list"], ["dataset", "show", "model"],
                     ["cond", "--dataset", "model", "--no-report"]):
            cases.append(Case("datasets", "ATTNSPEC_DATASETS at %s: %s" % (label, " ".join(argv[:2])),
                              argv, prep, env=env))
    return cases


# ------------------------------------------------------------------------------ reports, instance

def mutations(path):
    """(kind, label, fn(h5py.File)) for every dataset, group and attribute of the file."""
    dsets, groups, attrs = [], [], []
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: dsets.append((n, o.shape, o.dtype))
                     if isinstance(o, h5py.Dataset) else groups.append(n))
        for obj in ["/"] + groups + [x[0] for x in dsets]:
            attrs += [(obj, a, f[obj].attrs[a]) for a in f[obj].attrs]
    out = []

    def replace(n, **kw):  # the dataset n made anew by create_dataset(**kw), its attributes kept
        def fn(f):
            kw2 = {k: v(f) if callable(v) else v for k, v in kw.items()}
            saved = dict(f[n].attrs)
            del f[n]
            f.create_dataset(n, **kw2)
            f[n].attrs.update(saved)
        return fn
    for n, shape, dt in dsets:
        text = lambda f, shape=shape: np.full(shape, "abc", dtype=h5py.string_dtype())
        out += [("text", n + ": text", replace(n, data=text)),
                ("scalar", n + ": a scalar", replace(n, data=3.0)),
                ("rank", n + ": one rank more", replace(n, shape=(1,) + shape if shape else (2, 2),
                                                        dtype="f8")),
                ("huge", n + ": 10^9 declared, unwritten", replace(
                    n, shape=(10**9,) if len(shape) < 2 else (10**5, 10**5), dtype="f8")),
                ("huge", n + ": 10^8 declared, unwritten", replace(
                    n, shape=(10**8,) if len(shape) < 2 else (10**4, 10**4), dtype="f8")),
                ("huge", n + ": 10^9 declared, chunked, gzip", replace(
                    n, shape=(10**9,), dtype="f8", chunks=(10**6,), compression="gzip")),
                ("empty", n + ": empty", replace(n, shape=(0,) + tuple(shape[1:]), dtype="f8")),
                ("delete", n + ": deleted", lambda f, n=n: f.__delitem__(n))]
        if dt.kind in "fiu":
            def nonfinite(f, n=n):
                v = np.array(f[n][()], dtype="f8")
                v.flat[0], v.flat[-1] = np.nan, np.inf
                return v
            out += [("nonfinite", n + ": NaN and Inf", replace(n, data=nonfinite)),
                    ("dtype", n + ": int8", replace(n, data=lambda f, n=n: f[n][()].astype("i1"))),
                    ("dtype", n + ": complex", replace(n, data=lambda f, n=n: f[n][()].astype("c16")))]
    for g in groups:
        out += [("group", g + ": deleted", lambda f, g=g: f.__delitem__(g)),
                ("group", g + ": a dataset", lambda f, g=g: (f.__delitem__(g), f.__setitem__(g, np.ones(3)))),
                ("link", g + ": a soft-link cycle", lambda f, g=g: f[g].__setitem__(
                    "loop", h5py.SoftLink("/" + g + "/loop"))),
                ("link", g + ": a hard-link cycle", lambda f, g=g: f[g].__setitem__("up", f[g]))]
    for obj, a, v in attrs:
        lab, text = "%s@%s" % (obj.rstrip("/"), a), isinstance(v, (str, bytes))
        put = lambda value, o=obj, a=a: lambda f: f[o].attrs.__setitem__(
            a, value() if callable(value) else value)
        out += [("attr", lab + ": deleted", lambda f, o=obj, a=a: f[o].attrs.__delitem__(a)),
                ("attr", lab + ": an array", put(np.array(
                    [v, v], dtype=h5py.string_dtype() if isinstance(v, str) else None))),
                ("attr", lab + (": 7" if text else ": 'seven'"), put(7 if text else "seven")),
                ("attr", lab + ": 1 MB", put(lambda: "x" * 10**6)),
                ("attr", lab + ": escapes", put("\x1b]0;owned\x07\x1b[31mred"))]
    for sv in ("2.0", "1.999", "", "abc", 1.0, "1", "01.0", " 1.0", "1." + "9" * 1000,
               np.array(["1.0", "1.0"], dtype=h5py.string_dtype()), np.bytes_(b"1.0\x00x")):
        out.append(("schema", ("schema_version %r" % (sv,))[:50],
                    lambda f, sv=sv: f.attrs.__setitem__("schema_version", sv)))
    out += [("schema", "schema_version deleted", lambda f: f.attrs.__delitem__("schema_version")),
            ("link", "an external link to /etc/passwd",
             lambda f: f.__setitem__("ext", h5py.ExternalLink("/etc/passwd", "/x")))]
    return out


def whole_file(path):
    raw = open(path, "rb").read()
    return [("file", "truncated to half", lambda p: write(p, raw[:len(raw) // 2])),
            ("file", "0 bytes", lambda p: write(p, b"")),
            ("file", "text", lambda p: write(p, b"hello\n")),
            ("file", "an empty HDF5 file", lambda p: h5py.File(p, "w").close()),
            ("file", "a directory", lambda p: (os.remove(p), os.mkdir(p))),
            ("file", "its superblock zeroed", lambda p: write(p, raw[:8] + bytes(64) + raw[72:]))]


def pick(muts, k, rng):
    """k mutations, round-robin over their kinds, each kind shuffled: every kind is tried."""
    kinds = collections.defaultdict(list)
    for m in muts:
        kinds[m[0]].append(m)
    for v in kinds.values():
        rng.shuffle(v)
    chosen = []
    while len(chosen) < k and any(kinds.values()):
        chosen += [kinds[kd].pop() for kd in sorted(kinds) if kinds[kd]]
    return chosen[:k]


def tampered_cases(cls, src, muts, commands, b):
    """Each mutation of the fixture src as {d}/r.h5, run by the commands of its turn."""
    cases = []
    for i, (kind, label, fn) in enumerate(muts):
        def prep(d, fn=fn, kind=kind):
            shutil.copy(b + "/" + src, d + "/r.h5")
            if kind == "file":
                return fn(d + "/r.h5")
            with h5py.File(d + "/r.h5", "r+") as f:
                fn(f)
        for argv in commands[i % len(commands)]:
            cases.append(Case(cls, "%s %s: %s" % (src, argv[1], label), argv, prep))
    return cases


def reports(rng, b):
    r = "{d}/r.h5"
    cmds = [[["report", "show", r], ["report", "render", r]],
            [["report", "show", r, "--json"], ["report", "render", r, "--out", "{d}/p.md"]],
            [["report", "show", r, "--tree"],
             ["report", "render", r, "--out", "{d}/page", "--no-figures"]]]
    cases = []
    for src in ("neumann.h5", "fidelity.h5", "cond.h5", "jacobian.h5", "verify.h5"):
        muts = pick(mutations(b + "/" + src), 30, rng) + whole_file(b + "/" + src)[:4]
        cases += tampered_cases("reports", src, muts, cmds, b)
    return cases


def instance(rng, b):
    replay = ["verify", "thm3.8-above-sigma1", "--fail-on", "never", "--instance", "{d}/r.h5"]
    muts = pick(mutations(b + "/instance.h5"), 74, rng) + whole_file(b + "/instance.h5")
    with h5py.File(b + "/instance.h5", "r") as f:
        mats = [n for n in ("W", "X", "W_Q") if "record/instance/" + n in f]

    def swap(n, shape, written):  # the matrix n replaced by one of shape, written or declared
        def fn(f):
            del f[n]
            if written:
                f[n] = np.random.default_rng(1).standard_normal(shape)
            else:
                f.create_dataset(n, shape=shape, dtype="f8")
        return fn
    cases = tampered_cases("instance", "instance.h5", muts, [[replay]], b)
    for m in mats:
        for shape, written, extra in (((1500, 1500), True, ["--max-memory", "100M"]),
                                      ((20000, 20000), False, []), ((10**5, 5), False, []),
                                      ((3000, 3000), False, ["--max-memory", "20M"])):
            cases += tampered_cases("instance", "instance.h5", [(
                "swap", "%s %s %s" % (m, shape, "written" if written else "declared"),
                swap("record/instance/" + m, shape, written))], [[replay + extra]], b)
    v, inst = ["verify", "thm3.8-above-sigma1", "--instance"], "{b}/instance.h5"
    for argv in (["verify", "thm3.5", "--instance", inst], ["verify", "nosuch", "--instance", inst],
                 ["verify", "--instance", inst], v[:2] + ["thm3.5", "--instance", inst],
                 v + ["{b}/neumann.h5"], v + ["{b}/model.h5"], v + ["{b}"], v + ["{d}/missing.h5"],
                 v + [""], v + [inst, "--all"]):
        cases.append(Case("instance", " ".join(argv).replace("{b}/", ""), argv))
    for rec in ("instance_999999", "", "../x", "/record", "a" * 100000, "instance_-1",
                "records/instance_0", "instance_0\x1b[31m", "checks"):
        cases.append(Case("instance", "--record %r" % rec[:30],
                          v + ["{b}/verify.h5", "--fail-on", "never", "--record", rec]))
    return cases


# ------------------------------------------------------------------------------ outputs, FIFOs

def refused_first(d, r):
    """An output that cannot be created is refused before any work, not at the final rename."""
    if r[0] != 0 and "cannot rename" in r[5]:
        return "refused only at the rename, after the work"


def user_files_kept(d, r):
    kept = os.path.isfile(d + "/mine/thesis.tex") and os.path.isfile(d + "/mine/figures/mine.png")
    return refused_first(d, r) or (None if kept else "the user's files are gone")


def outputs(rng, b):
    writers = {"neumann": ["neumann", "--tokens", "16", "--dh", "4", "--out"],
               "render md": ["report", "render", "{b}/neumann.h5", "--out"],
               "render dir": ["report", "render", "{b}/neumann.h5", "--no-figures", "--out"],
               "import": ["import", "{b}/bert.safetensors", "--heads", "2", "--out"],
               "merge": ["report", "merge", "{b}/s0.h5", "{b}/s1.h5", "--out"],
               "verify": ["verify", "thm3.5", "--trials", "2", "-q", "--fail-on", "never", "--out"]}

    def user_dir(d):
        os.makedirs(d + "/mine/figures")
        write(d + "/mine/thesis.tex", b"my thesis")
        write(d + "/mine/figures/mine.png", b"png")

    def previous(d, mode=0o644):
        write(d + "/prev.h5", b"previous content")
        os.chmod(d + "/prev.h5", mode)
    targets = [  # label, path, prep, the expected codes (None: any documented one)
        ("a missing parent folder", "{d}/no/such/o.h5", None, {73}),
        ("a parent that is a file", "{d}/file/o.h5", lambda d: write(d + "/file", b"x"), {73}),
        ("an existing empty folder", "{d}/adir", lambda d: os.mkdir(d + "/adir"), None),
        ("a folder of the user's files", "{d}/mine", user_dir, {73}),
        ("the case's own folder", "{d}", lambda d: write(d + "/notes.txt", b"mine"), {73}),
        ("a FIFO", "{d}/fifo", lambda d: os.mkfifo(d + "/fifo"), {73}),
        ("a socket", "{d}/sock", lambda d: mksocket(d + "/sock"), {73}),
        ("/dev/null", "/dev/null", None, {73}),
        ("a 255-character name", "{d}/" + "n" * 252 + ".h5", None, {0}),
        ("a 256-character name", "{d}/" + "n" * 253 + ".h5", None, {73}),
        ("a path longer than PATH_MAX", "{d}/" + ("d" * 200 + "/") * 25 + "o.h5", None, {73}),
        ("an empty --out", "", None, {64}),
        ("/proc/self/o.h5", "/proc/self/o.h5", None, {73}),
        ("/sys/o.h5", "/sys/o.h5", None, {73}),
        ("a dangling symlink", "{d}/dl.h5", lambda d: os.symlink("no/x", d + "/dl.h5"), None),
        ("a symlink loop", "{d}/loop.h5", lambda d: os.symlink("loop.h5", d + "/loop.h5"), None),
        ("an existing file", "{d}/prev.h5", previous, {0}),
        ("a read-only existing file", "{d}/prev.h5", lambda d: previous(d, 0o444), None),
        ("a trailing slash", "{d}/o.h5/", None, None),
        ("escapes and a newline in the name", "{d}/a\nb\x1b[31m.h5", None, {0})]
    cases = []
    for wname, argv in writers.items():
        for label, path, prep, expect in targets:
            if wname == "verify" and expect != {73}:
                continue
            if wname.startswith("render") and path.endswith(".h5"):  # a name of the same length
                path = path[:-3] + (".md" if wname == "render md" else "nnn")
            if wname == "render dir" and label == "an existing empty folder":
                expect = {0}
            check = user_files_kept if label == "a folder of the user's files" else refused_first
            cases.append(Case("outputs", "%s --out %s" % (wname, label), argv + [path], prep,
                              expect, check, limit=60 if wname == "verify" else 8))
    copy = lambda src, dst: lambda d: shutil.copy(b + "/" + src, d + "/" + dst)
    for label, argv, prep in (
            ("merge --out a shard", ["report", "merge", "{d}/s0.h5", "{b}/s1.h5", "--out",
                                     "{d}/s0.h5"], copy("s0.h5", "s0.h5")),
            ("import --out the checkpoint", ["import", "{d}/m.safetensors", "--heads", "2", "--out",
                                             "{d}/m.safetensors"], copy("bert.safetensors", "m.safetensors")),
            ("neumann --out its --input", ["neumann", "--input", "{d}/qk.h5", "--out", "{d}/qk.h5"],
             copy("qk.h5", "qk.h5")),
            ("render --out the report", ["report", "render", "{d}/r.h5", "--out", "{d}/r.h5"],
             copy("neumann.h5", "r.h5")),
            ("cond --out its --input", ["cond", "--input", "{d}/m.h5", "--matrix", "/W", "--out",
                                        "{d}/m.h5"], copy("mat.h5", "m.h5"))):
        cases.append(Case("outputs", label, argv, prep, {64}))
    return cases


def fifo(rng, b):
    o, mk = ["--out", "{d}/o.h5"], lambda d: os.mkfifo(d + "/fifo")
    inputs = [["import", "{d}/fifo", "--heads", "1"] + o,
              ["import", "{b}/bert.safetensors", "--heads", "1", "--inputs", "{d}/fifo"] + o,
              ["report", "show", "{d}/fifo"], ["report", "render", "{d}/fifo"],
              ["report", "merge", "{d}/fifo", "{d}/fifo"] + o,
              ["report", "merge", "{b}/s0.h5", "{d}/fifo"] + o,
              ["jacobian", "--input", "{d}/fifo", "--no-report"],
              ["neumann", "--input", "{d}/fifo", "--no-report"],
              ["fidelity", "--input", "{d}/fifo", "--no-report"],
              ["cond", "--input", "{d}/fifo", "--matrix", "/W", "--no-report"],
              ["verify", "thm3.8-above-sigma1", "--instance", "{d}/fifo"],
              ["verify", "thm3.3", "--trials", "1", "--embedded", "{d}/fifo", "--no-report"]]
    cases = [Case("fifo", "a FIFO into " + " ".join(a for a in argv[:3] if "{" not in a), argv,
                  mk, {65}, limit=8, fast=5) for argv in inputs]
    for name in ("x.safetensors", "x.npz"):
        cases.append(Case("fifo", "a FIFO named " + name, ["import", "{d}/" + name, "--heads", "1"] + o,
                          lambda d, n=name: os.mkfifo(d + "/" + n), {65}, limit=8, fast=5))
    cases.append(Case("fifo", "a FIFO as config.json", ["import", "{d}/m.safetensors"] + o,
                      lambda d: (shutil.copy(b + "/bert.safetensors", d + "/m.safetensors"),
                                 os.mkfifo(d + "/config.json")), {65}, limit=8, fast=5))
    for argv in (["dataset", "list"], ["dataset", "show", "model"],
                 ["cond", "--dataset", "model", "--no-report"]):
        cases.append(Case("fifo", "a FIFO model.h5 in ATTNSPEC_DATASETS: " + " ".join(argv[:2]),
                          argv, lambda d: (os.mkdir(d + "/ds"), os.mkfifo(d + "/ds/model.h5")),
                          env={"ATTNSPEC_DATASETS": "{d}/ds"}, limit=8, fast=5))
    for dev in ("/dev/zero", "/dev/urandom"):
        for argv in (["import", dev, "--heads", "1"] + o, ["report", "show", dev],
                     ["neumann", "--input", dev, "--no-report"],
                     ["verify", "thm3.8-above-sigma1", "--instance", dev]):
            cases.append(Case("fifo", " ".join(argv[:3]), argv, None, {65, 66}, limit=8, fast=5))
    return cases


# ------------------------------------------------------------------------------ flags

def flags(rng, b):
    bases = {"neumann": ["neumann", "--tokens", "16", "--dh", "4", "--no-report"],
             "fidelity": ["fidelity", "--tokens", "16", "--dh", "4", "--draws", "1", "--family",
                          "gaussian", "--no-report"],
             "jacobian": ["jacobian", "--random", "6,4,2", "-q", "--no-report"],
             "verify": ["verify", "thm3.5", "--trials", "2", "-q", "--fail-on", "never",
                        "--no-report"],
             "cond": ["cond", "--input", "{b}/mat.h5", "--matrix", "/W", "--no-report"],
             "import": ["import", "{b}/bert.safetensors", "--heads", "2", "--out", "{d}/o.h5"]}
    numeric = {"neumann": "--gamma --eps --tokens --dh --mu --seed --target --orders",
               "fidelity": "--gamma --tokens --heads --draws --dh --eps --mu",
               "jacobian": "--random --weight-scale --heads --full-upto --store-limit --seed",
               "verify": "--trials --shape --time-budget --threads --search-evals --seed",
               "cond": "--rtol", "import": "--heads --layers --scale"}
    bad = ["nan", "NaN", "inf", "-inf", "", "1x", " 1", "0x10"]  # usage errors (64)
    other = ["-1", "+1", "0", "1e308", "1e-320", "18446744073709551616", "2147483648",
             "2147483647", "1,2", "1,,2", "9" * 100000, "1e3", "0.5", "-0"]
    timed = {"--draws", "--trials", "--search-evals", "--orders", "--threads", "--seed",
             "--time-budget"}  # a huge valid value of these is work the user asked for

    def with_opt(argv, opt, value):
        argv = list(argv)
        if opt in argv:
            argv[argv.index(opt) + 1] = value
        else:
            argv += [opt, value]
        return argv
    cases = []
    for cmd, opts in numeric.items():
        for opt in opts.split():
            for v in rng.sample(bad, 2) + rng.sample(other, 4):
                cases.append(Case("flags", "%s %s %r" % (cmd, opt, v[:24]),
                                  with_opt(bases[cmd], opt, v), expect={64} if v in bad else None,
                                  work=opt in timed and v in ("2147483647", "1e308", "1e3")))
    mem = ["18446744073709551616", "2EiB", "1EiB", "-1", "0", "1", "1B", "10K", "1.5TiB", "nan",
           "inf", "1e3", "512MiB ", "4gib", "1 GiB", "", "1.5", "0x100M"]
    for cmd in bases:
        for v in rng.sample(mem, 8):
            cases.append(Case("flags", "%s --max-memory %r" % (cmd, v),
                              with_opt(bases[cmd], "--max-memory", v),
                              expect={64} if v in mem[:2] + ["-1", "nan", "inf", ""] else None))
    every = dict(bases, report=["report", "show", "{b}/neumann.h5"], dataset=["dataset", "list"],
                 info=["info"], **{"gpu-check": ["gpu-check", "--quick"], "check-kernel": [
                     "check-kernel", "attention", "--generate", "gaussian", "--seed", "1",
                     "--shape", "4,2", "--inputs", "{d}/in.npz"]})
    for cmd, argv in every.items():
        for extra in ("--nope", "bareword", "-x", "--json=1", "--out"):
            if not (cmd == "gpu-check" and extra == "--out"):
                cases.append(Case("flags", "%s %s" % (cmd, extra), argv + [extra], expect={64}))
    for argv in ([], [""], ["--nope"], ["bareword"], ["-"], ["--version", "extra"], ["verify"],
                 ["report"], ["report", "nope", "{b}/neumann.h5"], ["import"],
                 ["neumann", "--gamma"], ["neumann", "--tokens", "16", "--tokens", "16"],
                 ["\x1b[31m"], ["x" * 100000]):
        cases.append(Case("flags", "attnspec " + (" ".join(map(repr, argv))[:40] or "(no arguments)"),
                          argv, expect=None if argv in ([], ["--version", "extra"]) else {64}))
    return cases


# ------------------------------------------------------------------------------ main

def shown(argv, root):
    quote = lambda a: a if a and re.fullmatch(r"[\w./:,=+@%-]+", a) else repr(a)[:120]
    return " ".join(map(quote, argv)).replace(root, "$T")[:400]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("attnspec", nargs="?", default="build/cli/attnspec")
    ap.add_argument("--seed", type=int, default=20251)
    ap.add_argument("--limit", type=int, default=0, help="at most N cases per class")
    ap.add_argument("--classes", default=",".join(CLASSES), help="comma-separated")
    ap.add_argument("--keep", metavar="DIR", help="leave every case's files in DIR")
    ap.add_argument("--list", action="store_true", help="print the cases, run none")
    args = ap.parse_args()
    binary = os.path.abspath(args.attnspec)
    classes = [c for c in args.classes.split(",") if c]
    if set(classes) - set(CLASSES):
        ap.error("unknown class(es) %s" % ",".join(sorted(set(classes) - set(CLASSES))))
    if not os.access(binary, os.X_OK):
        ap.error("no executable at %s" % binary)
    root = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="hostile-")
    b = root + "/fixtures"
    os.makedirs(b, exist_ok=True)
    t_start = time.monotonic()
    fixtures(binary, b)
    rng, cases = random.Random(args.seed), []
    for c in classes:
        got = globals()[c](rng, b)
        if args.limit and len(got) > args.limit:
            keep = set(random.Random(args.seed).sample(range(len(got)), args.limit))
            got = [x for i, x in enumerate(got) if i in keep]
        cases += got
    if args.list:
        for i, c in enumerate(cases):
            print("%4d %-11s %s" % (i, c.cls, c.label[:100]))
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        return 0
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("ATTNSPEC_")}
    stats = {c: {"tried": 0, "clean": 0, "skipped": 0, "codes": collections.Counter()}
             for c in classes}
    defects, skipped, slowest, largest = [], [], (0, ""), (0, "")
    for i, case in enumerate(cases):
        d, s = "%s/case-%04d" % (root, i), stats[case.cls]
        os.makedirs(d)
        try:
            if case.prep:
                case.prep(d)
        except Exception as e:  # an input h5py or the OS will not make: not a case
            skipped.append((case, "%s: %s" % (type(e).__name__, e)))
            s["skipped"] += 1
            shutil.rmtree(d, ignore_errors=True)
            continue
        sub = lambda a: a.replace("{d}", d).replace("{b}", b)
        argv = [sub(a) for a in case.args]
        env = dict(env0, **{k: sub(v) for k, v in case.env.items()})
        before = snapshot(d)
        res = run(binary, argv, d, env, case.limit)
        why = judge(case, d, before, res)
        s["tried"] += 1
        s["clean"] += not why
        s["codes"]["killed" if res[1] else res[0]] += 1
        slowest, largest = max(slowest, (res[2], case.label)), max(largest, (res[3], case.label))
        if why:
            defects.append((i, case, argv, res, why))
        if sys.stderr.isatty():
            sys.stderr.write("\r%d/%d cases, %d defective " % (i + 1, len(cases), len(defects)))
        if not args.keep:
            shutil.rmtree(d, ignore_errors=True)
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    print("%-12s %6s %6s %9s %8s  %s" % ("class", "tried", "clean", "defective", "skipped",
                                         "exit codes (count)"))
    for c in classes + ["total"]:
        s = stats[c] if c != "total" else {k: sum((stats[x][k] for x in classes),
                                                  collections.Counter() if k == "codes" else 0)
                                           for k in ("tried", "clean", "skipped", "codes")}
        codes = " ".join("%s:%d" % kv for kv in sorted(s["codes"].items(), key=lambda kv: str(kv[0])))
        print("%-12s %6d %6d %9d %8d  %s" % (c, s["tried"], s["clean"], s["tried"] - s["clean"],
                                             s["skipped"], codes))
    print("%s, seed %d, %.0f s%s" % (binary, args.seed, time.monotonic() - t_start,
                                     ", cases kept in " + root if args.keep else ""))
    print("slowest case %.2f s (%s); largest peak %.0f MiB (%s)" % (
        slowest[0], slowest[1][:60], largest[0] / 2**20, largest[1][:60]))
    for i, case, argv, (code, killed, secs, peak, out, err, _), why in defects:
        print("\n[%d] %s: %s\n    attnspec %s\n    exit %s, %.2f s, %.0f MiB: %s\n    stderr: %s" % (
            i, case.cls, case.label[:100], shown(argv, root),
            "killed" if killed else code, secs, peak / 2**20, "; ".join(why),
            err.strip()[:200].replace("\n", "\\n")))
    for case, e in skipped:
        print("skipped: %s: %s: %s" % (case.cls, case.label[:80], e[:120]))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
