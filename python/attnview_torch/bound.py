"""How far a binary32 computation of a model may be from exact arithmetic:
the first-order bound of man 5 attnview (NOTES, Accuracy), for every
attention weight and logit of one text.

The rules are those of the test suite's tests/lib/bound.c, carried over tensor
by tensor: every value is computed in float64 with the variance of the error
a binary32 implementation makes beside it (the probabilistic model of Higham
and Mary, 2019: each rounding multiplies by 1 + r, |r| <= u = 2^-24, the r
independent with mean zero), whatever order it sums in and whatever BLAS
kernel it calls:
  - a sum of k terms whose magnitudes add up to A: variance k (u A)^2;
  - exp, sqrt, tanh and erf within 2u, relative (erf: absolute), and the
    GELU within |x| (2u + 3u) whichever form, as PyTorch and attnview compute
    it (attnview's to 2.3u |x|, src/core/vec8.h);
  - an error entering an operation carried through its derivative, plus what
    the operation itself rounds.
A bound is LAMBDA = 8 standard deviations (plus 2^-125 for a weight: binary32's
subnormals). Two binary32 implementations each within it differ by at most
twice the bound: that is what the converter's certificate holds attnview and
PyTorch to.

    b = forward_bound(cfg, params, ids)      # params: the model file's tensors
    b["att"], b["att_err"]                   # (L, h, n, n)
    b["logits"], b["logits_err"]             # (n, V); ids 0..2 -inf, 0 for a
                                             # model without the special tokens
"""

import math

import torch

from .model import LN_EPS, NSPECIAL, positions

U = 2.0**-24
ELEM = 2 * U
LAMBDA = 8.0
TINY = 2.0**-125


def _sum_var(k, A):
    """The variance of a sum of k terms whose magnitudes add up to A."""
    return k * (U * A) ** 2


def _matmul(x, xs, W, b):
    """y = x W^T + b, W (out, in) as stored."""
    W = W.double()
    y = x @ W.T
    mag = x.abs() @ W.abs().T
    if b is not None:
        y = y + b.double()
        mag = mag + b.double().abs()
    return y, xs @ (W * W).T + _sum_var(W.shape[1] + 1, mag)


def _layernorm(u, s, g, b):
    C = u.shape[-1]
    g, b = g.double(), b.double()
    mean = u.mean(-1, keepdim=True)
    amean = u.abs().mean(-1, keepdim=True)
    smean = s.sum(-1, keepdim=True)
    dev = u - mean
    r = 1 / torch.sqrt((dev * dev).mean(-1, keepdim=True) + LN_EPS)
    xh = dev * r
    xsum = (xh * xh * s).sum(-1, keepdim=True)
    vmean, vx = smean / C**2, xsum / C**2
    rel_r = math.sqrt(0.25 * _sum_var(C + 4, 1) + ELEM**2 + 2 * U**2)
    out = xh * g + b
    gr2 = (g * r) ** 2
    prop = 3 * gr2 * (s + vmean + xh * xh * vx)
    rnd = (gr2 * (_sum_var(C + 1, amean) + (U * dev) ** 2)
           + (g * xh) ** 2 * (rel_r**2 + 2 * U**2) + (U * out) ** 2)
    return out, prop + 4 * rnd


def _gelu(x, xs, erf):
    a = x.abs()
    if erf:
        phi = torch.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        Phi = 0.5 * torch.erfc(-x / math.sqrt(2))
        der = Phi + x * phi
        out = x * Phi
        inner = phi * x * x * U  # the rounding of x / sqrt(2), through gelu
    else:
        S, A = math.sqrt(2 / math.pi), 0.044715
        t = torch.tanh(S * (x + A * x**3))
        dv = S * (1 + 3 * A * x * x)
        der = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dv
        out = 0.5 * x * (1 + t)
        inner = 0.5 * a * (1 - t * t) * 5 * U * S * (a + A * a**3)
    return out, der**2 * xs + 2 * (a * (ELEM + 3 * U)) ** 2 + 2 * inner**2


