#!/usr/bin/python3
"""The gradients of --sharpen's loss, from the PyTorch reference, for
tests/unit/test_backward.c: tests/golden/train_masked_sharpen.golden and
train_causal_sharpen.golden.

    /usr/bin/python3 tests/reference/gen_sharpen_golden.py [OUTDIR]

The models and batches are those of train_masked and train_causal (made by
gen_golden.py: the .attn files and the tokens and targets of the .golden
files). The loss differentiated is the cross-entropy over the target rows
plus S times the attention's mean entropy as attnview's trainer defines it
(attnview(1), --sharpen):

    S / (L H B T log T) * (sum of H(row) over every row of the layers before
                           the last, and over the target rows of the last)

with H(row) = -sum_j a_j log a_j (0 log 0 = 0: a masked key adds nothing).
Written: "sharpen" (S), "loss" (the cross-entropy alone, which is what the
trainer reports), "penalty" (the added term) and grad.NAME for every
parameter. Deterministic on one thread."""

import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnview_ref as ref  # noqa: E402
from gen_golden import OUT, write_tensor  # noqa: E402

SHARPEN = 0.7


def read_golden(path):
    """tensor NAME DIMS... then the values, 8 a line (gen_golden.write_tensor)."""
    out, name, dims, vals = {}, None, None, []
    for line in open(path):
        if line.startswith("tensor "):
            if name:
                out[name] = torch.tensor(vals).reshape(dims)
            parts = line.split()
            name, dims, vals = parts[1], [int(x) for x in parts[2:]], []
        else:
            vals.extend(float(x) for x in line.split())
    out[name] = torch.tensor(vals).reshape(dims)
    return out


def loss_and_penalty(cfg, params, tokens, targets, sharpen):
    final, atts, _ = ref.forward(cfg, params, tokens, keep=True)
    B, T = tokens.shape
    y = targets.reshape(-1)
    rows = (y >= 0).nonzero().squeeze(1)
    logits = ref.logits_of(params, final.reshape(-1, cfg.dim)[rows])
    ce = F.cross_entropy(logits, y[rows])
    total = torch.zeros((), dtype=final.dtype)
    for l, att in enumerate(atts):
        # each row's entropy (B, h, T); log 1 = 0 where a weight is 0, so a
        # causally masked key adds nothing, nor NaN to the gradient
        ent = -(att * torch.where(att > 0, att, torch.ones_like(att)).log()).sum(-1)
        if l + 1 == cfg.layers:  # the last layer: only the rows the loss reads
            ent = ent.permute(0, 2, 1).reshape(B * T, cfg.heads)[rows]
        total = total + ent.sum()
    penalty = sharpen * total / (cfg.layers * cfg.heads * B * T * math.log(T))
    return ce, penalty


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    gold = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden")
    for name in ("train_masked", "train_causal"):
        m = ref.load(os.path.join(gold, name + ".attn"))
        g = read_golden(os.path.join(gold, name + ".golden"))
        tokens, targets = g["tokens"].long(), g["targets"].long()
        cfg = m.config
        params = {k: v.detach().clone().requires_grad_(True) for k, v in m.params.items()}
        ce, penalty = loss_and_penalty(cfg, params, tokens, targets, SHARPEN)
        (ce + penalty).backward()
        # Against float64, for information on tolerances.
        p64 = {k: v.detach().double().requires_grad_(True) for k, v in m.params.items()}
        ce64, pen64 = loss_and_penalty(cfg, p64, tokens, targets, SHARPEN)
        (ce64 + pen64).backward()
        gd = max((params[k].grad.double() - p64[k].grad).abs().max().item() for k in params)
        path = os.path.join(out, name + "_sharpen.golden")
        with open(path, "w") as f:
            write_tensor(f, "sharpen", [SHARPEN])
            write_tensor(f, "loss", [float(ce)])
            write_tensor(f, "penalty", [float(penalty)])
            for k, v in params.items():
                write_tensor(f, "grad." + k, v.grad)
        print("%s: loss %.6f, penalty %.6f; float32 vs float64 grads max |diff| %.2g"
              % (path, float(ce), float(penalty), gd))


if __name__ == "__main__":
    main()
