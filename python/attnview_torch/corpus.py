"""A training corpus as attnview reads it (src/train/corpus.c, src/core/vocab.c):
cleaned text, the training/validation split, the vocabulary and the text as
vocabulary ids.

  - Several corpus files are one text: their concatenation, cleaned as one
    stream (what `cat A B > C; attnview --train C` reads).
  - Split: 5% of the characters (rounded up) are the validation text, in
    pieces spread evenly over it (gather_pieces, as corpus.h), or, with a
    validation file, all of the corpus is training text.
  - Vocabulary (vocab_build): the characters of the training split seen at
    least min_count times, most frequent first, ties by increasing
    codepoint, at most max_vocab ids including the three special tokens
    (pad, unk, mask) that come first. Other characters are the unknown id.
So the same corpus and options give the vocabulary attnview gives, id for id.
"""

import hashlib
import os
import stat
import unicodedata

import torch

from .model import MAX_VOCAB, NSPECIAL, SPECIAL_CP, TOK_UNK
from .modelfile import is_control
from .shown import quote
from .tokenizer import Cleaner

CHUNK = 1 << 22  # bytes read at a time
NCP = 0x110000


class CorpusError(ValueError):
    """A corpus attnview would refuse; the message says what to change."""


def _open_regular(path, what="corpus"):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as e:
        raise CorpusError("cannot open %s %s: %s" % (what, quote(path), e.strerror)) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise CorpusError("%s is not a regular file: the corpus is read twice, so give a file "
                          "(save a pipe's output to a file first)" % quote(path))
    return fd, st


def _text_to_cps(s):
    """str -> int32 tensor of codepoints."""
    if not s:
        return torch.zeros(0, dtype=torch.int32)
    return torch.frombuffer(bytearray(s.encode("utf-32-le")), dtype=torch.int32)


def clean_files(paths):
    """Clean the files as one stream: (int32 codepoints, CleanStats)."""
    cl = Cleaner()
    parts = []
    for path in paths:
        fd, _ = _open_regular(path)
        try:
            while True:
                b = os.read(fd, CHUNK)
                if not b:
                    break
                parts.append(_text_to_cps(cl.feed(b)))
        except OSError as e:
            raise CorpusError("cannot read corpus %s: %s" % (quote(path), e.strerror)) from None
        finally:
            os.close(fd)
    parts.append(_text_to_cps(cl.finish()))
    cps = torch.cat(parts) if parts else torch.zeros(0, dtype=torch.int32)
    return cps, cl.stats


def count_codepoints(cps):
    """Occurrences of every codepoint (int64, 0x110000 entries)."""
    if len(cps) == 0:
        return torch.zeros(NCP, dtype=torch.int64)
    out = torch.zeros(NCP, dtype=torch.int64)
    for i in range(0, len(cps), 1 << 24):
        out += torch.bincount(cps[i:i + (1 << 24)].long(), minlength=NCP)
    return out


def _wanted_mask():
    """Codepoints a vocabulary may hold: scalar values that are not controls
    (LF excepted) nor U+FEFF (vocab.c's wanted())."""
    ok = torch.ones(NCP, dtype=torch.bool)
    ok[0xD800:0xE000] = False
    for cp in range(0xA0):
        if is_control(cp) and cp != 0x0A:
            ok[cp] = False
    ok[0xFEFF] = False
    return ok


def build_vocab(counts, min_count=1, max_vocab=0):
    """vocab_build: [SPECIAL_CP, SPECIAL_CP+1, SPECIAL_CP+2] then the
    characters seen at least min_count times, by decreasing count, ties by
    increasing codepoint, at most max_vocab entries in all (0: no limit)."""
    if max_vocab and max_vocab <= NSPECIAL:
        raise CorpusError("a maximum vocabulary size of %d leaves no room for characters after "
                          "the %d special tokens; give at least %d"
                          % (max_vocab, NSPECIAL, NSPECIAL + 1))
    if max_vocab > MAX_VOCAB:
        raise CorpusError("a maximum vocabulary size of %d is above the limit of %d; give at "
                          "most %d" % (max_vocab, MAX_VOCAB, MAX_VOCAB))
    max_vocab = max_vocab or MAX_VOCAB
    min_count = max(1, min_count)
    cps = ((counts >= min_count) & _wanted_mask()).nonzero().squeeze(1)  # increasing
    order = torch.sort(-counts[cps], stable=True).indices
    keep = cps[order][:max_vocab - NSPECIAL].tolist()
    return [SPECIAL_CP + i for i in range(NSPECIAL)] + keep


