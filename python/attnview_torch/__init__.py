"""attnview's model in PyTorch: train it anywhere PyTorch runs (one process or
many, CPU or GPU), look at it with attnview.

    import attnview_torch as av
    model = av.load("model.attn")          # an nn.Module, attnview's forward
    ids = model.token_ids(av.tokenize_text("床前明月光"))
    att, scores, logits, pred = model.attend(ids)
    av.save(model, "copy.attn")            # the bytes attnview writes

    python3 -m attnview_torch.train CORPUS -o MODEL [attnview --train's options]
    python3 -m attnview_torch info|dump|compare|export ...
    python3 -m attnview_torch.convert CKPT -o OUT.attn   (nanoGPT, minGPT)

Modules: model (the nn.Module and the forward pass of man 5 attnview),
modelfile (the .attn format), timeline (its training timeline), tokenizer
(attnview's text cleaning), corpus (vocabulary and training data), optimizer
(the learning-rate schedule and a reference AdamW), checkpoint (the trainer's resumable state), distributed
(processes and devices), train (the trainer), tool (the command line), shown
(names and metadata quoted for a terminal, as attnview quotes them), convert
(nanoGPT's and minGPT's checkpoints into model files), gpt (their layout and
forward pass), certify (the converter's certificate), bound (the float32
bound of man 5 attnview, NOTES).
"""

from .model import (NSPECIAL, OBJ_CAUSAL, OBJ_MASKED, OBJECTIVES, SPECIAL_CP, TOK_MASK,
                     TOK_PAD, TOK_UNK, Arch, AttnviewModel, Config, ConfigError, attend, forward,
                     loss_fn, num_params, tensor_table)
from .modelfile import (KIND_CHECKPOINT, KIND_MODEL, FormatError, check_training_state,
                        decode, encode, parse_training_state)
from .tokenizer import CleanStats, Cleaner, clean_bytes, tokenize_text

__version__ = "0.2.0"
__all__ = ["NSPECIAL", "OBJ_CAUSAL", "OBJ_MASKED", "OBJECTIVES", "SPECIAL_CP", "TOK_MASK",
           "TOK_PAD", "TOK_UNK", "Arch", "AttnviewModel", "Config", "ConfigError", "attend", "forward",
           "loss_fn", "num_params", "tensor_table", "KIND_CHECKPOINT", "KIND_MODEL",
           "FormatError", "check_training_state", "decode", "encode", "parse_training_state",
           "CleanStats", "Cleaner", "clean_bytes", "tokenize_text", "from_bytes", "load",
           "to_bytes", "save"]


def _model_of(f, what):
    m = AttnviewModel.from_params(f.config, f.vocab, f.params, f.meta)
    m.kind = f.kind
    m.training_state = f.state
    m.timeline = f.timeline
    return m


def from_bytes(data, what="model"):
    """An AttnviewModel from the bytes of a model file (kind 0 or 1), refusing
    what attnview refuses (FormatError). A kind-1 file's training state, checked
    as attnview checks it, is kept as bytes in model.training_state."""
    return _model_of(decode(data, what), what)


def load(path):
    """Load an attnview model file (kind 0, or a kind-1 checkpoint, as
    `attnview --model` does) into an AttnviewModel on the CPU."""
    from .modelfile import read_file
    return from_bytes(read_file(path), path)


def to_bytes(model, kind=None, state=None, **meta):
    """The file attnview would write for this model: its config, vocabulary,
    parameters and model.meta, updated by **meta (name, corpus, steps,
    tokens, created, seed, val_loss, val_acc, base_loss, base_acc). kind and
    state default to the model's own (a model loaded from a checkpoint is
    written back as one)."""
    if kind is None:
        kind = getattr(model, "kind", KIND_MODEL)
    if state is None:
        state = getattr(model, "training_state", b"") if kind == KIND_CHECKPOINT else b""
    m = dict(model.meta)
    m.update(meta)
    return encode(model.config, model.vocab, model.file_parameters(), m, kind, state,
                  getattr(model, "timeline", None))


def save(model, path, kind=None, state=None, force=False, **meta):
    """Write the model to path atomically (a temporary file, fsync, rename),
    byte for byte what attnview writes for the same model and metadata. An
    existing file that is not an attnview file is never replaced unless
    force."""
    from .modelfile import write_atomic
    write_atomic(path, to_bytes(model, kind, state, **meta), force=force)
