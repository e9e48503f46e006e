#!/usr/bin/python3
"""Independent PyTorch implementation of the attnview model (man 5 attnview).

Written from the man page, not from the C code: the model file format, the
tokenizer (NFC codepoints), the forward pass with every attention matrix, the
prediction logits, the training loss and the AdamW optimizer.

Used as a module by gen_golden.py and torch_train_bench.py, and as a tool:

    /usr/bin/python3 tests/reference/attnview_ref.py dump MODEL TEXT
        prints JSON: the tokens and the attention weights of every layer and head
    /usr/bin/python3 tests/reference/attnview_ref.py info MODEL
        prints the header as JSON
    /usr/bin/python3 tests/reference/attnview_ref.py compare MODEL TEXT DUMP.json
        compares the output of `attnview --dump --format json --model MODEL
        --text TEXT` saved in DUMP.json with the reference (weights within
        1e-5, masked scores in the same places); exit status 1 otherwise
"""

import functools
import json
import math
import struct
import sys
import unicodedata
import zlib
from collections import OrderedDict

import torch
import torch.nn.functional as F

MAGIC = b"ATTNVIEW"
FORMAT_VERSION = 1
KIND_MODEL, KIND_CHECKPOINT = 0, 1
OBJ_MASKED, OBJ_CAUSAL = 0, 1
OBJECTIVES = {OBJ_MASKED: "masked", OBJ_CAUSAL: "causal"}
TOK_PAD, TOK_UNK, TOK_MASK = 0, 1, 2
SPECIAL_CP = 0x110000
NSPECIAL = 3

MAX_CONTEXT = 1024
MAX_DIM = 2048
MAX_HEADS = 64
MAX_LAYERS = 32
MAX_VOCAB = 200000
MAX_PARAMS = 1 << 28
MAX_ATTN_CELLS = 1 << 27
MAX_STRING = 4096

LN_EPS = 1e-5
POS_BASE = 10000.0

# offset 0..96: the fixed header (man 5 attnview, include/attnview/modelfile.h)
HEADER = struct.Struct("<8sIIQIIIIIIQQqQffff")
assert HEADER.size == 96

# Matrices get weight decay in AdamW; vectors (biases, LayerNorm) do not.
DECAYED = ("wte", "qkv_w", "proj_w", "fc_w", "fc2_w")


class FormatError(Exception):
    pass


class Config:
    def __init__(self, objective, vocab_size, dim, heads, layers, context):
        self.objective = objective
        self.vocab_size = vocab_size
        self.dim = dim
        self.heads = heads
        self.layers = layers
        self.context = context

    @property
    def causal(self):
        return self.objective == OBJ_CAUSAL

    def check(self):
        """The hyperparameter rules of the loader; raises FormatError."""
        if self.objective not in OBJECTIVES:
            raise FormatError("objective %d is neither 0 (masked) nor 1 (causal)"
                              % self.objective)
        if not NSPECIAL + 1 <= self.vocab_size <= MAX_VOCAB:
            raise FormatError("vocabulary size %d outside %d..%d"
                              % (self.vocab_size, NSPECIAL + 1, MAX_VOCAB))
        if not 2 <= self.dim <= MAX_DIM or self.dim % 2:
            raise FormatError("dim %d is not an even number in 2..%d" % (self.dim, MAX_DIM))
        if not 1 <= self.heads <= MAX_HEADS or self.dim % self.heads:
            raise FormatError("heads %d: must be 1..%d and divide dim %d"
                              % (self.heads, MAX_HEADS, self.dim))
        if not 1 <= self.layers <= MAX_LAYERS:
            raise FormatError("layers %d outside 1..%d" % (self.layers, MAX_LAYERS))
        if not 1 <= self.context <= MAX_CONTEXT:
            raise FormatError("context %d outside 1..%d" % (self.context, MAX_CONTEXT))
        cells = self.layers * self.heads * self.context * self.context
        if cells > MAX_ATTN_CELLS:
            raise FormatError("%d attention weights per text exceed the limit %d"
                              % (cells, MAX_ATTN_CELLS))
        if num_params(self) > MAX_PARAMS:
            raise FormatError("%d parameters exceed the limit %d"
                              % (num_params(self), MAX_PARAMS))


