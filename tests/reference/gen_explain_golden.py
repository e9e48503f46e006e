#!/usr/bin/python3
"""Golden files for what attnview computes from the weights (man 5
attnview, section 7; man 1 attnview, HEAD ROLES): the q.k breakdown's q and
k, value norms, ablation (attention and loss, zeroed and mean-ablated), head role scores, aggregates,
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
         "local", "offset", "keyword", "script", "parallel", "mirror", "broad", "word_start")


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


FOCUS, MIN_ROWS, FAR = 3.0, 3, 3


def looks_at(A, causal):
    """Each row's key (its only largest weight, when that holds at least
    min(3/v, (1 + 1/v)/2) of the row, v its visible keys) or None, and how
    near the row's weights come to changing that (the margin: the gap to the
    second largest or to the threshold, infinite for rows without a choice)."""
    n = A.shape[0]
    best, margin = [None] * n, [math.inf] * n
    for i in range(n):
        vis = i + 1 if causal else n
        if vis < 2:
            continue
        row = sorted(((A[i, j].item(), -j) for j in range(vis)), reverse=True)
        (top, j), second = row[0], row[1][0]
        focus = min(FOCUS / vis, 0.5 * (1 + 1 / vis))
        margin[i] = min(top - second, abs(top - focus))
        if top > second and top >= focus:
            best[i] = -j
    return best, margin


def share(hits, rows):
    return hits / rows if rows >= MIN_ROWS else 0.0


def text_lines(cps):
    """Line starts: at line breaks; without one, verses closed by punctuation
    when most of them (two or more) have one length of four or more."""
    n = len(cps)
    breaks = 0x0A in cps
    starts = [0] + [i + 1 for i in range(n - 1)
                    if (cps[i] == 0x0A if breaks
                        else is_delimiter(cps[i]) and cps[i] not in (0x20, 0x09, 0x3000))]
    if not breaks:
        lens = [b - a for a, b in zip(starts, starts[1:] + [n])]
        same = max([lens.count(x) for x in lens if x >= 4] or [0])
        if len(starts) < 2 or 2 * same < len(starts) + 1:
            return [0]
    return starts


def parallel_keys(starts, i, causal, n):
    """The same place as i in the line before and in the line after
    (None where there is none; a causal row sees no line after)."""
    if len(starts) < 2:
        return [None, None]
    ends = starts[1:] + [n]
    line = max(k for k, a in enumerate(starts) if a <= i)
    keys = [None, None]
    for side, m in enumerate((line - 1,) if causal else (line - 1, line + 1)):
        if 0 <= m < len(starts):
            j = starts[m] + i - starts[line]
            if j < ends[m] and abs(j - i) >= FAR:
                keys[side] = j
    return keys


def role_scores(A, cps, causal, ids):
    """The fifteen scores of one head (n,n), from the definitions of man 1
    attnview, HEAD ROLES, and each row's margin (looks_at)."""
    n = A.shape[0]
    # characters as the model tells them apart, for the keyword: every one
    # outside the vocabulary (id 1) is the same unknown character; for
    # duplicate and induction such a character has no copy (co)
    ch = [-1 if t == 1 else c for c, t in zip(cps, ids)]
    co = [-2 - i if t == 1 else c for i, (c, t) in enumerate(zip(cps, ids))]
    A = A.double()
    best, margin = looks_at(A, causal)
    choice = [i for i in range(n) if (i + 1 if causal else n) >= 2]
    N = len(choice)
    starts = text_lines(cps)

    def sees(i, j):
        return 0 <= j < n and not (causal and j > i)

    count = {r: [0, 0] for r in ROLES}
    # the first place of each character's run of itself: in "Hmmmm" an m
    # three to the left is a copy wherever a row of the run looks
    run = list(range(n))
    for i in range(1, n):
        if co[i] == co[i - 1]:
            run[i] = run[i - 1]

    def add(r, eligible, fits):
        if eligible:
            count[r][1] += 1
            count[r][0] += bool(fits)

    prev_delim = [max([j for j in range(i) if is_delimiter(cps[j])], default=None)
                  for i in range(n)]
    next_delim = [min([j for j in range(i + 1, n) if is_delimiter(cps[j])], default=None)
                  for i in range(n)]
    word = [max([j + 1 for j in range(i) if is_delimiter(cps[j])], default=0) for i in range(n)]
    delim_places, word_places = set(), set()
    # for the band test: each role's rows within two places of their key,
    # and the rows whose key lies FAR or more away, and their hits
    band = {r: {"near": 0, "far": 0, "far_hits": 0} for r in ("delimiter", "word_start")}
    # line-parallel on each side alone: hits and rows of the line before, after
    sides = [[0, 0], [0, 0]]
    # the duplicate and induction rows that look at each key
    on_key_of = {"duplicate": {}, "induction": {}}
    ind_chance = 0.0
    for i in choice:
        b = best[i]
        add("previous", i >= 1, b == i - 1)
        add("next", sees(i, i + 1), b is not None and b == i + 1)
        add("self", True, b == i)
        add("first", i >= 1, b == 0)
        add("local", True, b is not None and abs(b - i) <= 2)
        add("broad", True, b is None)
        far = [j for j in range(n) if sees(i, j) and abs(j - i) >= FAR]
        # a copy that far outside the row's run, and a key as far that is
        # none (in a text of one character looking at a copy is looking
        # anywhere)

        def dup_copy(j):
            return co[j] == co[i] and run[j] != run[i]

        dup = (any(dup_copy(j) for j in far) and any(co[j] != co[i] for j in far),
               b is not None and abs(b - i) >= FAR and dup_copy(b))
        # a key after an earlier copy that is not a copy itself (in a run
        # of one character every key follows a copy)
        ind_keys = sum(1 for j in far if j >= 1 and j - 1 < i and co[j - 1] == co[i]
                       and co[j] != co[i])
        ind = (ind_keys > 0,
               b is not None and b >= 1 and abs(b - i) >= FAR and b - 1 < i
               and co[b - 1] == co[i] and co[b] != co[i])
        # looking anywhere: its induction keys among the keys it sees
        ind_chance += ind_keys / (i + 1 if causal else n) if ind_keys else 0.0
        add("duplicate", *dup)
        add("induction", *ind)
        for r, (eligible, fits) in (("duplicate", dup), ("induction", ind)):
            if eligible and fits:
                on_key_of[r][b] = on_key_of[r].get(b, 0) + 1
        near = [j for j in (prev_delim[i], next_delim[i]) if j is not None and sees(i, j)]
        # ... and a key other than the row that is no mark
        letter = any(sees(i, j) and j != i and not is_delimiter(cps[j]) for j in range(n))
        on_mark = b is not None and b in near
        add("delimiter", bool(near) and letter, on_mark)
        if near and letter:
            if on_mark:
                delim_places.add(b)
                band["delimiter"]["near"] += abs(b - i) <= 2
            if not is_delimiter(cps[i]) and all(abs(j - i) >= FAR for j in near):
                band["delimiter"]["far"] += 1
                band["delimiter"]["far_hits"] += on_mark
        in_word = not is_delimiter(cps[i]) and word[i] <= i - 2
        add("word_start", in_word, b == word[i])
        if in_word and b == word[i]:
            word_places.add(b)
            band["word_start"]["near"] += i - b <= 2
        if in_word and word[i] <= i - FAR:
            band["word_start"]["far"] += 1
            band["word_start"]["far_hits"] += b == word[i]
        pk = parallel_keys(starts, i, causal, n)
        add("parallel", pk != [None, None], b is not None and b in pk)
        for side in (0, 1):
            sides[side][1] += pk[side] is not None
            sides[side][0] += pk[side] is not None and b == pk[side]
    s = {r: share(*count[r]) for r in ROLES}
    # in three characters every key is within two places: no band to see
    if n <= 3:
        s["local"] = 0.0
    # induction needs a quarter of the rows to have a character after a copy
    if 4 * count["induction"][1] < N or count["induction"][0] < 3:
        s["induction"] = 0.0
    # so does duplicate, a copy to look at, and three rows on one
    if 4 * count["duplicate"][1] < N or count["duplicate"][0] < 3:
        s["duplicate"] = 0.0
    # and word start, rows two places or more into their word
    if 4 * count["word_start"][1] < N:
        s["word_start"] = 0.0
    # and line-parallel, rows whose place in another line is FAR or more away
    if 4 * count["parallel"][1] < N:
        s["parallel"] = 0.0
    # line-parallel: also one side's rows alone, a side with half the rows
    for side_hits, side_rows in sides:
        if 2 * side_rows >= N:
            s["parallel"] = max(s["parallel"], share(side_hits, side_rows))
    if len(delim_places) < 2:
        s["delimiter"] = 0.0
    if len(word_places) < 2:
        s["word_start"] = 0.0
    # a band explains the role: local holds as many rows, most of the
    # role's rows are within two places of their key, and under half of the
    # rows whose key is FAR or more away (3 such rows or more) look there
    for r, c in band.items():
        if (s[r] > 0 and s["local"] >= s[r] and 2 * c["near"] >= count[r][0]
                and c["far"] >= 3 and 2 * c["far_hits"] < c["far"]):
            s[r] = 0.0
    # one key for half the rows or more is a column: neither of the two
    column = max([sum(best[i] == j for i in choice) for j in range(n)], default=0)
    if 2 * column >= N:
        s["delimiter"] = s["word_start"] = 0.0
        # ... and its rows show no copying unless the role holds without them
        key = min(j for j in range(n) if sum(best[i] == j for i in choice) == column)
        for r in ("induction", "duplicate"):
            on = on_key_of[r].get(key, 0)
            if s[r] > 0 and on > 0 and share(count[r][0] - on, count[r][1]) < 0.5 - 1e-9:
                s[r] = 0.0
    # induction's hits mostly on one key are a column's: induction holds
    # only if it clears its bar without them
    on = max(on_key_of["induction"].values(), default=0)
    if (s["induction"] > 0 and 2 * on > count["induction"][0]
            and share(count["induction"][0] - on, count["induction"][1]) < 0.5 - 1e-9):
        s["induction"] = 0.0
    # twice as often after a copy as chance: in "abababab" every b
    # follows an earlier a
    if count["induction"][1] and s["induction"] < 2 * ind_chance / count["induction"][1]:
        s["induction"] = 0.0
    # offset: the best k by share of the rows that see i + k
    # (k where half the rows or more can look k away)
    s["offset"] = max([share(sum(best[i] == i + k for i in choice if sees(i, i + k)), seen)
                       for d in range(2, 9) for k in (-d, d)
                       for seen in [sum(1 for i in choice if sees(i, i + k))]
                       if 2 * seen >= N], default=0.0)
    # keyword: the one or two characters most rows look at
    by_char = {}
    for i in choice:
        if best[i] is not None and ch[best[i]] < 0x110000:
            by_char[ch[best[i]]] = by_char.get(ch[best[i]], 0) + 1
    # ties: the rarer in the text, then the one that comes first
    top = sorted(by_char.items(),
                 key=lambda kv: (-kv[1], ch.count(kv[0]), ch.index(kv[0])))[:2]
    if len(top) == 2 and 4 * top[1][1] < top[0][1] + top[1][1]:
        top = top[:1]
    # less what chance gives: the mean share of a row's visible keys that
    # are copies of those characters
    chars = {c for c, _ in top}
    chance = sum(sum(ch[j] in chars for j in range(n) if sees(i, j))
                 / sum(1 for j in range(n) if sees(i, j)) for i in choice) / N if N else 0.0
    S = share(sum(k for _, k in top), N)
    s["keyword"] = min(1.0, max(0.0, (S - chance) / (1 - chance))) if 1 - chance >= 0.05 else 0.0
    # half the rows or more on one place of the keyword's character: a
    # column, against that place's chance, 1 / the keys a row sees
    counts = [sum(best[i] == j for i in choice) for j in range(n)]
    if N and top and 2 * max(counts) >= N:
        key = counts.index(max(counts))
        if ch[key] == top[0][0]:
            if causal:
                pc = sum(1.0 / (i + 1) for i in range(max(key, 1), n)) / N
            else:
                pc = 1.0 / n
            v = (share(max(counts), N) - pc) / (1 - pc) if 1 - pc >= 0.05 else 0.0
            s["keyword"] = max(s["keyword"], min(1.0, max(0.0, v)))
    # script: own script against an even spread's share, in a text of two
    # (an unknown character's script the model cannot tell)
    sc = [None if t == 1 else script_of(c) for c, t in zip(cps, ids)]
    s["script"] = 0.0
    if len({x for x in sc if x is not None}) >= 2:
        rows = hits = 0
        chance = 0.0
        for i in choice:
            keys = [j for j in range(n) if sees(i, j) and sc[j] is not None]
            if sc[i] is None or not keys:
                continue
            rows += 1
            chance += sum(sc[j] == sc[i] for j in keys) / len(keys)
            hits += best[i] is not None and sc[best[i]] == sc[i]
        C = chance / rows if rows else 1.0
        S = share(hits, rows)
        s["script"] = min(1.0, max(0.0, (S - C) / (1 - C))) if 1 - C >= 0.05 else 0.0
        if 4 * rows < N:  # under a quarter of the rows have a known script
            s["script"] = 0.0
    # mirror: the anti-diagonal c that most of its rows look at
    s["mirror"] = 0.0
    for c in range(2 * n - 1):
        rows = [i for i in choice if c - i != i and sees(i, c - i)]
        hits = sum(best[i] == c - i for i in rows)
        if hits >= MIN_ROWS and 2 * len(rows) >= N:
            s["mirror"] = max(s["mirror"], share(hits, len(rows)))
    return [s[r] for r in ROLES], margin


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


