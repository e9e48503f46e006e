"""Convert a nanoGPT or minGPT character model into an attnview model file.

    python3 -m attnview_torch.convert CKPT [-o OUT.attn] [--meta META.pkl]
        [--vocab-from-text FILE] [--gelu erf|tanh] [--heads N]
    attnview-torch-convert ...              (the same, installed by pip)

CKPT is nanoGPT's ckpt.pt (a dict with 'model', 'model_args', 'iter_num',
'best_val_loss', 'config') or a minGPT state dict (torch.save of
GPT.state_dict(), as its chargpt project saves model.pt). The vocabulary
comes from nanoGPT's meta.pkl (--meta, else data/<config['dataset']>/meta.pkl
under the current folder, as nanoGPT's sample.py looks, then meta.pkl beside
CKPT, then data/<dataset>/meta.pkl in CKPT's folder's parent) or, for minGPT,
which saves none, from the text it was trained on (--vocab-from-text: its
sorted set of characters, as minGPT's chargpt and nanoGPT's prepare.py build
it). A checkpoint does not say which GELU it used: --gelu erf (nn.GELU(),
nanoGPT since mid-2023) or tanh (older nanoGPT, minGPT's NewGELU; the
default for a minGPT state dict).

It prints what it converted and a certificate: the largest difference
between the converted model's logits and attention weights in attnview
(`attnview --dump`, the program on PATH or --attnview) and the checkpoint's
in PyTorch (gpt.py) on a probe text drawn from the vocabulary, against the
bound derived for each number (bound.py; man 5 attnview, NOTES). Nothing is
written unless every check passes; the file is written atomically.
Exit status: 0 converted, 1 refused or failed, 2 a usage error.
"""

import os
import pickle
import sys
import zipfile
from collections import OrderedDict

import torch

from . import gpt
from .model import (MAX_VOCAB, NSPECIAL, OBJ_CAUSAL, SPECIAL_CP, Arch, AttnviewModel, Config,
                    ConfigError, tensor_table)
from .modelfile import MAGIC, encode, may_replace, write_atomic
from .shown import ArgumentParser, error_text, quote, shell_quote, visible

PREFIX = "_orig_mod."  # what torch.compile puts before every name
DDP_PREFIX = "module."  # what DistributedDataParallel puts before every name


class ConvertError(Exception):
    """A checkpoint this cannot convert; the message names the file and what
    to do."""


# ---------------------------------------------------------------- reading

