"""The attnview model in PyTorch: hyperparameters, the parameter table, the
forward pass of man 5 attnview ("FORWARD COMPUTATION") and the loss.

The forward pass is written once, as `forward(cfg, params, tokens)` on a dict
of tensors named as in the model file (`wte`, `h0.ln1_w`, ..., `out_b`).
`AttnviewModel`, the `nn.Module` the trainer and users work with, calls it with
its own parameters; the golden files of tests/reference/ come from the same
function, so the model trained here is the model the C tests are checked
against.
"""

import functools
import math
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

OBJ_MASKED, OBJ_CAUSAL = 0, 1
OBJECTIVES = {OBJ_MASKED: "masked", OBJ_CAUSAL: "causal"}
TOK_PAD, TOK_UNK, TOK_MASK = 0, 1, 2
NSPECIAL = 3
SPECIAL_CP = 0x110000  # vocabulary entry of special token i: SPECIAL_CP + i

# The loader's limits (include/attnview/common.h).
MAX_CONTEXT = 1024
MAX_DIM = 2048
MAX_HEADS = 64
MAX_LAYERS = 32
MAX_VOCAB = 200000
MAX_PARAMS = 1 << 28
MAX_ATTN_CELLS = 1 << 27

LN_EPS = 1e-5
POS_BASE = 10000.0
INIT_STD = 0.02

# Matrices get weight decay in AdamW; vectors (biases, LayerNorm) do not.
DECAYED = ("wte", "qkv_w", "proj_w", "fc_w", "fc2_w")
LAYER_TENSORS = ("ln1_w", "ln1_b", "qkv_w", "qkv_b", "proj_w", "proj_b",
                 "ln2_w", "ln2_b", "fc_w", "fc_b", "fc2_w", "fc2_b")


class ConfigError(ValueError):
    """Impossible hyperparameters."""


# The architecture variants (man 5 attnview, "Architecture"; model_arch in
# include/attnview/model.h): each field with the names of its values, in the
# order a version-2 file holds them. 0 everywhere is attnview's own.
ARCH_FIELDS = (("positions", ("sinusoidal", "learned")),
               ("gelu", ("tanh", "erf")),
               ("scale", ("sqrt(d)", "1")),
               ("output", ("tied", "untied")),
               ("specials", ("own", "none")),
               ("biases", ("yes", "none")),
               ("origin", ("attnview", "nanoGPT", "minGPT")))
ARCH_NAMES = tuple(f for f, _ in ARCH_FIELDS)


class Arch:
    """A model's architecture: an int per field of ARCH_FIELDS, by name or by
    value name (Arch(positions="learned", gelu="erf")); every field 0 is
    attnview's own architecture."""

    def __init__(self, **fields):
        for name, values in ARCH_FIELDS:
            v = fields.pop(name, 0)
            setattr(self, name, values.index(v) if isinstance(v, str) else int(v))
        if fields:
            raise TypeError("no architecture field %s" % ", ".join(sorted(fields)))

    def as_tuple(self):
        return tuple(getattr(self, n) for n in ARCH_NAMES)

    @property
    def own(self):
        """attnview's own architecture (the origin aside)."""
        return not any(self.as_tuple()[:-1])

    def name(self, field):
        return dict(ARCH_FIELDS)[field][getattr(self, field)]

    def __eq__(self, other):
        return isinstance(other, Arch) and self.as_tuple() == other.as_tuple()

    def __repr__(self):
        return "Arch(%s)" % ", ".join("%s=%r" % (n, self.name(n)) for n in ARCH_NAMES)