def tensor_table(cfg):
    """[(name, shape)] in file order."""
    d, V = cfg.dim, cfg.vocab_size
    t = [("wte", (V, d))]
    for l in range(cfg.layers):
        p = "h%d." % l
        t += [(p + "ln1_w", (d,)), (p + "ln1_b", (d,)),
              (p + "qkv_w", (3 * d, d)), (p + "qkv_b", (3 * d,)),
              (p + "proj_w", (d, d)), (p + "proj_b", (d,)),
              (p + "ln2_w", (d,)), (p + "ln2_b", (d,)),
              (p + "fc_w", (4 * d, d)), (p + "fc_b", (4 * d,)),
              (p + "fc2_w", (d, 4 * d)), (p + "fc2_b", (d,))]
    t += [("lnf_w", (d,)), ("lnf_b", (d,)), ("out_b", (V,))]
    return t


def num_params(cfg):
    return sum(math.prod(s) for _, s in tensor_table(cfg))


def is_decayed(name):
    return name.split(".")[-1] in DECAYED


class Model:
    def __init__(self, cfg, vocab, params, meta=None):
        self.cfg = cfg
        self.vocab = list(vocab)  # codepoints by id
        self.index = {cp: i for i, cp in enumerate(self.vocab)}
        self.params = params  # OrderedDict name -> float32 tensor
        self.meta = dict(meta or {})

    def token_ids(self, cps):
        return [self.index.get(cp, TOK_UNK) if cp < SPECIAL_CP else TOK_UNK for cp in cps]


# ---------------------------------------------------------------- model file

def check_vocab(cps, what):
    if cps[:NSPECIAL] != [SPECIAL_CP + i for i in range(NSPECIAL)]:
        raise FormatError("%s: vocabulary entries 0..2 must be 0x110000..0x110002" % what)
    seen = set()
    for i, cp in enumerate(cps[NSPECIAL:], NSPECIAL):
        if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
            raise FormatError("%s: vocabulary entry %d (U+%04X) is not a Unicode scalar value"
                              % (what, i, cp))
        if is_control(cp):
            raise FormatError("%s: vocabulary entry %d (U+%04X) is a control character"
                              % (what, i, cp))
        if cp in seen:
            raise FormatError("%s: vocabulary entry %d (U+%04X) is a duplicate" % (what, i, cp))
        seen.add(cp)


def is_control(cp):
    """C0, DEL and C1 controls, except LF which is a token."""
    return cp != 0x0A and (cp < 0x20 or 0x7F <= cp <= 0x9F)


def serialize(model, kind=KIND_MODEL, extra=b""):
    cfg, m = model.cfg, model.meta
    name = m.get("name", "").encode("utf-8")
    corpus = m.get("corpus", "").encode("utf-8")
    body = bytearray()
    body += struct.pack("<I", len(name)) + name
    body += struct.pack("<I", len(corpus)) + corpus
    body += struct.pack("<%dI" % len(model.vocab), *model.vocab)
    for tname, shape in tensor_table(cfg):
        t = model.params[tname]
        assert tuple(t.shape) == shape and t.dtype == torch.float32, tname
        body += t.contiguous().numpy().astype("<f4").tobytes()
    body += extra
    size = HEADER.size + len(body) + 4
    nan = float("nan")
    head = HEADER.pack(MAGIC, FORMAT_VERSION, kind, size, cfg.objective, cfg.vocab_size,
                       cfg.dim, cfg.heads, cfg.layers, cfg.context,
                       m.get("steps", 0), m.get("tokens", 0), m.get("created", 0),
                       m.get("seed", 0), m.get("val_loss", nan), m.get("val_acc", nan),
                       m.get("base_loss", nan), m.get("base_acc", nan))
    data = head + bytes(body)
    return data + struct.pack("<I", zlib.crc32(data) & 0xFFFFFFFF)