# What a checkpoint's pickle may name besides plain containers and numbers:
# PyTorch's own tensor rebuilders (the allowlist torch.load's weights_only
# applies, which PyTorch 1.13's unpickler cannot use on the floats nanoGPT
# saves: "Unsupported operand 71").
SAFE_NAMES = {("collections", "OrderedDict"), ("torch._utils", "_rebuild_tensor"),
              ("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_parameter"),
              ("torch._utils", "_rebuild_parameter_with_state"), ("torch", "Size"),
              ("torch", "device"), ("torch._tensor", "_rebuild_from_type_v2"),
              ("torch", "Tensor"), ("torch.nn.parameter", "Parameter"), ("_codecs", "encode"),
              ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice")}


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in SAFE_NAMES or (module == "torch" and name.endswith("Storage")) \
                or (module == "torch" and isinstance(getattr(torch, name, None), torch.dtype)):
            return super().find_class(module, name)
        raise pickle.UnpicklingError("Unsupported class %s.%s" % (module, name))


class _SafePickle:
    """A pickle module for torch.load that builds tensors and plain data and
    names nothing else."""
    Unpickler = _SafeUnpickler
    __name__ = "attnview_torch's restricted pickle"

    @staticmethod
    def load(f, **kw):
        return _SafeUnpickler(f, **kw).load()


def _restricted_load(path):
    """A zip checkpoint (torch.save since PyTorch 1.6) through _SafePickle.
    torch.load(pickle_module=...) cannot be trusted with it: PyTorch 1.13
    replaces the module by pickle when weights_only is False; its _load,
    which torch.load calls, takes it as given."""
    ser = torch.serialization
    if not zipfile.is_zipfile(path) or not hasattr(ser, "_open_zipfile_reader") \
            or not hasattr(ser, "_load"):
        raise pickle.UnpicklingError("Unsupported: a checkpoint in PyTorch's legacy format")
    with open(path, "rb") as f, ser._open_zipfile_reader(f) as z:
        return ser._load(z, "cpu", _SafePickle, encoding="utf-8")


def _trusted_load(path, trust):
    """torch.load with weights_only (tensors and plain data only) where this
    torch has it, else (or where its unpickler lacks an opcode: PyTorch 1.13's
    has no floats) with the same allowlist here; the full pickle only with
    --trust-pickle."""
    import inspect
    if trust:
        return torch.load(path, map_location="cpu")
    try:
        if "weights_only" in inspect.signature(torch.load).parameters:
            try:
                return torch.load(path, map_location="cpu", weights_only=True)
            except pickle.UnpicklingError as e:
                if "Unsupported operand" not in str(e):
                    raise
        return _restricted_load(path)
    except pickle.UnpicklingError as e:
        what = str(e).splitlines()[-1]
        if "Unsupported" in what:
            raise ConvertError("%s: the checkpoint's pickle names Python code besides tensors "
                               "and plain data (%s): loading it would run that code; if you "
                               "trust where the file came from, convert it with --trust-pickle"
                               % (quote(path), what[what.index("Unsupported"):][:100])) from None
        raise ConvertError("%s: not a PyTorch checkpoint (%s); give the ckpt.pt nanoGPT's "
                           "train.py saves or a minGPT state dict"
                           % (quote(path), what[:120])) from None


def load_checkpoint(path, trust=False):
    """The unpickled checkpoint, refused with a message when it is missing,
    truncated or not a checkpoint at all."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as e:
        raise ConvertError("%s: %s" % (quote(path), e.strerror or e)) from None
    if size == 0:
        raise ConvertError("%s: the file is empty: it is not a checkpoint" % quote(path))
    if head == MAGIC:
        raise ConvertError("%s: this is already an attnview model; open it with attnview "
                           "--model" % quote(path))
    if head[:2] != b"PK" and head[:1] != b"\x80":
        raise ConvertError("%s: not a PyTorch checkpoint (neither the zip archive torch.save "
                           "writes nor a pickle); give the ckpt.pt nanoGPT's train.py saves or "
                           "a minGPT state dict" % quote(path))
    if head[:2] == b"PK" and not zipfile.is_zipfile(path):
        raise ConvertError("%s: truncated or damaged: it starts as a PyTorch checkpoint (a zip "
                           "archive) but its end is missing; copy it again" % quote(path))
    try:
        return _trusted_load(path, trust)
    except ConvertError:
        raise
    except (AttributeError, ImportError) as e:
        if not trust:
            raise ConvertError("%s: not a readable PyTorch checkpoint (%s); it may be "
                               "truncated: copy it again"
                               % (quote(path), str(e).splitlines()[0][:160])) from None
        raise ConvertError("%s: the checkpoint's pickle names Python code this program cannot "
                           "find (%s): save it again as plain data where that code is defined "
                           "(torch.save of a dict of the state dict, model_args and numbers)"
                           % (quote(path), str(e).splitlines()[0][:160])) from None
    except (RuntimeError, EOFError, ValueError, OSError) as e:
        raise ConvertError("%s: not a readable PyTorch checkpoint (%s); it may be truncated: "
                           "copy it again" % (quote(path), str(e).splitlines()[0][:160])) from None


def _state_dict(sd, path):
    """Names without torch.compile's prefix or DistributedDataParallel's;
    every value a tensor (its type checked by _take)."""
    out = OrderedDict()
    for k, v in sd.items():
        if not isinstance(k, str) or not torch.is_tensor(v):
            raise ConvertError("%s: the state dict holds %r, which is not a named tensor"
                               % (quote(path), k))
        for p in (DDP_PREFIX, PREFIX):
            k = k[len(p):] if k.startswith(p) else k
        out[k] = v
    return out


def identify(obj, path):
    """(kind, state dict, model_args or None, the checkpoint dict or {})."""
    if not isinstance(obj, dict):
        raise ConvertError("%s: holds a %s, not a checkpoint dict; give nanoGPT's ckpt.pt or a "
                           "minGPT state dict" % (quote(path), type(obj).__name__))
    if "model" in obj and "model_args" in obj:
        if not isinstance(obj["model"], dict) or not isinstance(obj["model_args"], dict):
            raise ConvertError("%s: 'model' or 'model_args' is not a dict: not a nanoGPT "
                               "checkpoint" % quote(path))
        sd = _state_dict(obj["model"], path)
        if "transformer.wte.weight" not in sd:
            first = next(iter(sd), None)
            raise ConvertError("%s: the model's state dict has no transformer.wte.weight (%s): "
                               "not the weights of nanoGPT's GPT"
                               % (quote(path), "it is empty" if first is None
                                  else "its first tensor is %s" % first))
        return "nanoGPT", sd, obj["model_args"], obj
    if obj and all(torch.is_tensor(v) for v in obj.values()):
        sd = _state_dict(obj, path)
        if "transformer.wte.weight" in sd and "lm_head.weight" in sd:
            return "minGPT", sd, None, {}
    raise ConvertError("%s: neither nanoGPT's checkpoint (a dict with 'model' and "
                       "'model_args') nor a minGPT state dict (transformer.wte.weight, "
                       "lm_head.weight, ...)" % quote(path))


# ---------------------------------------------------------------- the vocabulary

class _PlainUnpickler(pickle.Unpickler):
    """meta.pkl holds dicts, ints and strings: nothing that names code."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError("it names %s.%s" % (module, name))


def read_meta(path):
    """The characters of nanoGPT's meta.pkl, by id."""
    try:
        with open(path, "rb") as f:
            meta = _PlainUnpickler(f).load()
    except OSError as e:
        raise ConvertError("%s: %s" % (quote(path), e.strerror or e)) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError) as e:
        raise ConvertError("%s: not a meta.pkl of nanoGPT (%s): it should be a dict of "
                           "vocab_size, itos and stoi"
                           % (quote(path), " ".join(str(e).split())[:120])) from None
    itos = meta.get("itos") if isinstance(meta, dict) else None
    if not isinstance(itos, dict) or sorted(itos) != list(range(len(itos))):
        raise ConvertError("%s: no itos of ids 0..V-1: not a meta.pkl of nanoGPT's "
                           "character-level data" % quote(path))
    if meta.get("vocab_size", len(itos)) != len(itos):
        raise ConvertError("%s: vocab_size is %r but itos has %d characters: the file is "
                           "damaged" % (quote(path), meta.get("vocab_size"), len(itos)))
    chars = [itos[i] for i in range(len(itos))]
    bad = [c for c in chars if not isinstance(c, str) or len(c) != 1]
    if bad:
        raise ConvertError("%s: id %d is %r, not one character: attnview opens "
                           "character-level models only" % (quote(path), chars.index(bad[0]),
                                                           bad[0]))
    return chars


