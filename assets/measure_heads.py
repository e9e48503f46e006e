#!/usr/bin/python3
"""What a model's heads do and how well it predicts, measured with
attnview --dump: for each text, how many heads carry a role other
than broad (an unclear label names none) and how many distinct roles
there are; for a masked model the
top-1 accuracy with one position masked at a time and the loss on the text;
for a causal model the induction score on a repeated sentence.

    assets/measure_heads.py ATTNVIEW MODEL [TEXT...]
    assets/measure_heads.py ATTNVIEW MODEL --per-language CORPUS VAL-ZH VAL-EN

Without texts: doc/training.md's two example texts and others of the same kinds
(Tang poems of the corpus, modern Chinese prose, English prose).

--per-language: the held-out loss and accuracy of each language's validation
text (assets/train_builtin.sh with KEEP=DIR writes the three files), on 60
windows of the model's context spread over it, each position predicted as
--dump predicts it (a masked model with that position alone masked, a
causal one from the characters before it), beside the unigram baseline of
the training text (add-one smoothed; always the most frequent character) on
the same positions."""

import collections
import json
import math
import re
import subprocess
import sys
import unicodedata

TEXTS = [
    ("poem", "床前明月光，疑是地上霜。举头望明月，低头思故乡。"),
    ("poem", "空山不见人，但闻人语响。返影入深林，复照青苔上。"),
    ("poem", "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。"),
    ("poem", "白日依山尽，黄河入海流。欲穷千里目，更上一层楼。"),
    ("poem", "红豆生南国，春来发几枝。愿君多采撷，此物最相思。"),
    ("prose", "今天早上我去图书馆借了两本书，下午在公园里读完了其中一本。"),
    ("prose", "人生最大的幸福，莫过于在平凡的日子里找到自己真正喜欢的事情。"),
    ("english", "\"Time flies like an arrow; fruit flies like a banana, said the old teacher.\""),
    ("english", "The quick brown fox jumps over the lazy dog while the old man reads by the fire."),
]
REPEAT = "Mr Dursley and Mrs Dursley. Mr Dursley and Mrs Dursley."


def dump(exe, model, text, extra=()):
    out = subprocess.run([exe, "--dump", "--model", model, "--text", text, *extra],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def roles(d):
    """Heads named (a role other than broad, and not "unclear": an unclear
    label's "role" is only the closest), of how many, and their roles."""
    heads = d["heads"]
    kinds = [h["role"] for h in heads if h["verdict"] in ("sure", "two")]
    named = sum(k != "broad" for k in kinds)
    return named, len(heads), sorted(set(kinds) - {"broad"}), heads


def clean(text):
    """Roughly attnview's cleaning: no escape sequences or controls, NFC."""
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    text = "".join(c for c in text if c == "\n" or unicodedata.category(c)[0] != "C")
    return unicodedata.normalize("NFC", text)


def per_language(exe, model, corpus, files):
    info = dump(exe, model, "a", ["--top", "0"])["model"]
    T, causal = info["context"], info["objective"] == "causal"
    with open(corpus, encoding="utf-8", errors="replace") as f:
        counts = collections.Counter(clean(f.read()))
    total, V = sum(counts.values()), info["vocab_size"]
    top = counts.most_common(1)[0][0]
    for name, path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = clean(f.read())
        k = 60
        starts = [i * (len(text) - T) // (k - 1) for i in range(k)]
        loss = base = 0.0
        n = right = base_right = 0
        for s0 in starts:
            window = text[s0:s0 + T]
            d = dump(exe, model, window, ["--top", "1", "--ablate", "0.0"])
            # --ablate's predictions and attention are the ablated model's;
            # "ablation" has the loss and the predictions with every head.
            toks, preds = d["tokens"], d["ablation"]["predictions_before"]
            m = d["ablation"]["loss_positions"]
            loss += d["ablation"]["loss_before"] * m
            n += m
            for p, t in enumerate(toks):
                if causal and p + 1 >= len(toks):
                    break
                tgt = toks[p + 1] if causal else t
                if tgt["unknown"]:
                    continue
                right += bool(preds[p]) and preds[p][0]["id"] == tgt["id"]
                base -= math.log((counts[tgt["char"]] + 1) / (total + V))
                base_right += tgt["char"] == top
        print("%s: %d positions, loss %.3f nats/char, accuracy %.1f%%; unigram %.3f, %.1f%%"
              % (name, n, loss / n, 100 * right / n, base / n, 100 * base_right / n))


def main():
    exe, model = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3 and sys.argv[3] == "--per-language":
        per_language(exe, model, sys.argv[4], [("Chinese", sys.argv[5]), ("English", sys.argv[6])])
        return
    texts = [("text", t) for t in sys.argv[3:]] or TEXTS
    causal = dump(exe, model, "a", ["--top", "0"])["model"].get("objective") == "causal"
    for kind, text in texts:
        # The roles from the model with every head; the loss and the
        # predictions with every head from --ablate's "ablation" (its
        # attention and its own predictions are the ablated model's).
        named, total, distinct, _ = roles(dump(exe, model, text, ["--top", "0"]))
        d = dump(exe, model, text, ["--top", "1", "--ablate", "0.0"])
        line = "%-7s %s: %d of %d heads named (%.0f%%), %d roles %s" % (
            kind, text[:24], named, total, 100 * named / total, len(distinct),
            " ".join(distinct))
        if not causal:
            toks, preds = d["tokens"], d["ablation"]["predictions_before"]
            right = sum(p and p[0]["id"] == t["id"] and not t["unknown"]
                        for t, p in zip(toks, preds))
            line += "; top-1 %d of %d" % (right, len(toks))
        line += "; loss %.2f nats/char" % d["ablation"]["loss_before"]
        print(line)
    if causal:
        d = dump(exe, model, REPEAT, ["--top", "0"])
        best = max(d["heads"], key=lambda h: h["scores"]["induction"])
        print("induction on %r: best %.2f (layer %d head %d, %s)" % (
            REPEAT, best["scores"]["induction"], best["layer"], best["head"], best["label"]))


if __name__ == "__main__":
    main()