def _attention(q, sq, k, sk, v, sv, causal, dead):
    """One head: scores, weights and output with their variances; q, k, v
    (n, hs) and theirs."""
    n, hs = q.shape
    sc = q @ k.T
    mag = q.abs() @ k.abs().T
    sc_var = (q * q) @ sk.T + sq @ (k * k).T + _sum_var(hs, mag)
    z = sc / math.sqrt(hs)
    za = sc_var / hs + ((ELEM + 2 * U) * z) ** 2
    valid = torch.ones(n, n, dtype=torch.bool)
    if causal:
        valid = torch.tril(valid)
    zm = z.masked_fill(~valid, float("-inf"))
    zmax = zm.max(-1, keepdim=True).values
    za = za + ((ELEM + 3 * U) * (z - zmax)) ** 2
    e = torch.exp(zm - zmax)
    att = e / e.sum(-1, keepdim=True)
    mix = (att * att * za.masked_fill(~valid, 0)).sum(-1, keepdim=True)
    cnt = valid.sum(-1, keepdim=True).double()
    rnd = (2 * ELEM) ** 2 + cnt * U**2 + U**2
    att_var = (att * att * (2 * (za + mix) + rnd)).masked_fill(~valid, 0)
    y = att @ v
    y_var = att_var @ (v * v) + (att * att) @ sv + cnt * (U * (att @ v.abs())) ** 2
    if dead:
        y, y_var = torch.zeros_like(y), torch.zeros_like(y_var)
    sc = sc.masked_fill(~valid, float("nan"))
    return sc, sc_var.masked_fill(~valid, 0), att, att_var, y, y_var


def _embed(cfg, P, ids):
    n, d = len(ids), cfg.dim
    s = 1.0 if cfg.arch.scale else float(torch.tensor(math.sqrt(d), dtype=torch.float32))
    pe = (P["wpe"][:n] if cfg.arch.positions else positions(n, d)).double()
    e = s * P["wte"].double()[torch.tensor(ids)]
    x = e + pe
    return x, (U * e) ** 2 + (U * x) ** 2


def forward_bound(cfg, params, ids, ablate=()):
    """The float64 pass of ids with the bound of every weight, raw score and
    logit (see the module's comment); ablate: (layer, head) pairs off."""
    P = params
    d, H = cfg.dim, cfg.heads
    hs = d // H
    with torch.no_grad():
        x, xs = _embed(cfg, P, ids)
        att, att_err, score, score_err = [], [], [], []
        for l in range(cfg.layers):
            p = lambda s: P["h%d.%s" % (l, s)]  # noqa: E731
            a, as_ = _layernorm(x, xs, p("ln1_w"), p("ln1_b"))
            qkv, qs = _matmul(a, as_, p("qkv_w"), p("qkv_b"))
            ys, yv, la, lae, ls, lse = [], [], [], [], [], []
            for h in range(H):
                cols = [slice(o + h * hs, o + (h + 1) * hs) for o in (0, d, 2 * d)]
                r = _attention(qkv[:, cols[0]], qs[:, cols[0]], qkv[:, cols[1]],
                               qs[:, cols[1]], qkv[:, cols[2]], qs[:, cols[2]], cfg.causal,
                               (l, h) in ablate)
                ls.append(r[0]), lse.append(r[1]), la.append(r[2]), lae.append(r[3])
                ys.append(r[4]), yv.append(r[5])
            att.append(torch.stack(la)), att_err.append(torch.stack(lae))
            score.append(torch.stack(ls)), score_err.append(torch.stack(lse))
            y, ye = _matmul(torch.cat(ys, -1), torch.cat(yv, -1), p("proj_w"), p("proj_b"))
            x, xs = x + y, xs + ye + (U * (x + y)) ** 2
            b, bs = _layernorm(x, xs, p("ln2_w"), p("ln2_b"))
            f, fs = _matmul(b, bs, p("fc_w"), p("fc_b"))
            g, gs = _gelu(f, fs, cfg.arch.gelu)
            y, ye = _matmul(g, gs, p("fc2_w"), p("fc2_b"))
            x, xs = x + y, xs + ye + (U * (x + y)) ** 2
        o, os_ = _layernorm(x, xs, P["lnf_w"], P["lnf_b"])
        logits, ls = _matmul(o, os_, P["out_w"] if "out_w" in P else P["wte"], P["out_b"])
        if cfg.arch.specials:
            logits[:, :NSPECIAL] = float("-inf")
            ls[:, :NSPECIAL] = 0
        return dict(att=torch.stack(att), att_err=LAMBDA * torch.stack(att_err).sqrt() + TINY,
                    score=torch.stack(score),
                    score_err=LAMBDA * torch.stack(score_err).sqrt(),
                    logits=logits, logits_err=LAMBDA * ls.sqrt())