def find_meta(ckpt, config):
    """meta.pkl where nanoGPT's sample.py looks, then beside CKPT; (path or
    None, the places looked at)."""
    places = []
    ds = config.get("dataset") if isinstance(config, dict) else None
    if isinstance(ds, str) and ds:
        places.append(os.path.join("data", ds, "meta.pkl"))
    here = os.path.dirname(os.path.abspath(ckpt))
    places.append(os.path.join(here, "meta.pkl"))
    if isinstance(ds, str) and ds:
        places.append(os.path.join(os.path.dirname(here), "data", ds, "meta.pkl"))
    for p in places:
        if os.path.isfile(p):
            return p, places
    return None, places


def vocab_from_text(path):
    """The sorted set of a text's characters, read as minGPT's chargpt and
    nanoGPT's prepare.py read it (UTF-8, line ends as Python's text mode),
    and how often each occurs."""
    from collections import Counter
    try:
        with open(path, encoding="utf-8") as f:
            counts = Counter(f.read())
        chars = sorted(counts)
        return chars, [counts[c] for c in chars]
    except OSError as e:
        raise ConvertError("%s: %s" % (quote(path), e.strerror or e)) from None
    except UnicodeDecodeError as e:
        raise ConvertError("%s: not UTF-8 text (byte %d)" % (quote(path), e.start)) from None


