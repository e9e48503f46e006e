"""Text -> clean NFC codepoints, exactly as attnview's cleaner
(src/core/tokenizer.c, include/attnview/tokenizer.h; man 1 attnview, TOKENS).

Every cleaning rule is in this file, each stage in one function:

  bytes -> UTF-8 decoding (_decode) -> byte order marks (BOM) ->
  escape sequences (ESCAPE) -> control characters, line ends, TAB (_filter)
  -> NFC (_nfc)

attnview's cleaner is a streaming state machine; this one works on whole
lines with regular expressions and Python's codecs (much faster in Python)
and gives the same codepoints and the same counts: after an LF byte every
stage of attnview's machine is back in its initial state (an LF cannot
continue a UTF-8 sequence, ends every escape sequence, completes a CR LF
pair, and is an NFC boundary), so the stream is cut after LF bytes and each
piece is cleaned on its own.

Normalisation uses Python's unicodedata, attnview uses libutf8proc; both follow
the Unicode standard, so they agree whenever their Unicode versions do (or the
text has no character new in the later version). Python 3.11 has Unicode 14,
Debian 12's utf8proc Unicode 15: they differ on ten combining marks added in
Unicode 15 (in scripts such as Kawi and Nag Mundari).
"""

import codecs
import re
import threading
import unicodedata

from .shown import quote

# ---------------------------------------------------------------- the rules

# ECMA-48 escape sequences as attnview's state machine reads them (escapes()
# in tokenizer.c), one alternative per way a sequence starts:
#   CSI   ESC '[' or U+009B, parameter/intermediate bytes 0x20-0x3F, then an
#         optional final byte 0x40-0x7E (a sequence ends at the first
#         character that cannot belong to it, which stays text);
#   strings (OSC, DCS, SOS, PM, APC)  ESC ']' 'P' 'X' '^' '_' or U+0090,
#         U+0098, U+009D, U+009E, U+009F, up to BEL, U+009C or ESC '\'
#         (included), or up to a line end or another ESC (excluded: they are
#         processed next); an ESC that ends the stream inside a string is
#         dropped with it;
#   nF    ESC, intermediates 0x20-0x2F, an optional final 0x30-0x7E;
#   Fp/Fe/Fs  ESC and one character 0x30-0x7E.
# An ESC that starts none of these is a control character (removed by
# CONTROL below, and counted there).
_CSI_BODY = "[\x20-\x3f]*[\x40-\x7e]?"
_STR_BODY = "[^\x07\x9c\x1b\n\r]*(?:[\x07\x9c]|\x1b\\\\|\x1b\\Z)?"
ESCAPE = re.compile(
    "\x1b\\[" + _CSI_BODY + "|\x9b" + _CSI_BODY
    + "|\x1b[\\]PX^_]" + _STR_BODY + "|[\x90\x98\x9d\x9e\x9f]" + _STR_BODY
    + "|\x1b[\x20-\x2f]+[\x30-\x7e]?|\x1b[\x30-\x7e]")
_ESCAPE_START = re.compile("[\x1b\x90\x98\x9b\x9d\x9e\x9f]")

# Removed and counted as control characters: C0 except TAB, LF and CR, DEL,
# C1.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

# U+FEFF is a byte order mark wherever it stands (at byte 0, or where files
# were concatenated): removed and counted before the escapes and controls are
# looked at, so it interrupts no escape sequence and no CR LF pair.
BOM = "\ufeff"

# attnview normalises a run of more than NFC_MAX_RUN codepoints without an NFC
# boundary in pieces (nfc_push in tokenizer.c); only degenerate text (a base
# with a thousand combining marks) has one.
NFC_MAX_RUN = 1024


