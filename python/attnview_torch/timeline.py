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
VERSION = 1
NVALUES = 14  # the labeller's role scores, role_kind order (analysis.h)
SCORE_KEYS = ("previous", "next", "self", "first", "delimiter", "duplicate", "induction",
              "local", "offset", "keyword", "script", "parallel", "mirror", "entropy")
MAX_WINDOWS = 8
MAX_RECORDS = 100000
HEADER = struct.Struct("<4sIQIIIQQI")
assert HEADER.size == 48


class Timeline:
    """windows x n probe codepoints, the repeated probe, every K steps, and
    the records: step, loss, probe_loss, icl (floats, NaN allowed) and values
    (layers x heads x NVALUES floats, flat, per record)."""

    def __init__(self, layers, heads, probe, windows, n, repeated, every, seed):
        self.layers, self.heads = layers, heads
        self.probe, self.windows, self.n = list(probe), windows, n
        self.repeated, self.every, self.seed = list(repeated), every, seed
        self.steps, self.loss, self.probe_loss, self.icl, self.values = [], [], [], [], []

    def head(self, r, layer, head):
        k = (layer * self.heads + head) * NVALUES
        return self.values[r][k:k + NVALUES]


def serialize(tl):
    rec = 20 + 4 * tl.layers * tl.heads * NVALUES
    size = HEADER.size + 4 * (tl.windows + 1) * tl.n + len(tl.steps) * rec
    out = [HEADER.pack(MAGIC, VERSION, size, NVALUES, tl.windows, tl.n, tl.every, tl.seed,
                       len(tl.steps)),
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
    if version != VERSION:
        raise FormatError("%s: the timeline at byte %d has version %d, but this attnview "
                          "reads version %d%s" % (quote(what), off, version, VERSION,
                                                 ": upgrade attnview to read it"
                                                 if version > VERSION
                                                 else ": the file is damaged"))
    if nvalues != NVALUES:
        raise _damaged(what, off, "not the number of values per head this version has",
                       off + 16)
    if windows < 1 or windows > MAX_WINDOWS:
        raise _damaged(what, off, "impossible probe windows", off + 20)
    if n < 2 or n > cfg.context:
        raise _damaged(what, off, "a probe longer than the context or shorter than 2",
                       off + 24)
    if every < 1:
        raise _damaged(what, off, "records every 0 steps", off + 28)
    rec = 20 + 4 * cfg.layers * cfg.heads * NVALUES
    if count > MAX_RECORDS or size != HEADER.size + 4 * (windows + 1) * n + count * rec:
        raise _damaged(what, off, "a size that does not match its records", off + 8)
    if size > end - off:
        raise _damaged(what, off, "more bytes than the file holds", off + 8)
    return size, windows, n, every, seed, count


def _probe(data, at, count, base, what):
    cps = list(struct.unpack_from("<%dI" % count, data, at))
    for i, cp in enumerate(cps):
        if cp >= 0x110003 or 0xD800 <= cp <= 0xDFFF:
            raise _damaged(what, base, "a probe character that is not a character", at + 4 * i)
    return cps


def parse(data, off, end, cfg, what="model"):
    """The section at data[off:end] (end: where what follows it may begin at
    the latest) of a file whose header says cfg: (Timeline, its size)."""
    size, windows, n, every, seed, count = _head(data, off, end, cfg, what)
    at = off + HEADER.size
    probe = _probe(data, at, windows * n, off, what)
    at += 4 * windows * n
    repeated = _probe(data, at, n, off, what)
    at += 4 * n
    tl = Timeline(cfg.layers, cfg.heads, probe, windows, n, repeated, every, seed)
    nv = cfg.layers * cfg.heads * NVALUES
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
