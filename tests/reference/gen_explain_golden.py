#!/usr/bin/python3
"""Golden files for what attnview computes from the weights (issue 11; man 5
attnview, section 7; man 1 attnview, HEAD ROLES): the q.k breakdown's q and
k, value norms, ablation (attention and loss), head role scores, aggregates,
rollout and word attention, from the PyTorch forward of python/attnview_torch
(with its ablate and trace hooks) and the formulas of the man pages written
again here, independently of the C code.

    /usr/bin/python3 tests/reference/gen_explain_golden.py [OUTDIR]

Writes tests/golden/explain_masked.golden and explain_causal.golden from the
committed golden models fwd_masked.attn and fwd_causal.attn (see
tests/reference/README.md for the tensor format and what each holds).
"""

import math
import os
import sys
import unicodedata

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnview_ref as ref  # noqa: E402
from gen_golden import write_tensor  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "golden")

# The model, a text, a cell for the breakdown, heads to switch off.
CASES = [
    dict(name="explain_masked", model="fwd_masked.attn",
         text="Attention (注意力) is all you need! is all", cell=(5, 2),
         ablate=[(0, 1), (1, 3)]),
    dict(name="explain_causal", model="fwd_causal.attn",
         text="Yes, the cat's mat, the cat.", cell=(9, 4), ablate=[(1, 0)]),
]

ROLES = ("previous", "next", "self", "first", "delimiter", "duplicate", "induction",
         "local", "offset", "keyword", "script", "parallel", "mirror", "entropy", "word_start")


def is_delimiter(cp):
    """A space, a line break or punctuation (man 1 attnview, HEAD ROLES)."""
    if cp in (0x0A, 0x09):
        return True
    if cp >= 0x110000:
        return False
    cat = unicodedata.category(chr(cp))
    return cat[0] == "P" or cat in ("Zs", "Zl", "Zp")


def script_of(cp):
    """Han, Latin, kana, Hangul, Cyrillic, Greek, or None (HEAD ROLES)."""
    if (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF
            or 0x20000 <= cp <= 0x3FFFF or cp == 0x3007):
        return "han"
    if (ord("A") <= cp <= ord("Z") or ord("a") <= cp <= ord("z")
            or (0xC0 <= cp <= 0x24F and cp not in (0xD7, 0xF7)) or 0x1E00 <= cp <= 0x1EFF):
        return "latin"
    if 0x3041 <= cp <= 0x30FF and cp != 0x30FB:
        return "kana"
    if 0xAC00 <= cp <= 0xD7AF or 0x1100 <= cp <= 0x11FF:
        return "hangul"
    if 0x0400 <= cp <= 0x04FF:
        return "cyrillic"
    if 0x0370 <= cp <= 0x03FF:
        return "greek"
    return None


def offset_score(A, causal):
    """The best k, 2 <= |k| <= 8, by the share of rows whose single largest
    weight is at i + k."""
    n = A.shape[0]
    best = [None] * n
    for i in range(n):
        row = [A[i, j].item() for j in range(n) if not (causal and j > i)]
        m = max(row)
        best[i] = row.index(m) if row.count(m) == 1 else None
    top = 0.0
    for d in range(2, 9):
        for k in (-d, d):
            rows = [i for i in range(n) if 0 <= i + k < n and not (causal and k > 0)]
            if len(rows) >= 3:
                top = max(top, sum(best[i] == i + k for i in rows) / len(rows))
    return top


def keyword_score(A, cps, causal):
    n = A.shape[0]
    mass = {}
    for j in range(n):
        if cps[j] < 0x110000:  # characters, not the mask or the unknown token
            mass[cps[j]] = mass.get(cps[j], 0.0) + A[:, j].sum().item()
    top = sorted(mass.values(), reverse=True)[:2]
    return sum(top) / n


def script_score(A, cps, causal):
    n = A.shape[0]
    sc = [script_of(c) for c in cps]
    same = uni = 0.0
    rows = 0
    for i in range(n):
        if sc[i] is None:
            continue
        keys = [j for j in range(n) if sc[j] is not None and not (causal and j > i)]
        wany = sum(A[i, j].item() for j in keys)
        if wany <= 0:
            continue
        own = [j for j in keys if sc[j] == sc[i]]
        same += sum(A[i, j].item() for j in own) / wany
        uni += len(own) / len(keys)
        rows += 1
    S, U = (same / rows, uni / rows) if rows else (0.0, 1.0)
    v = (S - U) / (1 - U) if 1 - U >= 0.05 else 0.0
    return min(1.0, max(0.0, v))