class CleanStats:
    """What cleaning removed or changed (clean_stats in tokenizer.h)."""

    FIELDS = ("bytes", "codepoints", "invalid", "first_invalid", "escapes", "controls",
              "crlf", "boms")

    def __init__(self):
        self.bytes = 0
        self.codepoints = 0
        self.invalid = 0
        self.first_invalid = None  # byte offset of the first invalid sequence
        self.escapes = 0
        self.controls = 0
        self.crlf = 0
        self.boms = 0  # byte order marks (U+FEFF) removed, anywhere
        self.first_problem = None  # (offset, bytes, reason) of the first invalid sequence

    def as_dict(self):
        return {k: getattr(self, k) for k in self.FIELDS}

    def summary(self, what):
        """clean_stats_summary's sentence: "corpus.txt: 1234 bytes, 1200
        characters; removed 3 ANSI escape sequences and ...; clean"."""
        def pl(n, one, many):
            return one if n == 1 else many
        s = "%s: %d %s, %d %s" % (what, self.bytes, pl(self.bytes, "byte", "bytes"),
                                  self.codepoints, pl(self.codepoints, "character", "characters"))
        if self.escapes or self.controls:
            s += "; removed"
            if self.escapes:
                s += " %d ANSI escape %s" % (self.escapes,
                                             pl(self.escapes, "sequence", "sequences"))
            if self.escapes and self.controls:
                s += " and"
            if self.controls:
                s += " %d control %s" % (self.controls,
                                         pl(self.controls, "character", "characters"))
        if self.crlf:
            s += "; %d CR or CRLF line %s made LF" % (self.crlf, pl(self.crlf, "end", "ends"))
        if self.invalid:
            s += "; %d invalid UTF-8 %s replaced by U+FFFD (first at byte %d)" % (
                self.invalid, pl(self.invalid, "sequence", "sequences"), self.first_invalid)
        if self.boms == 1:
            s += "; byte order mark removed"
        elif self.boms:
            s += "; %d byte order marks removed" % self.boms
        if not (self.escapes or self.controls or self.crlf or self.invalid or self.boms):
            s += "; clean"
        return s


# ---------------------------------------------------------------- UTF-8

# Python's UTF-8 decoder reports each "maximal subpart" of an ill-formed
# sequence as one error (Unicode 3.9, the practice attnview follows: one
# U+FFFD per maximal subpart; overlong forms, surrogates and values above
# U+10FFFF are ill-formed). The handler counts them.
_local = threading.local()


def _replace_and_count(e):
    errs = _local.errors
    errs.append((e.start, e.object[e.start:e.end], e.reason))
    return "\ufffd", e.end


codecs.register_error("attnview.replace", _replace_and_count)


def _decode(raw):
    """(text, [(offset, bytes, reason)] of the invalid sequences)."""
    _local.errors = []
    text = raw.decode("utf-8", "attnview.replace")
    errs, _local.errors = _local.errors, None
    return text, errs


# ---------------------------------------------------------------- NFC

_nonboundary = None  # regex class of codepoints that are not NFC boundaries


def _nonboundary_re():
    """Codepoints before which attnview's cleaner cannot cut the text for NFC
    (nfc_tables_build): those whose canonical decomposition starts with a
    non-starter, or with a starter that composes with what precedes it (one
    that appears after the first place of some decomposition)."""
    global _nonboundary
    if _nonboundary is None:
        decomp = {}
        composes_back = set()
        for cp in range(0x110000):
            if 0xD800 <= cp <= 0xDFFF:
                continue
            c = chr(cp)
            d = unicodedata.normalize("NFD", c)
            if d != c:
                decomp[cp] = d
                for x in d[1:]:
                    if unicodedata.combining(x) == 0:
                        composes_back.add(ord(x))
        cps = []
        for cp in range(0x110000):
            if 0xD800 <= cp <= 0xDFFF:
                continue
            first = decomp.get(cp, chr(cp))[0]
            if unicodedata.combining(first) or ord(first) in composes_back:
                cps.append(cp)
        ranges, start, prev = [], None, None
        for cp in cps:
            if start is None:
                start = prev = cp
            elif cp == prev + 1:
                prev = cp
            else:
                ranges.append((start, prev))
                start = prev = cp
        if start is not None:
            ranges.append((start, prev))
        cls = "".join(re.escape(chr(a)) if a == b else "%s-%s" % (re.escape(chr(a)),
                                                                   re.escape(chr(b)))
                      for a, b in ranges)
        _nonboundary = re.compile("[%s]{%d,}" % (cls, NFC_MAX_RUN - 1))
    return _nonboundary


# Every non-boundary codepoint is at U+0300 or above: a cheap test first.
_MAYBE_LONG_RUN = re.compile("[^\x00-\u02ff]{%d,}" % (NFC_MAX_RUN - 1))


