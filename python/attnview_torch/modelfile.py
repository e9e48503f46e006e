"""The attnview model file (man 5 attnview, include/attnview/modelfile.h).

decode() refuses exactly the files attnview's loader (model_parse) refuses,
in the same order of checks; encode() writes the bytes attnview's
model_serialize writes for the same model and metadata; write_atomic() saves
them the way attnview does (a temporary file beside the target, fsync,
rename, fsync of the directory).

A kind-1 file (an attnview training checkpoint) is a model followed by
attnview's training state. Every reader checks the state as it checks the rest
of the file: decode() does, with parse_training_state() (attnview's
training_state_parse); check_training_state() adds what attnview's --resume
refuses besides (options its --train would refuse).
"""

import math
import os
import stat
import struct
import sys
import tempfile
import zlib
from collections import OrderedDict

import torch

from .model import (ARCH_FIELDS, NSPECIAL, SPECIAL_CP, Arch, Config, ConfigError, is_bias,
                    num_params, tensor_table)
from .shown import file_string, quote
from . import timeline as _timeline

MAGIC = b"ATTNVIEW"
FORMAT_VERSION = 1
# Version 2 holds the architecture (7 u32 at byte 96, ARCH_FIELDS' order);
# attnview writes it only for a model whose architecture is not its own.
FORMAT_VERSION_ARCH = 2
ARCH_BYTES = 4 * len(ARCH_FIELDS)
KIND_MODEL, KIND_CHECKPOINT = 0, 1
MAX_STRING = 4096

# offset 0..96: the fixed header
HEADER = struct.Struct("<8sIIQIIIIIIQQqQffff")
assert HEADER.size == 96
STATS = ("val_loss", "val_acc", "base_loss", "base_acc")


class FormatError(ValueError):
    """A file attnview would refuse; the message names the file and the byte."""


def default_meta():
    nan = float("nan")
    return dict(name="", corpus="", steps=0, tokens=0, created=0, seed=0,
                val_loss=nan, val_acc=nan, base_loss=nan, base_acc=nan)


def is_control(cp):
    """C0, DEL and C1 controls (vocab.c); LF is one too, but a token."""
    return cp < 0x20 or 0x7F <= cp <= 0x9F


def is_scalar(cp):
    return cp < 0xD800 or 0xE000 <= cp <= 0x10FFFF


# ---------------------------------------------------------------- tensors <-> bytes

def tensor_bytes(t):
    """The little-endian float32 bytes of a tensor (no numpy needed)."""
    t = t.detach().to("cpu", torch.float32).contiguous()
    if sys.byteorder != "little":
        raise RuntimeError("attnview_torch supports little-endian machines only")
    n = t.numel() * 4
    if n == 0:
        return b""
    import ctypes
    return ctypes.string_at(t.data_ptr(), n)


def tensor_from_bytes(data, shape):
    if sys.byteorder != "little":
        raise RuntimeError("attnview_torch supports little-endian machines only")
    n = math.prod(shape)
    if n == 0:
        return torch.zeros(shape, dtype=torch.float32)
    return torch.frombuffer(bytearray(data), dtype=torch.float32, count=n).reshape(shape)


# ---------------------------------------------------------------- encode

def _string(s, what):
    b = file_string(s or "").encode("utf-8")  # as attnview: U+FFFD for a stray byte
    if b"\0" in b:
        raise ValueError("the %s contains a NUL character, which the file cannot hold" % what)
    if len(b) > MAX_STRING:
        # attnview cuts at MAX_STRING bytes; cut at a character boundary so the
        # file stays readable
        b = b[:MAX_STRING]
        while b and (b[-1] & 0xC0) == 0x80:
            b = b[:-1]
        if b and b[-1] >= 0xC0:
            b = b[:-1]
    return struct.pack("<I", len(b)) + b


def _stat_bits(meta, key):
    """The f32 bits of a statistic; a NaN read from a file keeps its bits."""
    x = meta.get(key, float("nan"))
    bits = meta.get("_nan_bits", {}).get(key)
    if bits is not None and isinstance(x, float) and math.isnan(x):
        return struct.pack("<I", bits)
    return struct.pack("<f", x)


