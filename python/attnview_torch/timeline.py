"""The training timeline's section of the model file (man 5 attnview,
"Timeline"; include/attnview/timeline.h): how every head formed while the
model trained. parse() refuses what attnview's timeline_parse refuses, in
the same order, naming the byte; serialize() writes the bytes attnview
writes. A section lies between the parameters and a checkpoint's training
state and starts with the magic b"ATTL".
"""

import math
import struct

from .shown import quote

MAGIC = b"ATTL"
VERSION = 2
# The labeller's role scores, role_kind order (analysis.h): version 2 every
# role's score (a share of rows; keyword's with chance out since it was
# taken out, before that its plain share); version 1 (before the labeller
# counted rows) fourteen shares of weight, up to broad's entropy. timeline.h ties them to the roles with a static
# assert, and tests/python/test_torch.py ties these to attnview's.
NVALUES = 15
NVALUES_V1 = 14
SCORE_KEYS = ("previous", "next", "self", "first", "delimiter", "duplicate", "induction",
              "local", "offset", "keyword", "script", "parallel", "mirror", "broad", "word_start")
MAX_WINDOWS = 8
MAX_RECORDS = 100000
HEADER = struct.Struct("<4sIQIIIQQI")
assert HEADER.size == 48


class Timeline:
    """windows x n probe codepoints, the repeated probe, every K steps, and
    the records: step, loss, probe_loss, icl (floats, NaN allowed) and values
    (layers x heads x NVALUES floats, flat, per record)."""

    def __init__(self, layers, heads, probe, windows, n, repeated, every, seed,
                 version=VERSION):
        self.version = version
        self.nvalues = NVALUES if version == VERSION else NVALUES_V1
        self.layers, self.heads = layers, heads
        self.probe, self.windows, self.n = list(probe), windows, n
        self.repeated, self.every, self.seed = list(repeated), every, seed
        self.steps, self.loss, self.probe_loss, self.icl, self.values = [], [], [], [], []

    def head(self, r, layer, head):
        k = (layer * self.heads + head) * self.nvalues
        return self.values[r][k:k + self.nvalues]


def serialize(tl):
    rec = 20 + 4 * tl.layers * tl.heads * tl.nvalues
    size = HEADER.size + 4 * (tl.windows + 1) * tl.n + len(tl.steps) * rec
    out = [HEADER.pack(MAGIC, tl.version, size, tl.nvalues, tl.windows, tl.n, tl.every,
                       tl.seed, len(tl.steps)),
           struct.pack("<%dI" % (tl.windows * tl.n), *tl.probe),
           struct.pack("<%dI" % tl.n, *tl.repeated)]
    for r, step in enumerate(tl.steps):
        out.append(struct.pack("<Qfff", step, tl.loss[r], tl.probe_loss[r], tl.icl[r]))
        out.append(struct.pack("<%df" % len(tl.values[r]), *tl.values[r]))
    return b"".join(out)


def present(data, off, end):
    return end - off >= 4 and data[off:off + 4] == MAGIC


class FormatError(ValueError):
    pass


def _damaged(what, base, why, at):
    return FormatError("%s: the timeline at byte %d: %s at byte %d: the file is damaged; "
                       "restore it or retrain" % (quote(what), base, why, at))


