#!/usr/bin/python3
"""Regenerate every golden file under tests/golden/ from the PyTorch reference.

    /usr/bin/python3 tests/reference/gen_golden.py [OUTDIR]

Deterministic (fixed seeds, fixed creation date, single thread): rerunning
gives byte-identical files on the same OpenBLAS kernel and threads: the
committed ones come from OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=2
(other kernels, or one thread, round some products differently in the last
bits). See tests/reference/README.md for what each file
holds. Prints, for information, how far the float32 results are from the
same computation in float64 (a guide for the C tests' tolerances).
"""

import math
import os
import sys
from collections import OrderedDict

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnview_ref as ref  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "golden")
CREATED = 1767225600  # 2026-01-01T00:00:00Z, fixed so the files are reproducible

# The texts exactly as given to the tokenizer (not normalised). Input 2 has an
# emoji, "x" + U+0301 (no precomposed form: stays two codepoints) and
# "e" + U+0301 (NFC composes it to U+00E9). Input 5 is exactly the causal
# model's context (32).
INPUTS = [
    "床前明月光，疑是地上霜。",
    'Yes, the cat\'s "mat" (again)!',
    "Hi 你好😀 x\u0301 cafe\u0301!",
    "Zebra 象 at 7pm?",
    "月",
    "Attention (注意力) is all you need!",
]

# Characters left out of each golden model's vocabulary, so unknowns occur;
# extras are in the vocabulary but not in any input.
FWD_MODELS = [
    dict(name="fwd_masked", objective=ref.OBJ_MASKED, dim=32, heads=4, layers=2, context=64,
         seed=1001, leave_out="霜象", extra="中国😺\u0302bdgjkqvwxz"),
    dict(name="fwd_causal", objective=ref.OBJ_CAUSAL, dim=24, heads=3, layers=2, context=32,
         seed=2002, leave_out="月Z", extra="中😺bdg"),
]


def fmt(x):
    return "nan" if math.isnan(x) else "%.9e" % x


def write_tensor(f, name, t):
    t = torch.as_tensor(t, dtype=torch.float32)
    dims = " ".join(str(s) for s in t.shape) if t.dim() else "1"
    f.write("tensor %s %s\n" % (name, dims))
    vals = t.reshape(-1).tolist()
    for i in range(0, len(vals), 8):
        f.write(" ".join(fmt(v) for v in vals[i:i + 8]) + "\n")


def random_params(cfg, gen, mat_std, bias_std, gain_std):
    """Large random weights: attention far from uniform, gradients not tiny."""
    params = OrderedDict()
    for name, shape in ref.tensor_table(cfg):
        leaf = name.split(".")[-1]
        if leaf.startswith("ln") and leaf.endswith("_w"):
            t = 1 + gain_std * torch.randn(shape, generator=gen)
        elif len(shape) == 2:
            t = mat_std * torch.randn(shape, generator=gen)
        else:
            t = bias_std * torch.randn(shape, generator=gen)
        params[name] = t.to(torch.float32)
    return params


def shuffled(items, gen):
    perm = torch.randperm(len(items), generator=gen).tolist()
    return [items[i] for i in perm]


def make_vocab(chars, gen):
    return [ref.SPECIAL_CP + i for i in range(ref.NSPECIAL)] + shuffled(sorted(chars), gen)


def save_model(model, name):
    data = ref.serialize(model)
    path = os.path.join(OUT, name + ".attn")
    with open(path, "wb") as f:
        f.write(data)
    again = ref.load(path)  # the loader must accept what the writer wrote
    assert again.vocab == model.vocab
    for k, v in model.params.items():
        assert torch.equal(again.params[k], v), k
    return again


def config_tensor(cfg):
    return [cfg.objective, cfg.vocab_size, cfg.dim, cfg.heads, cfg.layers, cfg.context]