def parallel_score(A, cps, causal):
    n = A.shape[0]
    line, col, starts, lens = [], [], [], []
    for i in range(n):
        if i == 0 or (is_delimiter(cps[i - 1]) and cps[i - 1] not in (0x20, 0x09, 0x3000)):
            starts.append(i)
            lens.append(0)
        line.append(len(starts) - 1)
        col.append(lens[-1])
        lens[-1] += 1
    w, rows = 0.0, 0
    for i in range(n):
        keys = []
        for l in (line[i] - 1, line[i] + 1):
            if 0 <= l < len(starts) and col[i] < lens[l]:
                j = starts[l] + col[i]
                if not (causal and j > i):
                    keys.append(j)
        if keys:
            rows += 1
            w += sum(A[i, j].item() for j in keys)
    return w / rows if rows and 4 * rows >= n else 0.0


def mirror_score(A):
    n = A.shape[0]
    return max(sum(A[i, c - i].item() for i in range(n) if 0 <= c - i < n) / n
               for c in range(2 * n - 1))


def word_start_score(A, cps):
    """The mean weight on the first character of the query's word, over the
    rows two or more characters into their word (at least 3 of them)."""
    n = A.shape[0]
    start = []
    for i in range(n):
        start.append(i if i == 0 or is_delimiter(cps[i - 1]) else start[i - 1])
    rows = [i for i in range(n) if not is_delimiter(cps[i]) and start[i] <= i - 2]
    if len(rows) < 3:
        return 0.0
    return sum(A[i, start[i]].item() for i in rows) / len(rows)


def role_scores(A, cps, causal):
    """The fifteen scores of one head (n,n) in float64, from the formulas."""
    n = A.shape[0]
    A = A.double()
    s = dict.fromkeys(ROLES, 0.0)
    for i in range(n):
        if i >= 1:
            s["previous"] += A[i, i - 1].item()
        if i < n - 1:
            s["next"] += A[i, i + 1].item()
        s["self"] += A[i, i].item()
        s["first"] += A[i, 0].item()
        for j in range(n):
            w = A[i, j].item()
            if is_delimiter(cps[j]):
                s["delimiter"] += w
            if j != i and cps[j] == cps[i]:
                s["duplicate"] += w
            if j >= 1 and j - 1 != i and cps[j - 1] == cps[i]:
                s["induction"] += w
            if abs(i - j) <= 2:
                s["local"] += w
            if w > 0:
                s["entropy"] -= w * math.log(w)
    for r in ("previous", "next", "self", "first", "delimiter", "duplicate", "induction",
              "local", "entropy"):
        s[r] /= n
    s["entropy"] = s["entropy"] / math.log(n) if n > 1 else 0.0
    s["offset"] = offset_score(A, causal)
    s["keyword"] = keyword_score(A, cps, causal)
    s["script"] = script_score(A, cps, causal)
    s["parallel"] = parallel_score(A, cps, causal)
    s["mirror"] = mirror_score(A)
    s["word_start"] = word_start_score(A, cps)
    return [min(1.0, s[r]) for r in ROLES]


def words(cps):
    """Words: runs of non-delimiters, single punctuation characters or line
    breaks, or leading spaces, each with the spaces after it."""
    space = (0x20, 0x09, 0x3000)
    spans, i, n = [], 0, len(cps)
    while i < n:
        start = i
        if cps[i] in space:
            pass
        elif is_delimiter(cps[i]):
            i += 1
        else:
            while i < n and not is_delimiter(cps[i]):
                i += 1
        while i < n and cps[i] in space:
            i += 1
        spans.append((start, i))
    return spans


def word_attention(A, spans):
    nw = len(spans)
    W = torch.zeros(nw, nw, dtype=torch.float64)
    for a, (s0, e0) in enumerate(spans):
        for b, (s1, e1) in enumerate(spans):
            W[a, b] = A[s0:e0, s1:e1].double().sum() / (e0 - s0)
    return W