def _head(data, off, end, cfg, what):
    if off + HEADER.size > end:
        raise _damaged(what, off, "the header is cut short", end)
    (_, version, size, nvalues, windows, n, every, seed, count) = \
        HEADER.unpack_from(data, off)
    if version not in (1, VERSION):
        raise FormatError("%s: the timeline at byte %d has version %d, but this attnview "
                          "reads version %d%s" % (quote(what), off, version, VERSION,
                                                 ": upgrade attnview to read it"
                                                 if version > VERSION
                                                 else ": the file is damaged"))
    if nvalues != (NVALUES_V1 if version == 1 else NVALUES):
        raise _damaged(what, off, "not the number of values per head this version has",
                       off + 16)
    if windows < 1 or windows > MAX_WINDOWS:
        raise _damaged(what, off, "impossible probe windows", off + 20)
    if n < 2 or n > cfg.context:
        raise _damaged(what, off, "a probe longer than the context or shorter than 2",
                       off + 24)
    if every < 1:
        raise _damaged(what, off, "records every 0 steps", off + 28)
    rec = 20 + 4 * cfg.layers * cfg.heads * nvalues
    if count > MAX_RECORDS or size != HEADER.size + 4 * (windows + 1) * n + count * rec:
        raise _damaged(what, off, "a size that does not match its records", off + 8)
    if size > end - off:
        raise _damaged(what, off, "more bytes than the file holds", off + 8)
    return size, version, windows, n, every, seed, count


def _probe(data, at, count, base, what):
    cps = list(struct.unpack_from("<%dI" % count, data, at))
    for i, cp in enumerate(cps):
        if cp >= 0x110003 or 0xD800 <= cp <= 0xDFFF:
            raise _damaged(what, base, "a probe character that is not a character", at + 4 * i)
    return cps


def parse(data, off, end, cfg, what="model"):
    """The section at data[off:end] (end: where what follows it may begin at
    the latest) of a file whose header says cfg: (Timeline, its size)."""
    size, version, windows, n, every, seed, count = _head(data, off, end, cfg, what)
    at = off + HEADER.size
    probe = _probe(data, at, windows * n, off, what)
    at += 4 * windows * n
    repeated = _probe(data, at, n, off, what)
    at += 4 * n
    tl = Timeline(cfg.layers, cfg.heads, probe, windows, n, repeated, every, seed, version)
    nv = cfg.layers * cfg.heads * tl.nvalues
    for k in range(count):
        step, loss, pl, icl = struct.unpack_from("<Qfff", data, at)
        if k and step <= tl.steps[-1]:
            raise _damaged(what, off, "a record whose step does not follow the one before", at)
        for i, x in enumerate((loss, pl, icl)):
            if math.isinf(x) or (i < 2 and x < 0):
                raise _damaged(what, off, "an impossible loss", at + 8 + 4 * i)
        values = list(struct.unpack_from("<%df" % nv, data, at + 20))
        for i, x in enumerate(values):
            if not 0 <= x <= 1:
                raise _damaged(what, off, "a head's score outside [0, 1]", at + 20 + 4 * i)
        tl.steps.append(step)
        tl.loss.append(loss)
        tl.probe_loss.append(pl)
        tl.icl.append(icl)
        tl.values.append(values)
        at += 20 + 4 * nv
    return tl, size


# ---------------------------------------------------------------- recording

PROBE_SALT = 0x74696D656C696E65
WINDOWS = 4      # text probe windows the trainers take
PROBE_LEN = 64   # ... of at most this many characters
RECORDS = 100    # the default interval: about this many records a run
_M64 = (1 << 64) - 1


class _Rng:
    """xoshiro256** seeded through splitmix64 (include/attnview/rng.h)."""

    def __init__(self, seed):
        self.s = []
        x = seed & _M64
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & _M64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
            self.s.append(z ^ (z >> 31))

    def next(self):
        s = self.s

        def rotl(x, k):
            return ((x << k) | (x >> (64 - k))) & _M64
        result = (rotl((s[1] * 5) & _M64, 7) * 9) & _M64
        t = (s[1] << 17) & _M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, n):
        return (self.next() * n) >> 64


