"""Checkpoints of nanoGPT (karpathy/nanoGPT) and minGPT (karpathy/minGPT) as
those programs lay them out, read without their code: the tensors' names
and shapes, how to find the vocabulary, and their forward pass written again
here from their documented computation (the PyTorch side of the converter's
certificate, convert.py).

Both are GPT-2's decoder: a token table wte (V, d) and a learned position
table wpe (T, d), added (no scale); L pre-LayerNorm blocks
x += c_proj(attention(ln_1(x))), x += mlp.c_proj(gelu(mlp.c_fc(ln_2(x)))),
causal attention of h heads over c_attn's q | k | v (head j: columns
j*hs .. (j+1)*hs-1 of each), scaled by 1/sqrt(hs); ln_f, then lm_head
(V, d) without a bias, nanoGPT's tied to wte. nanoGPT's bias=False drops
every Linear's and LayerNorm's bias; its GELU is nn.GELU() (the erf form;
checkpoints from before mid-2023 used the tanh form), minGPT's the tanh form.
"""

import math

import torch
import torch.nn.functional as F

# A block's tensors: (nanoGPT/minGPT name, attnview name, has a bias)
BLOCK = (("ln_1", "ln1", True), ("attn.c_attn", "qkv", True), ("attn.c_proj", "proj", True),
         ("ln_2", "ln2", True), ("mlp.c_fc", "fc", True), ("mlp.c_proj", "fc2", True))

# minGPT's named configurations (mingpt/model.py, GPT.get_default_config and
# its model_type table): (n_layer, n_embd) -> (model_type, n_head). minGPT
# saves no n_head; a state dict whose sizes are one of these gets its n_head.
MINGPT_TYPES = {(12, 768): ("gpt2 / openai-gpt", 12), (24, 1024): ("gpt2-medium", 16),
                (36, 1280): ("gpt2-large", 20), (48, 1600): ("gpt2-xl", 25),
                (8, 512): ("gopher-44m", 16), (6, 192): ("gpt-mini", 6),
                (4, 128): ("gpt-micro", 4), (3, 48): ("gpt-nano", 3)}

GPT2_VOCABS = (50257, 50304)  # GPT-2's byte-pair vocabulary, and nanoGPT's padded one


def expected_names(n_layer, bias):
    """{name: attnview name} of the state dict (the mask buffers aside)."""
    names = {"transformer.wte.weight": "wte", "transformer.wpe.weight": "wpe",
             "transformer.ln_f.weight": "lnf_w", "lm_head.weight": "lm_head"}
    if bias:
        names["transformer.ln_f.bias"] = "lnf_b"
    for l in range(n_layer):
        for src, dst, has_bias in BLOCK:
            pre = "transformer.h.%d.%s." % (l, src)
            names[pre + "weight"] = "h%d.%s_w" % (l, dst)
            if bias and has_bias:
                names[pre + "bias"] = "h%d.%s_b" % (l, dst)
    return names


def mask_buffer(name):
    """Is this the causal-mask buffer a block's attention registers (minGPT
    always, nanoGPT before PyTorch 2.0): transformer.h.<l>.attn.bias?"""
    parts = name.split(".")
    return (len(parts) == 5 and parts[0] == "transformer" and parts[1] == "h"
            and parts[2].isdigit() and parts[3] == "attn" and parts[4] == "bias")


def forward(sd, n_head, ids, gelu_erf, dtype=torch.float32):
    """The checkpoint's own computation on one sequence: logits (n, V) and
    the attention weights (L, h, n, n). sd: the state dict (names without
    torch.compile's prefix), biases absent when the model has none."""
    def get(name):
        t = sd.get(name)
        return None if t is None else t.to(dtype)

    n = len(ids)
    wte, wpe = get("transformer.wte.weight"), get("transformer.wpe.weight")
    V, d = wte.shape
    hs = d // n_head
    x = wte[torch.tensor(ids)] + wpe[:n]
    mask = torch.ones(n, n, dtype=torch.bool).tril()
    atts = []
    l = 0
    while "transformer.h.%d.ln_1.weight" % l in sd:
        pre = "transformer.h.%d." % l

        def lin(name, u, pre=pre):
            return F.linear(u, get(pre + name + ".weight"), get(pre + name + ".bias"))

        def ln(name, u, pre=pre):
            return F.layer_norm(u, (d,), get(pre + name + ".weight"), get(pre + name + ".bias"),
                                1e-5)

        q, k, v = lin("attn.c_attn", ln("ln_1", x)).split(d, dim=-1)
        q, k, v = (t.view(n, n_head, hs).transpose(0, 1) for t in (q, k, v))
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(hs))
        att = torch.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        atts.append(att)
        y = (att @ v).transpose(0, 1).reshape(n, d)
        x = x + lin("attn.c_proj", y)
        h = lin("mlp.c_fc", ln("ln_2", x))
        h = F.gelu(h) if gelu_erf else F.gelu(h, approximate="tanh")
        x = x + lin("mlp.c_proj", h)
        l += 1
    x = F.layer_norm(x, (d,), get("transformer.ln_f.weight"), get("transformer.ln_f.bias"), 1e-5)
    return x @ get("lm_head.weight").T, torch.stack(atts)
