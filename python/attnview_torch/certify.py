"""The converter's certificate: a converted model's numbers in attnview
against the checkpoint's own in PyTorch, on a probe text, each difference
held to what the bound of man 5 attnview (NOTES, Accuracy; bound.py) allows
two binary32 implementations: twice the bound of each number.

attnview's side is `attnview --dump --logits` on the converted file (the
program on PATH, ATTNVIEW_BIN, or --attnview); without one, this package's
forward pass of the file (model.py, man 5 attnview written again in PyTorch),
and the certificate says so. PyTorch's side is the checkpoint's computation
as nanoGPT and minGPT lay it out (gpt.py), from the checkpoint's tensors, not
from the file: the certificate covers the conversion too.
"""

import json
import os
import random
import shutil
import subprocess
import tempfile
import unicodedata

import torch

from . import gpt
from .bound import forward_bound
from .model import NSPECIAL, attend
from .tokenizer import tokenize_text

PROBE = 256  # the probe's characters at most (the context, if shorter)


def program(given=None):
    """The attnview to certify with (--attnview, ATTNVIEW_BIN, PATH), or None;
    one given that is not a program is an error."""
    if given and not (os.path.isfile(given) and os.access(given, os.X_OK)):
        raise ValueError("--attnview %s: not a program that can be run" % given)
    p = given or os.environ.get("ATTNVIEW_BIN") or shutil.which("attnview")
    return p if p and os.access(p, os.X_OK) else None


def probe_ids(chars, n, seed=0):
    """n ids drawn from the characters a text can hold as they are (attnview
    normalises text to NFC and takes one token per codepoint): the probe's
    text gives back exactly these ids."""
    usable = [i for i, c in enumerate(chars)
              if unicodedata.combining(c) == 0 and tokenize_text(c) == [ord(c)]]
    if not usable:
        raise ValueError("no character of the vocabulary survives attnview's text cleaning")
    for s in range(seed, seed + 16):
        rng = random.Random(s)
        ids = [rng.choice(usable) for _ in range(n)]
        text = "".join(chars[i] for i in ids)
        if tokenize_text(text) == [ord(chars[i]) for i in ids]:
            return ids, text
    return ids[:1], chars[ids[0]]


def _attnview_side(prog, data, text):
    """attnview's weights (L, h, n, n) and logits (n, V) of the text."""
    with tempfile.TemporaryDirectory(prefix="attnview-convert-") as tmp:
        path = os.path.join(tmp, "model.attn")
        with open(path, "wb") as f:
            f.write(data)
        p = subprocess.run([prog, "--dump", "--format", "json", "--logits", "--top", "0",
                            "--model", path, "--text", text], capture_output=True)
    if p.returncode != 0:
        raise RuntimeError("%s --dump failed: %s" % (prog, p.stderr.decode(errors="replace")
                                                      .strip()[:300]))
    d = json.loads(p.stdout)
    att = torch.tensor([a["weights"] for a in d["attention"]], dtype=torch.float64)
    logits = torch.tensor([[float("-inf") if v is None else v for v in row]
                           for row in d["logits"]], dtype=torch.float64)
    return [t["id"] for t in d["tokens"]], att, logits


def _worst(got, want, err):
    """The largest |got - want| and the largest |got - want| / (2 err)."""
    diff = (got - want).abs()
    diff = diff.masked_fill(diff <= 2.0**-125, 0)
    return float(diff.max()), float((diff / (2 * err)).max())


def certify(model, data, sd, chars, prog, order=None):
    """Report lines; the last starts with "certificate: ok" when every number
    is within its bound. chars: the checkpoint's vocabulary by its ids;
    order (or None: the same): the checkpoint's ids in the file's order."""
    cfg = model.config
    n = min(cfg.context, PROBE)
    ids, text = probe_ids(chars, n)
    order = order or list(range(len(chars)))
    rank = {src: k for k, src in enumerate(order)}
    aids = [rank[i] + NSPECIAL for i in ids]
    with torch.no_grad():
        want_logits, want_att = gpt.forward(sd, cfg.heads, ids, cfg.arch.gelu)
        want_logits = want_logits[:, order]
        b = forward_bound(cfg, model.file_parameters(), aids)
        if prog:
            got_ids, got_att, got_logits = _attnview_side(prog, data, text)
            who = "attnview (%s)" % prog
        else:
            got_ids = aids
            att, _, logits, _ = attend(model, aids)
            got_att, got_logits = att.double(), logits.double()
            who = "this package's reading of the file (no attnview found: give --attnview)"
    lines = ["probe: %d characters drawn from the vocabulary; %s against the checkpoint in "
             "PyTorch" % (len(ids), who)]
    if got_ids != aids:
        return lines + ["certificate: failed: attnview read the probe as other ids"]
    la, ra = _worst(got_att.reshape(want_att.shape), want_att.double(), b["att_err"])
    ll, rl = _worst(got_logits[:, NSPECIAL:], want_logits.double(), b["logits_err"][:, NSPECIAL:])
    lines.append("  logits: largest difference %.3g, %.3f of what the bound allows"
                 % (ll, rl))
    lines.append("  attention weights: largest difference %.3g, %.3f of what the bound allows"
                 % (la, ra))
    ok = ra <= 1 and rl <= 1 and torch.isinf(got_logits[:, :NSPECIAL]).all()
    return lines + ["certificate: %s: every logit and attention weight of %d positions "
                    "within twice its float32 bound (man 5 attnview, NOTES)"
                    % ("ok" if ok else "FAILED", len(ids))]
