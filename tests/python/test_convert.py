#!/usr/bin/python3
"""The converter (python/attnview_torch/convert.py) on checkpoints in
nanoGPT's and minGPT's layouts, written here by a small GPT of this file's
own (TinyGPT: their documented tensor names and computation; nothing of
theirs is copied, and neither is needed).

    /usr/bin/python3 tests/python/test_convert.py CASE

Run by meson (suite 'python', through run.sh). Cases:

  convert      nanoGPT checkpoints with and without biases, compiled
               (_orig_mod.) and not, with and without the mask buffers, the
               erf and the tanh GELU; minGPT state dicts (untied lm_head,
               the vocabulary from its text, --heads given or known):
               converted with a certificate, then attnview's logits and
               attention weights against TinyGPT's own within twice their
               bound (tests/lib/bound_tool, independent of the package's
               bound.py, which must agree with it); greedy writing as the
               checkpoint writes; --info. A file read with the wrong GELU or
               embedding scale, and a certificate of a changed checkpoint,
               fail.
               The numpy reading of attnview(5) (tests/reference/
               numpy_attn.py, which imports neither attnview's C nor the
               package) computes the same weights and logits in binary64,
               on these files and on attnview's own (version 1).
  convert_bad  what is refused, with a message naming the file and the
               problem, writing nothing: GPT-2's byte-pair vocabulary, a
               vocabulary of another size, truncated and non-checkpoint
               files, a missing or an extra tensor, sizes beyond attnview's
               limits, a pickle that is not a dict or names code, control
               characters in the vocabulary.
"""

import json
import math
import os
import pickle
import shutil
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
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import attnview_torch as av  # noqa: E402
from attnview_torch import bound as avbound  # noqa: E402

BIN = os.environ.get("ATTNVIEW_BIN") or os.path.join(ROOT, "build", "src", "attnview")
BOUND_TOOL = (os.environ.get("ATTNVIEW_BOUND_TOOL")
              or os.path.join(ROOT, "build", "tests", "lib", "bound_tool"))
PY = sys.executable
TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n"
        "你好，世界！Ωmega — naïve café.\n")

checks = 0
failures = 0
work = tempfile.mkdtemp(prefix="attnview-convert-")


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: " + what, flush=True)
    return cond


def run(cmd, want=0, cwd=None):
    e = dict(os.environ)
    e["PYTHONPATH"] = PYDIR
    e["SOURCE_DATE_EPOCH"] = "1767225600"
    e["ATTNVIEW_BIN"] = BIN
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=e,
                       cwd=cwd or work)
    if want is not None:
        check(p.returncode == want, "%s: exit %d (want %d)\n%s%s"
              % (" ".join(cmd), p.returncode, want, p.stdout[-3000:], p.stderr[-3000:]))
    return p


def convert(*args, want=0, cwd=None):
    return run([PY, "-m", "attnview_torch.convert"] + list(args), want, cwd)


def path(*names):
    return os.path.join(work, *names)


# ---------------------------------------------------------------- TinyGPT

class Norm(nn.Module):
    """LayerNorm whose shift may be absent (nanoGPT's bias=False)."""

    def __init__(self, d, shift):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d)) if shift else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class Attention(nn.Module):
    def __init__(self, d, h, T, bias, mask):
        super().__init__()
        self.h = h
        self.c_attn = nn.Linear(d, 3 * d, bias=bias)
        self.c_proj = nn.Linear(d, d, bias=bias)
        if mask:  # the causal mask as a buffer named "bias", saved with the weights
            self.register_buffer("bias", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

    def forward(self, x):
        n, d = x.shape
        q, k, v = (t.view(n, self.h, d // self.h).transpose(0, 1)
                   for t in self.c_attn(x).split(d, dim=1))
        s = q @ k.transpose(1, 2) / math.sqrt(d // self.h)
        a = s.masked_fill(torch.ones(n, n).triu(1).bool(), float("-inf")).softmax(-1)
        return self.c_proj((a @ v).transpose(0, 1).reshape(n, d)), a


class MLP(nn.Module):
    def __init__(self, d, bias, erf):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d, bias=bias)
        self.c_proj = nn.Linear(4 * d, d, bias=bias)
        self.erf = erf

    def forward(self, x):
        u = self.c_fc(x)
        if self.erf:
            g = 0.5 * u * (1 + torch.erf(u / math.sqrt(2)))
        else:
            g = 0.5 * u * (1 + torch.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u**3)))
        return self.c_proj(g)