def gen_forward(spec, texts):
    gen = torch.Generator().manual_seed(spec["seed"])
    chars = set()
    for s in texts:
        chars |= set(ref.text_to_cps(s))
    chars |= {ord(c) for c in spec["extra"]}
    chars -= {ord(c) for c in spec["leave_out"]}
    vocab = make_vocab(chars, gen)
    cfg = ref.Config(spec["objective"], len(vocab), spec["dim"], spec["heads"],
                     spec["layers"], spec["context"])
    cfg.check()
    params = random_params(cfg, gen, 0.3, 0.1, 0.1)
    meta = dict(name="golden " + spec["name"], corpus="random weights (tests/reference)",
                created=CREATED, seed=spec["seed"])
    model = save_model(ref.Model(cfg, vocab, params, meta), spec["name"])

    worst = dict(att=0.0, scores=0.0, logits=0.0, pred=0.0)
    path = os.path.join(OUT, spec["name"] + ".golden")
    with open(path, "w") as f, torch.no_grad():
        write_tensor(f, "config", config_tensor(cfg))
        write_tensor(f, "vocab", [float(cp) for cp in vocab])
        for i, text in enumerate(texts):
            cps = ref.text_to_cps(text)
            assert 1 <= len(cps) <= cfg.context
            ids = model.token_ids(cps)
            att, scores, logits, pred = ref.attend(model, ids)
            p = "in%d." % i
            write_tensor(f, p + "cps", [float(c) for c in cps])
            write_tensor(f, p + "ids", [float(t) for t in ids])
            write_tensor(f, p + "att", att)
            write_tensor(f, p + "scores", scores)
            write_tensor(f, p + "logits", logits)
            write_tensor(f, p + "pred_logits", pred)
            # float32 against float64: the rounding noise any float32
            # implementation may show
            a64, s64, l64, p64 = ref.attend(model, ids, torch.float64)
            for key, x32, x64 in (("att", att, a64), ("scores", scores, s64),
                                  ("logits", logits, l64), ("pred", pred, p64)):
                d = (x32.double() - x64).abs().nan_to_num(0.0).max().item()
                worst[key] = max(worst[key], d)
            rows = att.sum(-1)
            assert (rows - 1).abs().max() < 1e-5
            if cfg.causal:
                assert torch.all(att.triu(1) == 0)
    print("%s: V=%d, float32 vs float64 max |diff|: %s" % (
        spec["name"], cfg.vocab_size, ", ".join("%s %.2g" % kv for kv in worst.items())))
    return model


# ---------------------------------------------------------------- training

TRAIN_MODELS = [
    dict(name="train_masked", objective=ref.OBJ_MASKED, seed=3003),
    dict(name="train_causal", objective=ref.OBJ_CAUSAL, seed=4004),
]
TRAIN_CHARS = "abcdefghijklmnopqrstuvw 月光。"  # 27 characters + 3 specials = V 30
TRAIN_B, TRAIN_T = 3, 12
TRAIN_LR, TRAIN_WARMUP, TRAIN_TOTAL, TRAIN_CLIP = 1e-2, 3, 10, 1.0


def masked_batch(gen, V):
    """15% of positions chosen (at least one per row); of those 80% -> mask,
    10% -> a random character, 10% kept. target = original id there, else -1."""
    orig = torch.randint(ref.NSPECIAL, V, (TRAIN_B, TRAIN_T), generator=gen)
    tokens = orig.clone()
    targets = torch.full_like(orig, -1)
    for b in range(TRAIN_B):
        chosen = (torch.rand(TRAIN_T, generator=gen) < 0.15).nonzero().squeeze(1).tolist()
        if not chosen:
            chosen = [int(torch.randint(0, TRAIN_T, (1,), generator=gen))]
        for t in chosen:
            targets[b, t] = orig[b, t]
            r = float(torch.rand(1, generator=gen))
            if r < 0.8:
                tokens[b, t] = ref.TOK_MASK
            elif r < 0.9:
                tokens[b, t] = int(torch.randint(ref.NSPECIAL, V, (1,), generator=gen))
    return tokens, targets


def causal_batch(gen, V):
    """T+1 characters per row; targets are the next ones (all positions)."""
    seq = torch.randint(ref.NSPECIAL, V, (TRAIN_B, TRAIN_T + 1), generator=gen)
    return seq[:, :-1].clone(), seq[:, 1:].clone()


def grads_of(cfg, params, tokens, targets, dtype=torch.float32):
    leaves = OrderedDict((k, v.detach().to(dtype).requires_grad_(True))
                         for k, v in params.items())
    loss = ref.loss_fn(cfg, leaves, tokens, targets)
    loss.backward()
    return loss.detach(), OrderedDict((k, v.grad.detach()) for k, v in leaves.items())