def mean_hook(cfg, ablate):
    """Mean-ablation (man 5 attnview, section 7) as a forward hook: each
    switched-off head's output at every row becomes its mean over the
    text's rows, a causal row's over the rows up to it."""
    def hook(layer, y):
        off = [h for (l, h) in ablate if l == layer]
        if not off:
            return y
        y = y.clone()
        for h in off:
            v = y[:, h].double()  # (B,n,hs)
            if cfg.causal:
                count = torch.arange(1, v.shape[1] + 1, dtype=torch.float64)
                y[:, h] = (v.cumsum(dim=1) / count[None, :, None]).to(y.dtype)
            else:
                y[:, h] = v.mean(dim=1, keepdim=True).expand_as(v).to(y.dtype)
        return y
    return hook


def text_loss(model, ids, known, ablate, mean=False):
    """man 5 attnview, section 7: mean -ln p of the known characters; with
    mean, the heads of ablate mean-ablated instead of zeroed."""
    cfg, params = model.cfg, model.params
    toks = torch.tensor([ids], dtype=torch.long)
    total, count = 0.0, 0
    hook = mean_hook(cfg, ablate) if mean else None
    if mean:
        ablate = ()
    if cfg.causal:
        final, _, _ = ref.forward(cfg, params, toks, keep=False, ablate=ablate, hook=hook)
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
            final, _, _ = ref.forward(cfg, params, x, keep=False, ablate=ablate, hook=hook)
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
        scored = [[role_scores(att[l, h], cps, cfg.causal, ids) for h in range(H)]
                  for l in range(L)]
        write_tensor(f, "roles", torch.tensor([[s for s, _ in row] for row in scored]))
        # each row's margin: a row within the weights' bound of it may go
        # either way in binary32 (test_explain.c allows for those rows)
        write_tensor(f, "role_margins", torch.tensor(
            [[[min(x, 1e30) for x in m] for _, m in row] for row in scored], dtype=torch.float64))
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
        mean, _ = text_loss(model, ids, known, off, mean=True)
        write_tensor(f, "loss_mean", [mean])
    print("%s: %d tokens, %d words, loss %.4f -> %.4f (mean-ablated %.4f) over %d positions" % (
        path, n, len(spans), before, after, mean, count))


def main():
    torch.set_num_threads(1)
    for case in CASES:
        gen(case)


if __name__ == "__main__":
    main()