def encode(config, vocab, params, meta=None, kind=KIND_MODEL, state=b"", timeline=None):
    """The file: header, strings, vocabulary, parameters (name -> tensor, in
    tensor_table order), the timeline (timeline.Timeline, or None), the
    kind-1 training state, CRC-32. As attnview's model_serialize, byte for
    byte."""
    m = default_meta()
    m.update(meta or {})
    if kind not in (KIND_MODEL, KIND_CHECKPOINT):
        raise ValueError("kind %r is neither 0 (model) nor 1 (checkpoint)" % (kind,))
    if kind == KIND_MODEL and state:
        raise ValueError("a training state goes only in a kind-1 file")
    config.check()
    if len(vocab) != config.vocab_size:
        raise ValueError("the vocabulary has %d entries, the config says %d"
                         % (len(vocab), config.vocab_size))
    v2 = any(config.arch.as_tuple())
    body = [struct.pack("<%dI" % len(ARCH_FIELDS), *config.arch.as_tuple()) if v2 else b"",
            _string(m["name"], "model name"), _string(m["corpus"], "corpus description"),
            struct.pack("<%dI" % len(vocab), *vocab)]
    for name, shape in tensor_table(config):
        t = params[name]
        if tuple(t.shape) != shape:
            raise ValueError("%s has shape %s, the config needs %s" % (name, tuple(t.shape), shape))
        body.append(tensor_bytes(t))
    if timeline is not None:
        body.append(_timeline.serialize(timeline))
    body.append(bytes(state))
    size = HEADER.size + sum(len(b) for b in body) + 4
    head = struct.pack("<8sIIQIIIIIIQQqQ", MAGIC, FORMAT_VERSION_ARCH if v2 else FORMAT_VERSION,
                       kind, size, config.objective,
                       config.vocab_size, config.dim, config.heads, config.layers,
                       config.context, m["steps"] & (2**64 - 1), m["tokens"] & (2**64 - 1),
                       m["created"], m["seed"] & (2**64 - 1))
    head += b"".join(_stat_bits(m, k) for k in STATS)
    data = head + b"".join(body)
    return data + struct.pack("<I", zlib.crc32(data) & 0xFFFFFFFF)


# ---------------------------------------------------------------- decode

class ModelFile:
    """A decoded file: config, vocab (codepoints by id), params (OrderedDict
    file name -> float32 tensor), meta, kind, and state (the bytes of a
    kind-1 training state, b"" for kind 0) at offset state_offset, and the
    training timeline (timeline.Timeline) or None."""

    def __init__(self, config, vocab, params, meta, kind, state, state_offset, timeline=None):
        self.config, self.vocab, self.params, self.meta = config, vocab, params, meta
        self.kind, self.state, self.state_offset = kind, state, state_offset
        self.timeline = timeline


def check_vocab(cps, what):
    """vocab_init's rules, in its order."""
    what = quote(what)
    for i in range(NSPECIAL):
        if cps[i] != SPECIAL_CP + i:
            raise FormatError("%s: vocabulary entry %d is U+%04X, not the %s marker U+%X: the "
                              "file is damaged; retrain or restore it"
                              % (what, i, cps[i], ("<pad>", "<unk>", "<mask>")[i],
                                 SPECIAL_CP + i))
    for i in range(NSPECIAL, len(cps)):
        cp = cps[i]
        if not is_scalar(cp):
            raise FormatError("%s: vocabulary entry %d is U+%04X, not a Unicode scalar value: "
                              "the file is damaged; retrain or restore it" % (what, i, cp))
        if is_control(cp) and cp != 0x0A:
            raise FormatError("%s: vocabulary entry %d is U+%04X, a control character the "
                              "tokenizer never produces: the file is damaged; retrain or "
                              "restore it" % (what, i, cp))
        if cp == 0xFEFF:
            raise FormatError("%s: vocabulary entry %d is U+FEFF, a byte order mark the "
                              "tokenizer never produces: the file is damaged; retrain or "
                              "restore it" % (what, i))
    seen = {}
    for i, cp in enumerate(cps):
        if cp in seen:
            raise FormatError("%s: vocabulary entry %d (U+%04X) repeats entry %d: the file is "
                              "damaged; retrain or restore it" % (what, i, cp, seen[cp]))
        seen[cp] = i


def _truncated_header(what, n):
    return FormatError("%s: truncated at byte %d, inside the header: the file is incomplete; "
                       "copy it again or retrain" % (what, n))


