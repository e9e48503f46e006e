#!/usr/bin/python3
"""attnview and its PyTorch package (python/attnview_torch) against each other.

    /usr/bin/python3 tests/python/test_torch.py CASE

Run by meson (suite 'python', through run.sh, which skips when
/usr/bin/python3 has no torch). ATTNVIEW_BIN is the built program,
ATTNVIEW_TEST_DATA the tests/ directory. Cases:

  format      the .attn file: attnview's files written back byte for byte
              (models and checkpoints), the metadata attnview shows, and
              damaged files refused exactly when attnview refuses them
  vocab       the same corpus gives the same cleaning counts, the same
              vocabulary ids and the same token sequence in both
  ddp         2 processes (gloo): identical weights, different data; the
              model opens in attnview and its --dump matches PyTorch
  attnview    an attnview-trained model in PyTorch: same weights and forward;
              fine-tuned in PyTorch, it opens in attnview again
  resume      stopping and resuming gives the uninterrupted run's model;
              damaged or mismatched checkpoints are refused
  reference   tests/reference/ on the package: the golden files come out
              byte for byte, the reference tool still works
  hostile     file names and metadata that are terminal commands: nothing
              the trainer and the tool print (results, errors, argparse's
              messages, the resume command) holds a control sequence, in
              C.UTF-8 and zh_CN.UTF-8; names are quoted as attnview quotes
              them; such metadata loads in both
Every comparison is also shown to fail on a perturbed input.
"""

import json
import math
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

TESTS = os.environ.get("ATTNVIEW_TEST_DATA") or os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
PYDIR = os.path.join(ROOT, "python")
sys.path.insert(0, PYDIR)

import torch  # noqa: E402

import attnview_torch as av  # noqa: E402
from attnview_torch import modelfile as mf  # noqa: E402
from attnview_torch.shown import quote, shell_quote  # noqa: E402
from attnview_torch.tool import compare  # noqa: E402

BIN = os.environ.get("ATTNVIEW_BIN") or os.path.join(ROOT, "build", "src", "attnview")
PY = sys.executable
TINY = ["--dim", "16", "--heads", "2", "--layers", "2", "--context", "32", "--batch", "8"]
TEXTS = ["床前明月光，疑是地上霜。", "The cat sat on the mat.", "Hi 你好😀 cafe\u0301 Ω!"]

checks = 0
failures = 0
work = tempfile.mkdtemp(prefix="attnview-torch-")


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: " + what, flush=True)
    return cond


def env(**extra):
    e = dict(os.environ)
    e["PYTHONPATH"] = PYDIR + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e.setdefault("SOURCE_DATE_EPOCH", "1767225600")
    for k, v in extra.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = str(v)
    return e


def run(cmd, want=0, **envs):
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env(**envs),
                       cwd=work)
    if want is not None and p.returncode != want:
        check(False, "%s: exit %d (want %d)\n%s%s" % (" ".join(cmd), p.returncode, want,
                                                      p.stdout[-2000:], p.stderr[-2000:]))
    return p


def attnview(*args, want=0):
    return run([BIN] + list(args), want)


def pytrain(*args, want=0, **envs):
    return run([PY, "-m", "attnview_torch.train", "--threads", "1"] + list(args), want, **envs)


def path(name):
    return os.path.join(work, name)