def auto_every(total):
    """The default K for a run of `total` steps (timeline_auto_every)."""
    return max(1, (total + RECORDS - 1) // RECORDS)


def due(tl, step, total):
    return tl is not None and (step % tl.every == 0 or step == total)


def create(cfg, probe, windows, n, every, seed):
    """A timeline without records on the text probe (windows x n codepoints)
    and its repeated probe: n/2 characters drawn from the seed among the text
    probe's distinct ones, twice (timeline_create)."""
    distinct = []
    for cp in probe:
        if cp not in distinct:
            distinct.append(cp)
    r = _Rng(seed ^ PROBE_SALT)
    half = n // 2
    repeated = []
    for i in range(n):
        repeated.append(distinct[r.below(len(distinct))] if i < half else repeated[i - half])
    return Timeline(cfg.layers, cfg.heads, probe, windows, n, repeated, every, seed)


def measure(tl, model, scored=None):
    """The values of a record of model (an AttnviewModel) on tl's probes:
    (values, probe loss, in-context learning score), as timeline_record
    measures them (include/attnview/timeline.h)."""
    import torch
    from . import roles
    from .model import TOK_MASK, forward, logits_of
    cfg = model.config
    causal = cfg.objective == 1
    n, W = tl.n, tl.windows
    texts = [tl.probe[w * n:(w + 1) * n] for w in range(W)] + [tl.repeated]
    ids = [model.token_ids(t) for t in texts]
    params = model.file_parameters()
    dev = params["wte"].device
    with torch.no_grad():
        tokens = torch.tensor(ids, dtype=torch.long, device=dev)
        final, att, _ = forward(cfg, params, tokens)
        vals = []
        info = [roles.Text(list(zip(texts[b], ids[b]))) for b in range(W + 1)]
        for layer in range(cfg.layers):
            for h in range(cfg.heads):
                acc = [0.0] * NVALUES
                for b in range(W + 1):
                    A = torch.nan_to_num(att[layer][b, h].double().cpu(), nan=0.0)
                    s = roles.scores(A, info[b], causal)
                    if b < W:
                        acc = [a + x for a, x in zip(acc, s)]
                v = [min(max(a / W, 0.0), 1.0) for a in acc]
                v[roles.INDUCTION] = min(max(s[roles.INDUCTION], 0.0), 1.0)
                vals += v
        np_ = n - 1 if causal else n
        rows, tgt, pos = [], [], []
        inp = [list(x) for x in ids[:W]]
        for b in range(W):
            for i in range(np_):
                if not causal and i % 4 != b % 4:
                    continue
                if scored is not None and not scored[b * n + i]:
                    continue
                rows.append((b, i))
                tgt.append(ids[b][i + 1] if causal else ids[b][i])
                if not causal:
                    inp[b][i] = TOK_MASK
                pos.append(i)
        if not causal:
            final, _, _ = forward(cfg, params, torch.tensor(inp, dtype=torch.long, device=dev),
                                  keep=False)
        logits = logits_of(params, final, cfg=model.cfg).double()
        q = max(np_ // 4, 1)
        allx = early = late = 0.0
        ne = nl = 0
        for (b, i), t, p in zip(rows, tgt, pos):
            row = logits[b, i]
            x = float(torch.logsumexp(row, 0) - row[t])
            allx += x
            if p < q:
                early, ne = early + x, ne + 1
            if p >= np_ - q:
                late, nl = late + x, nl + 1
    nan = float("nan")
    mean = allx / len(rows) if rows else nan
    icl = late / nl - early / ne if ne and nl and scored is None else nan
    return vals, mean, icl


def record(tl, model, step, loss, held_out, scored=None):
    """Measure model and append (or replace) the record of `step`."""
    if tl.version != VERSION:
        raise ValueError("the training timeline was recorded by an older attnview, which "
                         "measured the heads otherwise: it cannot go on")
    while tl.steps and tl.steps[-1] > step:
        for a in (tl.steps, tl.loss, tl.probe_loss, tl.icl, tl.values):
            a.pop()
    vals, mean, icl = measure(tl, model, scored)
    if tl.steps and tl.steps[-1] == step:
        for a in (tl.steps, tl.loss, tl.probe_loss, tl.icl, tl.values):
            a.pop()
    if len(tl.steps) >= MAX_RECORDS:
        return
    tl.steps.append(step)
    tl.loss.append(loss)
    tl.probe_loss.append(mean if held_out else float("nan"))
    tl.icl.append(icl)
    tl.values.append(vals)