class Config:
    """Objective, vocabulary size, the four sizes of the header and the
    architecture (Arch; None: attnview's own)."""

    def __init__(self, objective, vocab_size, dim, heads, layers, context, arch=None):
        self.objective = objective
        self.vocab_size = vocab_size
        self.dim = dim
        self.heads = heads
        self.layers = layers
        self.context = context
        self.arch = arch if arch is not None else Arch()

    @property
    def causal(self):
        return self.objective == OBJ_CAUSAL

    def as_tuple(self):
        return (self.objective, self.vocab_size, self.dim, self.heads, self.layers,
                self.context)

    def __eq__(self, other):
        return (isinstance(other, Config) and self.as_tuple() == other.as_tuple()
                and self.arch == other.arch)

    def __repr__(self):
        return ("Config(objective=%s, vocab_size=%d, dim=%d, heads=%d, layers=%d, "
                "context=%d%s)" % ((OBJECTIVES.get(self.objective, self.objective),)
                                   + self.as_tuple()[1:]
                                   + ("" if not any(self.arch.as_tuple())
                                      else ", arch=%r" % self.arch,)))

    def check(self):
        """The rules of attnview's loader (model_config_check); raises
        ConfigError naming the first one broken."""
        if self.objective not in OBJECTIVES:
            raise ConfigError("objective %d is unknown (0 masked, 1 causal)" % self.objective)
        for name, values in ARCH_FIELDS:
            if not 0 <= getattr(self.arch, name) < len(values):
                raise ConfigError("architecture field %s is %d, which is unknown (0..%d)"
                                  % (name, getattr(self.arch, name), len(values) - 1))
        if self.arch.specials and not self.causal:
            raise ConfigError("a model without the special tokens must be causal: the masked "
                              "objective needs the mask token")
        if not NSPECIAL + 1 <= self.vocab_size <= MAX_VOCAB:
            raise ConfigError("vocabulary size %d is outside %d..%d"
                              % (self.vocab_size, NSPECIAL + 1, MAX_VOCAB))
        if not 2 <= self.dim <= MAX_DIM or self.dim % 2:
            raise ConfigError("dimension %d must be even and within 2..%d" % (self.dim, MAX_DIM))
        if not 1 <= self.heads <= MAX_HEADS:
            raise ConfigError("%d heads is outside 1..%d" % (self.heads, MAX_HEADS))
        if self.dim % self.heads:
            raise ConfigError("dimension %d is not divisible by %d heads"
                              % (self.dim, self.heads))
        if not 1 <= self.layers <= MAX_LAYERS:
            raise ConfigError("%d layers is outside 1..%d" % (self.layers, MAX_LAYERS))
        if not 1 <= self.context <= MAX_CONTEXT:
            raise ConfigError("context %d is outside 1..%d tokens" % (self.context, MAX_CONTEXT))
        cells = self.layers * self.heads * self.context * self.context
        if cells > MAX_ATTN_CELLS:
            raise ConfigError("%d attention weights per text, more than the limit of %d"
                              % (cells, MAX_ATTN_CELLS))
        if num_params(self) > MAX_PARAMS:
            raise ConfigError("%d parameters is more than the limit of %d"
                              % (num_params(self), MAX_PARAMS))


def tensor_table(cfg):
    """[(name, shape)] in file order (model_tensor_table)."""
    d, V = cfg.dim, cfg.vocab_size
    shapes = {"ln1_w": (d,), "ln1_b": (d,), "qkv_w": (3 * d, d), "qkv_b": (3 * d,),
              "proj_w": (d, d), "proj_b": (d,), "ln2_w": (d,), "ln2_b": (d,),
              "fc_w": (4 * d, d), "fc_b": (4 * d,), "fc2_w": (d, 4 * d), "fc2_b": (d,)}
    t = [("wte", (V, d))]
    if cfg.arch.positions:
        t.append(("wpe", (cfg.context, d)))
    for l in range(cfg.layers):
        t += [("h%d.%s" % (l, leaf), shapes[leaf]) for leaf in LAYER_TENSORS]
    t += [("lnf_w", (d,)), ("lnf_b", (d,))]
    if cfg.arch.output:
        t.append(("out_w", (V, d)))
    return t + [("out_b", (V,))]


def num_params(cfg):
    d, V = cfg.dim, cfg.vocab_size
    return (V * d + cfg.layers * (12 * d * d + 13 * d) + 2 * d + V
            + cfg.arch.positions * cfg.context * d + cfg.arch.output * V * d)


def is_bias(name):
    """The tensors a model without biases has as zeros (every bias and
    LayerNorm shift): those attnview initialises to zero."""
    return name.split(".")[-1] in ("ln1_b", "ln2_b", "qkv_b", "proj_b", "fc_b", "fc2_b",
                                   "lnf_b", "out_b")


def is_decayed(name):
    return name.split(".")[-1] in DECAYED


