#!/usr/bin/python3
"""How far attnview's numbers are from exact arithmetic (float64): the figures
behind the accuracy statements of man 5 attnview (NOTES).

    /usr/bin/python3 tests/reference/accuracy.py p [MODEL]
        the prediction probabilities of `attnview --dump --top 50` on every
        position of a few texts, against the softmax of the same model's
        prediction logits computed in float64 (MODEL: the built-in model,
        assets/builtin.attn); also against the float64 softmax of PyTorch's
        float32 logits, which separates the softmax's own error from the
        logits'
    /usr/bin/python3 tests/reference/accuracy.py weights
        the attention weights of `attnview --dump` on the built-in model, the
        golden models and random models whose parameters have standard
        deviation 0.02 to 4, against float64, beside the size of their scores:
        the largest |z| and the largest M = |q_i| |k_m| / sqrt(hs) of a row
        (|z| <= M); PyTorch in float32 beside attnview, as a second float32
        implementation

Each difference is also divided by its bound: the first-order bound of the
error of any binary32 implementation, derived in man 5 attnview (NOTES,
Accuracy) and computed for every number by tests/lib/bound_tool (the binary64
pass of tests/lib/bound.c, whose own numbers are checked against PyTorch's
binary64 here too). A ratio <= 1 is what the bound promises, on every
OpenBLAS kernel.

ATTNVIEW_BIN names the program (default build/src/attnview), ATTNVIEW_BOUND_TOOL
the bound tool (default build/tests/lib/bound_tool). Prints a table; asserts
nothing (the suite's tests hold the bounds).
"""

import json
import math
import os
import subprocess
import sys
import tempfile
from collections import OrderedDict

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
from attnview_torch import AttnviewModel, load, save  # noqa: E402
from attnview_torch.model import (SPECIAL_CP, NSPECIAL, Config, attend, forward,  # noqa: E402
                                  tensor_table)

BIN = os.environ.get("ATTNVIEW_BIN") or os.path.join(ROOT, "build", "src", "attnview")
BOUND_TOOL = (os.environ.get("ATTNVIEW_BOUND_TOOL")
              or os.path.join(ROOT, "build", "tests", "lib", "bound_tool"))
U = 2.0**-24

TEXTS = [
    "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
    "The only thing we have to fear is fear itself.",
    "Attention (注意力) is all you need! 你好，世界。",
    "学而时习之，不亦说乎？有朋自远方来，不亦乐乎？",
    "It was the best of times, it was the worst of times.",
    "Hi 你好😀 cafe\u0301 x\u0301!",
]


# measure_p and measure_weights both read the built-in model on TEXTS: each
# dump and each bound is computed once (a dump with more predictions serves
# one that asks for fewer: the attention weights are the same).
_dumps, _bounds = {}, {}


def _file_key(path):
    st = os.stat(path)
    return (path, st.st_mtime_ns, st.st_size)


def dump(model_path, text, top):
    key = (_file_key(model_path), text)
    have = _dumps.get(key)
    if have is not None and have[0] >= top:
        d = dict(have[1])
        d["predictions"] = [plist[:top] for plist in d.get("predictions", [])]
        return d
    p = subprocess.run([BIN, "--dump", "--top", str(top), "--model", model_path, "--text", text],
                       capture_output=True, check=True)
    d = json.loads(p.stdout)
    _dumps[key] = (top, d)
    return d


def bounds(model_path, ids):
    """tests/lib/bound_tool's binary64 weights and scores and the bounds of the
    weights, scores and prediction logits of one sequence."""
    key = (_file_key(model_path), tuple(ids))
    if key not in _bounds:
        p = subprocess.run([BOUND_TOOL, model_path, ",".join(map(str, ids))],
                           capture_output=True, check=True)
        b = json.loads(p.stdout)
        _bounds[key] = {k: torch.tensor(v, dtype=torch.float64) for k, v in b.items()}
    return _bounds[key]