def parse(data, what="model"):
    """Validate and decode a model file image; returns (Model, kind)."""
    n = len(data)
    if n < len(MAGIC) or data[:8] != MAGIC:
        raise FormatError("%s: not an attnview model file (no ATTNVIEW magic at byte 0)" % what)
    if n < HEADER.size + 4:
        raise FormatError("%s: truncated: %d bytes, the header alone is %d"
                          % (what, n, HEADER.size + 4))
    (_, version, kind, size, obj, V, d, h, L, T, steps, tokens, created, seed,
     vl, va, bl, ba) = HEADER.unpack_from(data, 0)
    if version != FORMAT_VERSION:
        raise FormatError("%s: format version %d, this reader knows %d"
                          % (what, version, FORMAT_VERSION))
    if kind not in (KIND_MODEL, KIND_CHECKPOINT):
        raise FormatError("%s: kind %d is neither 0 (model) nor 1 (checkpoint)" % (what, kind))
    if size != n:
        raise FormatError("%s: header says %d bytes, file has %d (truncated or extended)"
                          % (what, size, n))
    want = struct.unpack_from("<I", data, n - 4)[0]
    got = zlib.crc32(data[:n - 4]) & 0xFFFFFFFF
    if want != got:
        raise FormatError("%s: checksum mismatch at byte %d (stored %08x, computed %08x)"
                          % (what, n - 4, want, got))
    cfg = Config(obj, V, d, h, L, T)
    cfg.check()
    off = HEADER.size
    strings = []
    for label in ("model name", "corpus description"):
        if off + 4 > n - 4:
            raise FormatError("%s: truncated in the %s at byte %d" % (what, label, off))
        ln = struct.unpack_from("<I", data, off)[0]
        off += 4
        if ln > MAX_STRING or off + ln > n - 4:
            raise FormatError("%s: %s length %d at byte %d is too long"
                              % (what, label, ln, off - 4))
        try:
            text = data[off:off + ln].decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError("%s: %s at byte %d is not valid UTF-8" % (what, label, off))
        if "\0" in text:
            raise FormatError("%s: %s at byte %d contains a NUL byte" % (what, label, off))
        strings.append(text)
        off += ln
    P = num_params(cfg)
    need = off + 4 * V + 4 * P + 4
    if need > n or (kind == KIND_MODEL and need != n):
        raise FormatError("%s: %d bytes, the header implies %d%s"
                          % (what, n, need, "" if kind == KIND_MODEL else " or more"))
    vocab = list(struct.unpack_from("<%dI" % V, data, off))
    check_vocab(vocab, what)
    off += 4 * V
    params = OrderedDict()
    for tname, shape in tensor_table(cfg):
        cnt = math.prod(shape)
        arr = torch.frombuffer(bytearray(data[off:off + 4 * cnt]), dtype=torch.float32)
        params[tname] = arr.reshape(shape).clone()
        if not torch.isfinite(params[tname]).all():
            i = int((~torch.isfinite(arr)).nonzero()[0])
            raise FormatError("%s: parameter %s[%d] at byte %d is not a finite number"
                              % (what, tname, i, off + 4 * i))
        off += 4 * cnt
    meta = dict(name=strings[0], corpus=strings[1], steps=steps, tokens=tokens,
                created=created, seed=seed, val_loss=vl, val_acc=va, base_loss=bl, base_acc=ba,
                kind=kind)
    return Model(cfg, vocab, params, meta)


def load(path):
    with open(path, "rb") as f:
        return parse(f.read(), path)


# ---------------------------------------------------------------- tokenizer

def text_to_cps(text):
    """NFC, then codepoints. The reference does no corpus cleaning: it refuses
    control characters (other than LF) so that a comparison with the C
    tokenizer, which removes them, can never silently disagree."""
    nfc = unicodedata.normalize("NFC", text)
    for i, ch in enumerate(nfc):
        if is_control(ord(ch)):
            raise ValueError("control character U+%04X at codepoint %d: the reference "
                             "tokenizer does not clean text" % (ord(ch), i))
    return [ord(c) for c in nfc]


# ---------------------------------------------------------------- forward

@functools.lru_cache(maxsize=16)
def positions(T, d):
    """pe (T,d): float64 sin/cos rounded to float32. Cached: callers must not
    modify the result in place."""
    pe = torch.zeros(T, d, dtype=torch.float64)
    for i in range(d // 2):
        w = math.pow(POS_BASE, -2.0 * i / d)
        for t in range(T):
            pe[t, 2 * i] = math.sin(t * w)
            pe[t, 2 * i + 1] = math.cos(t * w)
    return pe.to(torch.float32)


def gelu(x):
    return F.gelu(x, approximate="tanh")


def forward(cfg, params, tokens, dtype=None):
    """tokens: LongTensor (B,n). Returns (final (B,n,d) after lnf, att, scores)
    where att[l] and scores[l] are (B,h,n,n); masked scores are NaN. Computes
    in `dtype` (default: the parameters' own, float32 from a file)."""
    dtype = dtype or params["wte"].dtype
    P = {k: v.to(dtype) for k, v in params.items()}
    B, n = tokens.shape
    d, nh = cfg.dim, cfg.heads
    hs = d // nh
    assert n <= cfg.context
    scale = torch.tensor(math.sqrt(d), dtype=torch.float32).to(dtype)
    x = scale * P["wte"][tokens] + positions(n, d).to(dtype)
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1) if cfg.causal else None
    atts, scores = [], []
    for l in range(cfg.layers):
        p = lambda s: P["h%d.%s" % (l, s)]
        a = F.layer_norm(x, (d,), p("ln1_w"), p("ln1_b"), eps=LN_EPS)
        qkv = a @ p("qkv_w").T + p("qkv_b")
        q, k, v = qkv.split(d, dim=-1)
        # (B,n,d) -> (B,h,n,hs): head j takes columns j*hs..(j+1)*hs-1
        q, k, v = (t.reshape(B, n, nh, hs).transpose(1, 2) for t in (q, k, v))
        s = q @ k.transpose(-1, -2)
        z = s / math.sqrt(hs)
        if mask is not None:
            z = z.masked_fill(mask, float("-inf"))
            s = s.masked_fill(mask, float("nan"))
        att = torch.softmax(z, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, n, d)
        x = x + (y @ p("proj_w").T + p("proj_b"))
        b = F.layer_norm(x, (d,), p("ln2_w"), p("ln2_b"), eps=LN_EPS)
        x = x + (gelu(b @ p("fc_w").T + p("fc_b")) @ p("fc2_w").T + p("fc2_b"))
        atts.append(att)
        scores.append(s)
    final = F.layer_norm(x, (d,), P["lnf_w"], P["lnf_b"], eps=LN_EPS)
    return final, atts, scores