def lookup_table(vocab):
    """codepoint -> id (TOK_UNK for the rest), as an int32 tensor."""
    lut = torch.full((NCP,), TOK_UNK, dtype=torch.int32)
    chars = torch.tensor(vocab[NSPECIAL:], dtype=torch.long)
    lut[chars] = torch.arange(NSPECIAL, len(vocab), dtype=torch.int32)
    return lut


def to_ids(cps, lut, dtype):
    out = torch.empty(len(cps), dtype=dtype)
    for i in range(0, len(cps), 1 << 24):
        out[i:i + (1 << 24)] = lut[cps[i:i + (1 << 24)].long()].to(dtype)
    return out


def _is_blank(cp):
    return cp in (0x0A, 0x20) or unicodedata.category(chr(cp)) == "Zs"


class Corpus:
    """ids: the training split then the validation split, as vocabulary ids
    (int16 while V <= 32768, else int32); ntrain, nval; vocab (codepoints by
    id); id_count (int64 per id, training split); distinct (characters of
    the training split); unk_val; stats, val_stats (CleanStats)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    @property
    def vocab_size(self):
        return len(self.vocab)

    def id(self, i):
        return int(self.ids[i])

    def summary(self, label):
        """corpus_summary's lines, each ending in a newline."""
        out = self.stats.summary(label) + "\n"
        if self.val_stats is not None:
            out += self.val_stats.summary("validation file") + "\n"
        kept = int(self.id_count[NSPECIAL:].sum())
        cover = 100.0 * kept / self.ntrain if self.ntrain else 0.0
        out += ("split: %d training and %d validation characters%s; "
                % (self.ntrain, self.nval,
                   " (from the validation file)" if self.val_stats is not None
                   else " (the last 5%)" if val_pieces(self.nval) == 1
                   else " (5%%, in %d pieces spread evenly over the text)" % val_pieces(self.nval)))
        vocab_from = getattr(self, "vocab_from", None)
        if vocab_from is not None:
            out += ("vocabulary: %s's, %d ids, covering %.2f%% of the training text\n"
                    % (quote(vocab_from), len(self.vocab), cover))
            if self.unk_train:
                out += self._unknown_line()
        else:
            out += ("vocabulary: %d ids (%d characters of %d distinct, covering %.2f%% of the "
                    "training text)\n" % (len(self.vocab), len(self.vocab) - NSPECIAL,
                                           self.distinct, cover))
        if self.unk_val:
            out += "%d validation characters are outside the vocabulary (unknown)\n" % self.unk_val
        # (attnview also names the encoding it recognises, encoding.h; this
        # gives its general advice)
        for st, name in ((self.stats, label), (self.val_stats, "the validation file")):
            if st is not None and st.invalid * 100 > st.codepoints:
                out += ("warning: %.0f%% of the characters of %s were invalid UTF-8: if it is "
                        "in another encoding, convert it first (iconv -f LATIN1 -t UTF-8, or "
                        "GB18030 for Chinese)\n" % (100.0 * st.invalid / st.codepoints, name))
        return out

    def _unknown_line(self):
        chars = " ".join("'%s'" % ("\\n" if cp == 0x0A else quote(chr(cp)))
                         for cp in self.unk_top)
        if self.unk_train == 1:
            return ("1 training character (1 distinct: %s) is not in it: it is read as the "
                    "unknown character, and the model cannot learn to predict it\n" % chars)
        return ("%d training characters (%d distinct, the most frequent: %s) are not in it: "
                "they are read as the unknown character, and the model cannot learn to "
                "predict them\n" % (self.unk_train, self.unk_distinct, chars))

    def sha256(self):
        """SHA-256 of the ids (as little-endian u32) and the split: what a
        checkpoint records to refuse resuming on other text."""
        h = hashlib.sha256()
        h.update(b"%d %d %d\n" % (self.ntrain, self.nval, len(self.vocab)))
        step = 1 << 22
        for i in range(0, len(self.ids), step):
            chunk = self.ids[i:i + step].to(torch.int32).contiguous()
            import ctypes
            h.update(ctypes.string_at(chunk.data_ptr(), chunk.numel() * 4))
        return h.hexdigest()


VAL_PIECES, VAL_PIECE_MIN = 16, 32


