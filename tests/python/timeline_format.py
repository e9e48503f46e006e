#!/usr/bin/env python3
"""The timeline section's values are the role scores in role_kind's order
(man 5 attnview, "Timeline"): the C header's enum and dump keys, the C
section's version and value counts, and the PyTorch package's timeline.py
and roles.py must say the same thing, or a file written by one is misread
by the other. Reads the sources, imports nothing of the package (no torch).

    tests/python/timeline_format.py [SOURCE_ROOT]
"""

import ast
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
failed = []


def read(rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failed.append(what)


def c_enum(text, name):
    """The constants of `typedef enum name { ... }` in order."""
    m = re.search(r"typedef enum %s \{(.*?)\}" % name, text, re.S)
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    return [e.strip().split("=")[0].strip() for e in body.split(",") if e.strip()]


def c_strings(text, array):
    m = re.search(r"%s\[\] = \{(.*?)\};" % array, text, re.S)
    return re.findall(r'"([^"]*)"', m.group(1))


def c_define(text, name):
    m = re.search(r"#define %s\s+(\w+)" % name, text)
    return m.group(1).rstrip("u")


def py_constants(text):
    """Module-level NAME = literal assignments of a Python file."""
    out = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, ast.Name):
                try:
                    out[t.id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    return out


roles = c_enum(read("include/attnview/analysis.h"), "role_kind")
keys = c_strings(read("src/core/roles.c"), "score_keys")
tl_h = read("include/attnview/timeline.h")
tl_py = py_constants(read("python/attnview_torch/timeline.py"))
roles_py = py_constants(read("python/attnview_torch/roles.py"))

check(roles[-1] == "ROLE_NKINDS", "role_kind ends with its count")
kinds = roles[:-1]
check(len(keys) == len(kinds), "a dump key for each of the %d roles" % len(kinds))
check(c_define(tl_h, "TL_NVALUES") == "ROLE_NKINDS", "version 2 stores every role")
v1 = int(c_define(tl_h, "TL_V1_NVALUES"))
check(kinds[v1 - 1] == "ROLE_BROAD", "version 1's %d values end with broad" % v1)
check(int(c_define(tl_h, "TL_VERSION")) == tl_py.get("VERSION"),
      "the section's version: C %s, Python %s" % (c_define(tl_h, "TL_VERSION"),
                                                  tl_py.get("VERSION")))
check(tl_py.get("NVALUES") == len(kinds) == roles_py.get("NKINDS"),
      "values per head: C %d, timeline.py %s, roles.py %s"
      % (len(kinds), tl_py.get("NVALUES"), roles_py.get("NKINDS")))
check(tl_py.get("NVALUES_V1") == v1, "version 1's values: C %d, Python %s"
      % (v1, tl_py.get("NVALUES_V1")))
check(list(tl_py.get("SCORE_KEYS", ())) == keys,
      "timeline.py's SCORE_KEYS are the roles in role_kind order:\n  C  %s\n  py %s"
      % (keys, list(tl_py.get("SCORE_KEYS", ()))))
# roles.py unpacks its role constants from range(NKINDS) in the same order
m = re.search(r"\(([A-Z_,\s]+)\) = range\(NKINDS\)", read("python/attnview_torch/roles.py"))
py_names = [n.strip() for n in m.group(1).split(",") if n.strip()] if m else []
check([n.replace("ROLE_", "") for n in kinds] == py_names,
      "roles.py's constants are role_kind's, in order: %s" % py_names)
sys.exit(1 if failed else 0)
