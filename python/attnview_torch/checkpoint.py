"""The trainer's checkpoint: everything a stopped run needs to continue.

A file of its own (attnview's kind-1 training state describes attnview's
trainer: its random generator, its thread count), little-endian:

    offset  size
         0     8  magic "AVTORCH1"
         8     4  u32 format version (1)
        12     8  u64 file size, checksum included
        20     4  u32 n, then n bytes: the state as JSON (options, step,
                  tokens seen, processes, recent losses, evaluations, the
                  corpus's sizes and SHA-256)
         .     8  u64 m, then m bytes: the model, an attnview model file
                  (kind 0, validated and checksummed on its own)
         .    4P  f32 AdamW first moments, in the model file's parameter order
         .    4P  f32 AdamW second moments
     end-4     4  u32 CRC-32 of every byte before it

It is written atomically like attnview's files, and the model in it opens in
attnview after `python3 -m attnview_torch export CHECKPOINT -o MODEL`.
"""

import json
import struct
import zlib

from .model import num_params
from .modelfile import (MAGIC, FormatError, decode, read_file, tensor_bytes, tensor_from_bytes,
                        write_atomic)
from .shown import quote

CKPT_MAGIC = b"AVTORCH1"
CKPT_VERSION = 1


def encode(state, model_bytes, m, v):
    """state: a JSON-able dict; model_bytes: a kind-0 model file; m, v: the
    AdamW moments, flat float32 tensors of P elements."""
    js = json.dumps(state, sort_keys=True).encode("utf-8")
    body = (struct.pack("<I", len(js)) + js + struct.pack("<Q", len(model_bytes)) + model_bytes
            + tensor_bytes(m) + tensor_bytes(v))
    size = 8 + 4 + 8 + len(body) + 4
    data = CKPT_MAGIC + struct.pack("<IQ", CKPT_VERSION, size) + body
    return data + struct.pack("<I", zlib.crc32(data) & 0xFFFFFFFF)


def decode_checkpoint(data, what="checkpoint"):
    """(state dict, ModelFile, m, v); FormatError for anything damaged."""
    n = len(data)
    shown = quote(what)
    if data[:8] != CKPT_MAGIC:
        if data[:8] == MAGIC:
            raise FormatError("%s is an attnview model or checkpoint, not a checkpoint of "
                              "python3 -m attnview_torch.train: to fine-tune a model give it "
                              "with --init; attnview resumes its own checkpoints" % shown)
        raise FormatError("%s: not a checkpoint of python3 -m attnview_torch.train (no AVTORCH1 "
                          "magic at byte 0)" % shown)
    if n < 24:
        raise FormatError("%s: truncated at byte %d, inside the header; start the training "
                          "again" % (shown, n))
    version, size = struct.unpack_from("<IQ", data, 8)
    if version != CKPT_VERSION:
        raise FormatError("%s: checkpoint version %d, this trainer reads version %d"
                          % (shown, version, CKPT_VERSION))
    if size != n:
        raise FormatError("%s: the header says %d bytes but the file has %d: it is truncated or "
                          "damaged; start the training again" % (shown, size, n))
    stored = struct.unpack_from("<I", data, n - 4)[0]
    if zlib.crc32(data[:n - 4]) & 0xFFFFFFFF != stored:
        raise FormatError("%s: checksum mismatch: the file is damaged; start the training again"
                          % shown)
    try:
        off = 20
        ln = struct.unpack_from("<I", data, off)[0]
        state = json.loads(data[off + 4:off + 4 + ln].decode("utf-8"))
        off += 4 + ln
        ml = struct.unpack_from("<Q", data, off)[0]
        off += 8
        mf = decode(data[off:off + ml], what + " (its model)")
        off += ml
        P = num_params(mf.config)
        if off + 8 * P != n - 4:
            raise ValueError("%d bytes of moments, %d expected" % (n - 4 - off, 8 * P))
        m = tensor_from_bytes(data[off:off + 4 * P], (P,))
        v = tensor_from_bytes(data[off + 4 * P:off + 8 * P], (P,))
        for k in ("options", "step", "tokens", "world_size", "corpus"):
            if k not in state:
                raise ValueError("no %s" % k)
    except FormatError:
        raise
    except (ValueError, struct.error, UnicodeDecodeError) as e:
        raise FormatError("%s: the training state is damaged (%s); start the training again"
                          % (shown, e)) from None
    return state, mf, m, v


def load(path):
    return decode_checkpoint(read_file(path), path)


def save(path, state, model_bytes, m, v):
    write_atomic(path, encode(state, model_bytes, m, v), magics=(MAGIC, CKPT_MAGIC))


def export(path, out):
    """Write the model inside a checkpoint as an attnview model file."""
    _, mf, _, _ = load(path)
    from .modelfile import encode as encode_model
    write_atomic(out, encode_model(mf.config, mf.vocab, mf.params, mf.meta))