def write(name, data):
    with open(path(name), "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path(name)


def read(name):
    with open(path(name) if not os.path.isabs(name) else name, "rb") as f:
        return f.read()


def corpus_text():
    """Text with a real corpus's shape, the same on every machine (no test
    reads what happens to be installed): the test corpus, then lines of
    Chinese drawn from 700 characters with Zipf's frequencies (1/rank), so
    that some occur once or twice (--min-count bites) and there are more
    than 300 (--max-vocab 300 bites), with the colour escapes the Debian
    fortunes files carry. About 120 kB."""
    rng = random.Random(7)
    chars = [chr(0x4E00 + 37 * k % 20902) for k in range(700)]
    weights = [1.0 / (k + 1) for k in range(len(chars))]
    lines = []
    size = 0
    while size < 112000:
        line = "".join(rng.choices(chars, weights, k=rng.randint(8, 40)))
        if rng.random() < 0.1:
            line = "\x1b[1;33m" + line + "\x1b[m"
        line += rng.choice("，。！？") + "\n"
        lines.append(line)
        size += len(line.encode())
    return read(os.path.join(TESTS, "data", "corpus", "mixed.txt")) + "".join(lines).encode()


def dump_matches(model_path, text, what, tol=1e-5):
    """attnview --dump of `text` agrees with PyTorch's forward."""
    p = attnview("--dump", "--format", "json", "--model", model_path, "--text", text)
    if p.returncode:
        return False
    import io
    out = io.StringIO()
    ok = compare(model_path, text, json.loads(p.stdout), tol, out)
    check(ok, "%s: --dump differs from PyTorch on %r:\n%s" % (what, text, out.getvalue()))
    return ok, json.loads(p.stdout)


def perturbed(model_path, name):
    """A copy of a model with one weight changed (a valid file)."""
    m = av.load(model_path)
    with torch.no_grad():
        m.h[0].qkv_w[0, 0] += 0.5
    out = path(name)
    av.save(m, out)
    return out


def attnview_trained(name, *extra):
    """A tiny model trained by attnview on the test corpus."""
    c = write("corpus.txt", corpus_text())
    attnview("--train", c, "-o", path(name), *TINY, "--steps", "20", "--eval-every", "0",
             "--threads", "1", *extra)
    return path(name)


def attnview_checkpoint(name):
    """A kind-1 file written by attnview: training stopped by SIGINT."""
    c = write("corpus.txt", corpus_text())
    out = path(name)
    ck = out + ".ckpt"
    p = subprocess.Popen([BIN, "--train", c, "-o", out] + TINY + [
        "--steps", "100000", "--checkpoint-every", "1", "--eval-every", "2", "--threads", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=work, env=env())
    deadline = time.monotonic() + 60
    while not os.path.exists(ck) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=60)[1].decode()
    check(p.returncode == 130 and os.path.exists(ck),
          "attnview --train stopped by SIGINT: exit %s, %s" % (p.returncode, err))
    return ck


# ---------------------------------------------------------------- format

def recrc(data):
    data = bytearray(data)
    struct.pack_into("<I", data, len(data) - 4, zlib.crc32(bytes(data[:-4])) & 0xFFFFFFFF)
    return bytes(data)


def put(data, off, fmt, value, fix_crc=True):
    data = bytearray(data)
    struct.pack_into(fmt, data, off, value)
    return recrc(data) if fix_crc else bytes(data)


def mutations(data, rng):
    """Damaged (and some harmless) variants of a model file: (label, bytes)."""
    n = len(data)
    f = mf.decode(data)
    name_len = struct.unpack_from("<I", data, 96)[0]
    corp_off = 100 + name_len
    corp_len = struct.unpack_from("<I", data, corp_off)[0]
    voc = corp_off + 4 + corp_len
    V = f.config.vocab_size
    par = voc + 4 * V
    out = []
    for k in sorted({0, 1, 7, 8, 11, 12, 23, 24, 95, 96, 100, 107, 108, voc, par, par + 5,
                     n // 2, n - 5, n - 4, n - 1}):
        if k < n:
            out.append(("truncated to %d" % k, data[:k]))
    out.append(("one byte appended", data + b"\0"))
    out.append(("one byte appended, size and CRC fixed",
                recrc(put(data + b"\0", 16, "<Q", n + 1, False))))
    for _ in range(12):
        i = rng.randrange(n)
        b = bytearray(data)
        b[i] ^= 1 << rng.randrange(8)
        out.append(("bit flip at byte %d" % i, bytes(b)))
    for v in (0, 2, 1 << 31):
        out.append(("format version %d" % v, put(data, 8, "<I", v)))
    out.append(("kind 2", put(data, 12, "<I", 2)))
    out.append(("kind flipped", put(data, 12, "<I", 1 - f.kind)))
    out.append(("size field +8", put(data, 16, "<Q", n + 8)))
    for off, label, vals in ((24, "objective", (1 - f.config.objective, 2)),
                             (28, "V", (3, 4, V - 1, V + 1, 200001)),
                             (32, "d", (0, 1, f.config.dim - 1, f.config.dim + 2, 4096)),
                             (36, "h", (0, 3, 65)), (40, "L", (0, 33)),
                             (44, "T", (0, 1, f.config.context + 1, 1025))):
        for v in vals:
            out.append(("%s = %d" % (label, v), put(data, off, "<I", v)))
    for off, label in ((48, "steps"), (56, "tokens"), (64, "created"), (72, "seed")):
        out.append(("%s changed" % label, put(data, off, "<Q", 12345)))
    out.append(("val_loss NaN", put(data, 80, "<I", 0x7FC00000)))
    out.append(("name length 4097", put(data, 96, "<I", 4097)))
    out.append(("name length past the end", put(data, 96, "<I", n)))
    out.append(("name length +1", put(data, 96, "<I", name_len + 1)))
    if name_len:
        out.append(("NUL in the name", put(data, 100, "<B", 0)))
        out.append(("invalid UTF-8 in the name", put(data, 100, "<B", 0xFF)))
        out.append(("surrogate in the name", recrc(data[:100] + b"\xed\xa0\x80"
                                                   + data[103:]) if name_len >= 3 else data))
    out.append(("corpus length past the end", put(data, corp_off, "<I", 4000)))
    for i, v in ((0, 0x110001), (1, 0x41), (2, 0x110000), (3, 0xD800), (3, 0x110000),
                 (3, 0x07), (3, 0x0A), (3, 0x9F), (3, 0xFEFF), (3, 0xFFFFFFFF), (4, f.vocab[3]),
                 (V - 1, f.vocab[5]), (V - 1, 0x10FFFF), (V - 1, 0x85)):
        if i < V:
            out.append(("vocab[%d] = U+%04X" % (i, v), put(data, voc + 4 * i, "<I", v)))
    for i, v in ((0, float("nan")), (7, float("inf")), (100, -float("inf")), (3, 1e30)):
        out.append(("parameter %d = %r" % (i, v), put(data, par + 4 * i, "<f", v)))
    for _ in range(25):  # random bytes in the header, strings and vocabulary, CRC fixed
        i = rng.randrange(min(par, n - 4))
        b = bytearray(data)
        b[i] = rng.randrange(256)
        out.append(("byte %d = %d, CRC fixed" % (i, b[i]), recrc(bytes(b))))
    return out


def resize(data, new_len_delta, at, insert=b""):
    """Remove or insert bytes at `at` and fix the size field and the CRC."""
    data = bytearray(data)
    if new_len_delta < 0:
        del data[at:at - new_len_delta]
    else:
        data[at:at] = insert
    struct.pack_into("<Q", data, 16, len(data))
    return recrc(bytes(data))


def state_differential(rng):
    seed = os.path.join(TESTS, "fuzz", "seeds", "model", "tiny_masked.ckpt")
    corpus = os.path.join(TESTS, "data", "corpus", "mixed.txt")  # what it was trained on
    data = read(seed)
    f = mf.decode(data)
    so, sl = f.state_offset, len(f.state)
    st = av.check_training_state(f.state, f.config)
    threads = str(st["options"]["threads"])
    muts = [("unchanged", data)]
    # The seed's state is version 2 (before --sharpen); the same state as
    # version 3, with a weight of 0.5 after the patience (attnview(5)).
    assert struct.unpack_from("<I", f.state, 4)[0] == 2
    v3 = bytearray(f.state[:108]) + struct.pack("<f", 0.5) + f.state[108:]
    struct.pack_into("<I", v3, 4, 3)
    data3 = mf.encode(f.config, f.vocab, f.params, f.meta, kind=f.kind, state=bytes(v3),
                      timeline=f.timeline)
    so3 = mf.decode(data3).state_offset
    muts.append(("version 3", data3))
    for v, label in ((float("nan"), "NaN"), (200.0, "200"), (-1.0, "-1")):
        muts.append(("state --sharpen %s" % label, put(data3, so3 + 108, "<f", v)))
    muts.append(("state version 4", put(data3, so3 + 4, "<I", 4)))
    for off, fmt, v, label in ((0, "<4s", b"ATCX", "magic"), (4, "<I", 1, "version"),
                               (8, "<I", 1, "objective"), (12, "<I", 16, "dim"),
                               (16, "<I", 3, "heads"), (24, "<I", 1, "context"),
                               (28, "<I", 0, "batch"), (32, "<Q", 0, "steps"),
                               (48, "<f", float("nan"), "lr"), (48, "<f", 20.0, "lr"),
                               (52, "<Q", 3, "warmup = steps"), (52, "<Q", 2**64 - 1, "warmup"),
                               (68, "<Q", 0, "min count"), (76, "<I", 2, "max vocab"),
                               (76, "<I", 300000, "max vocab"), (96, "<I", 0, "threads"),
                               (96, "<I", 300, "threads"), (96, "<I", 3, "threads"),
                               (100, "<Q", 3, "patience"),
                               (108, "<I", 5000, "val path length"),
                               (112, "<Q", 1, "ntrain"), (136, "<Q", 4, "step"),
                               (136, "<Q", 1, "step"), (176, "<Q", 2, "adam step"),
                               (sl - 12, "<I", 300, "recent count"),
                               (sl - 8, "<I", 1, "evaluation count"),
                               (sl - 4, "<I", 5, "best parameter count")):
        muts.append(("state %s" % label, put(data, so + off, fmt, v)))
    muts.append(("state 4 bytes short", resize(data, -4, so + sl - 4)))
    muts.append(("state 4 bytes long", resize(data, 4, so + sl, b"\0" * 4)))
    muts.append(("no state", resize(data, -sl, so)))
    # (not the --val-file length at 108..111: a wrong one names a file attnview
    # tries to open before it reads the rest of the state)
    for _ in range(20):
        i = rng.choice([k for k in range(120) if not 108 <= k < 112])
        b = bytearray(data)
        b[so + i] = rng.randrange(256)
        muts.append(("state byte %d = %d" % (i, b[so + i]), recrc(bytes(b))))
    muts.append(("state 16 bytes short", resize(data, -16, so + sl - 16)))
    muts.append(("state garbage", recrc(data[:so] + bytes(rng.randrange(256) for _ in range(sl))
                                        + data[so + sl:])))
    structural = ("damaged", "another version", "options are invalid", "does not match")
    verdicts = {True: 0, False: 0}
    read_alike = 0
    for label, mdata in muts:
        p = write("state.ckpt", mdata)
        # Every reader checks the state: --info (as --dump and the view) refuses
        # exactly what decode() refuses, with the same sentence; only options
        # this attnview's --train would refuse are left to --resume. (--info
        # first: a resume that finishes removes its checkpoint.)
        i = attnview("--info", "--model", p, want=None)
        try:
            mf.decode(mdata, p)
            dec_ok, dwhy = True, ""
        except av.FormatError as e:
            dec_ok, dwhy = False, str(e)
        check((i.returncode == 0) == dec_ok and (dec_ok or dwhy in i.stderr),
              "%s: attnview --info %s, decode %s %s" % (label, i.stderr or "takes it",
                                                       "takes it" if dec_ok else "refuses it",
                                                       dwhy))
        read_alike += not dec_ok
        r = attnview("--train", corpus, "--resume", p, "-o", path("state.attn"), "--threads",
                     threads, want=None)
        c_ok = not any(w in r.stderr for w in structural)
        try:
            g = mf.decode(mdata, p)
            av.check_training_state(g.state, g.config, p, g.state_offset)
            py_ok, why = True, ""
        except av.FormatError as e:
            py_ok, why = False, str(e)
        verdicts[c_ok] += 1
        check(c_ok == py_ok, "%s: attnview --resume %s, check_training_state %s %s%s" % (
            label, "takes it" if c_ok else "refuses it", "takes it" if py_ok else "refuses it",
            why, r.stderr))
        check(dec_ok or not py_ok, "%s: decode refuses what check_training_state takes" % label)
    print("training states: %d taken, %d refused by both; %d refused by every reader"
          % (verdicts[True], verdicts[False], read_alike))
    check(verdicts[True] >= 5 and verdicts[False] >= 15 and read_alike >= 10,
          "both verdicts: %s, %d refused by every reader" % (verdicts, read_alike))


def case_format():
    rng = random.Random(14)
    files = [os.path.join(TESTS, "golden", n) for n in sorted(os.listdir(
        os.path.join(TESTS, "golden"))) if n.endswith(".attn")]
    files += [os.path.join(TESTS, "fuzz", "seeds", "model", n) for n in sorted(os.listdir(
        os.path.join(TESTS, "fuzz", "seeds", "model")))]
    files += [os.path.join(ROOT, "assets", "builtin.attn")]
    files += [attnview_trained("trained.attn"), attnview_trained("causal.attn", "--objective",
                                                                  "causal"),
              attnview_checkpoint("stopped.attn")]
    kinds = set()
    for fpath in files:
        data = read(fpath)
        m = av.load(fpath)
        kinds.add(m.kind)
        check(av.to_bytes(m) == data, "%s: written back, the bytes differ" % fpath)
        # what attnview --info shows (names quoted as attnview_torch.shown quotes them:
        # a seed's metadata is all control characters)
        info = attnview("--info", "--model", fpath).stdout
        # (a converted model's seed is none of attnview's, steps and tokens its
        # checkpoint did not record are unknown, and its parameters are the
        # checkpoint's and the zeros attnview's layout adds, which sum to ours)
        fields = dict(l.split(": ", 1) for l in info.splitlines() if ": " in l)
        converted = m.config.arch.name("origin") != "attnview"

        def shown(value):
            return "unknown" if converted and value == 0 else str(value)
        n = av.num_params(m.config)
        parts = re.match(r"(\d+) \(the checkpoint's (\d+), and (\d+) zeros attnview's layout "
                         r"adds: ", fields.get("parameters", ""))
        params_ok = (parts and int(parts[1]) == n and int(parts[2]) + int(parts[3]) == n
                     if converted else fields.get("parameters") == str(n))
        check(fields.get("name") == quote(m.meta["name"])
              and fields.get("corpus") == quote(m.meta["corpus"])
              and fields.get("steps") == shown(m.meta["steps"])
              and fields.get("seed") == ("unknown" if converted else str(m.meta["seed"]))
              and fields.get("tokens seen") == shown(m.meta["tokens"])
              and params_ok,
              "%s: metadata differs from attnview --info:\n%s\n%s" % (fpath, info, m.meta))
        if m.kind == av.KIND_CHECKPOINT:
            st = av.check_training_state(m.training_state, m.config)
            check(st["step"] >= 0 and st["options"]["dim"] == m.config.dim,
                  "%s: training state %s" % (fpath, st["options"]))
    check(kinds == {0, 1}, "models and checkpoints among the files: kinds %s" % kinds)
    # the comparison can fail: one weight changed, one metadata field changed
    m = av.load(files[-2])
    with torch.no_grad():
        m.wte[5, 3] += 1e-3
    check(av.to_bytes(m) != read(files[-2]), "a changed weight gives other bytes")
    check(av.to_bytes(av.load(files[-2]), steps=21) != read(files[-2]),
          "changed metadata gives other bytes")

    # damaged files: refused by PyTorch exactly when attnview refuses them
    verdicts = {True: 0, False: 0}
    for fpath in (files[0], files[-1], files[-3]):
        for label, data in mutations(read(fpath), rng):
            p = write("mutant.attn", data)
            r = attnview("--info", "--model", p, want=None)
            c_ok = r.returncode == 0
            try:
                av.load(p)
                py_ok, why = True, ""
            except av.FormatError as e:
                py_ok, why = False, str(e)
            verdicts[c_ok] += 1
            check(c_ok == py_ok, "%s, %s: attnview %s it, PyTorch %s it %s" % (
                os.path.basename(fpath), label, "accepts" if c_ok else "refuses",
                "accepts" if py_ok else "refuses", why))
            if not py_ok:
                check(p in why, "the message names the file: %s" % why)
            if label.startswith("NUL in"):  # valid UTF-8: the rule broken is "no NUL"
                check("NUL byte" in why and "NUL byte" in r.stderr and "UTF-8" not in why
                      and "UTF-8" not in r.stderr, "%s: %s | %s" % (label, why, r.stderr))
    print("damaged files: %d taken, %d refused by both" % (verdicts[True], verdicts[False]))
    check(verdicts[True] >= 10 and verdicts[False] >= 100,
          "both verdicts among the mutations: %s" % verdicts)

    # the training timeline (attnview(5), Timeline): each damage refused by both,
    # with the same message (the byte named)
    data = read(files[-3])
    at = data.index(b"ATTL")
    rec = at + 48 + 4 * 5 * struct.unpack_from("<I", data, at + 24)[0]
    for label, off, fmt, value in (("version", at + 4, "<I", 3), ("values", at + 16, "<I", 16),
                                   ("version 1 of 15 values", at + 4, "<I", 1),
                                   ("probe length", at + 24, "<I", 10 ** 6),
                                   ("interval", at + 28, "<Q", 0),
                                   ("probe character", at + 48, "<I", 0xD800),
                                   ("loss", rec + 12, "<f", -1.0),
                                   ("score", rec + 20, "<f", 2.0)):
        p = write("mutant.attn", put(data, off, fmt, value))
        r = attnview("--info", "--model", p, want=1)
        try:
            av.load(p)
            why = "accepted"
        except av.FormatError as e:
            why = str(e)
        check("timeline at byte %d" % at in why and r.stderr.strip() == "attnview: " + why,
              "timeline %s: attnview: %s | PyTorch: %s" % (label, r.stderr.strip(), why))

    # attnview's training state: check_training_state refuses what --resume
    # refuses as damaged (other refusals, such as another corpus, are not
    # about the state's structure)
    state_differential(rng)

    # saving is atomic and never replaces someone's file
    other = write("notes.txt", "my notes\n")
    try:
        av.save(av.load(files[0]), other)
        check(False, "save replaced a file that is not a model")
    except OSError as e:
        check("not an attnview model" in str(e), "refusal message: %s" % e)
    check(read(other) == b"my notes\n", "the other file is untouched")
    av.save(av.load(files[0]), path("saved.attn"))
    check(read("saved.attn") == read(files[0]), "save writes the same bytes")
    check(not [n for n in os.listdir(work) if ".tmp." in n], "no temporary file left")


# ---------------------------------------------------------------- vocabulary

NASTY = [b"plain text, ", b"\x1b[31mred\x1b[0m ", b"\x1b]0;title\x07", b"\x1b]2;t\x1b\\",
         b"\x1b(B", b"\x1bM", b"\x1b", b"\x1b\x1b[1m", b"\r\n", b"\r", b"\n", b"\t", b"\x00",
         b"\x7f", b"\xc2\x85", b"\xc2\x9b1;2m", b"\xc2\x9dosc\xc2\x9c", b"\xc2\x9c",
         b"\xef\xbb\xbf", b"\xe0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xff",
         b"\x80", b"\xe4\xb8", b"\xf0\x9f\x98", "é".encode(), "e\u0301".encode(),
         "x\u0301\u0302".encode(), "\u0301".encode(), "한".encode(), "\u1100\u1161".encode(),
         "中文".encode(), "\u3000".encode(), b"\x1b]unterminated", b"\x1b[", b"\x1b[12;",
         b"\x1b #", "\u212b".encode(), "\u0344".encode(), "\u0f73".encode(), "😀".encode()]


def summary_lines(stdout):
    # the corpus summary: what comes before the verdict (attnview repeats an
    # encoding warning after it)
    lines = stdout.splitlines()
    lines = lines[:next((i for i, l in enumerate(lines) if l.startswith("verdict:")), len(lines))]
    return [l for l in lines if not l.startswith(("model:", "step ", "valid",
                                                                "unigram", "trained", "wrote",
                                                                "weights", "resuming",
                                                                "starting from",
                                                                "verdict:", "what to do:",
                                                                "note:", "patience:"))]


def same_vocabulary(corpora, label, py_extra=(), c_extra=(), cat=None):
    """attnview and PyTorch on the same corpus: the same summary lines and
    vocabulary. `cat`: attnview reads this file (the concatenation of the
    corpora PyTorch reads)."""
    opts = TINY + ["--steps", "1", "--eval-every", "0"]
    c = attnview("--train", cat or corpora[0], "-o", path("c_voc.attn"), "--threads", "1",
                 *opts, *c_extra)
    p = pytrain(*corpora, "-o", path("p_voc.attn"), *opts, *py_extra)
    cv, pv = av.load(path("c_voc.attn")).vocab, av.load(path("p_voc.attn")).vocab
    check(cv == pv, "%s: vocabularies differ (%d and %d ids; first difference at %s)"
          % (label, len(cv), len(pv), next((i for i, (a, b) in enumerate(zip(cv, pv)) if a != b),
                                           min(len(cv), len(pv)))))
    cs, ps = summary_lines(c.stdout), summary_lines(p.stdout)
    if cat is None:
        check(cs == ps, "%s: corpus summaries differ:\n%s\n%s" % (label, "\n".join(cs),
                                                                  "\n".join(ps)))
    return cv


def case_vocab():
    rng = random.Random(3)
    text = corpus_text()
    # 1. real text with every kind of damage mixed in
    pieces = []
    for line in text.split(b"\n")[:1500]:
        pieces.append(line + b"\n")
        if rng.random() < 0.2:
            pieces.append(rng.choice(NASTY))
    nasty = write("nasty.txt", b"\xef\xbb\xbf" + b"".join(pieces))
    base = same_vocabulary([nasty], "damaged corpus")
    check(len(base) > 300 + 3, "the corpus has more than 300 characters (%d ids): --max-vocab "
          "300 below must change the vocabulary" % len(base))
    # 2. --min-count, --max-vocab, --val-file
    same_vocabulary([nasty], "--min-count 3 --max-vocab 300", ["--min-count", "3", "--max-vocab",
                                                              "300"],
                    ["--min-count", "3", "--max-vocab", "300"])
    val = write("val.txt", b"".join(rng.choice(NASTY) for _ in range(300)) + text[:3000])
    same_vocabulary([nasty], "--val-file", ["--val-file", val], ["--val-file", val])
    # 3. several files: their concatenation (split inside a line, an escape
    #    sequence and a UTF-8 sequence)
    raw = read(nasty)
    cuts = sorted(rng.sample(range(1, len(raw)), 3))
    parts = [write("part%d.txt" % i, raw[a:b]) for i, (a, b) in
             enumerate(zip([0] + cuts, cuts + [len(raw)]))]
    same_vocabulary(parts, "four files", cat=nasty)
    # the comparison can fail: other options give another vocabulary
    pytrain(nasty, "-o", path("p_min.attn"), *TINY, "--steps", "1", "--eval-every", "0",
            "--min-count", "2")
    check(av.load(path("p_min.attn")).vocab != base, "--min-count 2 changes the vocabulary")

    # 4. the token sequence itself: attnview --dump --input against PyTorch's
    #    tokenizer, on valid UTF-8 with escapes, controls, line ends, NFC
    #    (and a run of combining marks longer than attnview's NFC window)
    texts = [b"".join(rng.choice([p for p in NASTY if _valid(p)]) for _ in range(120))
             for _ in range(6)]
    texts.append(b"q\n" + ("a" + "\u0316\u0301" * 600).encode())
    texts.append(("\u0301\u0316" * 520).encode())
    chars = set()
    for t in texts:
        chars |= set(av.tokenize_text(t))
    vocab = [av.SPECIAL_CP + i for i in range(3)] + sorted(c for c in chars if c != 0x0A) + [10]
    cfg = av.Config(0, len(vocab), 2, 1, 1, 1024)
    big = path("wide.attn")
    av.save(av.AttnviewModel(cfg, vocab).init_weights(torch.Generator().manual_seed(1)), big)
    for i, t in enumerate(texts):
        inp = write("input%d.txt" % i, t)
        p = attnview("--dump", "--input", inp, "--model", big, "--top", "0", "--layer", "0",
                     "--head", "0")
        if p.returncode:
            continue
        got = [tok["codepoint"] for tok in json.loads(p.stdout)["tokens"]]
        want = av.tokenize_text(t.rstrip(b"\r\n"))[:1024]
        check(got == want, "input %d: attnview's tokens differ from PyTorch's (%d and %d tokens, "
              "first difference at %s)" % (i, len(got), len(want), next(
                  (k for k, (a, b) in enumerate(zip(got, want)) if a != b), None)))
    # strict NFC would differ on the long run: the comparison is sharp
    import unicodedata
    strict = [ord(c) for c in unicodedata.normalize("NFC", texts[-2].decode())][:1024]
    check(strict != av.tokenize_text(texts[-2])[:1024], "the long run is cut as attnview cuts it")


def _valid(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# ---------------------------------------------------------------- data-parallel

def launch_by_hand(args, out_dir, variables):
    """Two processes of the trainer started with the launcher's variables set
    by hand (as torchrun or srun would); returns their exit statuses."""
    from attnview_torch.distributed import free_port
    port = free_port()
    procs = []
    for rank in (0, 1):
        e = env(MASTER_ADDR="127.0.0.1", MASTER_PORT=port, **variables(rank))
        procs.append(subprocess.Popen([PY, "-m", "attnview_torch.train", "--threads", "1"]
                                      + args, env=e, cwd=out_dir, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=150) for p in procs]
    for p, (o, e) in zip(procs, outs):
        check(p.returncode == 0, "hand-launched process: exit %s\n%s%s" % (p.returncode, o, e))
    return outs


def case_ddp():
    c = write("corpus.txt", corpus_text())
    rd = path("ranks")
    os.mkdir(rd)
    p = pytrain(c, "-o", path("ddp.attn"), *TINY, "--steps", "6", "--eval-every", "3",
                "--nproc", "2", ATTNVIEW_TORCH_RANK_DIR=rd)
    check("batch 8 x 2 processes" in p.stdout and "cpu (gloo)" in p.stdout,
          "two processes on gloo:\n" + p.stdout)
    check("weights identical on all 2 processes" in p.stdout, "the end-of-run check:\n"
          + p.stdout)
    r0, r1 = read(os.path.join(rd, "rank0.attn")), read(os.path.join(rd, "rank1.attn"))
    check(r0 == r1, "the two processes hold identical weights")
    b0, b1 = (read(os.path.join(rd, "rank%d.batches" % r)).split() for r in (0, 1))
    check(len(b0) == 6 and len(b1) == 6 and not set(b0) & set(b1),
          "each process trained on its own batches: %s / %s" % (b0, b1))
    out = av.load(path("ddp.attn"))
    mine = av.from_bytes(r0)
    check(all(torch.equal(out.params[k], mine.params[k]) for k in out.params),
          "the model written is the processes' weights")
    check(out.meta["steps"] == 6 and out.meta["tokens"] == 6 * 8 * 32 * 2,
          "steps and tokens of two processes: %s" % out.meta)
    attnview("--info", "--model", path("ddp.attn"))
    dumps = [dump_matches(path("ddp.attn"), t, "two-process model") for t in TEXTS]
    # the comparison can fail: one weight changed
    bad = perturbed(path("ddp.attn"), "ddp_perturbed.attn")
    import io
    check(not compare(bad, TEXTS[0], dumps[0][1], 1e-5, io.StringIO()),
          "a changed weight is caught by the comparison")
    # the same run started as torchrun or srun would start it: the same model
    short = [c, "-o", "m.attn"] + TINY + ["--steps", "3", "--eval-every", "0"]
    for d in ("nproc", "env", "slurm"):
        os.mkdir(path(d))
    pytrain(*short[:2], path("nproc/m.attn"), *short[3:], "--nproc", "2")
    launch_by_hand(short, path("env"), lambda r: dict(RANK=r, WORLD_SIZE=2, LOCAL_RANK=r))
    launch_by_hand(short, path("slurm"), lambda r: dict(SLURM_PROCID=r, SLURM_NTASKS=2,
                                                        SLURM_LOCALID=r, SLURM_NNODES=1))
    want = read("nproc/m.attn")
    check(read("env/m.attn") == want, "env:// by hand gives --nproc's model")
    check(read("slurm/m.attn") == want, "SLURM's variables give --nproc's model")
    check(want != read("ddp.attn"), "... which the comparison tells from another run's")
    # ... and the processes' check: without synchronisation they drift apart
    shutil.rmtree(rd)
    os.mkdir(rd)
    p = pytrain(c, "-o", path("nosync.attn"), *TINY, "--steps", "3", "--eval-every", "0",
                "--nproc", "2", want=1, ATTNVIEW_TORCH_RANK_DIR=rd, ATTNVIEW_TORCH_TEST_NO_SYNC=1)
    check("different weights" in p.stderr, "unsynchronised processes are caught:\n" + p.stderr)
    check(read(os.path.join(rd, "rank0.attn")) != read(os.path.join(rd, "rank1.attn")),
          "unsynchronised processes differ")
    check(not os.path.exists(path("nosync.attn")), "no model written from diverged processes")


# ---------------------------------------------------------------- attnview's models in PyTorch

def case_attnview():
    for obj in ("masked", "causal"):
        m_path = attnview_trained("a_%s.attn" % obj, "--objective", obj)
        m = av.load(m_path)
        check(av.to_bytes(m) == read(m_path), "%s: loaded and written back, the same bytes" % obj)
        # the same weights: every parameter as the file's floats
        raw = read(m_path)
        f = mf.decode(raw)
        check(all(torch.equal(m.params[k], f.params[k]) for k in f.params),
              "%s: the module holds the file's weights" % obj)
        for t in TEXTS:
            dump_matches(m_path, t, "attnview-trained %s model" % obj)
        # fine-tuned in PyTorch on other text
        other = write("other.txt", corpus_text()[60000:] + read(os.path.join(
            TESTS, "data", "corpus", "mixed.txt")))
        ft = path("ft_%s.attn" % obj)
        pytrain(other, "--init", m_path, "-o", ft, "--batch", "8", "--steps", "5",
                "--eval-every", "0")
        info = attnview("--info", "--model", ft).stdout
        check(("objective: %s" % obj) in info, "%s: fine-tuned model opens in attnview:\n%s"
              % (obj, info))
        g = av.load(ft)
        check(g.vocab == m.vocab and g.config == m.config, "%s: sizes and vocabulary kept" % obj)
        check(g.meta["steps"] == m.meta["steps"] + 5, "%s: steps count on: %s" % (obj, g.meta))
        check(any(not torch.equal(g.params[k], m.params[k]) for k in m.params),
              "%s: fine-tuning changed the weights" % obj)
        ok, d = dump_matches(ft, TEXTS[0], "fine-tuned %s model" % obj)
        # the comparison can fail: the fine-tuned model's dump is not the original's
        import io
        check(not compare(m_path, TEXTS[0], d, 1e-5, io.StringIO()),
              "%s: the original model does not match the fine-tuned one's dump" % obj)
    # both trainers read a text for --init alike: the model's vocabulary, the
    # characters it lacks counted and named (the same summary lines)
    zh = write("zh_other.txt", ("古池や蛙飛び込む水の音\n" * 60 + "the cat sat\n" * 40).encode())
    opts = ["--batch", "4", "--steps", "1", "--eval-every", "0"]
    c = attnview("--train", zh, "--init", m_path, "-o", path("c_init.attn"), "--threads", "1",
                 *opts)
    p = pytrain(zh, "--init", m_path, "-o", path("p_init.attn"), *opts)
    cs, ps = summary_lines(c.stdout), summary_lines(p.stdout)
    check(cs == ps and any("are not in it" in l for l in cs),
          "--init: corpus summaries differ or lack the unknown characters:\n%s\n%s"
          % ("\n".join(cs), "\n".join(ps)))
    # the sizes of a fine-tuned model are the model's
    p = pytrain(other, "--init", m_path, "-o", path("x.attn"), "--dim", "32", want=2)
    check("differs from the model's" in p.stderr, "--dim against --init: " + p.stderr)


# ---------------------------------------------------------------- checkpoints

def case_resume():
    c = write("corpus.txt", corpus_text())
    os.mkdir(path("a"))
    os.mkdir(path("b"))
    opts = TINY + ["--steps", "6", "--eval-every", "2", "--checkpoint-every", "0"]
    pytrain(c, "-o", path("a/m.attn"), *opts)
    p = pytrain(c, "-o", path("b/m.attn"), *opts, want=130, ATTNVIEW_TORCH_STOP_AT=3)
    ck = path("b/m.attn.ckpt")
    check(os.path.exists(ck) and not os.path.exists(path("b/m.attn")),
          "stopped: a checkpoint, no model")
    check("resume with: python3 -m attnview_torch.train" in p.stderr, "the resume command:\n"
          + p.stderr)
    check(not [n for n in os.listdir(path("b")) if ".tmp." in n], "no temporary file left")
    saved = read(ck)
    # the model inside opens in attnview
    run([PY, "-m", "attnview_torch", "export", ck, "-o", path("b/snapshot.attn")])
    info = attnview("--info", "--model", path("b/snapshot.attn")).stdout
    check("steps: 3" in info, "the checkpoint's model, 3 steps:\n" + info)
    # refused: damaged, truncated, other options, other corpus
    write("b/trunc.ckpt", saved[:len(saved) // 2])
    flipped = bytearray(saved)
    flipped[len(saved) // 3] ^= 4
    write("b/flip.ckpt", bytes(flipped))
    for bad, want, msg in (("b/trunc.ckpt", 1, "truncated"), ("b/flip.ckpt", 1, "checksum")):
        p = pytrain(c, "--resume", path(bad), "-o", path("b/x.attn"), want=want)
        check(msg in p.stderr, "%s refused: %s" % (bad, p.stderr))
    p = pytrain(c, "--resume", ck, "--dim", "32", want=2)
    check("--dim differs from the checkpoint's" in p.stderr, "other --dim: " + p.stderr)
    other = write("other.txt", corpus_text()[:-1000])
    p = pytrain(other, "--resume", ck, want=1)
    check("corpus differs" in p.stderr, "other corpus: " + p.stderr)
    p = pytrain(c, "--resume", attnview_checkpoint("c.attn"), want=1)
    check("not a checkpoint of python3 -m attnview_torch.train" in p.stderr,
          "attnview's checkpoint: " + p.stderr)
    check(read(ck) == saved, "refused resumes leave the checkpoint alone")
    # resumed: the uninterrupted run's model, byte for byte (its creation time
    # too: another SOURCE_DATE_EPOCH now does not change the stopped run's)
    p = pytrain(c, "--resume", ck, SOURCE_DATE_EPOCH=2000000000)
    check("resuming" in p.stdout and "at step 3" in p.stdout, "resumed at step 3:\n" + p.stdout)
    check(read("a/m.attn") == read("b/m.attn"), "resumed run = uninterrupted run, byte for byte")
    check(not os.path.exists(ck), "the checkpoint is removed once the model is written")
    # ... and the comparison can fail: another seed gives another model
    pytrain(c, "-o", path("b/seed2.attn"), *opts, "--seed", "2")
    check(read("a/m.attn") != read("b/seed2.attn"), "another seed, another model")
    # the output is never written over someone's file
    notes = write("notes.txt", "mine\n")
    p = pytrain(c, "-o", notes, *opts, want=1)
    check(read(notes) == b"mine\n" and "not an attnview model" in p.stderr,
          "an existing file that is not a model: " + p.stderr)
    # the creation time: the clock without SOURCE_DATE_EPOCH, a malformed one refused
    # (exit 2) as attnview refuses it
    t0 = int(time.time())
    pytrain(c, "-o", path("now.attn"), *opts, SOURCE_DATE_EPOCH=None)
    created = av.load(path("now.attn")).meta["created"]
    check(t0 <= created <= time.time(), "trained at %d, created %d" % (t0, created))
    p = pytrain(c, "-o", path("soon.attn"), *opts, want=2, SOURCE_DATE_EPOCH="soon")
    r = run([BIN, "--train", c, "-o", path("soon.attn")] + opts, 2, SOURCE_DATE_EPOCH="soon")
    says = 'SOURCE_DATE_EPOCH is "soon", not a number of seconds since 1970-01-01 UTC'
    check(says in p.stderr and says in r.stderr, "SOURCE_DATE_EPOCH=soon: %s | %s"
          % (p.stderr, r.stderr))
    # an output directory that does not exist, or is a file: said so, as attnview says it
    for out, says in ((path("no/such/m.attn"), "directory %s does not exist" % path("no/such")),
                      (os.path.join(notes, "m.attn"), "%s is not a directory" % notes)):
        p = pytrain(c, "-o", out, *opts, want=1)
        r = attnview("--train", c, "-o", out, *opts, want=1)
        check(says in p.stderr and says in r.stderr, "-o %s: %s | %s" % (out, p.stderr, r.stderr))


# ---------------------------------------------------------------- hostile names

# A name that drives a terminal: title (OSC 0), clipboard (OSC 52), red (SGR),
# a C1 CSI, the byte 0x9B alone (not UTF-8), DEL, a tab, a line break, a
# right-to-left override.
HOSTILE = (b"x\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[31mRED\xc2\x9b\x9b\x7f\t\n"
           b"\xe2\x80\xae.txt")


def terminal_safe(b):
    """None when the bytes hold nothing a terminal takes as a command (no C0
    but line feed and tab, no DEL, no C1, only valid UTF-8), else where."""
    try:
        t = b.decode("utf-8")  # strict: no surrogates, no overlong forms
    except UnicodeDecodeError as e:
        return "invalid UTF-8 at byte %d: %r" % (e.start, b[max(0, e.start - 30):e.start + 10])
    for i, c in enumerate(t):
        if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F:
            return "U+%04X at character %d: %r" % (ord(c), i, t[max(0, i - 30):i + 10])
    return None


def locales():
    out = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
    zh = [x for x in out if x.lower().replace("-", "") == "zh_cn.utf8"]
    return ["C.UTF-8"] + zh[:1]


def run_shown(what, cmd, want):
    """cmd under each locale: its status, and nothing printed a terminal
    would obey; returns the last run's (stdout, stderr) as text. The
    package speaks English whatever the locale (it has no catalogue) and both
    locales are UTF-8, so its own commands run under C.UTF-8 alone; the
    program's, which speaks Chinese under zh_CN, under both."""
    for loc in (locales() if cmd[0] == BIN else ["C.UTF-8"]):
        p = subprocess.run(cmd, capture_output=True, env=env(LC_ALL=loc), cwd=work)
        check(p.returncode == want, "%s [%s]: exit %d (want %d): %r"
              % (what, loc, p.returncode, want, p.stderr[-600:]))
        for stream, b in (("stdout", p.stdout), ("stderr", p.stderr)):
            bad = terminal_safe(b)
            check(bad is None, "%s [%s]: %s holds %s" % (what, loc, stream, bad))
    return p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def case_hostile():
    name = os.fsdecode(HOSTILE)
    corpus = write(name, corpus_text()[:20000])
    out = path(name + ".attn")
    tiny = TINY + ["--steps", "3", "--eval-every", "0"]
    py = [PY, "-m", "attnview_torch.train", "--threads", "1"]
    tool = [PY, "-m", "attnview_torch"]
    # the escaped form is attnview's, to the byte
    for s in (HOSTILE, b"plain.txt", b"\xe8\xaf\x97.txt", b"a\"b\\c", b"",
              bytes(range(1, 32)) + b"\x7f\xc2\x80\xed\xa0\x80\xf4\x90\x80\x80"):
        check(quote(os.fsdecode(s)) == quote(s), "quote of str and bytes agree: %r" % s)
    so, se = run_shown("train", py + [corpus, "-o", out] + tiny, 0)
    check(quote(out) in so and '\\e]0;pwned\\a' in quote(out), "train names its files "
          "quoted: " + so)
    so, _ = run_shown("info", tool + ["info", out], 0)
    check(json.loads(so)["name"] == name.replace("\udc9b", "\ufffd"),
          "the name kept (U+FFFD for the byte that is not UTF-8): " + so)
    r = attnview("--info", "--model", out).stdout
    check(r.startswith("file: %s\nname: %s\n" % (quote(out), quote(json.loads(so)["name"]))),
          "attnview shows what quote() shows: " + r)
    # metadata with every control: written by PyTorch, loads in both, shown safely
    meta = "".join(chr(c) for c in range(1, 32)) + "\x7f" + "".join(
        chr(c) for c in range(0x80, 0xa0)) + "\u202e\"\\名字"
    m = av.load(out)
    evil = path("meta.attn")
    av.save(m, evil, name=meta, corpus=meta[::-1])
    check(av.load(evil).meta["name"] == meta, "metadata with every control loads as data")
    so, _ = run_shown("attnview --info", [BIN, "--info", "--model", evil], 0)
    check("name: %s\n" % quote(meta) in so, "attnview shows the metadata quoted: " + so)
    check(all(line.split(": ", 1)[0].replace(" ", "").isalpha() for line in so.splitlines()),
          "attnview --info is key: value lines:\n" + so)
    run_shown("info of hostile metadata", tool + ["info", evil], 0)
    run_shown("dump", tool + ["dump", evil, "a\x1b[2Jb"], 0)
    # errors naming hostile files
    missing = path("no" + name)
    for what, cmd, want in (
            ("info missing", tool + ["info", missing], 1),
            ("info not a model", tool + ["info", corpus], 1),
            ("export missing", tool + ["export", missing, "-o", path("e.attn")], 1),
            ("train missing corpus", py + [missing, "-o", path("o.attn")] + tiny, 1),
            ("train into a text", py + [corpus, "-o", corpus] + tiny, 1),
            ("train into no folder", py + [corpus, "-o", os.path.join(missing, "m.attn")]
             + tiny, 1),
            ("train missing val-file", py + [corpus, "-o", path("o.attn"), "--val-file",
                                             missing] + tiny, 1),
            ("resume missing", py + [corpus, "--resume", missing], 1),
            ("resume a model", py + [corpus, "--resume", out], 1),
            ("init missing", py + [corpus, "--init", missing, "-o", path("o.attn")], 1),
            ("bad --dim", py + [corpus, "--dim", name], 2),
            ("bad --objective", py + [corpus, "--objective", name], 2),
            ("unknown option", py + [corpus, "--" + name], 2),
            ("unknown command", tool + [name], 2)):
        _, se = run_shown(what, cmd, want)
        check(se.strip(), "%s: says why" % what)
    _, se = run_shown("train missing corpus", py + [missing, "-o", path("o.attn")] + tiny, 1)
    check(quote(missing) in se, "the missing corpus is named quoted: " + se)
    # stopped: the resume command quotes every name for the shell; resumed
    # (the package's output, the same under every UTF-8 locale: see run_shown)
    for loc in ["C.UTF-8"]:
        stop = path("stop" + name + ".attn")
        for args, want, extra in (([corpus, "-o", stop] + TINY + ["--steps", "6"], 130,
                                   dict(ATTNVIEW_TORCH_STOP_AT=3)),
                                  ([corpus, "--resume", stop + ".ckpt"], 0, {})):
            p = subprocess.run(py + args, capture_output=True, env=env(LC_ALL=loc, **extra),
                               cwd=work)
            what = "%s [%s]" % ("resumed" if want == 0 else "stopped", loc)
            check(p.returncode == want, "%s: exit %d: %r" % (what, p.returncode, p.stderr))
            for b in (p.stdout, p.stderr):
                check(terminal_safe(b) is None, "%s: %s" % (what, terminal_safe(b)))
            if want:
                se = p.stderr.decode("utf-8", "replace")
                check("--resume %s -o %s" % (shell_quote(stop + ".ckpt"), shell_quote(stop))
                      in se, "the resume command, quoted for the shell: " + se)
            else:
                check("resuming %s at step 3" % quote(stop + ".ckpt")
                      in p.stdout.decode("utf-8", "replace"), "resuming, quoted")


# ---------------------------------------------------------------- tests/reference

def case_reference():
    ref = os.path.join(TESTS, "reference")
    golden = os.path.join(TESTS, "golden")
    with open("/proc/cpuinfo") as f:
        avx2 = " avx2 " in f.read().replace("\n", " ")
    # PyTorch regenerates the golden files on OpenBLAS's Haswell kernel
    # whichever kernel attnview is given: python_reference and the Haswell
    # run of tests/ci/kernel.sh (python_reference_Haswell, CI's) do it, the
    # other kernels' runs check attnview's numbers on their kernel only.
    core = os.environ.get("ATTNVIEW_EXPECT_CORE")
    if core and core != "Haswell":
        print("note: the golden files are regenerated on the Haswell kernel, not on %s" % core)
    elif avx2:
        out = path("golden")
        # the committed files come from OpenBLAS's Haswell kernel on 2 threads
        # (on one, a product takes another path and differs in the last bits)
        for script in ("gen_golden.py", "gen_explain_golden.py", "gen_generate_golden.py",
                       "gen_lens_golden.py", "gen_circuits_golden.py",
                       "gen_faith_golden.py", "gen_patch_golden.py",
                       "gen_split_golden.py", "gen_sharpen_golden.py", "gen_nanogpt_golden.py"):
            run([PY, os.path.join(ref, script), out], OPENBLAS_CORETYPE="Haswell",
                OPENBLAS_NUM_THREADS=2, OMP_NUM_THREADS=None)
        for n in sorted(os.listdir(golden)):
            check(read(os.path.join(golden, n)) == read(os.path.join(out, n)),
                  "gen_golden.py: %s is not the committed file" % n)
    else:
        print("note: no AVX2: the golden files cannot be regenerated bit for bit here")
    model = os.path.join(golden, "fwd_masked.attn")
    text = "Attention (注意力) is all you need!"
    d = attnview("--dump", "--format", "json", "--model", model, "--text", text).stdout
    dp = write("golden_dump.json", d)
    tool = os.path.join(ref, "attnview_ref.py")
    p = run([PY, tool, "compare", model, text, dp])
    check("weights: max |diff|" in p.stdout, "attnview_ref.py compare:\n" + p.stdout)
    # The tool's other commands are PyTorch's alone, the same on every
    # kernel: checked once, on the run that regenerates the golden files
    # (on Prescott where no kernel can).
    if not core or core == "Haswell" or (core == "Prescott" and not avx2):
        bad = perturbed(model, "golden_bad.attn")
        run([PY, tool, "compare", bad, text, dp], want=1)
        info = json.loads(run([PY, tool, "info", model]).stdout)
        check(info["name"] == "golden fwd_masked" and info["dim"] == 32, "info: %s" % info)
        dump = json.loads(run([PY, tool, "dump", model, text]).stdout)
        check(len(dump["attention"]) == 8 and len(dump["tokens"]) == len(av.tokenize_text(text)),
              "dump: %d heads, %d tokens"
              % (len(dump["attention"]), len(dump["tokens"])))

    # The accuracy man 5 attnview states (NOTES), against float64, with the
    # figures of tests/reference/accuracy.py: every probability and attention
    # weight within the bound derived for it (tests/lib/bound_tool, man 5
    # attnview NOTES), on the built-in model, the golden models and random
    # models with parameters up to std 2 (scores in the thousands); the
    # bound tool's own float64 pass is PyTorch's to 1e-9 (binary64 rounds 2^29
    # times finer than binary32, whose bounds stay under 1e-2 there).
    sys.path.insert(0, ref)
    import accuracy
    rel, absd, bias, pratio = accuracy.measure_p(os.path.join(ROOT, "assets", "builtin.attn"))
    check(pratio <= 1 and abs(bias) <= 1e-6,
          "probabilities: %.3f times their bound, mean relative difference %.3g (no bias)"
          % (pratio, bias))
    builtin, ratio, refd = accuracy.measure_weights(stds=(0.02, 0.3, 1.0, 2.0))
    check(ratio <= 1, "weights: a difference is %.3f times its bound" % ratio)
    check(refd <= 1e-9, "the bound tool's float64 pass is %.2g from PyTorch's" % refd)


# ---------------------------------------------------------------- the training timeline

def roles_as_attnview():
    """The bridge's labeller (roles.py) gives attnview's fifteen scores on
    every head of the built-in models, on texts where their heads take
    columns on frequent characters (keyword's chance), one key for half the
    rows (no delimiter then), an induction head, runs of one character
    (whose keys all follow a copy: no induction keys), and Russian and
    Korean, whose letters the models do not know (one unknown token: one
    keyword, no copies, no script; a few rows of known scripts among many
    unknown ones are no same script), and two letters in turn (where most
    keys follow a copy: induction beyond chance), and lines long, short and
    empty (a place in another line counts three or more away; a title's
    rows with a place above are under a quarter of the text's), from the
    weights attnview dumps."""
    import torch
    from attnview_torch import roles as rl
    from attnview_torch import timeline as tlm
    texts = ("Mr Dursley and Mrs Dursley. Mr Dursley and Mrs Dursley.",
             "Time flies like an arrow; fruit flies like a banana.",
             "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
             "aaaaaaaa bbbbbbbb aaaaaaaa bbbbbbbb",
             "Привет, мир! Мир и труд, привет.",
             "안녕하세요 привет hello 안녕하세요 привет hello",
             "ab 明月 приветприветпривет приветпривет приветпривет",
             "abababababababab xyxyxyxy abababab",
             "床前明月光，\n疑是地上霜。\nab\nab\nab\n\n\n\n\n举头望明月，\n低头思故乡。\n",
             "\n\n\n\n\n\n\n\n\n\n", "x\nx\nx\nx\nx\nx\n",
             "Chapter One\nIt was a bright cold day in April, and the clocks were "
             "striking thirteen.\n")
    worst, heads = 0.0, 0
    for model, causal in (("builtin", False), ("builtin-causal", True)):
        for text in texts:
            d = json.loads(attnview("--model", model, "--dump", "--text", text).stdout)
            x = rl.Text([(t["codepoint"], t["id"]) for t in d["tokens"]])
            for a, h in zip(d["attention"], d["heads"]):
                s = rl.scores(torch.tensor(a["weights"]), x, causal)
                worst = max([worst] + [abs(s[k] - h["scores"][key])
                                       for k, key in enumerate(tlm.SCORE_KEYS)])
                heads += 1
    # the same weights, the same counts: only the divisions' rounding apart
    check(heads == 288 and worst <= 1e-6,
          "the bridge's role scores on %d heads: %.2g from attnview's" % (heads, worst))


def case_timeline():
    """The timeline (attnview(5), Timeline): PyTorch measures a model as
    attnview does (a C-trained model's last record, on its own probes, from
    PyTorch's forward pass), and its trainer records the same section: the
    probe attnview takes, a record every K steps, a file attnview reads."""
    from attnview_torch import timeline as tlm
    roles_as_attnview()
    c = write("corpus.txt", corpus_text())
    opts = list(TINY) + ["--steps", "20", "--eval-every", "0", "--timeline-every", "5"]
    for obj in ("masked", "causal"):
        ref = path("tl_c_%s.attn" % obj)
        attnview("--train", c, "-o", ref, "--objective", obj, "--threads", "1", *opts)
        m = av.load(ref)
        tl = m.timeline
        check(tl is not None and tl.steps == [0, 5, 10, 15, 20],
              "%s: attnview's records: %s" % (obj, tl and tl.steps))
        vals, probe_loss, icl = tlm.measure(tl, m)
        worst = max(abs(a - b) for a, b in zip(vals, tl.values[-1]))
        # float32 weights from two forward passes (1e-6 apart, man 5 attnview
        # NOTES) summed over at most 64 x 64 cells: 1e-4 bounds a score
        check(worst <= 1e-4, "%s: a score %.2g from attnview's" % (obj, worst))
        check(abs(probe_loss - tl.probe_loss[-1]) <= 1e-4 and abs(icl - tl.icl[-1]) <= 1e-4,
              "%s: probe loss %.6f, icl %.6f; attnview %.6f, %.6f"
              % (obj, probe_loss, icl, tl.probe_loss[-1], tl.icl[-1]))
        out = path("tl_py_%s.attn" % obj)
        pytrain(c, "-o", out, "--objective", obj, *opts)
        p = av.load(out).timeline
        check(p is not None and p.steps == [0, 5, 10, 15, 20] and p.every == 5,
              "%s: PyTorch's records: %s" % (obj, p and p.steps))
        check(p.probe == tl.probe and p.repeated == tl.repeated and p.n == tl.n,
              "%s: PyTorch's trainer takes attnview's probe" % obj)
        check(all(0 <= x <= 1 for v in p.values for x in v) and math.isnan(p.loss[0])
              and p.loss[1] > 0, "%s: PyTorch's records are records" % obj)
        d = json.loads(attnview("--dump", "--timeline", "--model", out).stdout)
        check([r["step"] for r in d["timeline"]] == p.steps,
              "%s: attnview reads PyTorch's timeline" % obj)
        # the file's values are the roles in attnview's order (timeline.h's
        # static assert ties them to role_kind)
        from attnview_torch import roles as rl
        keys = list(d["timeline"][0]["heads"][0]["scores"])
        check(keys == list(tlm.SCORE_KEYS) and tlm.NVALUES == rl.NKINDS == len(keys)
              and d["version"] == tlm.VERSION,
              "%s: the timeline's values are attnview's roles: %s" % (obj, keys))
    # --init from a model with a timeline: both trainers go on with its
    # records and probe, at the model's step count and the run's K, and
    # measure the new ones on that probe (the last record is the final model's)
    base = av.load(ref).timeline
    for who in ("attnview", "PyTorch"):
        out = path("tl_init_%s.attn" % who)
        args = (c, "--init", ref, "-o", out, "--steps", "6", "--eval-every", "0",
                "--timeline-every", "3", "--batch", "8", "--keep-steps", "2")
        attnview("--train", *args, "--threads", "1") if who == "attnview" else pytrain(*args)
        fm = av.load(out)
        g = fm.timeline
        check(g is not None and g.steps == [0, 5, 10, 15, 20, 23, 26] and g.every == 3
              and g.probe == base.probe and g.repeated == base.repeated
              and g.values[:5] == base.values,
              "%s --init: the timeline goes on from the model's: %s"
              % (who, g and (g.steps, g.every)))
        names = sorted(os.listdir(out + ".steps"))
        check(names == ["step-000020.attn", "step-000026.attn"],
              "%s --init --keep-steps 2 keeps %s" % (who, names))
        if g is not None:
            vals, _, _ = tlm.measure(g, fm)
            worst = max(abs(a - b) for a, b in zip(vals, g.values[-1]))
            check(worst <= 1e-4, "%s --init: the last record, %.2g from the model's" % (who, worst))
    none = path("tl_none.attn")
    pytrain(c, "-o", none, *TINY, "--steps", "5", "--eval-every", "0", "--timeline-every", "0")
    check(av.load(none).timeline is None, "--timeline-every 0 records nothing")
    # --init from a model without a timeline: the run's own, from its step
    own = path("tl_own.attn")
    pytrain(c, "--init", none, "-o", own, "--steps", "6", "--eval-every", "0",
            "--timeline-every", "3", "--batch", "8")
    g = av.load(own).timeline
    check(g is not None and g.steps == [5, 8, 11],
          "--init from a model without a timeline: %s" % (g and g.steps))
    # --keep-steps 2 (attnview(1)): records 0, 5, ..., 20 keep 0, 10 and 20,
    # which attnview opens with --step; an earlier run's kept model goes.
    kept = path("tl_kept.attn")
    os.mkdir(kept + ".steps")
    write("tl_kept.attn.steps/step-000999.attn", "old")
    write("tl_kept.attn.steps/notes.txt", "notes")
    pytrain(c, "-o", kept, *TINY, "--steps", "20", "--eval-every", "0", "--timeline-every", "5",
            "--keep-steps", "2")
    names = sorted(os.listdir(kept + ".steps"))
    check(names == ["notes.txt", "step-000000.attn", "step-000010.attn", "step-000020.attn"],
          "--keep-steps 2 keeps %s" % names)
    info = attnview("--info", "--model", kept, "--step", "10").stdout
    check(re.search(r"(?m)^steps: 10$", info) is not None, "--step 10's file: %s" % info[:200])
    tl10 = av.load(kept + ".steps/step-000010.attn").timeline
    check(tl10 is not None and tl10.steps == [0, 5, 10],
          "the kept model's timeline ends at its step: %s" % (tl10 and tl10.steps))
    last, final = av.load(kept + ".steps/step-000020.attn"), av.load(kept)
    fp = dict(final.named_parameters())
    check(all(torch.equal(p, fp[k]) for k, p in last.named_parameters()),
          "the last kept model has the final parameters")
    r = pytrain(c, "-o", path("tl_k0.attn"), *TINY, "--steps", "5", "--timeline-every", "0",
                "--keep-steps", "1", want=2)
    check("--keep-steps keeps the models of the steps the timeline records" in r.stderr,
          "--keep-steps without a timeline: %s" % r.stderr.strip())


CASES = dict(format=case_format, vocab=case_vocab, ddp=case_ddp, attnview=case_attnview,
             resume=case_resume, reference=case_reference, hostile=case_hostile,
             timeline=case_timeline)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        sys.stderr.write("usage: test_torch.py %s\n" % "|".join(CASES))
        return 2
    if not os.access(BIN, os.X_OK):
        sys.stderr.write("test_torch.py: no attnview at %s (set ATTNVIEW_BIN)\n" % BIN)
        return 1
    t0 = time.monotonic()
    try:
        CASES[sys.argv[1]]()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%s: %d checks, %d failed (%.1fs)" % (sys.argv[1], checks, failures,
                                               time.monotonic() - t0))
    return 1 if failures or not checks else 0


if __name__ == "__main__":
    sys.exit(main())
