#!/usr/bin/python3
"""Golden files for the logit lens and the direct logit attribution (issue
26; man 5 attnview, section 8), from the PyTorch forward of
python/attnview_torch in float64 (its trace hook gives each head's output
and the residual stream after each block) and the formulas of the man page
written again here, independently of the C code.

    /usr/bin/python3 tests/reference/gen_lens_golden.py [OUTDIR]

Writes tests/golden/lens_masked.golden and lens_causal.golden from the
committed golden models fwd_masked.attn and fwd_causal.attn:
  ids        the text's ids (n)
  lens_id    (L, n, K) the lens's top K ids after each block
  lens_p     (L, n, K) their probabilities
  dla_target (n) the plain pass's top-1 at each position
  dla_logit  (n) its logit
  dla_heads  (n, L, H) what each head's output adds to it
  dla_rest   (n) the logit minus the heads, the complement
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnview_ref as ref  # noqa: E402
from gen_golden import write_tensor  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "golden")
K = 5

CASES = [
    dict(name="lens_masked", model="fwd_masked.attn",
         text="Attention (注意力) is all you need! is all"),
    dict(name="lens_causal", model="fwd_causal.attn", text="Yes, the cat's mat, the cat."),
]


def gen(case):
    model = ref.load(os.path.join(ROOT, "tests", "golden", case["model"]))
    cfg, params = model.cfg, model.params
    ids = model.token_ids(ref.text_to_cps(case["text"]))
    n, L, H, d = len(ids), cfg.layers, cfg.heads, cfg.dim
    hs = d // H
    P = {k: v.double() for k, v in params.items()}
    toks = torch.tensor([ids], dtype=torch.long)
    path = os.path.join(OUT, case["name"] + ".golden")
    with open(path, "w") as f, torch.no_grad():
        write_tensor(f, "ids", [float(t) for t in ids])
        trace = []
        final, _, _ = ref.forward(cfg, params, toks, dtype=torch.float64, trace=trace)
        lens_id, lens_p = [], []
        for l in range(L):
            x = trace[l]["x"][0]
            ln = F.layer_norm(x, (d,), P["lnf_w"], P["lnf_b"], eps=ref.LN_EPS)
            p = torch.softmax(ln @ P["wte"].T + P["out_b"], dim=-1)
            top = p.topk(K, dim=-1)
            lens_id.append(top.indices.double())
            lens_p.append(top.values)
        write_tensor(f, "lens_id", torch.stack(lens_id))
        write_tensor(f, "lens_p", torch.stack(lens_p))
        logits = final[0] @ P["wte"].T + P["out_b"]
        target = logits.argmax(dim=-1)
        x = trace[-1]["x"][0]
        rstd = 1.0 / torch.sqrt(x.var(dim=-1, unbiased=False) + ref.LN_EPS)  # (n)
        g = P["lnf_w"] * P["wte"][target]  # (n, d): gamma . wte[target]
        heads = torch.zeros(n, L, H, dtype=torch.float64)
        for l in range(L):
            wo = P["h%d.proj_w" % l]
            for h in range(H):
                u = trace[l]["y"][0, h] @ wo[:, h * hs:(h + 1) * hs].T  # (n, d)
                u = u - u.mean(dim=-1, keepdim=True)
                heads[:, l, h] = rstd * (u * g).sum(dim=-1)
        logit = logits[torch.arange(n), target]
        write_tensor(f, "dla_target", target.double())
        write_tensor(f, "dla_logit", logit)
        write_tensor(f, "dla_heads", heads)
        write_tensor(f, "dla_rest", logit - heads.sum(dim=(1, 2)))
    print("%s: %d tokens, %d layers" % (path, n, L))


def main():
    torch.set_num_threads(1)
    for case in CASES:
        gen(case)


if __name__ == "__main__":
    main()