def decode(data, what="model"):
    """Validate a whole file image as attnview's model_parse does; returns a
    ModelFile or raises FormatError."""
    data = bytes(data)
    n = len(data)
    shown = quote(what)
    if n == 0:
        raise FormatError("%s: the file is empty: it is not a model; give a file written by "
                          "attnview --train" % shown)
    if n < 8 or data[:8] != MAGIC:
        if n < 8 and MAGIC[:n] == data:
            raise _truncated_header(shown, n)
        raise FormatError("%s: not an attnview model (the file does not start with "
                          "\"ATTNVIEW\"); give a file written by attnview --train" % shown)
    if n < 12:
        raise _truncated_header(shown, n)
    version = struct.unpack_from("<I", data, 8)[0]
    if version not in (FORMAT_VERSION, FORMAT_VERSION_ARCH):
        raise FormatError("%s: model format version %d, but this reader reads version %d%s"
                          % (shown, version, FORMAT_VERSION_ARCH,
                             ": upgrade to read it" if version > FORMAT_VERSION_ARCH
                             else ": the file is damaged"))
    v2 = version == FORMAT_VERSION_ARCH
    if n < 24:
        raise _truncated_header(shown, n)
    kind, size = struct.unpack_from("<IQ", data, 12)
    if kind not in (KIND_MODEL, KIND_CHECKPOINT):
        raise FormatError("%s: unknown file kind %d at byte 12: the file is damaged or from a "
                          "newer attnview" % (shown, kind))
    if size != n:
        if size > n:
            raise FormatError("%s: truncated: the header says %d bytes but the file has %d; "
                              "copy it again or retrain" % (shown, size, n))
        raise FormatError("%s: the header says %d bytes but the file has %d: it was damaged or "
                          "something was appended; restore it or retrain" % (shown, size, n))
    if n < HEADER.size + (ARCH_BYTES if v2 else 0) + 12:
        raise FormatError("%s: only %d bytes, too short for a model header" % (shown, n))
    stored = struct.unpack_from("<I", data, n - 4)[0]
    actual = zlib.crc32(data[:n - 4]) & 0xFFFFFFFF
    if stored != actual:
        raise FormatError("%s: checksum mismatch (stored %08x, computed %08x over bytes 0..%d): "
                          "the file is damaged; restore it or retrain"
                          % (shown, stored, actual, n - 4))
    end = n - 4  # the checksum is not content
    (_, _, _, _, obj, V, d, h, L, T, steps, tokens, created, seed) = \
        struct.unpack_from("<8sIIQIIIIIIQQqQ", data, 0)
    meta = dict(steps=steps, tokens=tokens, created=created, seed=seed)
    nan_bits = {}
    for i, key in enumerate(STATS):
        x = struct.unpack_from("<f", data, 80 + 4 * i)[0]
        meta[key] = x
        if math.isnan(x):
            nan_bits[key] = struct.unpack_from("<I", data, 80 + 4 * i)[0]
    if nan_bits:
        meta["_nan_bits"] = nan_bits
    arch = Arch()
    off = HEADER.size
    if v2:
        for name, values in ARCH_FIELDS:
            v = struct.unpack_from("<I", data, off)[0]
            if v >= len(values):
                raise FormatError("%s: the architecture's %s at byte %d is %d, which this "
                                  "attnview does not know (0..%d): the file is damaged or from "
                                  "a newer attnview" % (shown, name, off, v, len(values) - 1))
            setattr(arch, name, v)
            off += 4
    cfg = Config(obj, V, d, h, L, T, arch)
    try:
        cfg.check()
    except ConfigError as e:
        raise FormatError("%s: impossible hyperparameters in the header (bytes 24..47): %s; the "
                          "file is damaged" % (shown, e)) from None
    for key, label in (("name", "model name"), ("corpus", "corpus description")):
        if off + 4 > end:
            raise FormatError("%s: truncated at byte %d (the %s length): the file is "
                              "incomplete; copy it again or retrain" % (shown, off, label))
        ln = struct.unpack_from("<I", data, off)[0]
        if ln > MAX_STRING:
            raise FormatError("%s: the %s at byte %d claims %d bytes, more than the limit of %d: "
                              "the file is damaged" % (shown, label, off, ln, MAX_STRING))
        if off + 4 + ln > end:
            raise FormatError("%s: truncated at byte %d (inside the %s)" % (shown, end, label))
        raw = data[off + 4:off + 4 + ln]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FormatError("%s: the %s at byte %d is not valid UTF-8 (byte %d): the file is "
                              "damaged" % (shown, label, off + 4, off + 4 + e.start)) from None
        if "\0" in text:
            raise FormatError("%s: the %s at byte %d contains a NUL byte (byte %d), which a "
                              "string of the file may not hold: the file is damaged"
                              % (shown, label, off + 4, off + 4 + raw.index(b"\0")))
        meta[key] = text
        off += 4 + ln
    if off + 4 * V > end:
        i = (end - off) // 4
        raise FormatError("%s: truncated in the vocabulary (entry %d of %d, byte %d)"
                          % (shown, i, V, off + 4 * i))
    vocab = list(struct.unpack_from("<%dI" % V, data, off))
    check_vocab(vocab, what)
    off += 4 * V
    P = num_params(cfg)
    if P > (end - off) // 4:
        raise FormatError("%s: the parameters need %d bytes from byte %d but only %d remain: "
                          "the header does not match the file; it is damaged"
                          % (shown, 4 * P, off, end - off))
    flat = tensor_from_bytes(data[off:off + 4 * P], (P,))
    bad = (~torch.isfinite(flat)).nonzero()
    if len(bad):
        i = int(bad[0])
        raise FormatError("%s: parameter %d (byte %d) is not a finite number: the model "
                          "diverged or the file is damaged; retrain it" % (shown, i, off + 4 * i))
    params = OrderedDict()
    at = 0
    for name, shape in tensor_table(cfg):
        cnt = math.prod(shape)
        params[name] = flat[at:at + cnt].reshape(shape).clone()
        _check_zeros(cfg, name, params[name], off + 4 * at, shown)
        at += cnt
    off += 4 * P
    tl = None
    if _timeline.present(data, off, end):
        try:
            tl, used = _timeline.parse(data, off, end, cfg, what)
        except _timeline.FormatError as e:
            raise FormatError(str(e)) from None
        off += used
    if kind == KIND_MODEL and off != end:
        raise FormatError("%s: %d unexpected bytes after the parameters at byte %d: the file "
                          "is damaged" % (shown, end - off, off))
    state = data[off:end]
    if kind == KIND_CHECKPOINT:
        parse_training_state(state, cfg, what, off)
    return ModelFile(cfg, vocab, params, meta, kind, state, off, tl)


