"""attnview's optimiser (man 5 attnview, "Optimiser"; src/train/optimizer.c):
AdamW with beta1 0.9, beta2 0.95, eps 1e-8, weight decay 0.01 on the matrices
only, gradients clipped to a global norm of 1, linear warmup then cosine
decay to a tenth of the peak rate.

The trainer uses torch.optim.AdamW (same formulas) with lr_at() for the
schedule; AdamW below is the same step in plain tensor operations, the
reference the golden files of the C tests come from.
"""

import math

import torch

from .model import is_decayed

BETA1, BETA2, EPS, WEIGHT_DECAY, CLIP = 0.9, 0.95, 1e-8, 0.01, 1.0


def lr_at(s, lr, warmup, total):
    """The learning rate of step s (0-based)."""
    if s < warmup:
        return lr * (s + 1) / warmup
    lo = lr / 10
    p = (s - warmup) / max(1, total - warmup)
    p = min(p, 1.0)
    return lo + (lr - lo) * (1 + math.cos(math.pi * p)) / 2


def auto_warmup(total):
    """--warmup's default: min(100, total / 10)."""
    return min(100, total // 10)


def torch_adamw(named_params, lr):
    """torch.optim.AdamW with attnview's settings; named_params: file name ->
    parameter (decay on the matrices, none on biases and LayerNorm)."""
    decay = [p for k, p in named_params.items() if is_decayed(k)]
    plain = [p for k, p in named_params.items() if not is_decayed(k)]
    return torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                              {"params": plain, "weight_decay": 0.0}],
                             lr=lr, betas=(BETA1, BETA2), eps=EPS)


class AdamW:
    """AdamW with linear warmup, cosine decay to lr/10 and global norm
    clipping, in plain tensor ops (optimizer.h / man 5 attnview)."""

    def __init__(self, params, lr, warmup, total, beta1=BETA1, beta2=BETA2, eps=EPS,
                 weight_decay=WEIGHT_DECAY, clip=CLIP):
        self.lr, self.warmup, self.total = lr, warmup, total
        self.b1, self.b2, self.eps, self.wd, self.clip = beta1, beta2, eps, weight_decay, clip
        self.m = {k: torch.zeros_like(v) for k, v in params.items()}
        self.v = {k: torch.zeros_like(v) for k, v in params.items()}
        self.step_count = 0

    def lr_at(self, s):
        return lr_at(s, self.lr, self.warmup, self.total)

    def step(self, params, grads):
        """Updates params in place; returns (lr used, grad norm before clipping)."""
        s = self.step_count
        t = s + 1
        lr = self.lr_at(s)
        norm = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads.values()))
        scale = min(1.0, self.clip / (norm + 1e-6))
        bc1 = 1 - self.b1 ** t
        bc2 = 1 - self.b2 ** t
        with torch.no_grad():
            for k, p in params.items():
                g = grads[k] * scale
                m, v = self.m[k], self.v[k]
                m.mul_(self.b1).add_((1 - self.b1) * g)
                v.mul_(self.b2).add_((1 - self.b2) * g * g)
                if is_decayed(k):
                    p.sub_(lr * self.wd * p)
                p.sub_(lr * (m / bc1) / (torch.sqrt(v / bc2) + self.eps))
        self.step_count += 1
        return lr, norm