def text_loss(model, ids, known, ablate):
    """man 5 attnview, section 7: mean -ln p of the known characters."""
    cfg, params = model.cfg, model.params
    toks = torch.tensor([ids], dtype=torch.long)
    total, count = 0.0, 0
    if cfg.causal:
        final, _, _ = ref.forward(cfg, params, toks, keep=False, ablate=ablate)
        logp = torch.log_softmax(ref.logits_of(params, final)[0].double(), dim=-1)
        for t in range(1, len(ids)):
            if known[t]:
                total -= logp[t - 1, ids[t]].item()
                count += 1
    else:
        for t in range(len(ids)):
            if not known[t]:
                continue
            x = toks.clone()
            x[0, t] = ref.TOK_MASK
            final, _, _ = ref.forward(cfg, params, x, keep=False, ablate=ablate)
            logp = torch.log_softmax(ref.logits_of(params, final[:, t])[0].double(), dim=-1)
            total -= logp[ids[t]].item()
            count += 1
    return total / count, count


def gen(case):
    model = ref.load(os.path.join(ROOT, "tests", "golden", case["model"]))
    cfg, params = model.cfg, model.params
    cps = ref.text_to_cps(case["text"])
    ids = model.token_ids(cps)
    known = [i >= ref.NSPECIAL for i in ids]
    n, L, H, d = len(ids), cfg.layers, cfg.heads, cfg.dim
    hs = d // H
    toks = torch.tensor([ids], dtype=torch.long)
    path = os.path.join(OUT, case["name"] + ".golden")
    with open(path, "w") as f, torch.no_grad():
        write_tensor(f, "ids", [float(t) for t in ids])
        trace = []
        _, atts, scores = ref.forward(cfg, params, toks, trace=trace)
        att = torch.stack([a[0] for a in atts])  # (L,H,n,n)
        write_tensor(f, "att", att)
        qi, kj = case["cell"]
        write_tensor(f, "cell", [qi, kj])
        q = torch.stack([t["q"][0, :, qi] for t in trace])  # (L,H,hs)
        k = torch.stack([t["k"][0, :, kj] for t in trace])
        write_tensor(f, "q", q)
        write_tensor(f, "k", k)
        # value norms: |v_j[m] proj_w[:, j*hs:(j+1)*hs]^T|
        vn = torch.zeros(L, H, n)
        for l in range(L):
            wo = params["h%d.proj_w" % l].double()
            for h in range(H):
                v = trace[l]["v"][0, h].double()  # (n,hs)
                vn[l, h] = (v @ wo[:, h * hs:(h + 1) * hs].T).norm(dim=-1).float()
        write_tensor(f, "value_norms", vn)
        roles = torch.tensor([[role_scores(att[l, h], cps, cfg.causal) for h in range(H)]
                              for l in range(L)])
        write_tensor(f, "roles", roles)
        write_tensor(f, "mean", att.double().mean(dim=1))
        write_tensor(f, "max", att.max(dim=1).values)
        write_tensor(f, "all", att.double().mean(dim=(0, 1)))
        eye = torch.eye(n, dtype=torch.float64)
        R, rollout = None, []
        for l in range(L):
            A = att[l].double().mean(dim=0) / 2 + eye / 2
            R = A if R is None else A @ R
            rollout.append(R)
        write_tensor(f, "rollout", torch.stack(rollout))
        spans = words(cps)
        write_tensor(f, "word_spans", torch.tensor(spans, dtype=torch.float32))
        write_tensor(f, "word_att", torch.stack([torch.stack(
            [word_attention(att[l, h], spans) for h in range(H)]) for l in range(L)]))
        off = case["ablate"]
        write_tensor(f, "ablate", torch.tensor(off, dtype=torch.float32))
        _, atts_off, _ = ref.forward(cfg, params, toks, ablate=off)
        write_tensor(f, "att_ablated", torch.stack([a[0] for a in atts_off]))
        before, count = text_loss(model, ids, known, ())
        after, _ = text_loss(model, ids, known, off)
        write_tensor(f, "loss", [before, after, count])
    print("%s: %d tokens, %d words, loss %.4f -> %.4f over %d positions" % (
        path, n, len(spans), before, after, count))


def main():
    torch.set_num_threads(1)
    for case in CASES:
        gen(case)


if __name__ == "__main__":
    main()