def logits_of(params, final, dtype=None):
    dtype = dtype or final.dtype
    return final @ params["wte"].to(dtype).T + params["out_b"].to(dtype)


def attend(model, ids, dtype=torch.float32):
    """One sequence: att (L,h,n,n), scores (L,h,n,n), logits (n,V), and the
    prediction logits (n,V): masked model, row p of the forward with token p
    alone replaced by the mask id; causal model, row p itself."""
    cfg, params = model.cfg, model.params
    toks = torch.tensor([ids], dtype=torch.long)
    final, atts, scores = forward(cfg, params, toks, dtype)
    logits = logits_of(params, final, dtype)[0]
    if cfg.causal:
        pred = logits.clone()
    else:
        n = len(ids)
        batch = toks.repeat(n, 1)
        batch[torch.arange(n), torch.arange(n)] = TOK_MASK
        f, _, _ = forward(cfg, params, batch, dtype)
        pred = logits_of(params, f[torch.arange(n), torch.arange(n)], dtype)
    att = torch.stack([a[0] for a in atts])
    sc = torch.stack([s[0] for s in scores])
    return att, sc, logits, pred


# ---------------------------------------------------------------- training

def loss_fn(cfg, params, tokens, targets):
    """Mean cross-entropy over the positions whose target is not -1; logits are
    computed only at those rows (as the C trainer does)."""
    final, _, _ = forward(cfg, params, tokens)
    rows = (targets.reshape(-1) >= 0).nonzero().squeeze(1)
    h = final.reshape(-1, cfg.dim)[rows]
    logits = logits_of(params, h)
    return F.cross_entropy(logits, targets.reshape(-1)[rows])


class AdamW:
    """AdamW with linear warmup, cosine decay to lr/10 and global norm
    clipping, in plain tensor ops (optimizer.h / man 5 attnview)."""

    def __init__(self, params, lr, warmup, total, beta1=0.9, beta2=0.95, eps=1e-8,
                 weight_decay=0.01, clip=1.0):
        self.lr, self.warmup, self.total = lr, warmup, total
        self.b1, self.b2, self.eps, self.wd, self.clip = beta1, beta2, eps, weight_decay, clip
        self.m = {k: torch.zeros_like(v) for k, v in params.items()}
        self.v = {k: torch.zeros_like(v) for k, v in params.items()}
        self.step_count = 0

    def lr_at(self, s):
        lr = self.lr
        if s < self.warmup:
            return lr * (s + 1) / self.warmup
        lo = lr / 10
        p = (s - self.warmup) / max(1, self.total - self.warmup)
        p = min(p, 1.0)
        return lo + (lr - lo) * (1 + math.cos(math.pi * p)) / 2

    def step(self, params, grads):
        """Updates params in place; returns (lr used, grad norm before clipping)."""
        s = self.step_count
        t = s + 1
        lr = self.lr_at(s)
        norm = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads.values()))
        scale = min(1.0, self.clip / (norm + 1e-6))
        bc1 = 1 - self.b1 ** t
        bc2 = 1 - self.b2 ** t
        with torch.no_grad():
            for k, p in params.items():
                g = grads[k] * scale
                m, v = self.m[k], self.v[k]
                m.mul_(self.b1).add_((1 - self.b1) * g)
                v.mul_(self.b2).add_((1 - self.b2) * g * g)
                if is_decayed(k):
                    p.sub_(lr * self.wd * p)
                p.sub_(lr * (m / bc1) / (torch.sqrt(v / bc2) + self.eps))
        self.step_count += 1
        return lr, norm


# ---------------------------------------------------------------- tool