def train_counts(meta_path, V):
    """How often each id occurs in nanoGPT's train.bin beside its meta.pkl
    (uint16 ids, as prepare.py writes them), or None when it is not there or
    not of this vocabulary."""
    import numpy as np
    path = os.path.join(os.path.dirname(os.path.abspath(meta_path)), "train.bin")
    try:
        ids = np.fromfile(path, dtype="<u2")
    except (OSError, ValueError):
        return None
    if ids.size == 0 or int(ids.max()) >= V:
        return None
    return np.bincount(ids, minlength=V).tolist()


def frequency_order(counts):
    """The ids most frequent first (ties: the lower id first): attnview's
    order, which its circuits read (the most frequent characters)."""
    return sorted(range(len(counts)), key=lambda i: (-counts[i], i))


def check_chars(chars, where):
    """Characters attnview's vocabulary can hold (attnview(5), VALIDATION):
    not a control character other than the line break, not U+FEFF, each once."""
    seen = {}
    for i, c in enumerate(chars):
        cp = ord(c)
        why = None
        if (cp < 0x20 and cp != 0x0A) or 0x7F <= cp <= 0x9F:
            why = "a control character, which attnview's tokenizer removes (a tab becomes a space)"
        elif cp == 0xFEFF:
            why = "a byte order mark, which attnview's tokenizer removes"
        elif 0xD800 <= cp <= 0xDFFF:
            why = "a lone surrogate, not a character"
        elif cp in seen:
            why = "the same character as id %d" % seen[cp]
        if why:
            raise ConvertError("%s: character id %d is U+%04X, %s: attnview cannot hold this "
                               "vocabulary" % (where, i, cp, why))
        seen[cp] = i


# ---------------------------------------------------------------- the model

def _sizes(kind, sd, args, heads, path):
    """(n_layer, n_head, n_embd, block_size, vocab_size, bias, what was said)."""
    V, d = sd["transformer.wte.weight"].shape
    T = sd["transformer.wpe.weight"].shape[0] if "transformer.wpe.weight" in sd else None
    L = 0
    while "transformer.h.%d.ln_1.weight" % L in sd:
        L += 1
    if kind == "nanoGPT":
        try:
            a = {k: args[k] for k in ("n_layer", "n_head", "n_embd", "block_size", "vocab_size")}
        except KeyError as e:
            raise ConvertError("%s: model_args has no %s: not a nanoGPT checkpoint"
                               % (quote(path), e)) from None
        bias = bool(args.get("bias", True))
        if a["vocab_size"] != V:
            raise ConvertError("%s: model_args says vocab_size %r, but transformer.wte.weight "
                               "has %d rows: the model_args are not those of these weights"
                               % (quote(path), a["vocab_size"], V))
        return (a["n_layer"], a["n_head"], a["n_embd"], a["block_size"], a["vocab_size"], bias,
                "")
    note = ""
    if heads is None:
        known = gpt.MINGPT_TYPES.get((L, d))
        if known is None:
            raise ConvertError("%s: minGPT does not save its number of heads, and %d layers of "
                               "width %d is none of its named models: give --heads"
                               % (quote(path), L, d))
        heads = known[1]
        note = " (minGPT's %s; give --heads if yours differs)" % known[0]
    return L, heads, d, T, V, True, note


def _take(sd, names, shapes, path):
    """The tensors by attnview name, checked for shape and finiteness; a
    missing or extra tensor is refused by name."""
    extra = [k for k in sd if k not in names and not gpt.mask_buffer(k)]
    if extra:
        raise ConvertError("%s: unexpected tensor %s: the checkpoint is not of the architecture "
                           "its model_args describe" % (quote(path), extra[0]))
    out = {}
    for src, dst in names.items():
        if src not in sd:
            raise ConvertError("%s: the tensor %s is missing: the checkpoint is incomplete"
                               % (quote(path), src))
        t = sd[src]
        if not t.is_floating_point():
            raise ConvertError("%s: %s holds %s, not floating-point numbers"
                               % (quote(path), src, t.dtype))
        if tuple(t.shape) != shapes[dst]:
            raise ConvertError("%s: %s has the shape %s, but the model's sizes call for %s"
                               % (quote(path), src, tuple(t.shape), shapes[dst]))
        t = t.detach().to(torch.float32)
        if not torch.isfinite(t).all():
            raise ConvertError("%s: %s holds a value that is not a finite number: the training "
                               "diverged" % (quote(path), src))
        out[dst] = t
    return out