def val_pieces(nval):
    """corpus_val_pieces: one piece per 32 characters held out, 1 to 16."""
    return max(1, min(VAL_PIECES, nval // VAL_PIECE_MIN))


def gather_pieces(cps, nval):
    """corpus.h's split: piece k is the end of part k of P equal parts of
    the text; the rest (the training split), then the pieces, in text order."""
    n, P = len(cps), val_pieces(nval)
    train, val, frm = [], [], 0
    for k in range(P):
        ln = nval * (k + 1) // P - nval * k // P
        at = max(n * (k + 1) // P - ln, frm)
        train.append(cps[frm:at])
        val.append(cps[at:at + ln])
        frm = at + ln
    train.append(cps[frm:n])
    return torch.cat(train + val)


def load_corpus(paths, val_path=None, min_count=1, max_vocab=0, vocab=None, vocab_from=None):
    """Read, clean, split and encode the corpus files (corpus_load). With
    `vocab` (codepoints by id, e.g. a model's being fine-tuned) the text is
    encoded with it instead of a new one; `vocab_from` names it for the
    summary, which then counts the training characters it lacks, as
    attnview's does (corpus.h, fixed_vocab). Raises CorpusError for what
    attnview refuses: an unreadable or non-regular file, an empty file, no
    text left after cleaning, only whitespace, min_count too high."""
    if isinstance(paths, str):
        paths = [paths]
    label = " + ".join(quote(p) for p in paths)
    cps, st = clean_files(paths)
    n = len(cps)
    if st.bytes == 0:
        raise CorpusError("%s is empty: there is nothing to train on; give a UTF-8 text file "
                          "(a few MB of prose trains a model worth looking at)" % label)
    if n == 0:
        raise CorpusError("%s has no text left after cleaning (%d bytes: %d escape sequences, "
                          "%d control characters and %d byte order marks removed); give a "
                          "UTF-8 text file" % (label, st.bytes, st.escapes, st.controls, st.boms))
    counts = count_codepoints(cps)
    seen = counts.nonzero().squeeze(1).tolist()
    if all(_is_blank(cp) for cp in seen):
        raise CorpusError("%s contains only whitespace (%d characters): there is nothing to "
                          "learn; give a text file with words in it" % (label, n))
    if val_path:
        ntrain, nval = n, 0
    else:
        nval = (n + 19) // 20
        ntrain = n - nval
        cps = gather_pieces(cps, nval)
        counts -= count_codepoints(cps[ntrain:])
    distinct = int((counts > 0).sum())
    if vocab is None:
        vocab = build_vocab(counts, min_count, max_vocab)
        if len(vocab) <= NSPECIAL:
            raise CorpusError("%s: no character occurs at least --min-count %d times in the "
                              "training split; lower --min-count" % (label, min_count))
    lut = lookup_table(vocab)
    unknown = _unknown(counts, lut) if vocab_from is not None else (0, 0, [])
    dtype = torch.int16 if len(vocab) <= 32768 else torch.int32
    ids = to_ids(cps, lut, dtype)
    del cps
    val_stats = None
    if val_path:
        vcps, val_stats = clean_files([val_path])
        if len(vcps) == 0:
            raise CorpusError("validation file %s has no text after cleaning; give a non-empty "
                              "--val-file" % quote(val_path))
        ids = torch.cat([ids, to_ids(vcps, lut, dtype)])
        nval = len(vcps)
    id_count = torch.bincount(ids[:ntrain].long(), minlength=len(vocab))
    unk_val = int((ids[ntrain:] == TOK_UNK).sum())
    return Corpus(ids=ids, ntrain=ntrain, nval=nval, vocab=list(vocab), id_count=id_count,
                  distinct=distinct, unk_val=unk_val, stats=st, val_stats=val_stats,
                  paths=list(paths), val_path=val_path, vocab_from=vocab_from,
                  unk_train=unknown[0], unk_distinct=unknown[1], unk_top=unknown[2])


UNK_TOP = 8  # unknown training characters named (corpus.h, CORPUS_UNK_TOP)


def _unknown(counts, lut):
    """The training characters a fixed vocabulary lacks: how many, how many
    distinct, the most frequent (by decreasing count, ties by codepoint)."""
    seen = counts.nonzero().squeeze(1)
    seen = seen[seen < len(lut)]
    missing = seen[lut[seen] == TOK_UNK].tolist()
    n = [int(counts[cp]) for cp in missing]
    top = [cp for _, cp in sorted(zip((-k for k in n), missing))][:UNK_TOP]
    return sum(n), len(missing), top