def cp_char(cp):
    if cp >= SPECIAL_CP:
        return ["<pad>", "<unk>", "<mask>"][cp - SPECIAL_CP]
    return chr(cp)


def reference_dump(path, text):
    """The tokens and attention of `text` under the model at `path`, in the
    shape of attnview --dump --format json (the parts both have)."""
    model = load(path)
    cps = text_to_cps(text)
    if not cps:
        raise ValueError("empty text")
    if len(cps) > model.cfg.context:
        raise ValueError("%d tokens, the model's context is %d" % (len(cps), model.cfg.context))
    ids = model.token_ids(cps)
    with torch.no_grad():
        att, scores, _, _ = attend(model, ids)
    cfg = model.cfg

    def rows(t):
        return [[None if math.isnan(v) else v for v in row] for row in t.tolist()]

    return {
        "model": path,
        "objective": OBJECTIVES[cfg.objective],
        "layers": cfg.layers,
        "heads": cfg.heads,
        "tokens": [{"index": i, "codepoint": cp, "char": chr(cp), "id": tid,
                    "unknown": tid == TOK_UNK} for i, (cp, tid) in enumerate(zip(cps, ids))],
        "attention": [{"layer": l, "head": h, "weights": att[l, h].tolist(),
                       "scores": rows(scores[l, h])}
                      for l in range(cfg.layers) for h in range(cfg.heads)],
    }


def cmd_dump(path, text):
    json.dump(reference_dump(path, text), sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


def cmd_compare(path, text, dump_path, tol=1e-5):
    """Compare a JSON file written by `attnview --dump --format json` (all
    layers and heads) with the reference; exit status 1 on a mismatch."""
    want = reference_dump(path, text)
    with open(dump_path, encoding="utf-8") as f:
        got = json.load(f)
    ok = True
    gt = [(t["codepoint"], t["id"]) for t in got["tokens"]]
    wt = [(t["codepoint"], t["id"]) for t in want["tokens"]]
    if gt != wt:
        print("tokens differ: attnview %s, reference %s" % (gt, wt))
        return False
    heads = {(a["layer"], a["head"]): a for a in got["attention"]}
    worst = (0.0, None)
    worst_s = (0.0, None)
    for a in want["attention"]:
        key = (a["layer"], a["head"])
        if key not in heads:
            print("layer %d head %d missing from %s" % (key + (dump_path,)))
            ok = False
            continue
        g = heads[key]
        for i, (grow, wrow) in enumerate(zip(g["weights"], a["weights"])):
            for j, (x, y) in enumerate(zip(grow, wrow)):
                if abs(x - y) > worst[0]:
                    worst = (abs(x - y), (key, i, j, x, y))
        for i, (grow, wrow) in enumerate(zip(g.get("scores") or [], a["scores"])):
            for j, (x, y) in enumerate(zip(grow, wrow)):
                if (x is None) != (y is None):
                    print("score %s query %d key %d: attnview %s, reference %s"
                          % (key, i, j, x, y))
                    ok = False
                elif x is not None and abs(x - y) / max(1.0, abs(y)) > worst_s[0]:
                    worst_s = (abs(x - y) / max(1.0, abs(y)), (key, i, j, x, y))
    print("%d tokens; weights: max |diff| %.3g%s; scores: max relative diff %.3g" % (
        len(wt), worst[0],
        "" if worst[1] is None else " at layer %d head %d query %d key %d (%r vs %r)" % (
            worst[1][0] + worst[1][1:]), worst_s[0]))
    return ok and worst[0] <= tol


def cmd_info(path):
    m = load(path)
    c = m.cfg
    info = dict(objective=OBJECTIVES[c.objective], vocab_size=c.vocab_size, dim=c.dim,
                heads=c.heads, layers=c.layers, context=c.context, params=num_params(c))
    info.update({k: (None if isinstance(v, float) and math.isnan(v) else v)
                 for k, v in m.meta.items()})
    json.dump(info, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


def main(argv):
    usage = ("usage: attnview_ref.py dump MODEL TEXT\n"
             "       attnview_ref.py info MODEL\n"
             "       attnview_ref.py compare MODEL TEXT ATTNVIEW_DUMP.json\n")
    try:
        if len(argv) == 4 and argv[1] == "dump":
            cmd_dump(argv[2], argv[3])
        elif len(argv) == 3 and argv[1] == "info":
            cmd_info(argv[2])
        elif len(argv) == 5 and argv[1] == "compare":
            return 0 if cmd_compare(argv[2], argv[3], argv[4]) else 1
        else:
            sys.stderr.write(usage)
            return 2
    except (FormatError, ValueError, OSError, KeyError) as e:
        sys.stderr.write("attnview_ref: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