class Block(nn.Module):
    def __init__(self, d, h, T, bias, mask, erf):
        super().__init__()
        self.ln_1, self.ln_2 = Norm(d, bias), Norm(d, bias)
        self.attn = Attention(d, h, T, bias, mask)
        self.mlp = MLP(d, bias, erf)

    def forward(self, x):
        y, a = self.attn(self.ln_1(x))
        x = x + y
        return x + self.mlp(self.ln_2(x)), a


class TinyGPT(nn.Module):
    """A GPT with nanoGPT's and minGPT's tensor names: wte + wpe, pre-LN
    blocks, ln_f, lm_head without a bias (tied to wte, or not)."""

    def __init__(self, V, d=24, h=3, L=2, T=48, bias=True, mask=False, erf=True, tied=True,
                 seed=0, std=0.4):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(V, d), wpe=nn.Embedding(T, d),
            h=nn.ModuleList(Block(d, h, T, bias, mask, erf) for _ in range(L)),
            ln_f=Norm(d, bias)))
        self.lm_head = nn.Linear(d, V, bias=False)
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, p in self.named_parameters():
                p.copy_(torch.randn(p.shape, generator=g) * (0.1 if ".bias" in name else std)
                        + (1.0 if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight"))
                           else 0.0))
        if tied:
            self.transformer.wte.weight = self.lm_head.weight

    def forward(self, ids):
        x = self.transformer.wte(torch.tensor(ids)) + self.transformer.wpe.weight[:len(ids)]
        atts = []
        for b in self.transformer.h:
            x, a = b(x)
            atts.append(a)
        return self.lm_head(self.transformer.ln_f(x)), torch.stack(atts)


def nanogpt_checkpoint(name, chars, compiled=False, gelu="erf", dataset="tiny", **kw):
    """out-NAME/ckpt.pt and data/DATASET/meta.pkl, as nanoGPT's train.py and
    prepare.py leave them; returns (the model, the checkpoint's path)."""
    m = TinyGPT(len(chars), erf=gelu == "erf", **kw)
    sd = m.state_dict()
    if compiled:
        sd = {"_orig_mod." + k: v for k, v in sd.items()}
    t = m.transformer
    args = dict(n_layer=len(t.h), n_head=t.h[0].attn.h, n_embd=t.wte.weight.shape[1],
                block_size=t.wpe.weight.shape[0], bias=kw.get("bias", True),
                vocab_size=len(chars), dropout=0.2)
    ck = {"model": sd, "model_args": args, "iter_num": 250, "best_val_loss": torch.tensor(1.75),
          "optimizer": {"state": {}, "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.99)}]},
          "config": {"dataset": dataset, "batch_size": 4, "block_size": args["block_size"],
                     "gradient_accumulation_steps": 2, "dropout": 0.2, "compile": compiled}}
    os.makedirs(path("out-" + name), exist_ok=True)
    torch.save(ck, path("out-" + name, "ckpt.pt"))
    os.makedirs(path("data", dataset), exist_ok=True)
    with open(path("data", dataset, "meta.pkl"), "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": dict(enumerate(chars)),
                     "stoi": {c: i for i, c in enumerate(chars)}}, f)
    return m, path("out-" + name, "ckpt.pt")


def mingpt_checkpoint(name, chars, **kw):
    m = TinyGPT(len(chars), mask=True, erf=False, tied=False, **kw)
    torch.save(m.state_dict(), path(name))
    return m, path(name)


# ---------------------------------------------------------------- comparing

def probe(chars, n, seed=1):
    g = torch.Generator().manual_seed(seed)
    ok = [i for i, c in enumerate(chars) if c not in "\u0301"]
    return [ok[int(j)] for j in torch.randint(len(ok), (n,), generator=g)]


