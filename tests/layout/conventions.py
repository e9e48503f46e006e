#!/usr/bin/env python3
"""doc/CONVENTIONS.md's rules that a reader of the sources can check, each a
debt paid once that must not come back:

  one clock        clock_gettime is called in src/core/common.c only
                   (av_now_ms); the view, the worker and the training's
                   progress all read that one;
  no copies        no function body of src/ is a copy of another's, no macro
                   of a public header is defined again under src/, and the
                   word marks ('|', WORD_MARK) are stripped by analysis.c's
                   words_strip_marks only;
  _finish          a function that empties a struct the caller owns is
                   x_finish, one that frees its argument x_destroy: no header
                   declares a function named *_free;
  one parser       no option value is read with strtol, strtoul(l), strtod
                   or strtof in src/cli/ outside options.c's
                   cli_option_value, which reads every row's kind and range
                   (--ablate's list of LAYER.HEAD is read by parse_ablate);
  one header each  the public functions of result.c are declared in
                   result.h, those of train_options.c in train_options.h;
  commit messages  (in a git checkout) every commit since the rule was
                   written has a subject of at most 72 characters, a blank
                   line and a body.

    tests/layout/conventions.py [SOURCE_ROOT]
"""

import glob
import os
import re
import subprocess
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
os.chdir(root)
failed = 0


def fail(msg):
    global failed
    failed += 1
    print("FAIL: " + msg)


def text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def code(path):
    """The file without comments and string literals (line numbers kept)."""
    t = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text(path), flags=re.S)
    t = re.sub(r"//[^\n]*", "", t)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', t)


sources = sorted(glob.glob("src/**/*.c", recursive=True))
headers = sorted(glob.glob("src/**/*.h", recursive=True) + glob.glob("include/attnview/*.h"))

# One clock.
for f in sources + headers:
    if f != "src/core/common.c" and re.search(r"\bclock_gettime\b", code(f)):
        fail("%s reads a clock of its own; use av_now_ms (common.h)" % f)

# No copies: whole function bodies (top-level definitions, whitespace
# squeezed) longer than a few statements, in two files.
bodies = {}
for f in sources:
    for m in re.finditer(r"^[A-Za-z][^;{}]*?\b(\w+)\([^;{}]*\)\s*\n\{\n(.*?)^\}", code(f),
                         re.S | re.M):
        body = re.sub(r"\s+", " ", m.group(2)).strip()
        if body.count(";") < 4:
            continue
        if body in bodies and not bodies[body].startswith(f + ":"):
            fail("%s: %s is a copy of %s" % (f, m.group(1), bodies[body]))
        else:
            bodies[body] = "%s: %s" % (f, m.group(1))

public_macros = {}
for h in glob.glob("include/attnview/*.h"):
    for name in re.findall(r"^#define (\w+)", text(h), re.M):
        if not name.startswith("ATTNVIEW_") or not name.endswith("_H"):
            public_macros[name] = h
for f in sources + glob.glob("src/**/*.h", recursive=True):
    for name in re.findall(r"^\s*#\s*define (\w+)", code(f), re.M):
        if name in public_macros:
            fail("%s defines %s again (%s has it)" % (f, name, public_macros[name]))
for f in sources:
    if f != "src/core/analysis.c" and re.search(r"==\s*(WORD_MARK|'\|')", code(f)):
        fail("%s strips word marks itself; call words_strip_marks (analysis.h)" % f)

# One parser of option values.
lists = {"src/cli/cli_dump.c": "parse_ablate"}  # values that are lists, not a number
for f in glob.glob("src/cli/*.c"):
    if f == "src/cli/options.c":
        continue
    c = code(f)
    if f in lists:
        m = re.search(r"^static int %s\(.*?^\}" % lists[f], c, re.S | re.M)
        c = c[:m.start()] + c[m.end():] if m else c
    for m in re.finditer(r"\b(strto(?:l|ul|ull|ll|d|f))\(", c):
        fail("%s reads a number with %s; the option's row and cli_option_value say it"
             % (f, m.group(1)))

# _finish, not _free.
for h in headers:
    for name in re.findall(r"^[A-Za-z][\w \*]*?\b(\w+_free)\(", code(h), re.M):
        fail("%s declares %s: empty in place with _finish, free with _destroy" % (h, name))

# One header per module, for the modules that shared one.
for module in ("result", "train_options"):
    if not os.path.isfile("include/attnview/%s.h" % module):
        fail("%s.c has no header of its own, include/attnview/%s.h" % (module, module))
        continue
    src = text(glob.glob("src/*/%s.c" % module)[0])
    hdr = code("include/attnview/%s.h" % module)
    for name in re.findall(r"^(?!static)[a-z][\w \*]*?\b(\w+)\([^;]*?\)\n\{", src, re.M):
        if not re.search(r"\b%s\(" % name, hdr):
            fail("%s.c's %s is not declared in %s.h" % (module, name, module))

# Commit messages made since the rule was written down (CONVENTIONS,
# "Commits"; by committer date, so that older work merged later is not
# judged by it).
def git(*args):
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True)
    except OSError:
        return None


if os.path.exists(".git"):
    since = git("log", "-1", "--format=%ct", "-S", "at most 72 characters", "--",
                "doc/CONVENTIONS.md")
    first = since.stdout.strip() if since and since.returncode == 0 else ""
    if first:
        log = git("log", "--no-merges", "--since=@" + first, "--format=%H%x00%B%x01").stdout
        for entry in filter(None, (e.strip("\n") for e in log.split("\x01"))):
            sha, _, msg = entry.partition("\x00")
            lines = msg.split("\n")
            if len(lines[0]) > 72:
                fail("commit %s: subject of %d characters (at most 72)" % (sha[:10], len(lines[0])))
            if len(lines) < 3 or lines[1] != "" or not "".join(lines[2:]).strip():
                fail("commit %s: no body after a blank line" % sha[:10])

print("conventions: %s" % ("%d failed" % failed if failed else "ok"))
sys.exit(1 if failed else 0)
