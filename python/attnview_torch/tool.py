"""python3 -m attnview_torch: look at model files from Python.

    python3 -m attnview_torch info MODEL
        the header and metadata as JSON
    python3 -m attnview_torch dump MODEL TEXT
        tokens and attention in the shape of `attnview --dump --format json`
        (the parts both have), computed by PyTorch
    python3 -m attnview_torch compare MODEL TEXT DUMP.json [--tol 1e-5]
        check a saved `attnview --dump --format json --model MODEL --text TEXT`
        against PyTorch: the same tokens and ids, every attention weight and
        every listed prediction's probability within the tolerance, masked
        scores in the same places; prints the worst differences, exit status
        1 on a mismatch
    python3 -m attnview_torch export CHECKPOINT -o MODEL
        the model inside a checkpoint of python3 -m attnview_torch.train, as
        a model file attnview opens
"""

import json
import math
import sys

import torch

from . import load
from .model import ARCH_FIELDS, OBJECTIVES, SPECIAL_CP, TOK_UNK, attend, num_params
from .modelfile import FormatError
from .shown import ArgumentParser, error_text, json_visible, visible
from .tokenizer import tokenize_text


def cp_char(cp):
    if cp >= SPECIAL_CP:
        return ["<pad>", "<unk>", "<mask>"][cp - SPECIAL_CP]
    return chr(cp)


def reference_dump(path, text, top=5):
    """The tokens, attention and top predictions of `text` under the model at
    `path`, in the shape of attnview --dump --format json."""
    model = load(path)
    cps = tokenize_text(text)
    if not cps:
        raise ValueError("empty text")
    if len(cps) > model.cfg.context:
        raise ValueError("%d tokens, the model's context is %d" % (len(cps), model.cfg.context))
    ids = model.token_ids(cps)
    with torch.no_grad():
        att, scores, _, pred = attend(model, ids)
    cfg = model.cfg
    probs = torch.softmax(pred.double(), dim=-1)

    def rows(t):
        return [[None if math.isnan(v) else v for v in row] for row in t.tolist()]

    def top_k(p):
        order = sorted(range(3, cfg.vocab_size), key=lambda i: -p[i])[:top]
        return [{"char": chr(model.vocab[i]), "id": i, "p": p[i]} for i in order]

    return {
        "model": path,
        "objective": OBJECTIVES[cfg.objective],
        "layers": cfg.layers,
        "heads": cfg.heads,
        "tokens": [{"index": i, "codepoint": cp, "char": chr(cp), "id": tid,
                    "unknown": tid == TOK_UNK} for i, (cp, tid) in enumerate(zip(cps, ids))],
        "attention": [{"layer": l, "head": h, "weights": att[l, h].tolist(),
                       "scores": rows(scores[l, h])}
                      for l in range(cfg.layers) for h in range(cfg.heads)],
        "probabilities": probs.tolist(),
        "vocab": model.vocab,
        "predictions": [top_k(p) for p in probs.tolist()] if top else [],
    }