def _check_masks(sd, T, path):
    for k, t in sd.items():
        if gpt.mask_buffer(k):
            n = t.shape[-1] if t.dim() else 0
            want = torch.ones(n, n).tril().view(1, 1, n, n)
            if tuple(t.shape) != (1, 1, T, T) or not torch.equal(t.float(), want):
                raise ConvertError("%s: %s is not the causal mask of %d positions: this is not "
                                   "a causal model attnview can open" % (quote(path), k, T))


def build(kind, sd, args, chars, gelu_erf, heads, path, order=None):
    """(Config, the model file's tensors, a note on the sizes); order (or
    None: the checkpoint's): the checkpoint's ids in the order of the
    file's ids 3..V-1."""
    L, H, d, T, V, bias, note = _sizes(kind, sd, args, heads, path)
    if V != len(chars):
        raise ConvertError("%s: the weights have %d vocabulary rows but the vocabulary has %d "
                           "characters: they are not the same run's; give the right --meta or "
                           "--vocab-from-text" % (quote(path), V, len(chars)))
    if V + NSPECIAL > MAX_VOCAB:
        raise ConvertError("%s: %d characters, more than attnview's limit of %d"
                           % (quote(path), V, MAX_VOCAB - NSPECIAL))
    if H < 1 or d % H:
        raise ConvertError("%s: %d heads do not divide the width %d" % (quote(path), H, d))
    names = gpt.expected_names(L, bias)
    shapes = {"wte": (V, d), "wpe": (T, d), "lnf_w": (d,), "lnf_b": (d,), "lm_head": (V, d)}
    for l in range(L):
        for leaf, shape in (("ln1", (d,)), ("qkv", (3 * d, d)), ("proj", (d, d)),
                            ("ln2", (d,)), ("fc", (4 * d, d)), ("fc2", (d, 4 * d))):
            shapes["h%d.%s_w" % (l, leaf)] = shape
            shapes["h%d.%s_b" % (l, leaf)] = shape[:1]
    t = _take(sd, names, shapes, path)
    _check_masks(sd, T, path)
    tied = torch.equal(t["wte"], t["lm_head"])
    arch = Arch(positions="learned", gelu="erf" if gelu_erf else "tanh", scale="1",
                output="tied" if tied else "untied", specials="none",
                biases="yes" if bias else "none", origin=kind)
    cfg = Config(OBJ_CAUSAL, V + NSPECIAL, d, H, L, T, arch)
    try:
        cfg.check()
    except ConfigError as e:
        raise ConvertError("%s: beyond attnview's limits: %s" % (quote(path), e)) from None

    def rows(x):  # ids 0..2, attnview's specials, have no rows: zeros
        return torch.cat([torch.zeros(NSPECIAL, *x.shape[1:]), x if order is None else x[order]])

    params = OrderedDict()
    for name, shape in tensor_table(cfg):
        leaf = name.split(".")[-1]
        if name in ("wte", "out_w"):
            params[name] = rows(t["lm_head" if name == "out_w" else "wte"])
        elif name == "out_b":
            params[name] = torch.zeros(shape)
        elif name in t:
            params[name] = t[name]
        elif leaf.endswith("_b"):
            params[name] = torch.zeros(shape)  # bias=False: no bias
        else:
            raise ConvertError("%s: nothing for %s" % (quote(path), name))
    return cfg, params, note


# ---------------------------------------------------------------- metadata

def _number(x):
    """A float from a number or a 0-d tensor (nanoGPT's best_val_loss), NaN
    if neither."""
    try:
        return float(x.item() if torch.is_tensor(x) else x)
    except (TypeError, ValueError, RuntimeError):
        return float("nan")


