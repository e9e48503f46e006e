#!/usr/bin/python3
"""Golden file for text written by a causal model (man 1 attnview,
WRITING TEXT): the logits after a text from the PyTorch forward of
python/attnview_torch, and the characters the sampler picks, greedy and at
two temperatures, with the sampler and its random number generator written
again here from the man page (xoshiro256** seeded through splitmix64, 24-bit
uniforms), independently of the C code.

    /usr/bin/python3 tests/reference/gen_generate_golden.py [OUTDIR]

Writes tests/golden/generate_causal.golden from tests/golden/fwd_causal.attn
(see tests/reference/README.md for the tensor format). Each choice is made on
float32 logits that attnview computes to within about 1e-6; the script
prints the smallest margin by which any choice was made, so that a margin
near that size (a choice the C program could make differently) shows.
"""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnview_ref as ref  # noqa: E402
from gen_golden import write_tensor  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "golden")
MASK64 = (1 << 64) - 1

TEXT = "The cat"
STEPS = 24
# (name, temperature, top_k, seed); temperature 0 is greedy.
RUNS = [("greedy", 0.0, 0, 1), ("t08_k20_s1", 0.8, 20, 1), ("t15_all_s7", 1.5, 0, 7),
        ("t1_k3_s42", 1.0, 3, 42)]


class Rng:
    """xoshiro256**, seeded with four outputs of splitmix64."""

    def __init__(self, seed):
        self.s = []
        x = seed & MASK64
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & MASK64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
            self.s.append(z ^ (z >> 31))

    def next(self):
        s = self.s
        rotl = lambda v, k: ((v << k) | (v >> (64 - k))) & MASK64  # noqa: E731
        result = (rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def uniform(self):
        """[0, 1) with 24 bits."""
        return (self.next() >> 40) / 16777216.0


def pick(logits, temperature, top_k, rng):
    """The sampler of man 1 attnview, WRITING TEXT. Returns (id, margin):
    the margin is how far the decision was from going another way, in the
    units of the logits."""
    V = len(logits)
    cands = sorted(range(ref.NSPECIAL, V), key=lambda i: (-logits[i], i))
    if temperature == 0:
        return cands[0], logits[cands[0]] - logits[cands[1]]
    k = top_k if 0 < top_k < len(cands) else len(cands)
    top = cands[:k]
    w = [math.exp((logits[i] - logits[top[0]]) / temperature) for i in top]
    total = sum(w)
    u = rng.uniform() * total
    run = 0.0
    for j, i in enumerate(top):
        before = run
        run += w[j]
        if run > u:
            # distance of u from the two ends of this candidate's interval,
            # relative to the total: how much the weights may move
            return i, min(u - before, run - u) / total
    return top[-1], 0.0


def main():
    torch.set_num_threads(1)
    model = ref.load(os.path.join(ROOT, "tests", "golden", "fwd_causal.attn"))
    cfg, params = model.cfg, model.params
    start = model.token_ids(ref.text_to_cps(TEXT))
    path = os.path.join(OUT, "generate_causal.golden")
    smallest = {}
    with open(path, "w") as f, torch.no_grad():
        write_tensor(f, "ids", [float(i) for i in start])
        final, _, _ = ref.forward(cfg, params, torch.tensor([start]), keep=False)
        write_tensor(f, "logits", ref.logits_of(params, final)[0, -1])
        for name, temp, k, seed in RUNS:
            rng, ids, probs = Rng(seed), list(start), []
            margin = math.inf
            for _ in range(STEPS):
                final, _, _ = ref.forward(cfg, params, torch.tensor([ids]), keep=False)
                logits = ref.logits_of(params, final)[0, -1]
                nxt, m = pick(logits.tolist(), temp, k, rng)
                margin = min(margin, m)
                probs.append(torch.softmax(logits.double(), 0)[nxt].item())
                ids.append(nxt)
            write_tensor(f, "run_" + name, [temp, float(k), float(seed)])
            write_tensor(f, "gen_" + name, [float(i) for i in ids[len(start):]])
            write_tensor(f, "p_" + name, probs)
            smallest[name] = margin
    print("%s: %d tokens of %r, %d steps per run; smallest margins: %s" % (
        path, len(start), TEXT, STEPS,
        ", ".join("%s %.3g" % (n, m) for n, m in smallest.items())))


if __name__ == "__main__":
    main()