def _nfc(text, at_start):
    """NFC as attnview computes it. `at_start`: the text begins the stream
    (attnview's run counter starts at 0 there, and at 1 after the LF that
    precedes every later piece)."""
    if not _MAYBE_LONG_RUN.search(text):
        return unicodedata.normalize("NFC", text)
    cuts = []
    for m in _nonboundary_re().finditer(text):
        # the counter is 1 after a boundary codepoint, 0 at the stream's start;
        # at NFC_MAX_RUN attnview normalises what it holds and starts again at 0
        first = NFC_MAX_RUN - (0 if at_start and m.start() == 0 else 1)
        c = m.start() + first
        while c <= m.end():
            cuts.append(c)
            c += NFC_MAX_RUN
    if not cuts:
        return unicodedata.normalize("NFC", text)
    out, prev = [], 0
    for c in cuts:
        out.append(unicodedata.normalize("NFC", text[prev:c]))
        prev = c
    out.append(unicodedata.normalize("NFC", text[prev:]))
    return "".join(out)


# ---------------------------------------------------------------- the cleaner

def _filter(text, st):
    """Controls out, CR LF and lone CR to LF, TAB to a space (filter() in
    tokenizer.c). Controls and escapes between a CR and an LF do not split
    the pair: they are gone before the pairs are made."""
    text, n = CONTROL.subn("", text)
    st.controls += n
    if "\r" in text:
        st.crlf += text.count("\r")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\t", " ")


def _clean_piece(raw, offset, st):
    """Clean raw bytes that start at stream offset `offset` and end just after
    an LF byte (or end the stream)."""
    text, errs = _decode(raw)
    for start, bad, reason in errs:
        if st.invalid == 0:
            st.first_invalid = offset + start
            st.first_problem = (offset + start, bad, reason)
        st.invalid += 1
    if BOM in text:
        st.boms += text.count(BOM)
        text = text.replace(BOM, "")
    if _ESCAPE_START.search(text):
        text, n = ESCAPE.subn("", text)
        st.escapes += n
    text = _filter(text, st)
    text = _nfc(text, offset == 0)
    st.codepoints += len(text)
    st.bytes += len(raw)
    return text


class Cleaner:
    """Streaming cleaner: feed() bytes in chunks of any size, get clean NFC
    text back (complete lines; the rest is held until the next feed or
    finish()). The result and the counts do not depend on the chunking."""

    def __init__(self):
        self.stats = CleanStats()
        self._held = bytearray()
        self._offset = 0

    def feed(self, data):
        old = len(self._held)  # holds no LF: everything up to the last one went out
        self._held += data
        cut = self._held.rfind(b"\n", old)
        if cut < 0:
            return ""
        raw = bytes(self._held[:cut + 1])
        del self._held[:cut + 1]
        text = _clean_piece(raw, self._offset, self.stats)
        self._offset += len(raw)
        return text

    def finish(self):
        raw = bytes(self._held)
        self._held = bytearray()
        if not raw:
            return ""
        text = _clean_piece(raw, self._offset, self.stats)
        self._offset += len(raw)
        return text


def clean_bytes(data):
    """Clean a whole byte string: (text, CleanStats)."""
    c = Cleaner()
    text = c.feed(data) + c.finish()
    return text, c.stats


def _describe(bad, reason):
    h = " ".join("%02x" % b for b in bad)
    if reason == "unexpected end of data":
        return "the text ends inside a character (bytes %s)" % h
    if reason == "invalid start byte":
        if 0x80 <= bad[0] <= 0xBF:
            return "byte 0x%02x continues a character that never started" % bad[0]
        return "byte 0x%02x cannot start a character" % bad[0]
    return "bytes %s do not form a character (%s)" % (h, reason)


def tokenize_text(text, what="--text"):
    """Text typed or given by a person (attnview's tokenize_text): cleaned
    like a corpus, but invalid UTF-8 is an error naming the byte. Takes str
    (encoded as UTF-8; lone surrogates, as from a mis-decoded argv, count as
    invalid) or bytes; returns the list of codepoints."""
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogateescape")
    clean, st = clean_bytes(bytes(text))
    if st.invalid:
        off, bad, reason = st.first_problem
        raise ValueError("invalid UTF-8 at byte %d of %s: %s; give the text as UTF-8"
                         % (off, quote(what), _describe(bad, reason)))
    return [ord(c) for c in clean]