def metadata(kind, ckpt, obj, vocab_where, nchars):
    """The model file's metadata: name, corpus, steps, tokens, validation
    loss, creation time (SOURCE_DATE_EPOCH, else the checkpoint's)."""
    config = obj.get("config") if isinstance(obj.get("config"), dict) else {}
    steps = obj.get("iter_num", 0)
    steps = steps if isinstance(steps, int) and steps >= 0 else 0
    per = 1
    for k in ("batch_size", "block_size", "gradient_accumulation_steps"):
        v = config.get(k)
        per = per * v if isinstance(v, int) and v > 0 and per else 0
    ds = config.get("dataset")
    name = ds if isinstance(ds, str) and ds else os.path.splitext(os.path.basename(ckpt))[0]
    try:
        created = int(os.environ["SOURCE_DATE_EPOCH"])
    except (KeyError, ValueError):
        created = int(os.path.getmtime(ckpt))
    return dict(name=name, corpus="%s, converted from %s's %s (vocabulary: %s, %d characters)"
                % (ds if isinstance(ds, str) and ds else "unknown corpus", kind,
                   os.path.basename(ckpt), vocab_where, nchars),
                steps=steps, tokens=steps * per, created=created, seed=0,
                val_loss=_number(obj.get("best_val_loss", float("nan"))))


# ---------------------------------------------------------------- the command

def parse_args(argv):
    ap = ArgumentParser(prog="attnview-torch-convert",
                        description="Convert a nanoGPT or minGPT character model into an "
                                    "attnview model file, and certify its numbers.")
    ap.add_argument("checkpoint", metavar="CKPT",
                    help="nanoGPT's ckpt.pt, or a minGPT state dict (model.pt)")
    ap.add_argument("-o", "--output", metavar="OUT",
                    help="the model file to write (default: CKPT with .attn)")
    ap.add_argument("--meta", metavar="META.pkl",
                    help="nanoGPT's vocabulary (default: data/<dataset>/meta.pkl, as its "
                         "sample.py looks, then beside CKPT)")
    ap.add_argument("--vocab-from-text", metavar="FILE",
                    help="the text a minGPT model was trained on: its sorted characters are "
                         "the vocabulary")
    ap.add_argument("--gelu", choices=("erf", "tanh"),
                    help="the GELU the model was trained with: erf (nn.GELU(), nanoGPT; the "
                         "default) or tanh (nanoGPT before mid-2023, minGPT: its default)")
    ap.add_argument("--heads", type=int, metavar="N",
                    help="a minGPT model's number of heads, which it does not save")
    ap.add_argument("--attnview", metavar="PROGRAM",
                    help="the attnview that certifies the numbers (default: attnview on PATH)")
    ap.add_argument("--trust-pickle", action="store_true",
                    help="load a checkpoint that holds Python objects besides tensors (this "
                         "runs the code its pickle names: only for files you trust)")
    ap.add_argument("--force", action="store_true",
                    help="replace OUT even when it is not an attnview file")
    return ap.parse_args(argv)


def convert(a, out=sys.stdout):
    """The conversion of parse_args' options; returns the model file's bytes
    and the report lines. Raises ConvertError."""
    from .certify import certify, program
    obj = load_checkpoint(a.checkpoint, a.trust_pickle)
    kind, sd, args, full = identify(obj, a.checkpoint)
    counts = None
    if a.vocab_from_text:
        (chars, counts), where = vocab_from_text(a.vocab_from_text), a.vocab_from_text
    elif a.meta:
        chars, where = read_meta(a.meta), a.meta
    else:
        where, looked = find_meta(a.checkpoint, full.get("config"))
        if where is None:
            V = sd["transformer.wte.weight"].shape[0]
            if V in gpt.GPT2_VOCABS:
                raise ConvertError("%s: %d vocabulary rows and no meta.pkl: this is a GPT-2 "
                                   "byte-pair model, and attnview opens character-level models "
                                   "only (nanoGPT's shakespeare_char and the like)"
                                   % (quote(a.checkpoint), V))
            hint = ("give --vocab-from-text with the text it was trained on" if kind == "minGPT"
                    else "give --meta")
            raise ConvertError("%s: no vocabulary: %s (looked for %s)"
                               % (quote(a.checkpoint), hint, ", ".join(map(quote, looked))))
        chars = read_meta(where)
    check_chars(chars, quote(where))
    if counts is None and not a.vocab_from_text:
        counts = train_counts(where, len(chars))
    order = frequency_order(counts) if counts else None
    gelu = a.gelu or ("tanh" if kind == "minGPT" else "erf")
    cfg, params, note = build(kind, sd, args, chars, gelu == "erf", a.heads, a.checkpoint, order)
    mine = chars if order is None else [chars[i] for i in order]
    vocab = [SPECIAL_CP + i for i in range(NSPECIAL)] + [ord(c) for c in mine]
    meta = metadata(kind, a.checkpoint, full, os.path.basename(where), len(chars))
    data = encode(cfg, vocab, params, meta)
    model = AttnviewModel.from_params(cfg, vocab, params, meta)
    lines = describe(kind, a.checkpoint, cfg, sd, meta, where, gelu, note, order)
    lines += certify(model, data, sd, chars, program(a.attnview), order)
    return data, lines


