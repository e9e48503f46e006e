"""The labeller's role scores of a head (attnview(1), HEAD ROLES; src/core/
roles.c, head_roles): the fifteen scores in [0, 1] the training timeline
records, each a share of the rows whose strongest key fits the role
(keyword's and same script's with chance taken out), computed as attnview
computes them. Only the scores: the label is
attnview's (role_decide).
"""

import unicodedata

NKINDS = 15
(PREVIOUS, NEXT, SELF, FIRST, DELIMITER, DUPLICATE, INDUCTION, LOCAL, OFFSET, KEYWORD,
 SCRIPT, PARALLEL, MIRROR, BROAD, WORDSTART) = range(NKINDS)
SPECIAL_CP = 0x110000
TOK_UNK = 1
FOCUS = 3.0     # times an even share: a row looks at its strongest key
MIN_ROWS = 3    # rows a score needs
FAR = 3         # the least distance of a duplicate's, an induction or a line-parallel key

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


class Text:
    """What the scores need to know about a text of n (codepoint, id) pairs,
    made once for every head (role_text_init)."""

    def __init__(self, tok):
        n = self.n = len(tok)
        self.cps = cps = [cp for cp, _ in tok]
        ids = [t for _, t in tok]
        # the same character as the model tells them: the same id (every
        # character outside the vocabulary is the one unknown token); the
        # mask is no character: each is a class of its own
        key = [(-1, i) if cp >= SPECIAL_CP and t != TOK_UNK else (t, 0)
               for i, (cp, t) in enumerate(tok)]
        first = {}
        self.cls = [first.setdefault(key[i], i) for i in range(n)]
        # copies for duplicate and induction: an unknown character has none
        self.copy = [i if t == TOK_UNK else c for i, (c, (_, t)) in enumerate(zip(self.cls, tok))]
        self.delim = [is_delimiter(c) for c in cps]
        # the model cannot tell an unknown character's script
        self.script = [0 if t == TOK_UNK else _script(c) for c, t in tok]
        # the mask: no keyword (the unknown token, written as its special
        # codepoint by a training summary, is)
        self.special = [c >= SPECIAL_CP and t != TOK_UNK for c, t in tok]
        del ids
        self.prev_delim = [None] * n
        self.word = [0] * n
        for i in range(1, n):
            self.prev_delim[i] = i - 1 if self.delim[i - 1] else self.prev_delim[i - 1]
            self.word[i] = i if self.delim[i - 1] else self.word[i - 1]
        self.next_delim = [None] * n
        for i in range(n - 2, -1, -1):
            self.next_delim[i] = i + 1 if self.delim[i + 1] else self.next_delim[i + 1]
        self.lines = self._lines()
        self.nscripts = len({s for s in self.script if s})

    def _lines(self):
        """Line starts: at line breaks; else verses closed by punctuation when
        most of them (two or more) have one length of four or more."""
        cps, n = self.cps, self.n
        breaks = 10 in cps
        starts = [0] + [i + 1 for i in range(n - 1)
                        if (cps[i] == 10 if breaks else _ends_line(cps[i]))]
        if not breaks:
            lens = [b - a for a, b in zip(starts, starts[1:] + [n])]
            same = max([lens.count(x) for x in lens if x >= 4] or [0])
            if len(starts) < 2 or 2 * same < len(starts) + 1:
                return [0]
        return starts

    def parallel(self, i, causal):
        """Row i's place in the line before and in the line after (a
        causal row sees no line after): each a key or None."""
        starts = self.lines
        if len(starts) < 2:
            return [None, None]
        ends = starts[1:] + [self.n]
        line = max(k for k, a in enumerate(starts) if a <= i)
        keys = [None, None]
        for side, m in enumerate((line - 1,) if causal else (line - 1, line + 1)):
            if 0 <= m < len(starts):
                j = starts[m] + i - starts[line]
                if j < ends[m] and abs(j - i) >= FAR:
                    keys[side] = j
        return keys


def _looks_at(A, causal):
    """Each row's key: its only largest weight when it holds at least
    min(FOCUS / v, (1 + 1/v) / 2) of the row (v visible keys); else None."""
    best = []
    for i, row in enumerate(A.tolist()):
        vis = i + 1 if causal else len(row)
        if vis < 2:
            best.append(None)
            continue
        top = max(row[:vis])
        j = row.index(top)
        focus = min(FOCUS / vis, 0.5 * (1 + 1 / vis))
        unique = row[:vis].count(top) == 1
        best.append(j if unique and top >= focus else None)
    return best


def _share(hits, rows):
    return hits / rows if rows >= MIN_ROWS else 0.0