def measure_p(model_path, out=sys.stdout):
    """Returns the worst relative and absolute differences from float64 and
    the mean relative difference (a bias)."""
    model = load(model_path)
    rel64 = rel32 = absd = bias = floor = ratio = 0.0
    n = 0
    for text in TEXTS:
        d = dump(model_path, text, 50)
        ids = [t["id"] for t in d["tokens"]]
        with torch.no_grad():
            pred64 = attend(model, ids, torch.float64)[3]
            pred32 = attend(model, ids, torch.float32)[3]
        p64 = torch.softmax(pred64, -1)
        p32 = torch.softmax(pred32.double(), -1)  # float32 logits, exact softmax
        # A change e of the logits moves p_i by p_i (e_i - sum_j p_j e_j); the
        # binary64 softmax and the rounding of p to binary32 add 2u p_i.
        lerr = bounds(model_path, ids)["pred_err"].reshape(p64.shape)
        perr = p64 * (lerr + (p64 * lerr).sum(-1, keepdim=True) + 2 * U)
        for pos, plist in enumerate(d["predictions"]):
            for e in plist:
                got, want, want32 = e["p"], float(p64[pos, e["id"]]), float(p32[pos, e["id"]])
                ratio = max(ratio, abs(got - want) / float(perr[pos, e["id"]]))
                r = (got - want) / want
                rel64 = max(rel64, abs(r))
                rel32 = max(rel32, abs(got - want32) / want32)
                floor = max(floor, abs(want32 - want) / want)
                absd = max(absd, abs(got - want))
                bias += r
                n += 1
    print("%s: %d probabilities (top 50 of %d positions, V = %d)"
          % (model_path, n, sum(len(tokens_of(t)) for t in TEXTS), model.cfg.vocab_size),
          file=out)
    print("  attnview vs float64 logits and softmax:  max relative %.2e, max absolute %.2e, "
          "mean relative %+.2e" % (rel64, absd, bias / n), file=out)
    print("  attnview vs float64 softmax of PyTorch's float32 logits: max relative %.2e"
          % rel32, file=out)
    print("  PyTorch float32 logits, float64 softmax, vs float64: max relative %.2e "
          "(what float32 logits allow)" % floor, file=out)
    print("  attnview vs float64, largest difference / its bound: %.2e" % ratio, file=out)
    return rel64, absd, bias / n, ratio


def tokens_of(text):
    from attnview_torch.tokenizer import tokenize_text
    return tokenize_text(text)


def random_model(std, seed, path):
    """d=64, h=4 (head size 16), L=2, T=128, every parameter N(0, std) except
    the LayerNorm gains, 1 + N(0, std)."""
    gen = torch.Generator().manual_seed(seed)
    chars = sorted({c for t in TEXTS for c in tokens_of(t)})
    vocab = [SPECIAL_CP + i for i in range(NSPECIAL)] + chars
    cfg = Config(0, len(vocab), 64, 4, 2, 128)
    params = OrderedDict()
    for name, shape in tensor_table(cfg):
        t = std * torch.randn(shape, generator=gen, dtype=torch.float64)
        if name.split(".")[-1] in ("ln1_w", "ln2_w") or name == "lnf_w":
            t += 1
        params[name] = t.float()
    meta = dict(name="std %g" % std, corpus="random", created=0, seed=seed)
    save(AttnviewModel.from_params(cfg, vocab, params, meta), path)
    return load(path)


