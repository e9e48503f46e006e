#!/usr/bin/python3
"""attnview(5) read and computed again with numpy alone: an implementation
of the model file and of the forward computation written from the manual
page, independent of the C code and of the PyTorch package (it imports
neither), in binary64.

    /usr/bin/python3 tests/reference/numpy_attn.py MODEL.attn TEXT

prints the tokens' ids, then the largest |weight| difference and logit
difference from `attnview --dump --logits` (ATTNVIEW_BIN) on the same text.
As a module: read(path) -> Model, forward(model, ids) -> (att, logits).
Both file versions: 1 (attnview's own architecture) and 2 (the architecture
fields: learned positions, the GELU's form, the embedding scale, an untied
output matrix, no special tokens, no biases).
"""

import json
import math
import os
import struct
import subprocess
import sys
import unicodedata
import zlib

import numpy as np

FIELDS = ("positions", "gelu", "scale", "output", "specials", "biases", "origin")
LAYER = (("ln1_w", "d"), ("ln1_b", "d"), ("qkv_w", "3d,d"), ("qkv_b", "3d"),
         ("proj_w", "d,d"), ("proj_b", "d"), ("ln2_w", "d"), ("ln2_b", "d"),
         ("fc_w", "4d,d"), ("fc_b", "4d"), ("fc2_w", "d,4d"), ("fc2_b", "d"))


class Model:
    pass


def _shape(spec, d, V, T):
    return tuple({"d": d, "3d": 3 * d, "4d": 4 * d, "V": V, "T": T}[s] for s in spec.split(","))


def read(path):
    """FILE LAYOUT and Parameters of attnview(5); the checks a reader needs
    to trust the numbers (magic, version, size, CRC-32)."""
    data = open(path, "rb").read()
    assert data[:8] == b"ATTNVIEW", "not an attnview file"
    version, kind, size = struct.unpack_from("<IIQ", data, 8)
    assert version in (1, 2) and size == len(data)
    assert zlib.crc32(data[:-4]) & 0xFFFFFFFF == struct.unpack_from("<I", data, len(data) - 4)[0]
    m = Model()
    m.objective, V, d, h, L, T = struct.unpack_from("<6I", data, 24)
    m.V, m.d, m.h, m.L, m.T = V, d, h, L, T
    off = 96
    m.arch = dict.fromkeys(FIELDS, 0)
    if version == 2:
        m.arch = dict(zip(FIELDS, struct.unpack_from("<7I", data, off)))
        off += 28
    for _ in range(2):  # the name and the corpus description
        off += 4 + struct.unpack_from("<I", data, off)[0]
    m.vocab = list(struct.unpack_from("<%dI" % V, data, off))
    off += 4 * V
    table = [("wte", "V,d")] + ([("wpe", "T,d")] if m.arch["positions"] else [])
    for l in range(L):
        table += [("h%d.%s" % (l, n), s) for n, s in LAYER]
    table += [("lnf_w", "d"), ("lnf_b", "d")] + ([("out_w", "V,d")] if m.arch["output"] else [])
    table += [("out_b", "V")]
    m.p = {}
    for name, spec in table:
        shape = _shape(spec, d, V, T)
        n = int(np.prod(shape))
        m.p[name] = np.frombuffer(data, "<f4", n, off).astype(np.float64).reshape(shape)
        off += 4 * n
    return m


def _ln(u, g, b):
    mean = u.mean(-1, keepdims=True)
    var = ((u - mean) ** 2).mean(-1, keepdims=True)
    return (u - mean) / np.sqrt(var + 1e-5) * g + b


def _gelu(u, erf):
    if erf:
        return 0.5 * u * (1 + np.vectorize(math.erf)(u / math.sqrt(2)))
    return 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))


def forward(m, ids):
    """Sections 1 to 5: the attention weights (L, h, n, n) and the logits
    (n, V), -inf where the model has none."""
    n, d, hs, p = len(ids), m.d, m.d // m.h, m.p
    if m.arch["positions"]:
        pe = p["wpe"][:n]
    else:
        t, i = np.arange(n)[:, None], np.arange(d // 2)[None, :]
        w = 10000.0 ** (-2.0 * i / d)
        pe = np.zeros((n, d))
        pe[:, 0::2], pe[:, 1::2] = np.sin(t * w), np.cos(t * w)
        pe = pe.astype(np.float32).astype(np.float64)  # computed in binary64, then rounded
    scale = 1.0 if m.arch["scale"] else float(np.float32(math.sqrt(d)))
    x = scale * p["wte"][ids] + pe
    atts = []
    for l in range(m.L):
        q = lambda s: p["h%d.%s" % (l, s)]  # noqa: E731
        qkv = _ln(x, q("ln1_w"), q("ln1_b")) @ q("qkv_w").T + q("qkv_b")
        y = np.zeros((n, d))
        la = []
        for j in range(m.h):
            cols = [slice(o + j * hs, o + (j + 1) * hs) for o in (0, d, 2 * d)]
            z = qkv[:, cols[0]] @ qkv[:, cols[1]].T / math.sqrt(hs)
            if m.objective == 1:
                z = np.where(np.tril(np.ones((n, n))) > 0, z, -np.inf)
            a = np.exp(z - z.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            la.append(a)
            y[:, cols[0]] = a @ qkv[:, cols[2]]
        atts.append(la)
        x = x + y @ q("proj_w").T + q("proj_b")
        f = _gelu(_ln(x, q("ln2_w"), q("ln2_b")) @ q("fc_w").T + q("fc_b"), m.arch["gelu"])
        x = x + f @ q("fc2_w").T + q("fc2_b")
    out = p["out_w"] if m.arch["output"] else p["wte"]
    logits = _ln(x, p["lnf_w"], p["lnf_b"]) @ out.T + p["out_b"]
    if m.arch["specials"]:
        logits[:, :3] = -np.inf
    return np.array(atts), logits


def ids_of(m, text):
    """TOKENS, for text that needs no cleaning: NFC, one id per codepoint,
    the unknown id 1 for a character not in the vocabulary."""
    index = {cp: i for i, cp in enumerate(m.vocab)}
    return [index.get(ord(c), 1) for c in unicodedata.normalize("NFC", text)]


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    m = read(argv[1])
    ids = ids_of(m, argv[2])
    att, logits = forward(m, ids)
    print("ids", ids)
    b = os.environ.get("ATTNVIEW_BIN")
    if b:
        d = json.loads(subprocess.run([b, "--dump", "--logits", "--top", "0", "--model", argv[1],
                                       "--text", argv[2]], capture_output=True, check=True).stdout)
        got = np.array([a["weights"] for a in d["attention"]]).reshape(att.shape)
        lg = np.array([[-np.inf if v is None else v for v in r] for r in d["logits"]])
        fin = np.isfinite(logits)
        print("weights: max |diff| %.3g; logits: max |diff| %.3g"
              % (np.abs(got - att).max(), np.abs(lg[fin] - logits[fin]).max()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