def scores(A, x, causal):
    """A: the n x n weights of a head (a float tensor, masked cells 0) on the
    text x (Text). The fifteen scores, role order (head_roles)."""
    n = x.n
    s = [0.0] * NKINDS
    if n <= 0:
        return s
    best = _looks_at(A, causal)
    choice = [i for i in range(n) if (i + 1 if causal else n) >= 2]

    def sees(i, j):
        return 0 <= j < n and not (causal and j > i)

    same = lambda i, j: x.copy[i] == x.copy[j]  # noqa: E731
    # the first place of each character's run of itself: in "Hmmmm" an m
    # three to the left is a copy wherever a row of the run looks
    run = list(range(n))
    for i in range(1, n):
        if same(i, i - 1):
            run[i] = run[i - 1]
    hits, rows = [0] * NKINDS, [0] * NKINDS

    def add(r, eligible, fits):
        if eligible:
            rows[r] += 1
            hits[r] += bool(fits)

    delim_places, word_places = set(), set()
    # a band's test: the role's rows within two places of their key, the
    # rows whose key is FAR or more away and those of them that look there
    band = {DELIMITER: [0, 0, 0], WORDSTART: [0, 0, 0]}  # near, far, far hits
    par = [[0, 0], [0, 0]]  # rows with a line before (after), those on their place
    copy_on = {DUPLICATE: {}, INDUCTION: {}}  # their rows that look at each key
    ind_chance = 0.0
    for i in choice:
        b = best[i]
        near = [j for j in (x.prev_delim[i], x.next_delim[i]) if j is not None and sees(i, j)]
        # a row with a key to choose that is no mark (no copy): in a text of
        # spaces looking at one is what looking anywhere gives
        letter = any(sees(i, j) and j != i and not x.delim[j] for j in range(n))
        in_word = not x.delim[i] and x.word[i] <= i - 2
        pk = x.parallel(i, causal)
        far = [j for j in range(n) if sees(i, j) and abs(j - i) >= FAR]
        add(PREVIOUS, i >= 1, b == i - 1)
        add(NEXT, sees(i, i + 1), b is not None and b == i + 1)
        add(SELF, True, b == i)
        add(FIRST, i >= 1, b == 0)
        add(LOCAL, True, b is not None and abs(b - i) <= 2)
        add(BROAD, True, b is None)
        dup = (any(same(j, i) and run[j] != run[i] for j in far)
               and not all(same(j, i) for j in far),
               b is not None and abs(b - i) >= FAR and same(b, i) and run[b] != run[i])
        # a key after an earlier copy that is not itself one (in a run of
        # one character every key follows a copy)
        ind_keys = sum(1 for j in far if j >= 1 and j - 1 < i and same(j - 1, i)
                       and not same(j, i))
        ind = (ind_keys > 0,
               b is not None and b >= 1 and abs(b - i) >= FAR and b - 1 < i and same(b - 1, i)
               and not same(b, i))
        if ind_keys:  # looking anywhere: its induction keys among the keys it sees
            ind_chance += ind_keys / (i + 1 if causal else n)
        add(DUPLICATE, *dup)
        add(INDUCTION, *ind)
        for r, (eligible, fits) in ((DUPLICATE, dup), (INDUCTION, ind)):
            if eligible and fits:
                copy_on[r][b] = copy_on[r].get(b, 0) + 1
        on_mark = b is not None and b in near
        add(DELIMITER, bool(near) and letter, on_mark)
        add(WORDSTART, in_word, b == x.word[i])
        add(PARALLEL, pk != [None, None], b is not None and b in pk)
        for side in (0, 1):
            par[side][0] += pk[side] is not None
            par[side][1] += pk[side] is not None and b == pk[side]
        if near and letter and on_mark:
            delim_places.add(b)
            band[DELIMITER][0] += abs(b - i) <= 2
        if near and letter and not x.delim[i] and all(abs(j - i) >= FAR for j in near):
            band[DELIMITER][1] += 1
            band[DELIMITER][2] += on_mark
        if in_word and b == x.word[i]:
            word_places.add(b)
            band[WORDSTART][0] += i - b <= 2
        if in_word and x.word[i] <= i - FAR:
            band[WORDSTART][1] += 1
            band[WORDSTART][2] += b == x.word[i]
    for r in range(NKINDS):
        s[r] = _share(hits[r], rows[r])
    if n <= 3:  # every key within two places of every row: no room for a band
        s[LOCAL] = 0.0
    if 4 * rows[INDUCTION] < len(choice) or hits[INDUCTION] < MIN_ROWS:
        s[INDUCTION] = 0.0  # too few rows after a copy to show it
    if 4 * rows[DUPLICATE] < len(choice) or hits[DUPLICATE] < MIN_ROWS:  # too few to show it
        s[DUPLICATE] = 0.0
    if 4 * rows[WORDSTART] < len(choice):  # too few rows inside a word
        s[WORDSTART] = 0.0
    if 4 * rows[PARALLEL] < len(choice):  # too few rows with a far place in a line
        s[PARALLEL] = 0.0
    # line-parallel also over one side's rows alone, a side with half the
    # rows or more: a head may read the line before, another the line after
    for side_rows, side_hits in par:
        if 2 * side_rows >= len(choice):
            s[PARALLEL] = max(s[PARALLEL], _share(side_hits, side_rows))
    if len(delim_places) < 2:
        s[DELIMITER] = 0.0
    if len(word_places) < 2:
        s[WORDSTART] = 0.0
    # a band explains the role: local holds as many rows, most of the
    # role's rows look within two places, and of the rows whose key is FAR
    # or more away (3 or more) under half look there
    for r, (near_hits, far, far_hits) in band.items():
        if (s[r] > 0 and s[LOCAL] >= s[r] and 2 * near_hits >= hits[r] and far >= 3
                and 2 * far_hits < far):
            s[r] = 0.0
    # one key for half the rows or more is a column (keyword or first),
    # neither a delimiter nor a word start
    on_key = {}
    for i in choice:
        if best[i] is not None:
            on_key[best[i]] = on_key.get(best[i], 0) + 1
    if choice and 2 * max(on_key.values(), default=0) >= len(choice):
        s[DELIMITER] = s[WORDSTART] = 0.0
        # a column's rows are the column's: induction and duplicate rows
        # on it show no copying unless the role holds without them
        column = min(k for k, v in on_key.items() if v == max(on_key.values()))
        for r in (INDUCTION, DUPLICATE):
            on = copy_on[r].get(column, 0)
            if s[r] > 0 and on > 0 and _share(hits[r] - on, rows[r]) < 0.5 - 1e-9:
                s[r] = 0.0
    # induction's hits mostly on one key look at a column, not each after
    # its own copy: induction holds only if it clears its bar without them
    on = max(copy_on[INDUCTION].values(), default=0)
    if s[INDUCTION] > 0 and 2 * on > hits[INDUCTION] and \
            _share(hits[INDUCTION] - on, rows[INDUCTION]) < 0.5 - 1e-9:
        s[INDUCTION] = 0.0
    # induction's rows twice as often after a copy as looking anywhere
    # gives: in "abababab" every b follows an a
    if rows[INDUCTION] and s[INDUCTION] < 2 * ind_chance / rows[INDUCTION]:
        s[INDUCTION] = 0.0
    # k away, where half the rows or more can look there
    s[OFFSET] = max([_share(sum(best[i] == i + k for i in choice if sees(i, i + k)), seen)
                     for d in range(2, 9) for k in (-d, d)
                     for seen in [sum(1 for i in choice if sees(i, i + k))]
                     if 2 * seen >= len(choice)], default=0.0)
    by_cls = {}
    for i in choice:
        b = best[i]
        if b is not None and not x.special[b]:
            by_cls[x.cls[b]] = by_cls.get(x.cls[b], 0) + 1
    # the one or two characters most rows look at (ties: the rarer in the
    # text, then the earlier)
    copies = {}
    for c in x.cls:
        copies[c] = copies.get(c, 0) + 1
    top = sorted(by_cls.items(), key=lambda kv: (-kv[1], copies[kv[0]], kv[0]))[:2]
    if len(top) == 2 and 4 * top[1][1] < top[0][1] + top[1][1]:
        top = top[:1]
    # chance: the mean share of a row's keys that are their copies
    keys = {c for c, _ in top}
    chance = sum(sum(x.cls[j] in keys for j in range(n) if sees(i, j))
                 / sum(1 for j in range(n) if sees(i, j)) for i in choice)
    s[KEYWORD] = _above_chance(_share(sum(k for _, k in top), len(choice)),
                               chance / len(choice) if choice else 0.0)
    # half the rows or more on one place of the keyword's character: a
    # column, whose chance is the place's (1 / the keys a row sees)
    if choice and on_key and top:
        most = max(on_key.values())
        column = min(k for k, v in on_key.items() if v == most)
        if 2 * most >= len(choice) and x.cls[column] == top[0][0]:
            if causal:
                pc = sum(1.0 / (i + 1) for i in range(max(column, 1), n)) / len(choice)
            else:
                pc = 1.0 / n
            s[KEYWORD] = max(s[KEYWORD], _above_chance(_share(most, len(choice)), pc))
    s[SCRIPT] = _script_score(x, best, choice, sees)
    s[MIRROR] = 0.0
    for c in range(2 * n - 1):
        mrows = [i for i in choice if c - i != i and sees(i, c - i)]
        mhits = sum(best[i] == c - i for i in mrows)
        if mhits >= MIN_ROWS and 2 * len(mrows) >= len(choice):
            s[MIRROR] = max(s[MIRROR], _share(mhits, len(mrows)))
    return [min(max(v, 0.0), 1.0) for v in s]


def _above_chance(S, C):
    """A share S beyond the share C looking anywhere gives, in [0, 1]."""
    return min(1.0, max(0.0, (S - C) / (1 - C))) if 1 - C >= 0.05 else 0.0


def _script_score(x, best, choice, sees):
    """Own script against an even spread's share, in a text of two scripts."""
    if x.nscripts < 2:
        return 0.0
    rows = hits = 0
    chance = 0.0
    for i in choice:
        keys = [j for j in range(x.n) if sees(i, j) and x.script[j]]
        if not x.script[i] or not keys:
            continue
        rows += 1
        chance += sum(x.script[j] == x.script[i] for j in keys) / len(keys)
        hits += best[i] is not None and x.script[best[i]] == x.script[i]
    if 4 * rows < len(choice):  # too few rows with a script the model can tell
        return 0.0
    return _above_chance(_share(hits, rows), chance / rows if rows else 1.0)