def weights_of(path, out):
    """One model on TEXTS: its largest |z| and M = |q_i| |k_m| / sqrt(hs)
    (a bound of |z|), its largest weight difference from float64, PyTorch
    float32's, and the worst ratio of a difference to its bound (attnview's,
    and PyTorch float32's, which the same bound covers); checks that the
    bound tool's binary64 pass is PyTorch's binary64 pass."""
    model = load(path)
    hs = model.cfg.dim // model.cfg.heads
    zmax = mmax = da = dt = ratio = tratio = ref = 0.0
    for text in TEXTS:
        d = dump(path, "".join(map(chr, tokens_of(text)[:model.cfg.context])), 0)
        ids = [t["id"] for t in d["tokens"]]
        trace = []
        with torch.no_grad():
            att64, sc64 = attend(model, ids, torch.float64)[:2]
            att32 = attend(model, ids, torch.float32)[0]
            forward(model.cfg, model.params, torch.tensor([ids]), torch.float64, keep=False,
                    trace=trace)
        b = bounds(path, ids)
        err = b["att_err"].reshape(att64.shape)
        ref = max(ref, float((b["att"].reshape(att64.shape) - att64).abs().max()))
        got = torch.tensor([a["weights"] for a in d["attention"]], dtype=torch.float64)
        diff = (got.reshape(att64.shape) - att64).abs()
        z = (sc64 / math.sqrt(hs)).abs().nan_to_num(0)
        q = torch.stack([t["q"][0] for t in trace])  # (L,h,n,hs)
        k = torch.stack([t["k"][0] for t in trace])
        m = (q.norm(dim=-1)[..., :, None] * k.norm(dim=-1)[..., None, :]) / math.sqrt(hs)
        if model.cfg.causal:
            n = len(ids)
            m = m.masked_fill(torch.ones(n, n).triu(1).bool(), 0)
        zmax = max(zmax, float(z.max()))
        mmax = max(mmax, float(m.max()))
        da = max(da, float(diff.max()))
        dt = max(dt, float((att32.double() - att64).abs().max()))
        # Differences within 2^-125 (subnormal weights) are allowed for by
        # every bound and say nothing of the rest.
        tiny = 2.0**-125
        ratio = max(ratio, float((diff.masked_fill(diff <= tiny, 0) / err).max()))
        dt32 = (att32.double() - att64).abs()
        tratio = max(tratio, float((dt32.masked_fill(dt32 <= tiny, 0) / err).max()))
    print("  %-18s %9.1f %9.1f   %.2e   %.2e     %6.3f     %6.3f    %.0e"
          % (os.path.basename(path), zmax, mmax, da, dt, ratio, tratio, ref), file=out)
    return da, max(ratio, tratio), ref


def measure_weights(out=sys.stdout, stds=(0.02, 0.1, 0.3, 0.5, 1.0, 2.0, 4.0)):
    """The built-in model, the golden models and random models whose
    parameters have standard deviation `stds`. Returns the built-in model's
    largest difference and the worst ratio over all models."""
    print("attention weights against float64 on %d texts (M: a row's largest "
          "|q||k|/sqrt(hs), a bound of its |z|; ratio: the largest difference / its bound; "
          "ref: the bound tool's float64 against PyTorch's):" % len(TEXTS), file=out)
    print("  model                 max|z|     max M   attnview   PyTorch f32   ratio   "
          "PyTorch ratio  ref", file=out)
    golden = os.path.join(ROOT, "tests", "golden")
    builtin, worst, ref = weights_of(os.path.join(ROOT, "assets", "builtin.attn"), out)
    for name in ("fwd_masked", "fwd_causal", "train_masked", "train_causal"):
        r = weights_of(os.path.join(golden, name + ".attn"), out)
        worst, ref = max(worst, r[1]), max(ref, r[2])
    with tempfile.TemporaryDirectory() as tmp:
        for std in stds:
            path = os.path.join(tmp, "std %g.attn" % std)
            random_model(std, 15, path)
            r = weights_of(path, out)
            worst, ref = max(worst, r[1]), max(ref, r[2])
    print("worst ratio to the bound: %.3f; bound tool against PyTorch float64: %.1e"
          % (worst, ref), file=out)
    return builtin, worst, ref


def main(argv):
    what = argv[1] if len(argv) > 1 else "p"
    torch.set_num_threads(1)
    if what == "p":
        measure_p(argv[2] if len(argv) > 2 else os.path.join(ROOT, "assets", "builtin.attn"))
    elif what == "weights":
        measure_weights()
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