# ---------------------------------------------------------------- forward

@functools.lru_cache(maxsize=16)
def _positions64(T, d):
    pe = torch.zeros(T, d, dtype=torch.float64)
    for i in range(d // 2):
        w = math.pow(POS_BASE, -2.0 * i / d)
        for t in range(T):
            pe[t, 2 * i] = math.sin(t * w)
            pe[t, 2 * i + 1] = math.cos(t * w)
    return pe.to(torch.float32)


@functools.lru_cache(maxsize=32)
def _positions_on(T, d, device):
    return _positions64(T, d).to(device)


def positions(T, d, device=None):
    """pe (T,d): sin/cos computed in float64, rounded to float32 (section 1).
    Cached: callers must not modify the result in place."""
    if device is None or torch.device(device).type == "cpu":
        return _positions64(T, d)
    return _positions_on(T, d, torch.device(device))


def gelu(x, erf=False):
    """The tanh form (attnview's), or the exact one with erf."""
    return F.gelu(x) if erf else F.gelu(x, approximate="tanh")


@functools.lru_cache(maxsize=32)
def _causal_mask(n, device):
    return torch.triu(torch.ones(n, n, dtype=torch.bool, device=device), diagonal=1)


def forward(cfg, params, tokens, dtype=None, keep=True, ablate=(), trace=None, hook=None):
    """The forward pass of man 5 attnview, sections 1-5.

    params: name -> tensor, the names of the model file; tokens: LongTensor
    (B,n), n <= T. Returns (final (B,n,d) after the last LayerNorm, att,
    scores) where att[l] and scores[l] are (B,h,n,n), the softmax weights and
    the raw scores q.k, NaN where causally masked; with keep=False the two
    lists are empty (training needs neither). Computes in `dtype` (default:
    the parameters' own, float32 from a file).

    ablate: (layer, head) pairs switched off (section 7): their part of the
    attention output is zero before the output projection. trace: a list
    that receives, per layer, a dict with q, k, v (B,h,n,hs), y (B,h,n,hs)
    each head's output (after ablate, before the projection) and x (B,n,d)
    the residual stream after the block. hook: a function (layer, y) -> y
    given each head's output y (B,h,n,hs) after ablate, whose result
    replaces it (activation patching, section 11)."""
    dtype = dtype or params["wte"].dtype
    P = {k: v.to(dtype) for k, v in params.items()}
    B, n = tokens.shape
    d, nh = cfg.dim, cfg.heads
    hs = d // nh
    assert n <= cfg.context, "%d tokens, the context is %d" % (n, cfg.context)
    dev = tokens.device
    arch = cfg.arch
    # sqrt(d) rounded to float32 (section 2), or 1
    scale = torch.tensor(1.0 if arch.scale else math.sqrt(d), dtype=torch.float32).to(dtype)
    pe = P["wpe"][:n] if arch.positions else positions(n, d, dev).to(dtype)
    x = scale * P["wte"][tokens] + pe
    mask = _causal_mask(n, dev) if cfg.causal else None
    atts, scores = [], []
    for l in range(cfg.layers):
        p = lambda s: P["h%d.%s" % (l, s)]  # noqa: E731
        a = F.layer_norm(x, (d,), p("ln1_w"), p("ln1_b"), eps=LN_EPS)
        qkv = a @ p("qkv_w").T + p("qkv_b")
        q, k, v = qkv.split(d, dim=-1)
        # (B,n,d) -> (B,h,n,hs): head j takes columns j*hs..(j+1)*hs-1
        q, k, v = (t.reshape(B, n, nh, hs).transpose(1, 2) for t in (q, k, v))
        s = q @ k.transpose(-1, -2)
        z = s / math.sqrt(hs)
        if mask is not None:
            # masked keys: z = -inf, so their weight is exactly 0
            z = z.masked_fill(mask, float("-inf"))
            if keep:
                s = s.masked_fill(mask, float("nan"))
        att = torch.softmax(z, dim=-1)
        heads_out = att @ v
        off = [j for (ll, j) in ablate if ll == l]
        if off:
            heads_out = heads_out.clone()
            heads_out[:, off] = 0
        if hook is not None:
            heads_out = hook(l, heads_out)
        if trace is not None:
            trace.append(dict(q=q, k=k, v=v, y=heads_out))
        y = heads_out.transpose(1, 2).reshape(B, n, d)
        x = x + (y @ p("proj_w").T + p("proj_b"))
        b = F.layer_norm(x, (d,), p("ln2_w"), p("ln2_b"), eps=LN_EPS)
        x = x + (gelu(b @ p("fc_w").T + p("fc_b"), arch.gelu) @ p("fc2_w").T + p("fc2_b"))
        if trace is not None:
            trace[-1]["x"] = x
        if keep:
            atts.append(att)
            scores.append(s)
    final = F.layer_norm(x, (d,), P["lnf_w"], P["lnf_b"], eps=LN_EPS)
    return final, atts, scores


def logits_of(params, final, dtype=None, cfg=None):
    """The output projection (section 5): tied to the embedding, or the
    untied matrix out_w when params has one; a model without the special
    tokens (cfg.arch.specials) has no logit for ids 0..2: -inf."""
    dtype = dtype or final.dtype
    w = params["out_w"] if "out_w" in params else params["wte"]
    out = final @ w.to(dtype).T + params["out_b"].to(dtype)
    if cfg is not None and cfg.arch.specials:
        out[..., :NSPECIAL] = float("-inf")
    return out


def target_logits(cfg, params, tokens, targets, rows=None):
    """Logits (R,V) at the R positions that have a target (targets >= 0), and
    those targets (R). `rows` (flat indices b*n+t) may be given when the caller
    knows them, which spares a device synchronisation."""
    final, _, _ = forward(cfg, params, tokens, keep=False)
    h = final.reshape(-1, cfg.dim)
    y = targets.reshape(-1)
    if rows is None:
        rows = (y >= 0).nonzero().squeeze(1)
    return logits_of(params, h[rows], cfg=cfg), y[rows]


def loss_fn(cfg, params, tokens, targets, rows=None):
    """Mean cross-entropy in nats over the positions whose target is not -1;
    logits only at those rows, as attnview's trainer does."""
    logits, y = target_logits(cfg, params, tokens, targets, rows)
    return F.cross_entropy(logits, y)


# ---------------------------------------------------------------- nn.Module

class Block(nn.Module):
    """One pre-LayerNorm block's parameters, named as in the file (h<l>.NAME)."""

    def __init__(self, d):
        super().__init__()
        for leaf in LAYER_TENSORS:
            shape = {"qkv_w": (3 * d, d), "qkv_b": (3 * d,), "proj_w": (d, d),
                     "fc_w": (4 * d, d), "fc_b": (4 * d,), "fc2_w": (d, 4 * d)}.get(leaf, (d,))
            setattr(self, leaf, nn.Parameter(torch.zeros(shape)))


class AttnviewModel(nn.Module):
    """attnview's character-level transformer encoder (man 5 attnview).

    config: Config; vocab: the codepoint of each id (ids 0..2 are the special
    markers SPECIAL_CP + id); meta: the file's metadata (name, corpus, steps,
    tokens, created, seed, val_loss, val_acc, base_loss, base_acc).

    model(tokens) returns the logits (B,n,V); model(tokens, targets) the mean
    cross-entropy over the positions with a target (>= 0), computing logits
    only there, which is what DistributedDataParallel should wrap. attend()
    gives the attention weights attnview draws."""

    def __init__(self, config, vocab, meta=None):
        super().__init__()
        config.check()
        if len(vocab) != config.vocab_size:
            raise ConfigError("the vocabulary has %d entries, the config says %d"
                              % (len(vocab), config.vocab_size))
        self.config = config
        self.vocab = [int(c) for c in vocab]
        self.index = {cp: i for i, cp in enumerate(self.vocab)}
        self.meta = dict(meta or {})
        d, V = config.dim, config.vocab_size
        self.wte = nn.Parameter(torch.zeros(V, d))
        if config.arch.positions:
            self.wpe = nn.Parameter(torch.zeros(config.context, d))
        self.h = nn.ModuleList(Block(d) for _ in range(config.layers))
        self.lnf_w = nn.Parameter(torch.ones(d))
        self.lnf_b = nn.Parameter(torch.zeros(d))
        if config.arch.output:
            self.out_w = nn.Parameter(torch.zeros(V, d))
        self.out_b = nn.Parameter(torch.zeros(V))
        for b in self.h:
            b.ln1_w.data.fill_(1.0)
            b.ln2_w.data.fill_(1.0)

    # -- parameters by their file names

    def file_parameters(self):
        """OrderedDict file name -> nn.Parameter, in file order."""
        out = OrderedDict()
        for name, _ in tensor_table(self.config):
            if name.startswith("h") and "." in name:
                l, leaf = name[1:].split(".")
                out[name] = getattr(self.h[int(l)], leaf)
            else:
                out[name] = getattr(self, name)
        return out

    @property
    def params(self):
        """OrderedDict file name -> parameter tensor (the live tensors)."""
        return self.file_parameters()

    @property
    def cfg(self):
        return self.config

    @classmethod
    def from_params(cls, config, vocab, params, meta=None):
        """A model holding copies of `params` (file name -> tensor)."""
        m = cls(config, vocab, meta)
        with torch.no_grad():
            for name, p in m.file_parameters().items():
                t = params[name]
                if tuple(t.shape) != tuple(p.shape):
                    raise ConfigError("%s has shape %s, the config needs %s"
                                      % (name, tuple(t.shape), tuple(p.shape)))
                p.copy_(t)
        return m

    def init_weights(self, generator=None):
        """attnview's initialisation (man 5 attnview, "Initialisation"):
        matrices N(0, 0.02), the residual projections proj_w and fc2_w
        N(0, 0.02/sqrt(2L)), biases 0, LayerNorm gains 1. The random numbers
        are PyTorch's, not attnview's: the same seed gives a different model."""
        std = INIT_STD
        res_std = std / math.sqrt(2.0 * self.config.layers)
        with torch.no_grad():
            for name, p in self.file_parameters().items():
                leaf = name.split(".")[-1]
                if leaf.startswith("ln") and leaf.endswith("_w"):
                    p.fill_(1.0)
                elif p.dim() == 2:
                    s = res_std if leaf in ("proj_w", "fc2_w") else std
                    p.copy_(torch.randn(p.shape, generator=generator) * s)
                else:
                    p.zero_()
        return self

    # -- tokens

    def token_ids(self, cps):
        """Vocabulary ids of codepoints; unknown ones (and anything that is not
        a character) get TOK_UNK."""
        return [self.index.get(cp, TOK_UNK) if cp < SPECIAL_CP else TOK_UNK for cp in cps]

    # -- computation

    def forward(self, tokens, targets=None, rows=None):
        P = self.file_parameters()
        if targets is None:
            final, _, _ = forward(self.config, P, tokens, keep=False)
            return logits_of(P, final, cfg=self.config)
        return loss_fn(self.config, P, tokens, targets, rows)

    def hidden(self, tokens):
        """The final LayerNorm's output (B,n,d)."""
        return forward(self.config, self.file_parameters(), tokens, keep=False)[0]

    def attend(self, ids, dtype=torch.float32):
        """See attend(): attention, raw scores, logits and prediction logits
        of one sequence."""
        return attend(self, ids, dtype)


def attend(model, ids, dtype=torch.float32):
    """One sequence of ids: att (L,h,n,n), scores (L,h,n,n), logits (n,V) and
    the prediction logits (n,V) of man 5 attnview section 6: masked model, row
    p of the forward with token p alone replaced by the mask id; causal model,
    row p itself."""
    cfg, params = model.cfg, model.params
    dev = params["wte"].device
    toks = torch.tensor([ids], dtype=torch.long, device=dev)
    final, atts, scores = forward(cfg, params, toks, dtype)
    logits = logits_of(params, final, dtype, cfg)[0]
    if cfg.causal:
        pred = logits.clone()
    else:
        n = len(ids)
        batch = toks.repeat(n, 1)
        idx = torch.arange(n, device=dev)
        batch[idx, idx] = TOK_MASK
        f, _, _ = forward(cfg, params, batch, dtype, keep=False)
        pred = logits_of(params, f[idx, idx], dtype, cfg)
    att = torch.stack([a[0] for a in atts])
    sc = torch.stack([s[0] for s in scores])
    return att, sc, logits, pred