def dumped(model_path, text):
    p = run([BIN, "--dump", "--format", "json", "--logits", "--top", "0", "--model", model_path,
             "--text", text])
    d = json.loads(p.stdout)
    att = torch.tensor([a["weights"] for a in d["attention"]], dtype=torch.float64)
    lg = torch.tensor([[float("-inf") if v is None else v for v in r] for r in d["logits"]],
                      dtype=torch.float64)
    return [t["id"] for t in d["tokens"]], att, lg


def bounds(model_path, ids):
    p = subprocess.run([BOUND_TOOL, model_path, ",".join(map(str, ids))], capture_output=True,
                       check=True, text=True)
    return {k: torch.tensor(v, dtype=torch.float64) for k, v in json.loads(p.stdout).items()}


def file_ids(model_path, chars):
    """The file's id of each of the checkpoint's (the converter may order
    them by frequency)."""
    index = {cp: i for i, cp in enumerate(av.load(model_path).vocab)}
    return [index[ord(c)] for c in chars]


def ratio(model_path, gptm, chars, n=40):
    """attnview's logits and weights of a probe against TinyGPT's, as a share
    of twice their bound (bound_tool); also checks the ids and that ids 0..2
    have no logit."""
    ids = probe(chars, n)
    text = "".join(chars[i] for i in ids)
    got_ids, att, lg = dumped(model_path, text)
    fid = file_ids(model_path, chars)
    check(got_ids == [fid[i] for i in ids], "%s: the probe's ids" % model_path)
    with torch.no_grad():
        want_lg, want_att = gptm(ids)
    b = bounds(model_path, got_ids)
    att = att.reshape(want_att.shape)
    aerr = b["att_err"].reshape(att.shape)
    lerr = b["pred_err"].reshape(lg.shape)[:, fid]
    ra = float(((att - want_att.double()).abs() / (2 * aerr)).max())
    rl = float(((lg[:, fid] - want_lg.double()).abs() / (2 * lerr)).max())
    check(bool(torch.isinf(lg[:, :3]).all()), "%s: ids 0..2 have logits" % model_path)
    return max(ra, rl), b, got_ids


def tampered(src, dst, field, value):
    """A copy of a version-2 file with one architecture field changed."""
    data = bytearray(open(src, "rb").read())
    names = [f for f, _ in av.model.ARCH_FIELDS]
    struct.pack_into("<I", data, 96 + 4 * names.index(field), value)
    struct.pack_into("<I", data, len(data) - 4, zlib.crc32(bytes(data[:-4])) & 0xFFFFFFFF)
    with open(dst, "wb") as f:
        f.write(data)
    return dst


# ---------------------------------------------------------------- convert

def converted(what, ckpt, out, *args, cwd=None):
    p = convert(ckpt, "-o", out, *args, cwd=cwd)
    check("certificate: ok" in p.stdout, "%s: no certificate:\n%s%s" % (what, p.stdout, p.stderr))
    return p