def run_adamw(cfg, params, tokens, targets, dtype):
    params = OrderedDict((k, v.detach().to(dtype).clone()) for k, v in params.items())
    opt = ref.AdamW(params, TRAIN_LR, TRAIN_WARMUP, TRAIN_TOTAL, clip=TRAIN_CLIP)
    losses, lrs, norms = [], [], []
    for _ in range(TRAIN_TOTAL):
        loss, grads = grads_of(cfg, params, tokens, targets, dtype)
        lr, norm = opt.step(params, grads)
        losses.append(float(loss))
        lrs.append(lr)
        norms.append(norm)
    return params, losses, lrs, norms


def undetermined(cfg, params):
    """The key bias cannot change the output: it adds q.b_k to every score of
    a query row, and softmax ignores a constant added to a row. Its gradient is
    zero in exact arithmetic; what any implementation computes is rounding
    noise, which Adam's g/sqrt(v) turns into updates of about +-lr. So the key
    bias after AdamW steps is not reproducible across implementations (nor
    across float32 and float64): it is written as NaN, and tests skip it."""
    d = cfg.dim
    for l in range(cfg.layers):
        params["h%d.qkv_b" % l][d:2 * d] = float("nan")


def gen_train(spec):
    gen = torch.Generator().manual_seed(spec["seed"])
    vocab = make_vocab({ord(c) for c in TRAIN_CHARS}, gen)
    cfg = ref.Config(spec["objective"], len(vocab), 16, 2, 2, TRAIN_T)
    cfg.check()
    params = random_params(cfg, gen, 0.2, 0.2, 0.2)
    meta = dict(name="golden " + spec["name"], corpus="random weights (tests/reference)",
                created=CREATED, seed=spec["seed"])
    save_model(ref.Model(cfg, vocab, params, meta), spec["name"])
    if cfg.causal:
        tokens, targets = causal_batch(gen, cfg.vocab_size)
    else:
        tokens, targets = masked_batch(gen, cfg.vocab_size)

    loss, grads = grads_of(cfg, params, tokens, targets)
    final, losses, lrs, norms = run_adamw(cfg, params, tokens, targets, torch.float32)
    undetermined(cfg, final)

    path = os.path.join(OUT, spec["name"] + ".golden")
    with open(path, "w") as f:
        write_tensor(f, "config", config_tensor(cfg))
        write_tensor(f, "hyper", [TRAIN_LR, TRAIN_WARMUP, TRAIN_TOTAL, TRAIN_CLIP,
                                  0.9, 0.95, 1e-8, 0.01])
        write_tensor(f, "tokens", tokens.float())
        write_tensor(f, "targets", targets.float())
        write_tensor(f, "loss", [float(loss)])
        for k, g in grads.items():
            write_tensor(f, "grad." + k, g)
        write_tensor(f, "adamw.losses", losses)
        write_tensor(f, "adamw.lr", lrs)
        write_tensor(f, "adamw.grad_norm", norms)
        for k, p in final.items():
            write_tensor(f, "final." + k, p)

    # The same in float64, for information on tolerances.
    loss64, grads64 = grads_of(cfg, params, tokens, targets, torch.float64)
    final64, losses64, _, _ = run_adamw(cfg, params, tokens, targets, torch.float64)
    undetermined(cfg, final64)
    gd = max((grads[k].double() - grads64[k]).abs().max().item() for k in grads)
    gmax = max(g.abs().max().item() for g in grads.values())
    pd = max((final[k].double() - final64[k]).abs().nan_to_num(0.0).max().item()
             for k in final)
    ld = max(abs(a - b) for a, b in zip(losses, losses64))
    print("%s: V=%d, %d targets, loss %.6f, float32 vs float64 max |diff|: loss %.2g, "
          "grads %.2g (largest |grad| %.3g), adamw losses %.2g, final params %.2g" % (
              spec["name"], cfg.vocab_size, int((targets >= 0).sum()), float(loss),
              abs(float(loss) - float(loss64)), gd, gmax, ld, pd))


def main():
    global OUT
    if len(sys.argv) > 1:  # another directory, e.g. to compare with the committed files
        OUT = sys.argv[1]
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "inputs.txt"), "w", encoding="utf-8", newline="\n") as f:
        for s in INPUTS:
            assert "\n" not in s
            f.write(s + "\n")
    for spec in FWD_MODELS:
        gen_forward(spec, INPUTS)
    for spec in TRAIN_MODELS:
        gen_train(spec)


if __name__ == "__main__":
    main()