def _check_zeros(cfg, name, t, at, shown):
    """The zeros the architecture promises (attnview's check_zeros): no biases
    at all, or no rows for ids 0..2 (wte, out_w, out_b). at: the tensor's
    byte."""
    a = cfg.arch
    bias = a.biases and is_bias(name)
    if bias:
        flat = t.reshape(-1)
    elif a.specials and name in ("wte", "out_w", "out_b"):
        flat = t[:NSPECIAL].reshape(-1)
    else:
        return
    nz = flat.nonzero()
    if len(nz):
        i = int(nz[0])
        raise FormatError("%s: parameter %s[%d] (byte %d) is not 0, but the architecture says "
                          "%s: the file is damaged; convert the model again"
                          % (shown, name, i, at + 4 * i,
                             "the model has no biases" if bias else "ids 0..2 have no rows"))


def read_file(path):
    """The bytes of a regular file (a FIFO or a directory is refused without
    waiting, as attnview does)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FormatError("%s: is %s, not a regular file" % (
                quote(path), "a directory" if stat.S_ISDIR(st.st_mode) else "a special file"))
        chunks = []
        while True:
            b = os.read(fd, 1 << 24)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


# ---------------------------------------------------------------- kind 1: the training state

STATE_MAGIC = b"ATCK"
STATE_VERSION = 3  # 3 adds --sharpen; 2 is read as --sharpen 0
TRAIN_RECENT = 256


class _Damaged(Exception):
    def __init__(self, at, why):
        super().__init__(why)
        self.at, self.why = at, why


class _Reader:
    """The state's fields in order; a field the state is too short for is
    damage at the field's first byte (state_take, state_array in modelfile.c)."""

    def __init__(self, data):
        self.data, self.off = data, 0

    def take(self, fmt, field):
        s = struct.calcsize(fmt)
        if self.off + s > len(self.data):
            raise _Damaged(self.off, "%s needs %d bytes but the state has %d left"
                           % (field, s, len(self.data) - self.off))
        v = struct.unpack_from(fmt, self.data, self.off)
        self.off += s
        return v if len(v) > 1 else v[0]

    def array(self, n, size, field):
        left = len(self.data) - self.off
        if n > left // size:
            raise _Damaged(self.off, "%s need %d bytes but the state has %d left"
                           % (field, n * size, left))
        b = self.data[self.off:self.off + n * size]
        self.off += n * size
        return b