def case_convert():
    chars = sorted(set(TEXT))
    variants = [dict(bias=True), dict(bias=False, compiled=True, mask=True),
                dict(bias=True, compiled=True, mask=True), dict(bias=False, gelu="tanh")]
    for k, v in enumerate(variants):
        name = "n%d" % k
        gptm, ck = nanogpt_checkpoint(name, chars, seed=k, **v)
        out = path(name + ".attn")
        extra = ["--gelu", "tanh"] if v.get("gelu") == "tanh" else []
        # no --meta: found where nanoGPT's sample.py looks, data/tiny/meta.pkl
        p = converted(name, ck, out, *extra)
        check("nanoGPT model, 2 layers x 3 heads, width 24, context 48" in p.stdout,
              "%s: the summary:\n%s" % (name, p.stdout))
        r, b, ids = ratio(out, gptm, chars)
        print("%s (%s): attnview against TinyGPT: %.3f of twice the bound" % (name, v, r))
        check(r <= 1, "%s: attnview is %.2f times twice its bound from TinyGPT" % (name, r))
        info = run([BIN, "--info", "--model", out]).stdout
        check("origin: nanoGPT\n" in info and ("biases %s" % ("yes" if v["bias"] else "none"))
              in info and "gelu %s" % v.get("gelu", "erf") in info and "steps: 250\n" in info
              and "validation loss: 1.7500" in info and "tokens seen: 96000" in info
              and "seed: unknown\n" in info,
              "%s: --info:\n%s" % (name, info))
        # --info counts the parameters as the converter does, and says what
        # attnview's layout adds (zero rows of ids 0..2, the output bias)
        said = p.stdout.split("parameters: ")[1].split(" ")[0]
        check("(the checkpoint's %s, and " % said in info,
              "%s: the converter counted %s, --info:\n%s" % (name, said, info))
        if k == 0:
            check_forms(chars)
            check_bound_py(out, ids, b)
            check_writing(out, gptm, chars)
            check_certificate_fails(ck, chars)
    # minGPT: untied, tanh, mask buffers; the vocabulary from its text
    with open(path("input.txt"), "w", encoding="utf-8") as f:
        f.write(TEXT)
    gptm, ck = mingpt_checkpoint("model.pt", chars, seed=5)
    out = path("min.attn")
    p = converted("minGPT", ck, out, "--vocab-from-text", path("input.txt"), "--heads", "3")
    r, _, _ = ratio(out, gptm, chars)
    print("minGPT: attnview against TinyGPT: %.3f of twice the bound" % r)
    check(r <= 1, "minGPT: %.2f times twice the bound" % r)
    info = run([BIN, "--info", "--model", out]).stdout
    check("origin: minGPT\n" in info and "output untied" in info and "gelu tanh" in info,
          "minGPT --info:\n%s" % info)
    said = p.stdout.split("parameters: ")[1].split(" ")[0]
    check("(the checkpoint's %s, and " % said in info,
          "minGPT: the converter counted %s, --info:\n%s" % (said, info))
    # minGPT saves no steps and no seed: unknown, not 0
    check("steps: unknown\ntokens seen: unknown\nseed: unknown\n" in info
          and "steps unknown (the checkpoint does not say)" in p.stdout,
          "minGPT's steps and seed:\n%s%s" % (info, p.stdout))
    # minGPT's gpt-nano (3 layers, width 48): its heads from minGPT's table
    gptm, ck = mingpt_checkpoint("nano.pt", chars, d=48, h=3, L=3, seed=6)
    p = converted("gpt-nano", ck, path("nano.attn"), "--vocab-from-text", path("input.txt"))
    check("gpt-nano" in p.stdout, "gpt-nano's heads: %s" % p.stdout)
    check(ratio(path("nano.attn"), gptm, chars)[0] <= 1, "gpt-nano within the bound")
    # nanoGPT's train.bin beside meta.pkl: the ids most frequent first
    gptm, ck = nanogpt_checkpoint("freq", chars, dataset="freq", seed=7)
    import numpy as np
    np.array([chars.index(c) for c in TEXT * 3], dtype="<u2").tofile(
        path("data", "freq", "train.bin"))
    p = converted("frequency", ck, path("freq.attn"))
    v = av.load(path("freq.attn")).vocab
    counts = {c: TEXT.count(c) for c in chars}
    check("most frequent first" in p.stdout
          and [counts[chr(x)] for x in v[3:]] == sorted(counts.values(), reverse=True),
          "the ids by frequency: %r" % "".join(chr(x) for x in v[3:]))
    r = ratio(path("freq.attn"), gptm, chars)[0]
    check(r <= 1, "ordered by frequency: %.2f times twice the bound" % r)
    # one command from nanoGPT's folder: the default output beside CKPT
    convert("out-n0/ckpt.pt")
    check(os.path.exists(path("out-n0", "ckpt.attn")), "the default output, CKPT with .attn")
    check_numpy([path(n + ".attn") for n in ("n0", "n1", "n3", "min", "nano")]
                + [os.path.join(TESTS, "golden", g + ".attn")
                   for g in ("nanogpt", "fwd_causal", "fwd_masked")])
    # neither trainer trains a converted model (--init), and says why
    for who, cmd in (("attnview", [BIN, "--train", path("input.txt"), "--init",
                                   path("n0.attn"), "-o", path("t.attn")]),
                     ("PyTorch", [PY, "-m", "attnview_torch.train", path("input.txt"),
                                  "--init", path("n0.attn"), "-o", path("t.attn")])):
        p = run(cmd, want=1)
        check("nanoGPT's architecture" in p.stderr and not os.path.exists(path("t.attn")),
              "%s --train --init a converted model: %s" % (who, p.stderr))


