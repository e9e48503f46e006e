#!/usr/bin/python3
"""A converted nanoGPT model for the test suite's screens and C tests: a
small checkpoint in nanoGPT's layout (its tensor names; random weights from a
fixed seed, nothing of nanoGPT's code), converted with the package's
converter (python/attnview_torch/convert.py) into tests/golden/nanogpt.attn.

    /usr/bin/python3 tests/reference/gen_nanogpt_golden.py [OUTDIR]

The checkpoint: 2 layers of 3 heads, width 24, context 48, bias=True, the
characters of TEXT (line breaks included), the erf GELU; its ckpt.pt and
data/golden/meta.pkl are written to a temporary folder, which the converter
runs in (it finds the meta.pkl where nanoGPT's sample.py looks). The file
is the same byte for byte on every run (fixed seed, SOURCE_DATE_EPOCH).
"""

import os
import pickle
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "golden")
TEXT = ("ROMEO:\nBut soft, what light through yonder window breaks?\n"
        "JULIET:\nO Romeo, Romeo! wherefore art thou Romeo?\n")
L, H, D, T = 2, 3, 24, 48


def checkpoint(chars):
    """nanoGPT's names: transformer.{wte,wpe,h.<l>.{ln_1,attn.c_attn,attn.c_proj,ln_2,
    mlp.c_fc,mlp.c_proj},ln_f}, lm_head tied to wte; weights N(0, 0.3), biases
    N(0, 0.1), LayerNorm gains 1 + N(0, 0.1)."""
    g = torch.Generator().manual_seed(41)

    def r(*shape, std=0.3, mean=0.0):
        return torch.randn(*shape, generator=g) * std + mean

    V = len(chars)
    sd = {"transformer.wte.weight": r(V, D), "transformer.wpe.weight": r(T, D)}
    for l in range(L):
        p = "transformer.h.%d." % l
        for name, out, inp in (("attn.c_attn", 3 * D, D), ("attn.c_proj", D, D),
                               ("mlp.c_fc", 4 * D, D), ("mlp.c_proj", D, 4 * D)):
            sd[p + name + ".weight"] = r(out, inp)
            sd[p + name + ".bias"] = r(out, std=0.1)
        for ln in ("ln_1", "ln_2"):
            sd[p + ln + ".weight"] = r(D, std=0.1, mean=1.0)
            sd[p + ln + ".bias"] = r(D, std=0.1)
    sd["transformer.ln_f.weight"] = r(D, std=0.1, mean=1.0)
    sd["transformer.ln_f.bias"] = r(D, std=0.1)
    sd["lm_head.weight"] = sd["transformer.wte.weight"]
    return {"model": sd, "iter_num": 500, "best_val_loss": torch.tensor(1.25),
            "model_args": dict(n_layer=L, n_head=H, n_embd=D, block_size=T, bias=True,
                               vocab_size=V, dropout=0.0),
            "config": {"dataset": "golden", "batch_size": 8, "block_size": T,
                       "gradient_accumulation_steps": 1}}


def main():
    chars = sorted(set(TEXT))
    out = os.path.abspath(os.path.join(OUT, "nanogpt.attn"))
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "out"))
        os.makedirs(os.path.join(tmp, "data", "golden"))
        torch.save(checkpoint(chars), os.path.join(tmp, "out", "ckpt.pt"))
        with open(os.path.join(tmp, "data", "golden", "meta.pkl"), "wb") as f:
            pickle.dump({"vocab_size": len(chars), "itos": dict(enumerate(chars)),
                         "stoi": {c: i for i, c in enumerate(chars)}}, f)
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"),
                   SOURCE_DATE_EPOCH="1767225600")
        if os.path.exists(out):
            os.unlink(out)
        # (the certificate does not change the file's bytes)
        subprocess.run([sys.executable, "-m", "attnview_torch.convert", "out/ckpt.pt", "-o", out],
                       cwd=tmp, env=env, check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
