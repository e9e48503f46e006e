#!/usr/bin/python3
"""Golden files for the score split by source (man 5
attnview, section 12), from the PyTorch forward of python/attnview_torch in
float64 (its trace hook gives each head's output, q, k and the residual
stream after each block) and the formulas of the man page written again
here, independently of the C code.

    /usr/bin/python3 tests/reference/gen_split_golden.py [OUTDIR]

Writes tests/golden/split_masked.golden and split_causal.golden from the
committed golden models fwd_masked.attn and fwd_causal.attn:
  ids     the text's ids (n)
  cell    layer, head, query, key
  score   q . k of that cell
  terms   (P, P) the terms, [query part][key part], parts in the order of
          man 5 attnview: token, position, per earlier block its heads,
          proj_b and mlp, then the bias
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
    dict(name="split_masked", model="fwd_masked.attn",
         text="Attention (注意力) is all you need! is all", cell=(1, 1, 38, 3)),
    dict(name="split_causal", model="fwd_causal.attn", text="Yes, the cat's mat, the cat.",
         cell=(1, 2, 27, 5)),
]


def parts(cfg, P, ids, trace, layer):
    """The parts of block layer's input, each (n, d), without the bias."""
    n, d, H = len(ids), cfg.dim, cfg.heads
    hs = d // H
    scale = torch.tensor(math.sqrt(d), dtype=torch.float32).double()
    pe = ref.positions(n, d, torch.device("cpu")).double()
    x0 = scale * P["wte"][torch.tensor(ids)] + pe
    out = [x0 - pe, pe]
    for l in range(layer):
        x = trace[l - 1]["x"][0] if l else x0
        wo = P["h%d.proj_w" % l]
        heads = [trace[l]["y"][0, h] @ wo[:, h * hs:(h + 1) * hs].T for h in range(H)]
        pb = P["h%d.proj_b" % l].expand(n, d)
        res2 = x + sum(heads) + pb
        out += heads + [pb, trace[l]["x"][0] - res2]
    return out


def gen(case):
    model = ref.load(os.path.join(ROOT, "tests", "golden", case["model"]))
    cfg, params = model.cfg, model.params
    ids = model.token_ids(ref.text_to_cps(case["text"]))
    d, H = cfg.dim, cfg.heads
    hs = d // H
    layer, head, i, j = case["cell"]
    P = {k: v.double() for k, v in params.items()}
    trace = []
    ref.forward(cfg, params, torch.tensor([ids], dtype=torch.long), dtype=torch.float64,
                trace=trace)
    x = trace[layer - 1]["x"][0] if layer else None
    us = parts(cfg, P, ids, trace, layer)
    if x is None:
        x = us[0] + us[1]
    rstd = 1.0 / torch.sqrt(x.var(dim=-1, unbiased=False) + ref.LN_EPS)
    g, beta = P["h%d.ln1_w" % layer], P["h%d.ln1_b" % layer]
    w, b = P["h%d.qkv_w" % layer], P["h%d.qkv_b" % layer]
    side = []
    for off, t in ((0, i), (d, j)):
        W = w[off + head * hs:off + (head + 1) * hs]
        rows = [(g * (u[t] - u[t].mean()) * rstd[t]) @ W.T for u in us]
        rows.append(beta @ W.T + b[off + head * hs:off + (head + 1) * hs])
        side.append(torch.stack(rows))
    terms = side[0] @ side[1].T
    score = float(trace[layer]["q"][0, head, i] @ trace[layer]["k"][0, head, j])
    assert abs(float(terms.sum()) - score) < 1e-9 * max(1.0, abs(score)), (terms.sum(), score)
    path = os.path.join(OUT, case["name"] + ".golden")
    with open(path, "w") as f:
        write_tensor(f, "ids", [float(t) for t in ids])
        write_tensor(f, "cell", [float(c) for c in case["cell"]])
        write_tensor(f, "score", [score])
        write_tensor(f, "terms", terms)
    print("%s: %d tokens, %d parts, score %.6f" % (path, len(ids), terms.shape[0], score))


def main():
    torch.set_num_threads(1)
    with torch.no_grad():
        for case in CASES:
            gen(case)


if __name__ == "__main__":
    main()