_STATE_OPTIONS = (("objective", "I", "the objective"), ("dim", "I", "the dim"),
                  ("heads", "I", "the heads"), ("layers", "I", "the layers"),
                  ("context", "I", "the context"), ("batch", "I", "the batch size"),
                  ("steps", "Q", "the total steps"), ("epochs", "Q", "the epochs"),
                  ("lr", "f", "the learning rate"), ("warmup", "Q", "the warmup"),
                  ("seed", "Q", "the seed"), ("min_count", "Q", "the minimum count"),
                  ("max_vocab", "I", "the maximum vocabulary"),
                  ("eval_every", "Q", "the evaluation interval"),
                  ("checkpoint_every", "Q", "the checkpoint interval"))


def _check_state_options(o):
    """train_options_check, for the options a checkpoint stores."""
    if o["objective"] not in (0, 1):
        return "objective"
    if not 1 <= o["heads"] <= 64 or not 2 <= o["dim"] <= 2048 or o["dim"] % o["heads"] \
            or o["dim"] % 2 or not 1 <= o["layers"] <= 32 or not 2 <= o["context"] <= 1024 \
            or not 1 <= o["batch"] <= 4096:
        return "sizes"
    if o["steps"] == 0 or o["steps"] > 100000000:
        return "steps"
    if not 0.0 < o["lr"] < 10.0:
        return "lr"
    if o["warmup"] != 2**64 - 1 and o["warmup"] >= o["steps"]:  # 2^64-1: "automatic"
        return "warmup"
    if o["min_count"] < 1 or o["threads"] > 256:
        return "min-count or threads"
    if o["patience"] and not o["eval_every"]:
        return "patience without evaluations"
    if o["max_vocab"] and not 4 <= o["max_vocab"] <= 200000:
        return "max-vocab"
    att = 2.0 * o["layers"] * o["batch"] * o["heads"] * o["context"] * o["context"] * 4
    if att > 8e9:
        return "memory"
    try:
        Config(o["objective"], o["max_vocab"] or 1000, o["dim"], o["heads"], o["layers"],
               o["context"]).check()
    except ConfigError as e:
        return str(e)
    return None


def parse_training_state(state, cfg, what="checkpoint", state_offset=0):
    """Decode attnview's training state (man 5 attnview, "Training state") with
    the checks every reader makes (attnview's training_state_parse, in its
    order and with its messages); returns a dict, raises FormatError."""
    r = _Reader(state)
    shown = quote(what)

    def damaged(at, why):
        return FormatError("%s: the training state is damaged at byte %d of the file (byte %d "
                           "of the state): %s; start the training again"
                           % (shown, state_offset + at, at, why))

    P = num_params(cfg)
    try:
        if not state:
            raise _Damaged(0, "there is none: a checkpoint holds one between its parameters "
                              "and its checksum")
        if r.take("<4s", "the magic") != STATE_MAGIC:
            raise _Damaged(0, 'it does not start with "ATCK"')
        version = r.take("<I", "the state version")
        if version not in (2, STATE_VERSION):
            raise FormatError("%s: training state version %d at byte %d, but this attnview "
                              "reads version %d: the checkpoint is from another version; start "
                              "the training again" % (shown, version, state_offset + 4,
                                                      STATE_VERSION))
        o = {k: r.take("<" + f, field) for k, f, field in _STATE_OPTIONS}
        at = r.off
        o["threads"] = r.take("<I", "the thread count")
        if o["threads"] == 0:
            raise _Damaged(at, "the thread count is 0")
        o["patience"] = r.take("<Q", "the patience")
        at = r.off
        o["sharpen"] = r.take("<f", "the --sharpen weight") if version >= 3 else 0.0
        if not 0.0 <= o["sharpen"] <= 100.0:
            raise _Damaged(at, "the --sharpen weight is not between 0 and 100")
        at = r.off
        n = r.take("<I", "the --val-file path length")
        if n > MAX_STRING:
            raise _Damaged(at, "the --val-file path is %d bytes long, more than %d"
                           % (n, MAX_STRING))
        raw = r.array(n, 1, "the --val-file path's bytes")
        if b"\0" in raw:
            raise _Damaged(at + 4 + raw.index(b"\0"), "the --val-file path holds a NUL byte")
        o["val_file"] = raw.decode("utf-8", "surrogateescape") if n else None
        for at, k in ((8, "objective"), (12, "dim"), (16, "heads"), (20, "layers"),
                      (24, "context")):
            if o[k] != getattr(cfg, k):
                raise FormatError("%s: the training state does not match the model in the same "
                                  "file (its %s is %d at byte %d, the header's %d): the "
                                  "checkpoint is damaged; start the training again"
                                  % (shown, k, o[k], state_offset + at, getattr(cfg, k)))
        st = dict(options=o)
        st["ntrain"] = r.take("<Q", "the training characters")
        st["nval"] = r.take("<Q", "the validation characters")
        st["hash"] = r.take("<Q", "the corpus hash")
        steps_at = r.off
        st["step"] = r.take("<Q", "the steps done")
        st["tokens"] = r.take("<Q", "the tokens seen")
        st["rng"] = [r.take("<Q", "the random generator state") for _ in range(4)]
        adam_at = r.off
        st["adam_step"] = r.take("<Q", "the AdamW step count")
        st["m"] = tensor_from_bytes(r.array(P, 4, "the AdamW first moments"), (P,))
        st["v"] = tensor_from_bytes(r.array(P, 4, "the AdamW second moments"), (P,))
        at = r.off
        nr = r.take("<I", "the count of recent losses")
        if nr > TRAIN_RECENT:
            raise _Damaged(at, "it keeps %d recent losses, more than %d" % (nr, TRAIN_RECENT))
        st["recent"] = list(struct.unpack("<%df" % nr, r.array(nr, 4, "the recent losses")))
        ne = r.take("<I", "the count of evaluations")
        ev = r.array(ne, 28, "the evaluations")
        # (step, loss, accuracy, baseline loss, baseline accuracy, training loss)
        st["evals"] = [struct.unpack_from("<Qfffff", ev, 28 * i) for i in range(ne)]
        at = r.off
        nb = r.take("<I", "the count of best parameters")
        want = P if o["patience"] and ne else 0
        if nb != want:
            raise _Damaged(at, "it keeps %d best parameters where the run's patience and "
                           "evaluations call for %d" % (nb, want))
        # with patience, once evaluated: the best evaluation's parameters
        best = r.array(nb, 4, "the best parameters")
        st["best"] = tensor_from_bytes(best, (P,)) if nb else None
        if r.off != len(state):
            raise _Damaged(r.off, "%d bytes follow its last field" % (len(state) - r.off))
        if st["step"] > o["steps"]:
            raise _Damaged(steps_at, "%d steps done, more than the %d of the run"
                           % (st["step"], o["steps"]))
        if st["adam_step"] != st["step"]:
            raise _Damaged(adam_at, "the AdamW step count %d is not the %d steps done"
                           % (st["adam_step"], st["step"]))
    except _Damaged as e:
        raise damaged(e.at, e.why) from None
    return st


