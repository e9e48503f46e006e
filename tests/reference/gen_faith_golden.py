#!/usr/bin/python3
"""Golden files for the faithfulness meter (man 5
attnview, section 10), from the PyTorch forward of python/attnview_torch in
float64 and the definitions of the man page written again here,
independently of the C code: for every row, one pass per key with that key
blanked (the mask id in a masked model, the unknown id in a causal one).

    /usr/bin/python3 tests/reference/gen_faith_golden.py [OUTDIR]

Writes tests/golden/faith_masked.golden and faith_causal.golden from the
committed golden models fwd_masked.attn and fwd_causal.attn:
  ids       the text's ids (n)
  loss      (n) each row's loss, nan where it has none
  effect    (n, n) the loss with key j blanked minus the row's; nan for the
            keys the row does not see
  spearman  (n, L, h) each head's Spearman correlation of its attention at
            the row (in the row's own pass) with the effects
"""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnview_ref as ref  # noqa: E402
from gen_golden import write_tensor  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "golden")

CASES = [
    dict(name="faith_masked", model="fwd_masked.attn", text="Attention is all you need!"),
    dict(name="faith_causal", model="fwd_causal.attn", text="Yes, the cat's mat, the cat."),
]


def rank(v):
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x, y):
    if len(x) < 2:
        return float("nan")
    rx, ry = rank(x), rank(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def row_pass(cfg, params, x, row, target):
    """The loss at `row` of text x, and every head's attention there."""
    final, att, _ = ref.forward(cfg, params, torch.tensor([x]), dtype=torch.float64)
    logits = ref.logits_of(params, final[0, row], dtype=torch.float64)
    loss = (torch.logsumexp(logits, dim=-1) - logits[target]).item()
    return loss, [a[0, :, row, :] for a in att]  # L x (h, n)


def gen(case):
    model = ref.load(os.path.join(ROOT, "tests", "golden", case["model"]))
    cfg, params = model.cfg, model.params
    ids = model.token_ids(ref.text_to_cps(case["text"]))
    n, L, H = len(ids), cfg.layers, cfg.heads
    causal = cfg.causal
    blank = ref.TOK_UNK if causal else ref.TOK_MASK
    nan = float("nan")
    loss = [nan] * n
    effect = [[nan] * n for _ in range(n)]
    sp = [[[nan] * H for _ in range(L)] for _ in range(n)]
    for i in range(n):
        t = i + 1 if causal else i
        if t >= n or ids[t] < ref.NSPECIAL:
            continue
        own = list(ids)
        if not causal:
            own[i] = ref.TOK_MASK
        loss[i], att = row_pass(cfg, params, own, i, ids[t])
        keys = [j for j in range(i + 1 if causal else n) if causal or j != i]
        for j in keys:
            x = list(own)
            x[j] = blank
            effect[i][j] = row_pass(cfg, params, x, i, ids[t])[0] - loss[i]
        for l in range(L):
            for h in range(H):
                sp[i][l][h] = spearman([att[l][h, j].item() for j in keys],
                                       [effect[i][j] for j in keys])
    path = os.path.join(OUT, case["name"] + ".golden")
    with open(path, "w") as f:
        write_tensor(f, "ids", [float(t) for t in ids])
        write_tensor(f, "loss", loss)
        write_tensor(f, "effect", effect)
        write_tensor(f, "spearman", sp)
    print("%s: %d tokens" % (path, n))


def main():
    torch.set_num_threads(1)
    with torch.no_grad():
        for case in CASES:
            gen(case)


if __name__ == "__main__":
    main()