def check_numpy(files):
    """attnview's weights and prediction logits against the independent
    numpy pass of attnview(5) in binary64, each within its bound
    (bound_tool); a masked model's logits of each position with it alone
    masked (section 6)."""
    sys.path.insert(0, os.path.join(TESTS, "reference"))
    import numpy as np
    import numpy_attn
    text = "O Romeo, art 😀 thou?"
    for f in files:
        m = numpy_attn.read(f)
        ids = numpy_attn.ids_of(m, text)
        got_ids, att, lg = dumped(f, text)
        want_att, want_lg = numpy_attn.forward(m, ids)
        if m.objective == 0:
            for p in range(len(ids)):
                x = list(ids)
                x[p] = 2
                want_lg[p] = numpy_attn.forward(m, x)[1][p]
        b = bounds(f, got_ids)
        ra = float(np.max(np.abs(att.numpy().reshape(want_att.shape) - want_att)
                          / b["att_err"].numpy().reshape(want_att.shape)))
        fin = np.isfinite(want_lg)
        lerr = b["pred_err"].numpy().reshape(want_lg.shape)
        rl = float(np.max(np.abs(lg.numpy()[fin] - want_lg[fin]) / lerr[fin]))
        same_inf = bool(np.all(np.isinf(lg.numpy()[~fin])))
        print("numpy's attnview(5) on %s: %.3f of the bound" % (os.path.basename(f), max(ra, rl)))
        check(got_ids == ids and max(ra, rl) <= 1 and same_inf,
              "%s: attnview is %.2f times its bound from numpy's pass" % (f, max(ra, rl)))


def check_forms(chars):
    """The file read with the other GELU, or the embedding scale sqrt(d),
    leaves the bound: the test tells the forms apart. (Weights of standard
    deviation 0.2: the forms differ by up to 2e-4 where the GELU's input is
    about 2, and larger weights make the bound of the logits grow faster
    than that difference.)"""
    gptm, ck = nanogpt_checkpoint("forms", chars, std=0.2)
    out = path("forms.attn")
    converted("forms", ck, out)
    for field, value in (("gelu", 0), ("scale", 0)):
        bad = tampered(out, path("bad-%s.attn" % field), field, value)
        r = ratio(bad, gptm, chars)[0]
        print("read with %s = %d: %.3g of twice the bound" % (field, value, r))
        check(r > 2, "a file read with %s = %d stays within %.2f of twice the bound"
              % (field, value, r))


def check_bound_py(out, ids, b):
    """The package's bound (bound.py, for the certificate) is bound_tool's
    (tests/lib/bound.c) to 1e-6, relative."""
    m = av.load(out)
    pb = avbound.forward_bound(m.config, m.file_parameters(), ids)
    a = b["att_err"].reshape(pb["att_err"].shape)
    ra = float(((pb["att_err"] - a).abs() / a).max())
    lb = b["pred_err"].reshape(pb["logits_err"].shape)[:, 3:]
    rl = float(((pb["logits_err"][:, 3:] - lb).abs() / lb).max())
    # bound_tool prints 7 digits, rounded up by 1e-5
    check(max(ra, rl) <= 2e-5, "bound.py differs from bound_tool by %.2g, relative"
          % max(ra, rl))