def check_training_state(state, cfg, what="checkpoint", state_offset=0):
    """parse_training_state, and what attnview's --resume refuses besides:
    options its --train would refuse. (The checks that need the corpus, its
    sizes and hash, are the caller's.)"""
    st = parse_training_state(state, cfg, what, state_offset)
    bad = _check_state_options(st["options"])
    if bad:
        raise FormatError("%s: the checkpoint's options are invalid (%s); start the training "
                          "again" % (quote(what), bad))
    return st


# ---------------------------------------------------------------- writing

def is_attnview_file(path, magics=(MAGIC,)):
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return any(head == m[:8] for m in magics)


def may_replace(path, magics=(MAGIC,)):
    """attnview's may_replace_file: not a directory, and not an existing
    non-empty file that is not one of ours (someone's data). Raises OSError."""
    try:
        st = os.stat(path)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError("%s: is a directory; give a file name" % quote(path))
    if st.st_size > 0 and not is_attnview_file(path, magics):
        raise FileExistsError("%s: exists and is not an attnview model; it was left untouched: "
                              "choose another output file" % quote(path))


def write_atomic(path, data, force=False, magics=(MAGIC,)):
    """Write bytes atomically, as attnview's write_file_atomic: a temporary
    file PATH.tmp.XXXXXX beside the target, fsync, the old file's mode (or the
    umask's), rename over the target, fsync of the directory. A crash leaves
    the old file or the new one, never a mixture."""
    if not force:
        may_replace(path, magics)
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.", dir=d)
    try:
        try:
            view = memoryview(data)
            done = 0
            while done < len(view):
                done += os.write(fd, view[done:])
            try:
                mode = stat.S_IMODE(os.stat(path).st_mode)
            except OSError:
                mask = os.umask(0)
                os.umask(mask)
                mode = 0o666 & ~mask
            os.fsync(fd)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OSError(e.errno, "%s: writing failed; the previous file is unchanged: %s"
                      % (quote(path), e.strerror or e)) from None
    try:
        dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