def compare(path, text, got, tol=1e-5, out=sys.stdout):
    """Compare attnview's JSON dump `got` (a dict) with PyTorch; True if they
    agree. Weights within tol; every prediction attnview lists has PyTorch's
    probability within tol, and no character PyTorch ranks clearly higher
    (by more than tol) is missing from the list."""
    want = reference_dump(path, text, top=0)
    gt = [(t["codepoint"], t["id"]) for t in got["tokens"]]
    wt = [(t["codepoint"], t["id"]) for t in want["tokens"]]
    if gt != wt:
        print("tokens differ: attnview %s, PyTorch %s" % (gt, wt), file=out)
        return False
    ok = True
    heads = {(a["layer"], a["head"]): a for a in got["attention"]}
    worst, worst_s = (0.0, None), (0.0, None)
    for a in want["attention"]:
        key = (a["layer"], a["head"])
        if key not in heads:
            print("layer %d head %d missing from the dump" % key, file=out)
            ok = False
            continue
        g = heads[key]
        for i, (grow, wrow) in enumerate(zip(g["weights"], a["weights"])):
            for j, (x, y) in enumerate(zip(grow, wrow)):
                if abs(x - y) > worst[0]:
                    worst = (abs(x - y), (key, i, j, x, y))
        for i, (grow, wrow) in enumerate(zip(g.get("scores") or [], a["scores"])):
            for j, (x, y) in enumerate(zip(grow, wrow)):
                if (x is None) != (y is None):
                    print("score %s query %d key %d: attnview %s, PyTorch %s" % (key, i, j, x, y),
                          file=out)
                    ok = False
                elif x is not None and abs(x - y) / max(1.0, abs(y)) > worst_s[0]:
                    worst_s = (abs(x - y) / max(1.0, abs(y)), (key, i, j, x, y))
    where = "" if worst[1] is None else " at layer %d head %d query %d key %d (%r vs %r)" % (
        worst[1][0] + worst[1][1:])
    print("%d tokens; weights: max |diff| %.3g%s; scores: max relative diff %.3g"
          % (len(wt), worst[0], where, worst_s[0]), file=out)
    ok = ok and worst[0] <= tol
    preds = got.get("predictions") or []
    if preds:
        probs = want["probabilities"]
        worst_p, listed = (0.0, None), 0
        for pos, (plist, p) in enumerate(zip(preds, probs)):
            for e in plist:
                listed += 1
                d = abs(e["p"] - p[e["id"]])
                if d > worst_p[0]:
                    worst_p = (d, (pos, e["char"], e["p"], p[e["id"]]))
            if plist:
                ranked = sorted(range(3, len(p)), key=lambda i: -p[i])[:len(plist)]
                lowest = min(e["p"] for e in plist)
                ids = {e["id"] for e in plist}
                for i in ranked:
                    if i not in ids and p[i] > lowest + tol:
                        print("position %d: PyTorch ranks %r (p %.6f) above attnview's "
                              "listed predictions" % (pos, chr(want["vocab"][i]), p[i]),
                              file=out)
                        ok = False
        where = "" if worst_p[1] is None else " at position %d %r (%r vs %r)" % worst_p[1]
        print("predictions: %d listed; max |p diff| %.3g%s" % (listed, worst_p[0], where),
              file=out)
        ok = ok and worst_p[0] <= tol
    return ok


def info(path):
    m = load(path)
    c = m.cfg
    d = dict(objective=OBJECTIVES[c.objective], vocab_size=c.vocab_size, dim=c.dim,
             heads=c.heads, layers=c.layers, context=c.context, params=num_params(c),
             kind=m.kind)
    if any(c.arch.as_tuple()):
        d["architecture"] = {n: c.arch.name(n) for n, _ in ARCH_FIELDS}
    d.update({k: (None if isinstance(v, float) and math.isnan(v) else v)
              for k, v in m.meta.items() if not k.startswith("_")})
    return d


def main(argv=None):
    ap = ArgumentParser(prog="python3 -m attnview_torch",
                                 description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("info", help="the header and metadata as JSON")
    p.add_argument("model")
    p = sub.add_parser("dump", help="tokens and attention as JSON")
    p.add_argument("model")
    p.add_argument("text")
    p = sub.add_parser("compare", help="check an attnview --dump against PyTorch")
    p.add_argument("model")
    p.add_argument("text")
    p.add_argument("dump")
    p.add_argument("--tol", type=float, default=1e-5)
    p = sub.add_parser("export", help="the model inside a training checkpoint")
    p.add_argument("checkpoint")
    p.add_argument("-o", "--output", required=True)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "info":
            sys.stdout.write(json_visible(json.dumps(info(a.model), ensure_ascii=False,
                                                     indent=1)))
            sys.stdout.write("\n")
        elif a.cmd == "dump":
            d = reference_dump(a.model, a.text)
            del d["probabilities"], d["vocab"]
            sys.stdout.write(json_visible(json.dumps(d, ensure_ascii=False)))
            sys.stdout.write("\n")
        elif a.cmd == "compare":
            with open(a.dump, encoding="utf-8") as f:
                got = json.load(f)
            return 0 if compare(a.model, a.text, got, a.tol) else 1
        elif a.cmd == "export":
            from .checkpoint import export
            export(a.checkpoint, a.output)
    except (FormatError, ValueError, OSError, KeyError) as e:
        sys.stderr.write(visible("attnview_torch: %s\n" % error_text(e)))
        return 1
    return 0
