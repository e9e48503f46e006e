#!/usr/bin/python3
"""Golden files for activation patching between two texts (man
5 attnview, section 11), from the PyTorch forward of
python/attnview_torch in float64 (its hook replaces a head's output) and
the formulas of the man page written again here, independently of the C
code.

    /usr/bin/python3 tests/reference/gen_patch_golden.py [OUTDIR]

Writes tests/golden/patch_masked.golden and patch_causal.golden from the
committed golden models fwd_masked.attn and fwd_causal.attn:
  ids, ids2  the two texts' ids (n each)
  pos        the row whose logits are read
  targets    a and b: the text's top-1 at pos, the other text's (or the
             text's second when the two agree)
  diff       z_a - z_b in the run of the text, diff2 in the other's
  heads      (L, H) D(patched) - D(text), head l.h patched at every position
  cells      (n, L, H) the same, patched at one position
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnview_ref as ref  # noqa: E402
from gen_golden import write_tensor  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "golden")

CASES = [
    dict(name="patch_masked", model="fwd_masked.attn",
         text="Attention (注意力) is all you need! is all",
         text2="Intention (注意力) is all you need! is bad"),
    dict(name="patch_causal", model="fwd_causal.attn",
         text="Yes, the cat's mat, the cat.", text2="Yes, the dog's mat, the dog."),
]


def gen(case):
    model = ref.load(os.path.join(ROOT, "tests", "golden", case["model"]))
    cfg, params = model.cfg, model.params
    ids = model.token_ids(ref.text_to_cps(case["text"]))
    ids2 = model.token_ids(ref.text_to_cps(case["text2"]))
    assert len(ids) == len(ids2)
    n, L, H = len(ids), cfg.layers, cfg.heads
    pos = n - 1
    P = {k: v.double() for k, v in params.items()}

    def run(toks, hook=None):
        final, _, _ = ref.forward(cfg, params, torch.tensor([toks], dtype=torch.long),
                                  dtype=torch.float64, hook=hook)
        return final[0, pos] @ P["wte"].T + P["out_b"]

    ys = []
    z2 = run(ids2, lambda l, y: ys.append(y) or y)
    z = run(ids)
    a = int(z.argmax())
    b = int(z2.argmax())
    if b == a:
        b = int(z.topk(2).indices[1])
    diff = float(z[a] - z[b])

    def patched(l, h, rows):
        def hook(ll, y):
            if ll != l:
                return y
            y = y.clone()
            y[0, h, rows] = ys[l][0, h, rows]
            return y
        zp = run(ids, hook)
        return float(zp[a] - zp[b]) - diff

    heads = torch.zeros(L, H, dtype=torch.float64)
    cells = torch.zeros(n, L, H, dtype=torch.float64)
    for l in range(L):
        for h in range(H):
            heads[l, h] = patched(l, h, slice(0, n))
            for p in range(n):
                cells[p, l, h] = patched(l, h, slice(p, p + 1))
    path = os.path.join(OUT, case["name"] + ".golden")
    with open(path, "w") as f:
        write_tensor(f, "ids", [float(t) for t in ids])
        write_tensor(f, "ids2", [float(t) for t in ids2])
        write_tensor(f, "pos", [float(pos)])
        write_tensor(f, "targets", [float(a), float(b)])
        write_tensor(f, "diff", [diff])
        write_tensor(f, "diff2", [float(z2[a] - z2[b])])
        write_tensor(f, "heads", heads)
        write_tensor(f, "cells", cells)
    print("%s: %d tokens, %d layers, targets %d %d" % (path, n, L, a, b))


def main():
    torch.set_num_threads(1)
    with torch.no_grad():
        for case in CASES:
            gen(case)


if __name__ == "__main__":
    main()