def check_writing(out, gptm, chars):
    """attnview writes what the checkpoint writes: greedy characters."""
    start = "First"
    p = run([BIN, "--dump", "--model", out, "--text", start, "--generate", "12",
             "--temperature", "0", "--top", "0"])
    got = "".join(t["char"] for t in json.loads(p.stdout)["tokens"])
    ids = [chars.index(c) for c in start]
    with torch.no_grad():
        for _ in range(12):
            ids.append(int(gptm(ids)[0][-1].argmax()))
    want = "".join(chars[i] for i in ids)
    check(got == want, "greedy writing: attnview %r, the checkpoint %r" % (got, want))


def check_certificate_fails(ck, chars):
    """A certificate of numbers that are not the checkpoint's fails."""
    from attnview_torch import certify, convert as cv
    a = cv.parse_args([ck, "--meta", path("data", "tiny", "meta.pkl")])
    obj = cv.load_checkpoint(ck)
    kind, sd, args, full = cv.identify(obj, ck)
    cfg, params, _ = cv.build(kind, sd, args, chars, True, None, ck)
    params["h0.fc_w"] = params["h0.fc_w"].clone()
    params["h0.fc_w"][0, 0] += 0.01
    vocab = [av.SPECIAL_CP + i for i in range(3)] + [ord(c) for c in chars]
    model = av.AttnviewModel.from_params(cfg, vocab, params)
    data = av.modelfile.encode(cfg, vocab, params)
    lines = certify.certify(model, data, sd, chars, BIN)
    check(lines[-1].startswith("certificate: FAILED"), "a changed weight certified: %s"
          % lines[-1])
    check(a.gelu is None, "--gelu's default is decided by the layout")


# ---------------------------------------------------------------- convert_bad

def refused(what, args, want, out="bad.attn", cwd=None):
    target = path(out)
    if os.path.exists(target):
        os.unlink(target)
    p = convert(*args, "-o", target, want=1, cwd=cwd)
    check(want in p.stderr and "nothing was written" in p.stderr and not os.path.exists(target),
          "%s: want %r in:\n%s%s" % (what, want, p.stdout, p.stderr))


