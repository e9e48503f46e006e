#!/usr/bin/python3
"""Training throughput of attnview's architecture in PyTorch (the
training speed comparison of doc/speed.md). Trains the model of attnview_ref.py on a UTF-8 corpus for a few
steps, once per thread count, and prints tokens/s: B*T input tokens per
optimizer step divided by the median step time of the measured steps (the
warm-up steps are not measured). Step time covers making the batch, forward,
loss, backward, gradient clipping and the AdamW update.

To be fair to PyTorch it uses PyTorch's own fastest pieces: torch.optim.AdamW
(foreach), clip_grad_norm_, and logits only at the rows with a target (as the
C trainer does).

    /usr/bin/python3 tests/reference/torch_train_bench.py CORPUS [options]

The last lines are machine-readable:
    torch_tokens_per_s threads=1 N
    torch_tokens_per_s threads=2 N
"""

import argparse
import collections
import math
import os
import re
import statistics
import sys
import time
import unicodedata

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnview_ref as ref  # noqa: E402

ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.|\x9b")


def read_corpus(path, max_bytes):
    """Roughly attnview's cleaning: escapes and controls out, CRLF -> LF,
    TAB -> space, NFC. Only the throughput matters here, not the text."""
    with open(path, "rb") as f:
        raw = f.read(max_bytes)
    text = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
    text = ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    text = "".join(c for c in text if not ref.is_control(ord(c)))
    return [ord(c) for c in unicodedata.normalize("NFC", text)]


def build_vocab(cps):
    counts = collections.Counter(cps)
    order = sorted(counts, key=lambda c: (-counts[c], c))
    return [ref.SPECIAL_CP + i for i in range(ref.NSPECIAL)] + order


def init_params(cfg, gen):
    """GPT-2 style, as model.h describes attnview's: N(0, 0.02) matrices,
    zero biases, gain 1, residual projections scaled by 1/sqrt(2L)."""
    params = collections.OrderedDict()
    for name, shape in ref.tensor_table(cfg):
        leaf = name.split(".")[-1]
        if len(shape) == 2:
            std = 0.02 / (math.sqrt(2 * cfg.layers) if leaf in ("proj_w", "fc2_w") else 1)
            t = std * torch.randn(shape, generator=gen)
        elif leaf.startswith("ln") and leaf.endswith("_w"):
            t = torch.ones(shape)
        else:
            t = torch.zeros(shape)
        params[name] = t.requires_grad_(True)
    return params


def make_batch(data, cfg, B, gen):
    T, V = cfg.context, cfg.vocab_size
    starts = torch.randint(0, len(data) - T - 1, (B, 1), generator=gen)
    win = data[starts + torch.arange(T + 1)]
    if cfg.causal:
        return win[:, :-1], win[:, 1:]
    x = win[:, :-1]
    chosen = torch.rand(B, T, generator=gen) < 0.15
    r = torch.rand(B, T, generator=gen)
    rand_ids = torch.randint(ref.NSPECIAL, V, (B, T), generator=gen)
    tokens = torch.where(chosen & (r < 0.8), torch.full_like(x, ref.TOK_MASK), x)
    tokens = torch.where(chosen & (r >= 0.8) & (r < 0.9), rand_ids, tokens)
    targets = torch.where(chosen, x, torch.full_like(x, -1))
    return tokens, targets


def run(data, cfg, args, threads):
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(args.seed)
    params = init_params(cfg, gen)
    decay = [p for k, p in params.items() if ref.is_decayed(k)]
    plain = [p for k, p in params.items() if not ref.is_decayed(k)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": plain, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8, foreach=True)
    sched = ref.AdamW({}, args.lr, args.warmup, args.steps)  # only for lr_at
    times, cpu, losses = [], [], []
    for step in range(args.warmup_steps + args.steps):
        t0, c0 = time.perf_counter(), time.process_time()
        tokens, targets = make_batch(data, cfg, args.batch, gen)
        for g in opt.param_groups:
            g["lr"] = sched.lr_at(min(step, args.steps - 1))
        opt.zero_grad(set_to_none=True)
        loss = ref.loss_fn(cfg, params, tokens, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params.values(), 1.0)
        opt.step()
        lv = loss.item()
        dt = time.perf_counter() - t0
        dc = time.process_time() - c0
        losses.append(lv)
        if step >= args.warmup_steps:
            times.append(dt)
            cpu.append(dc)
    med = statistics.median(times)
    tps = args.batch * cfg.context / med
    print("threads=%d: median step %.1f ms over %d steps, %.0f tokens/s, loss %.3f -> %.3f"
          % (threads, med * 1e3, len(times), tps, losses[0], losses[-1]), flush=True)
    # CPU time of the process per step: on a shared machine, with one thread,
    # the step's own work whatever else runs (bench_train prints the same).
    print("torch_cpu_ms_per_step threads=%d %.2f" % (threads, statistics.median(cpu) * 1e3),
          flush=True)
    return tps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--steps", type=int, default=20, help="measured steps (default 20)")
    ap.add_argument("--warmup-steps", type=int, default=3,
                    help="unmeasured steps first (default 3)")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--objective", choices=["masked", "causal"], default="masked")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=100, help="lr warmup steps (default 100)")
    ap.add_argument("--threads", default="1,2", help="comma-separated (default 1,2)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-bytes", type=int, default=64 << 20,
                    help="read at most this much of the corpus (default 64 MiB)")
    args = ap.parse_args()

    cps = read_corpus(args.corpus, args.max_bytes)
    if len(cps) < args.context + 2:
        sys.exit("torch_train_bench: %s: %d characters, fewer than one context (%d)"
                 % (args.corpus, len(cps), args.context))
    vocab = build_vocab(cps)
    index = {c: i for i, c in enumerate(vocab)}
    data = torch.tensor([index[c] for c in cps], dtype=torch.long)
    obj = ref.OBJ_MASKED if args.objective == "masked" else ref.OBJ_CAUSAL
    cfg = ref.Config(obj, len(vocab), args.dim, args.heads, args.layers, args.context)
    try:
        cfg.check()
    except (ref.FormatError, ref.ConfigError) as e:
        sys.exit("torch_train_bench: %s" % e)
    print("torch %s; corpus %s: %d characters, V=%d; d=%d h=%d L=%d T=%d B=%d %s, "
          "%d params" % (torch.__version__, args.corpus, len(cps), cfg.vocab_size, cfg.dim,
                         cfg.heads, cfg.layers, cfg.context, args.batch, args.objective,
                         ref.num_params(cfg)), flush=True)
    results = [(int(t), run(data, cfg, args, int(t))) for t in args.threads.split(",")]
    for t, tps in results:
        print("torch_tokens_per_s threads=%d %.0f" % (t, tps))


if __name__ == "__main__":
    main()
