"""The labeller's role scores of a head (attnview(1), HEAD ROLES; src/core/
roles.c, head_roles): the fourteen scores in [0, 1] the training timeline
records, computed in float64 as attnview computes them. Only the scores: the
label and its bars are attnview's.
"""

import math
import unicodedata

NKINDS = 14
(PREVIOUS, NEXT, SELF, FIRST, DELIMITER, DUPLICATE, INDUCTION, LOCAL, OFFSET, KEYWORD,
 SCRIPT, PARALLEL, MIRROR, BROAD) = range(NKINDS)
SPECIAL_CP = 0x110000
TOK_UNK = 1

_DELIM_CATEGORIES = {"Zs", "Zl", "Zp", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"}


def is_delimiter(cp):
    """cp_is_delimiter: a space, a line break or a punctuation mark."""
    if cp in (10, 9):
        return True
    if cp >= SPECIAL_CP or 0xD800 <= cp <= 0xDFFF:
        return False
    return unicodedata.category(chr(cp)) in _DELIM_CATEGORIES


def _ends_line(cp):
    return is_delimiter(cp) and cp not in (32, 9, 0x3000)


def _script(cp):
    if (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF
            or 0x20000 <= cp <= 0x3FFFF or cp == 0x3007):
        return 1
    if (65 <= cp <= 90 or 97 <= cp <= 122 or (0xC0 <= cp <= 0x24F and cp not in (0xD7, 0xF7))
            or 0x1E00 <= cp <= 0x1EFF):
        return 2
    if 0x3041 <= cp <= 0x30FF and cp != 0x30FB:
        return 3
    if 0xAC00 <= cp <= 0xD7AF or 0x1100 <= cp <= 0x11FF:
        return 4
    if 0x0400 <= cp <= 0x04FF:
        return 5
    if 0x0370 <= cp <= 0x03FF:
        return 6
    return 0


def _same(tok, i, j):
    return tok[i][1] == tok[j][1] and (tok[i][1] != TOK_UNK or tok[i][0] == tok[j][0])


class Text:
    """What the scores need to know about a text of n (codepoint, id) pairs,
    made once for every head (role_text_init)."""

    def __init__(self, tok):
        import torch
        n = self.n = len(tok)
        cps = [cp for cp, _ in tok]
        ids = torch.tensor([t for _, t in tok])
        cp = torch.tensor(cps)
        self.same = (ids[:, None] == ids[None, :]) & ((ids[:, None] != TOK_UNK)
                                                      | (cp[:, None] == cp[None, :]))
        self.idx = torch.arange(n)
        self.delim = torch.tensor([is_delimiter(c) for c in cps], dtype=torch.bool)
        self.cls = self.same.int().argmax(dim=1).tolist()  # the first equal token
        self.special = [c >= SPECIAL_CP for c in cps]
        self.script = torch.tensor([_script(c) for c in cps])
        self.line, self.col, self.start, self.length = [], [], [], []
        for i in range(n):
            if i == 0 or _ends_line(cps[i - 1]):
                self.start.append(i)
                self.length.append(0)
            self.line.append(len(self.start) - 1)
            self.col.append(self.length[-1])
            self.length[-1] += 1


def scores(A, x, causal):
    """A: the n x n weights of a head (a float64 tensor, masked cells 0) on
    the text x (Text). The fourteen scores, role order (head_roles's sums,
    as tensor operations)."""
    import torch
    n = x.n
    s = [0.0] * NKINDS
    if n <= 0:
        return s
    idx = x.idx
    vis = ~(idx[None, :] > idx[:, None]) if causal else torch.ones(n, n, dtype=torch.bool)
    eye = idx[:, None] == idx[None, :]
    s[DELIMITER] = float(A[:, x.delim].sum()) / n
    s[DUPLICATE] = float(A[x.same & ~eye].sum()) / n
    prev_same = torch.zeros(n, n, dtype=torch.bool)  # key j: tok[j - 1] is the query's
    prev_same[:, 1:] = x.same[:, :-1]
    s[INDUCTION] = float(A[prev_same & (idx[None, :] - 1 != idx[:, None])].sum()) / n
    s[LOCAL] = float(A[(idx[:, None] - idx[None, :]).abs() <= 2].sum()) / n
    pos = A > 0
    ent = -float((A[pos] * torch.log(A[pos])).sum())
    s[BROAD] = ent / n / math.log(n) if n > 1 else 0.0
    s[PREVIOUS] = float(torch.diagonal(A, -1).sum()) / n
    s[NEXT] = float(torch.diagonal(A, 1).sum()) / n if not causal else 0.0
    s[SELF] = float(torch.diagonal(A).sum()) / n
    s[FIRST] = float(A[:, 0].sum()) / n
    # each row's largest visible weight's key, -1 on a tie
    Am = torch.where(vis, A, torch.full_like(A, -1.0))
    top = Am.max(dim=1)
    unique = (Am == top.values[:, None]).sum(dim=1) == 1
    # rows whose single largest weight is k away, k = d + n (bincount's index)
    hits = torch.bincount((top.indices - idx)[unique] + n, minlength=2 * n + 1).tolist()
    for d in range(2, 9):
        for k in (-d, d):
            if causal and k > 0:
                continue  # the key is masked in every row: no rows
            rows = n - abs(k)  # the rows with key i + k in the text
            v = hits[k + n] / rows if rows >= 3 else 0.0
            if v > s[OFFSET]:
                s[OFFSET] = v
    # keyword: the weight on each character, all rows
    col = A.sum(dim=0).tolist()
    mass = [0.0] * n
    for j in range(n):
        mass[x.cls[j]] += col[j]
    c1 = c2 = -1
    for c in range(n):
        if x.cls[c] != c or x.special[c]:
            continue
        if c1 < 0 or mass[c] > mass[c1]:
            c2, c1 = c1, c
        elif c2 < 0 or mass[c] > mass[c2]:
            c2 = c
    if c1 >= 0:
        s[KEYWORD] = (mass[c1] + (mass[c2] if c2 >= 0 else 0)) / n
    # script
    sc = x.script
    has = (sc[None, :] != 0) & vis
    own = has & (sc[None, :] == sc[:, None])
    wany = (A * has).sum(dim=1)
    rows = (sc != 0) & (wany > 0)
    if bool(rows.any()):
        S = float(((A * own).sum(dim=1)[rows] / wany[rows]).mean())
        U = float((own.sum(dim=1)[rows].double() / has.sum(dim=1)[rows].double()).mean())
    else:
        S, U = 0.0, 1.0
    v = (S - U) / (1 - U) if 1 - U >= 0.05 else 0.0
    s[SCRIPT] = min(max(v, 0.0), 1.0)
    # parallel: the same place in the line before and after
    rows = 0
    w = 0.0
    Al = None
    for i in range(n):
        keys = []
        for dl in (-1, 1):
            ln = x.line[i] + dl
            if 0 <= ln < len(x.start) and x.col[i] < x.length[ln]:
                j = x.start[ln] + x.col[i]
                if not causal or j <= i:
                    keys.append(j)
        if keys:
            Al = Al if Al is not None else A.tolist()
            rows += 1
            w += sum(Al[i][j] for j in keys)
    s[PARALLEL] = w / rows if rows >= 1 and 4 * rows >= n else 0.0
    # mirror: the anti-diagonal with the most weight
    anti = torch.zeros(2 * n - 1, dtype=A.dtype).index_add_(
        0, (idx[:, None] + idx[None, :]).flatten(), A.flatten())
    for v in (anti / n).tolist():
        if v > s[MIRROR]:
            s[MIRROR] = v
    return [min(v, 1.0) for v in s]