def case_convert_bad():
    chars = sorted(set(TEXT))
    # GPT-2's byte-pair vocabulary, no meta.pkl
    gpt2 = TinyGPT(50257, d=8, h=2, L=1, T=16)
    torch.save({"model": gpt2.state_dict(), "model_args": dict(
        n_layer=1, n_head=2, n_embd=8, block_size=16, bias=True, vocab_size=50257,
        dropout=0.0), "iter_num": 1, "config": {"dataset": "openwebtext"}}, path("gpt2.pt"))
    refused("GPT-2", [path("gpt2.pt")], "GPT-2 byte-pair model")
    # a meta.pkl of another vocabulary
    _, ck = nanogpt_checkpoint("v", chars)
    with open(path("small.pkl"), "wb") as f:
        pickle.dump({"vocab_size": 10, "itos": dict(enumerate(chars[:10])),
                     "stoi": {c: i for i, c in enumerate(chars[:10])}}, f)
    refused("vocabulary size", [ck, "--meta", path("small.pkl")], "not the same run's")
    # truncated, and not a checkpoint at all
    data = open(ck, "rb").read()
    with open(path("cut.pt"), "wb") as f:
        f.write(data[:len(data) // 2])
    refused("truncated", [path("cut.pt")], "truncated")
    with open(path("notes.txt"), "w") as f:
        f.write("not a checkpoint\n" * 10)
    refused("text", [path("notes.txt")], "not a")
    # a missing and an extra tensor
    full = torch.load(ck)
    for what, edit, want in (("missing", lambda sd: sd.pop("transformer.h.1.mlp.c_fc.weight"),
                              "transformer.h.1.mlp.c_fc.weight is missing"),
                             ("extra", lambda sd: sd.update({"transformer.h.0.attn.scale":
                                                             torch.ones(1)}),
                              "unexpected tensor transformer.h.0.attn.scale")):
        ckd = {k: (dict(v) if k == "model" else v) for k, v in full.items()}
        edit(ckd["model"])
        torch.save(ckd, path(what + ".pt"))
        refused(what, [path(what + ".pt"), "--meta", path("data", "tiny", "meta.pkl")], want)
    # sizes beyond attnview's limits: a context of 2048
    big = TinyGPT(len(chars), d=8, h=2, L=1, T=2048)
    torch.save({"model": big.state_dict(), "model_args": dict(
        n_layer=1, n_head=2, n_embd=8, block_size=2048, bias=True, vocab_size=len(chars))},
        path("long.pt"))
    refused("context", [path("long.pt"), "--meta", path("data", "tiny", "meta.pkl")],
            "context 2048 is outside 1..1024 tokens")
    # pickles: a list, and a dict naming code
    torch.save([1, 2, 3], path("list.pt"))
    refused("a list", [path("list.pt")], "holds a list")
    import argparse
    full["config"] = argparse.Namespace(dataset="tiny")
    torch.save(full, path("code.pt"))
    refused("code", [path("code.pt"), "--meta", path("data", "tiny", "meta.pkl")],
            "--trust-pickle")
    p = convert(path("code.pt"), "--meta", path("data", "tiny", "meta.pkl"), "--trust-pickle",
                "-o", path("trusted.attn"))
    check("certificate: ok" in p.stdout, "--trust-pickle converts it: %s" % p.stderr)
    # no vocabulary for minGPT; a vocabulary with a tab; an unknown minGPT size
    _, mck = mingpt_checkpoint("m.pt", chars, seed=3)
    refused("minGPT without a vocabulary", [mck], "--vocab-from-text")
    with open(path("tab.txt"), "w") as f:
        f.write(TEXT.replace("\n\n", "\t\n"))
    _, tck = mingpt_checkpoint("t.pt", sorted(set(TEXT.replace("\n\n", "\t\n"))), seed=4)
    refused("a tab", [tck, "--vocab-from-text", path("tab.txt"), "--heads", "3"],
            "U+0009, a control character")
    with open(path("input.txt"), "w", encoding="utf-8") as f:
        f.write(TEXT)
    refused("heads", [mck, "--vocab-from-text", path("input.txt")], "give --heads")
    # model_args that are not the weights', a state dict of another model,
    # DistributedDataParallel's names, a class the pickle names that cannot
    # be found, an output folder that does not exist
    meta = path("data", "tiny", "meta.pkl")
    full = torch.load(ck)  # the config above names code
    ckd = dict(full, model_args=dict(full["model_args"], vocab_size=len(chars) + 20))
    torch.save(ckd, path("args.pt"))
    refused("model_args", [path("args.pt"), "--meta", meta],
            "model_args says vocab_size %d, but transformer.wte.weight has %d rows"
            % (len(chars) + 20, len(chars)))
    torch.save(dict(full, model={"encoder.weight": torch.ones(2, 2)}), path("other.pt"))
    refused("another model", [path("other.pt"), "--meta", meta],
            "has no transformer.wte.weight (its first tensor is encoder.weight)")
    ddp = {"module." + k: v for k, v in full["model"].items()}
    torch.save(dict(full, model=ddp), path("ddp.pt"))
    p = convert(path("ddp.pt"), "--meta", meta, "-o", path("ddp.attn"))
    check("certificate: ok" in p.stdout, "DistributedDataParallel's names: %s" % p.stderr)
    torch.save(dict(full, config=LocalConfig()), path("local.pt"))
    refused("a class not found", [path("local.pt"), "--meta", meta, "--trust-pickle"],
            "names Python code this program cannot find")
    refused("no folder", [ck, "--meta", meta], "does not exist", out="nofolder/x.attn")
    # an existing file that is not a model is left alone
    with open(path("keep.attn"), "w") as f:
        f.write("my notes\n")
    p = convert(ck, "-o", path("keep.attn"), want=1)
    check(open(path("keep.attn")).read() == "my notes\n" and "not an attnview model" in p.stderr,
          "an existing file: %s" % p.stderr)


class LocalConfig:
    """A training script's own class: a pickle names it by this module."""
    dataset = "tiny"


CASES = dict(convert=case_convert, convert_bad=case_convert_bad)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        sys.stderr.write("usage: test_convert.py %s\n" % "|".join(CASES))
        return 2
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