def _count(sd, tied):
    """The checkpoint's parameters (the mask buffers aside, a tied lm_head
    once), and as its program counts them: nanoGPT without wpe, minGPT
    without lm_head."""
    n = {k: t.numel() for k, t in sd.items() if not gpt.mask_buffer(k)}
    total = sum(n.values()) - (n["lm_head.weight"] if tied else 0)
    return total, total - n.get("transformer.wpe.weight", 0), sum(
        v for k, v in n.items() if k.startswith("transformer."))


def describe(kind, ckpt, cfg, sd, meta, where, gelu, note, order):
    a = cfg.arch
    total, nano, mini = _count(sd, a.output == 0)
    P = "%d (%.2fM %s)" % (total, (nano if kind == "nanoGPT" else mini) / 1e6,
                           "without wpe, as nanoGPT counts them" if kind == "nanoGPT"
                           else "without lm_head, as minGPT counts them")
    val = meta["val_loss"]
    return [
        "%s: %s model, %d layers x %d heads, width %d, context %d%s"
        % (quote(ckpt), kind, cfg.layers, cfg.heads, cfg.dim, cfg.context, note),
        "  vocabulary: %d characters from %s, at attnview's ids 3..%d %s; an unknown "
        "character is embedded as 0" % (cfg.vocab_size - NSPECIAL, quote(where),
                                        cfg.vocab_size - 1,
                                        "in its order" if order is None else
                                        "most frequent first (counted in its training data)"),
        "  parameters: %s; %s; biases %s; GELU %s, which a checkpoint does not record"
        % (P, "lm_head tied to wte" if a.output == 0 else "lm_head of its own",
           a.name("biases"), gelu),
        "  trained: %s%s" % ("%d steps" % meta["steps"] if meta["steps"]
                             else "steps unknown (the checkpoint does not say)", "" if val != val
                                   else ", best validation loss %.4f nats/char" % val)]


def main(argv=None):
    a = parse_args(argv)
    try:
        if a.output is None:
            a.output = os.path.splitext(a.checkpoint)[0] + ".attn"
        folder = os.path.dirname(os.path.abspath(a.output))
        if not os.path.isdir(folder):
            raise ConvertError("%s: the folder %s does not exist: create it or give -o a "
                               "path in a folder that does" % (quote(a.output), quote(folder)))
        if not a.force:
            may_replace(a.output)
        data, lines = convert(a)
        for line in lines[:-1]:
            print(visible(line))
        if not lines[-1].startswith("certificate: ok"):
            sys.stderr.write(visible("attnview-torch-convert: %s; nothing was written\n"
                                     % lines[-1]))
            return 1
        print(visible(lines[-1]))
        write_atomic(a.output, data, force=a.force)
        print(visible("wrote %s: open it with  attnview --model %s" % (quote(a.output),
                                                                      shell_quote(a.output))))
    except (ConvertError, OSError, ValueError) as e:
        sys.stderr.write(visible("attnview-torch-convert: %s; nothing was written\n"
                                 % error_text(e)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
