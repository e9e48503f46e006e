"""Names, paths and model-file metadata as a terminal is shown them: attnview's
av_quote, av_char_shown and av_shell_quote (src/core/common.c), to the byte.

A character is shown as it is when it is valid UTF-8 and none of these, which
are escaped: C0 controls and DEL as \\a \\b \\t \\n \\v \\f \\r \\e or \\xNN; C1
controls (U+0080..U+009F) and the bidirectional embeddings, overrides and
isolates (U+202A..U+202E, U+2066..U+2069) as \\xNN for each of their UTF-8
bytes; each byte that is not part of valid UTF-8 as \\xNN. A path Python
decoded from the file system keeps its undecodable bytes as lone surrogates
(surrogateescape): they are those bytes again here.
"""

import argparse

_NAMED = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r",
          27: "\\e"}


def to_bytes(s):
    """The bytes of a str (surrogate-escaped bytes as themselves), or bytes."""
    if isinstance(s, (bytes, bytearray)):
        return bytes(s)
    return str(s).encode("utf-8", "surrogateescape" if _escaped_only(s) else "surrogatepass")


def _escaped_only(s):
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in s)


def _seq(b, i):
    """Length of the valid UTF-8 sequence at b[i:] and its codepoint; (0, byte)
    if the byte starts none (Unicode 3.9)."""
    c = b[i]
    if c < 0x80:
        return 1, c
    n = 2 if 0xC2 <= c < 0xE0 else 3 if 0xE0 <= c < 0xF0 else 4 if 0xF0 <= c < 0xF5 else 0
    if not n or i + n > len(b):
        return 0, c
    lo = 0xA0 if c == 0xE0 else 0x90 if c == 0xF0 else 0x80
    hi = 0x9F if c == 0xED else 0x8F if c == 0xF4 else 0xBF
    if not lo <= b[i + 1] <= hi or any(not 0x80 <= x <= 0xBF for x in b[i + 2:i + n]):
        return 0, c
    v = c & (0x7F >> n)
    for x in b[i + 1:i + n]:
        v = v << 6 | (x & 0x3F)
    return n, v


def char_shown(b, i):
    """The character at b[i] (bytes): (length, escape or "" when shown as it
    is, codepoint or the invalid byte)."""
    n, cp = _seq(b, i)
    if not n:
        return 1, "\\x%02x" % b[i], cp
    if cp < 0x20 or cp == 0x7F:
        return 1, _NAMED.get(cp, "\\x%02x" % cp), cp
    if 0x80 <= cp <= 0x9F or 0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069:
        return n, "".join("\\x%02x" % x for x in b[i:i + n]), cp
    return n, "", cp


def _pieces(b, quote):
    i = 0
    while i < len(b):
        n, esc, _ = char_shown(b, i)
        if not esc and b[i] in (quote, 0x5C):
            esc = "\\" + chr(b[i])
        yield esc or b[i:i + n].decode("utf-8"), bool(esc)
        i += n


def quote(s):
    """s for a message: as it is when every character is shown as it is and
    it has no '"' or backslash and is not empty; else in double quotes, with
    \\" and \\\\ for those two and the escapes above."""
    b = to_bytes(s)
    pieces = list(_pieces(b, 0x22))
    if b and not any(e for _, e in pieces):
        return b.decode("utf-8")
    return '"' + "".join(p for p, _ in pieces) + '"'


def _has_escape(b):
    i = 0
    while i < len(b):
        n, esc, _ = char_shown(b, i)
        if esc:
            return True
        i += n
    return False


def shell_quote(s):
    """s for a POSIX shell: as it is, in single quotes, or in $'...' with the
    escapes above when it has a character they escape."""
    b = to_bytes(s)
    if b and all(x < 0x80 and (chr(x).isalnum() or chr(x) in "-_./+=:,@") for x in b):
        return b.decode("ascii")
    if _has_escape(b):
        return "$'" + "".join(p for p, _ in _pieces(b, 0x27)) + "'"
    return "'" + b.decode("utf-8").replace("'", "'\\''") + "'"


def visible(text):
    """Text on its way to stdout or stderr with every control character
    escaped, but its own line breaks and tabs: the net under quote()."""
    b = to_bytes(text)
    out, i = [], 0
    while i < len(b):
        n, esc, cp = char_shown(b, i)
        out.append(esc if esc and cp not in (9, 10) else b[i:i + n].decode("utf-8", "replace"))
        i += n
    return "".join(out)


def error_text(e):
    """An exception's message; an OSError about a file as attnview says it,
    "NAME: what", the name quoted (Python's own form shows its repr)."""
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return "%s: %s" % (quote(e.filename), e.strerror)
    return str(e)


def json_visible(text):
    """JSON from json.dumps(ensure_ascii=False) with DEL, the C1 controls and
    the bidirectional overrides as \\uXXXX too (they occur only in strings),
    as attnview's --dump writes them."""
    return "".join("\\u%04x" % ord(c) if ord(c) == 0x7F or 0x80 <= ord(c) <= 0x9F
                   or 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 else c
                   for c in text)


def file_string(s):
    """A metadata string as the file can hold it, attnview's model_set_meta_strings:
    UTF-8, each byte that is not becoming U+FFFD."""
    b = to_bytes(s)
    out, i = [], 0
    while i < len(b):
        n, _, _ = char_shown(b, i)
        out.append("\ufffd" if n == 1 and b[i] >= 0x80 else b[i:i + n].decode("utf-8"))
        i += n
    return "".join(out)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser with its messages, which repeat what was typed
    ("unrecognized arguments: ..."), shown through visible()."""

    def _print_message(self, message, file=None):
        if message:
            super()._print_message(visible(message), file)
