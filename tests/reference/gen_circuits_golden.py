#!/usr/bin/python3
"""Golden files for the weight-only circuits (man 5
attnview, section 9), from the parameters of python/attnview_torch in
float64 and the formulas of the man page written again here with full
matrices (the V x V OV circuit and its eigenvalues, the d x d products of
the composition scores), independently of the C code's smaller products.

    /usr/bin/python3 tests/reference/gen_circuits_golden.py [OUTDIR]

Writes tests/golden/circuits_masked.golden and circuits_causal.golden from
the committed golden models fwd_masked.attn and fwd_causal.attn:
  positional  (L, H, offsets) the positional QK profile at -(T-1) ..
  qk          (L, H, N, N) the QK table of the N most frequent characters
  ov_copying  (L, H) sum lambda / sum |lambda| of the OV circuit
  map_from, map_to, map_value  (L, H, 8) its largest entries
  comp_q, comp_k, comp_v  (L, H, L, H) reader (l, h), writer (k, j); zero
              where k >= l
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
QK_CHARS, MAP_FROM, MAPS = 12, 64, 8

CASES = [dict(name="circuits_masked", model="fwd_masked.attn"),
         dict(name="circuits_causal", model="fwd_causal.attn")]


def frozen_scale(P, d, T):
    """1 / sqrt(mean over characters v and positions t of var(sqrt(d) wte[v] + pe[t]))."""
    x = math.sqrt(d) * P["wte"][:, None, :] + ref.positions(T, d).double()[None, :, :]
    return 1.0 / math.sqrt(x.var(dim=-1, unbiased=False).mean().item() + ref.LN_EPS)


def head(P, l, h, d, hs):
    p = lambda s: P["h%d.%s" % (l, s)]  # noqa: E731
    rows = lambda part: slice(part * d + h * hs, part * d + (h + 1) * hs)  # noqa: E731
    w = p("qkv_w")
    return dict(wq=w[rows(0)].T, wk=w[rows(1)].T, wv=w[rows(2)].T, bq=p("qkv_b")[rows(0)],
                bk=p("qkv_b")[rows(1)], wo=p("proj_w")[:, h * hs:(h + 1) * hs].T,
                g=p("ln1_w"), b=p("ln1_b"))


def scores(x, s0, m, hs):
    """Rows x read through ln1 with the frozen scale, q.k / sqrt(hs)."""
    a = s0 * (x - x.mean(dim=-1, keepdim=True)) * m["g"] + m["b"]
    return (a @ m["wq"] + m["bq"]) @ (a @ m["wk"] + m["bk"]).T / math.sqrt(hs)


def positional(pe, s0, m, hs, causal):
    T = pe.shape[0]
    s = scores(pe, s0, m, hs)
    offs = range(-(T - 1), 1 if causal else T)
    sums = {o: [] for o in offs}
    for i in range(T):
        keys = range(i + 1) if causal else range(T)
        mean = sum(s[i, j].item() for j in keys) / len(keys)
        for j in keys:
            sums[j - i].append(s[i, j].item() - mean)
    return [sum(v) / len(v) for v in (sums[o] for o in offs)]


def norm(a):
    return torch.linalg.norm(a).item()


def gen(case):
    model = ref.load(os.path.join(ROOT, "tests", "golden", case["model"]))
    cfg = model.cfg
    P = {k: v.double() for k, v in model.params.items()}
    L, H, d, T, V = cfg.layers, cfg.heads, cfg.dim, cfg.context, cfg.vocab_size
    hs = d // H
    s0 = frozen_scale(P, d, T)
    pe = ref.positions(T, d).double()
    N, F = min(QK_CHARS, V - 3), min(MAP_FROM, V - 3)
    wte = P["wte"]
    e = math.sqrt(d) * (wte - wte.mean(dim=-1, keepdim=True))
    u = P["lnf_w"] * wte
    u = u - u.mean(dim=-1, keepdim=True)
    cent = torch.eye(d, dtype=torch.float64) - 1.0 / d
    mats = [[head(P, l, h, d, hs) for h in range(H)] for l in range(L)]
    out = {k: [] for k in ("positional", "qk", "ov_copying", "map_from", "map_to", "map_value")}
    comp = {k: torch.zeros(L, H, L, H, dtype=torch.float64) for k in "qkv"}
    for l in range(L):
        for h in range(H):
            m = mats[l][h]
            out["positional"].append(positional(pe, s0, m, hs, cfg.causal))
            qk = scores(math.sqrt(d) * wte[3:3 + N], s0, m, hs)
            out["qk"].append(qk - qk.mean(dim=-1, keepdim=True))
            M = (e * m["g"]) @ m["wv"] @ m["wo"] @ u.T  # (V, V)
            lam = torch.linalg.eigvals(M)
            out["ov_copying"].append(lam.real.sum().item() / lam.abs().sum().item())
            sub = M[3:3 + F, 3:]
            top = sub.reshape(-1).topk(MAPS)
            out["map_from"].append([3 + i // sub.shape[1] for i in top.indices.tolist()])
            out["map_to"].append([3 + i % sub.shape[1] for i in top.indices.tolist()])
            out["map_value"].append(top.values.tolist())
            read = lambda w: cent @ torch.diag(m["g"]) @ w  # noqa: E731
            wqk, wov = read(m["wq"]) @ read(m["wk"]).T, read(m["wv"]) @ m["wo"]
            for k in range(l):
                for j in range(H):
                    w1 = mats[k][j]["wv"] @ mats[k][j]["wo"]
                    comp["q"][l, h, k, j] = norm(w1 @ wqk) / (norm(w1) * norm(wqk))
                    comp["k"][l, h, k, j] = norm(wqk @ w1.T) / (norm(w1) * norm(wqk))
                    comp["v"][l, h, k, j] = norm(w1 @ wov) / (norm(w1) * norm(wov))
    path = os.path.join(OUT, case["name"] + ".golden")
    with open(path, "w") as f:
        shape = {"positional": (L, H, -1), "qk": (L, H, N, N), "ov_copying": (L, H)}
        for k, v in out.items():
            t = torch.stack(v) if k == "qk" else torch.tensor(v, dtype=torch.float64)
            write_tensor(f, k, t.reshape(shape.get(k, (L, H, MAPS))))
        for k in "qkv":
            write_tensor(f, "comp_" + k, comp[k])
    print("%s: %d layers, %d heads" % (path, L, H))


def main():
    torch.set_num_threads(1)
    for case in CASES:
        gen(case)


if __name__ == "__main__":
    main()
