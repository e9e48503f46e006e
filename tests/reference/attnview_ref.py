#!/usr/bin/python3
"""The PyTorch reference of attnview's model, as used by gen_golden.py and
torch_train_bench.py: a thin layer over the package python/attnview_torch/,
which holds the one implementation (the model file, the text cleaning, the
forward pass of man 5 attnview, the loss and a reference AdamW).

As a tool (the same as python3 -m attnview_torch):

    /usr/bin/python3 tests/reference/attnview_ref.py dump MODEL TEXT
    /usr/bin/python3 tests/reference/attnview_ref.py info MODEL
    /usr/bin/python3 tests/reference/attnview_ref.py compare MODEL TEXT DUMP.json
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "python"))

from attnview_torch import AttnviewModel, from_bytes, load, to_bytes  # noqa: E402,F401
from attnview_torch.model import (  # noqa: E402,F401
    DECAYED, LN_EPS, MAX_ATTN_CELLS, MAX_CONTEXT, MAX_DIM, MAX_HEADS, MAX_LAYERS, MAX_PARAMS,
    MAX_VOCAB, NSPECIAL, OBJ_CAUSAL, OBJ_MASKED, OBJECTIVES, POS_BASE, SPECIAL_CP, TOK_MASK,
    TOK_PAD, TOK_UNK, Config, ConfigError, attend, forward, gelu, is_decayed, logits_of,
    loss_fn, num_params, positions, tensor_table)
from attnview_torch.modelfile import (  # noqa: E402,F401
    FORMAT_VERSION, HEADER, KIND_CHECKPOINT, KIND_MODEL, MAGIC, MAX_STRING, FormatError,
    check_vocab, is_control)
from attnview_torch.optimizer import AdamW  # noqa: E402,F401
from attnview_torch.tokenizer import tokenize_text  # noqa: E402
from attnview_torch.tool import main as _tool_main  # noqa: E402


def Model(cfg, vocab, params, meta=None):
    """A model holding `params` (file name -> tensor)."""
    return AttnviewModel.from_params(cfg, vocab, params, meta)


def serialize(model, kind=KIND_MODEL, extra=b""):
    return to_bytes(model, kind, extra)


def parse(data, what="model"):
    return from_bytes(data, what)


def text_to_cps(text):
    """attnview's tokenizer: cleaning, NFC, codepoints."""
    return tokenize_text(text)


def main(argv):
    if len(argv) >= 2 and argv[1] in ("dump", "info", "compare"):
        return _tool_main(argv[1:])
    sys.stderr.write("usage: attnview_ref.py dump MODEL TEXT\n"
                     "       attnview_ref.py info MODEL\n"
                     "       attnview_ref.py compare MODEL TEXT ATTNVIEW_DUMP.json\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
