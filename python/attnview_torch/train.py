"""Train attnview's model with PyTorch, on one process or many.

    python3 -m attnview_torch.train CORPUS... -o MODEL [options]

The options are those of `attnview --train` (--dim --heads --layers --context
--batch --steps --epochs --lr --warmup --seed --threads --min-count
--max-vocab --val-file --eval-every --checkpoint-every --resume --objective),
with their defaults; the corpus is cleaned and split, and the vocabulary
built, exactly as attnview does, so the same corpus gives the same vocabulary
ids. The model it writes is an attnview model file: `attnview --model MODEL`.

Data-parallel over any number of processes and devices (torch.distributed,
env:// rendezvous): started by torchrun, SLURM's srun or another launcher
that sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT, or with
--nproc N for N local processes. Each process trains on --batch sequences
per step (so a step takes B x processes sequences), on CUDA device LOCAL_RANK
with NCCL when there is CUDA, else on the CPU with gloo.

Differences from attnview --train: the random numbers are PyTorch's, so the
same seed gives a different (equally good) model; checkpoints are this
trainer's own (OUT.ckpt, see checkpoint.py; `python3 -m attnview_torch export`
turns one into a model file), and a finished run leaves none to continue;
several corpus files are read as one text, their concatenation. --init MODEL
fine-tunes an existing model on new text as attnview --train --init does
(its sizes and vocabulary are kept).

Exit status: 0 done, 1 error, 2 usage error, 130/143 stopped by SIGINT or
SIGTERM with the checkpoint written.
"""

import argparse
import math
import os
import re
import signal
import stat
import sys
import time
import zlib

import torch

from . import distributed, timeline
from .checkpoint import CKPT_MAGIC
from .checkpoint import decode_checkpoint
from .checkpoint import save as save_checkpoint
from .corpus import Corpus, CorpusError, load_corpus
from .model import (MAX_CONTEXT, MAX_DIM, MAX_HEADS, MAX_LAYERS, MAX_VOCAB, NSPECIAL, OBJECTIVES,
                    TOK_MASK, AttnviewModel, Config, ConfigError, num_params, target_logits)
from .modelfile import (MAGIC, FormatError, decode, encode, is_attnview_file, may_replace,
                        read_file, tensor_bytes, write_atomic)
from .optimizer import CLIP, auto_warmup, lr_at, torch_adamw
from .shown import ArgumentParser, error_text, file_string, quote, shell_quote, visible
from .tokenizer import CleanStats

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
DATA_SALT = 0x6461746162617463  # as attnview's: batches from seed ^ this
EVAL_SALT = 0x6576616c6d61736B  # evaluation masks
EVAL_BATCHES, FINAL_BATCHES = 4, 64  # evaluation windows: at most this many batches
RECENT = 256  # training losses kept
# --keep-steps: OUT.steps/step-SSSSSS.attn (timeline_kept_path)
KEPT_DIR = ".steps"
KEPT_NAME = re.compile(r"step-[0-9]{6,}\.attn")
PROG = "python3 -m attnview_torch.train"

# Test hooks (the test suite only): stop as if by SIGINT after this step;
# write each process's weights and batches to this directory; train without
# synchronising the processes (which the end-of-run check must catch).
STOP_AT_ENV = "ATTNVIEW_TORCH_STOP_AT"
RANK_DIR_ENV = "ATTNVIEW_TORCH_RANK_DIR"
NO_SYNC_ENV = "ATTNVIEW_TORCH_TEST_NO_SYNC"


class UsageError(Exception):
    pass


class TrainError(Exception):
    pass


# ---------------------------------------------------------------- options

DEFAULTS = dict(objective="masked", dim=64, heads=4, layers=2, context=128, batch=32, steps=2000,
                epochs=0, lr=5e-3, warmup=None, seed=1, min_count=1, max_vocab=0,
                eval_every=100, checkpoint_every=500, timeline_every=None)
# The options a checkpoint fixes: given again with --resume they must agree.
RESUME_FIXED = ("objective", "dim", "heads", "layers", "context", "batch", "steps", "epochs",
                "lr", "warmup", "seed", "min_count", "max_vocab", "eval_every",
                "checkpoint_every", "timeline_every")
# The options a model given with --init fixes.
INIT_FIXED = ("objective", "dim", "heads", "layers", "context")


def build_parser():
    ap = ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train attnview's model with PyTorch (one process or many, CPU or GPU) "
        "and write a model file attnview opens.",
        epilog="Launching: --nproc N starts N local processes; under torchrun or srun the "
        "launcher's variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; SLURM_*) "
        "are used; otherwise one process. Exit status: 0 done, 1 error, 2 usage error, 130/143 "
        "stopped by SIGINT/SIGTERM with the checkpoint written.")
    u = lambda s: _int(s, 0)  # noqa: E731
    p = lambda s: _int(s, 1)  # noqa: E731
    ap.add_argument("corpus", nargs="+", help="UTF-8 text files (several: their concatenation)")
    ap.add_argument("-o", "--output", metavar="FILE",
                    help="the model file (default model.attn); checkpoints go to FILE.ckpt")
    ap.add_argument("--objective", choices=("masked", "causal"),
                    help="masked-character (default) or next-character prediction")
    ap.add_argument("--dim", type=u, metavar="D", help="model width (default 64)")
    ap.add_argument("--heads", type=u, metavar="N", help="attention heads (default 4)")
    ap.add_argument("--layers", type=u, metavar="L", help="transformer blocks (default 2)")
    ap.add_argument("--context", type=u, metavar="T",
                    help="characters per sequence, at most 1024 (default 128)")
    ap.add_argument("--batch", type=u, metavar="B",
                    help="sequences per step and process (default 32)")
    ap.add_argument("--steps", type=p, metavar="N", help="optimizer steps (default 2000)")
    ap.add_argument("--epochs", type=p, metavar="N",
                    help="instead of --steps: N passes' worth of the training text")
    ap.add_argument("--lr", type=_lr, metavar="X", help="peak learning rate (default 5e-3)")
    ap.add_argument("--warmup", type=u, metavar="N",
                    help="linear warmup steps, then cosine decay (default min(100, steps/10))")
    ap.add_argument("--seed", type=u, metavar="S", help="random seed (default 1)")
    ap.add_argument("--threads", type=p, metavar="N",
                    help="PyTorch threads per process (default: the cores / local processes)")
    ap.add_argument("--min-count", type=p, metavar="N",
                    help="keep characters seen at least N times (default 1)")
    ap.add_argument("--max-vocab", type=u, metavar="N",
                    help="at most N vocabulary ids, 3 specials included (default: all)")
    ap.add_argument("--val-file", metavar="FILE",
                    help="validation text (default: 5%% of the corpus, in pieces spread "
                    "evenly over it)")
    ap.add_argument("--eval-every", type=u, metavar="N",
                    help="validate every N steps, 0 = only at the end (default 100)")
    ap.add_argument("--checkpoint-every", type=u, metavar="N",
                    help="write OUT.ckpt every N steps, 0 = only when stopped (default 500)")
    ap.add_argument("--timeline-every", type=u, metavar="N",
                    help="record every head's role scores on a fixed probe every N steps, for "
                    "the training timeline; 0 = none (default: about 100 records a run)")
    ap.add_argument("--keep-steps", type=u, metavar="N",
                    help="keep the model of every N-th recorded step of the timeline and of "
                    "the last as FILE.steps/step-SSSSSS.attn (attnview --model FILE --step S "
                    "opens one); 0 = none (default)")
    ap.add_argument("--resume", metavar="CHECKPOINT",
                    help="continue a stopped run of this trainer with its options")
    ap.add_argument("--init", metavar="MODEL",
                    help="start from this attnview model (fine-tuning): its sizes and "
                    "vocabulary are kept")
    ap.add_argument("--nproc", type=p, metavar="N",
                    help="start N processes on this machine (data-parallel)")
    ap.add_argument("--device", metavar="DEV",
                    help="auto (default: CUDA if available, else CPU), cpu, cuda or cuda:N")
    return ap


def _int(s, lo):
    try:
        v = int(s, 10)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a whole number" % quote(s)) from None
    if v < lo or v >= 2**64:
        raise argparse.ArgumentTypeError("'%s' is out of range" % quote(s))
    return v


def _lr(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a number" % quote(s)) from None
    if not 0 < v < 10:
        raise argparse.ArgumentTypeError("--lr must be above 0 and below 10 (e.g. 1e-3)")
    return v


def check_options(o):
    """attnview's train_options_check; raises UsageError naming the option."""
    if not 1 <= o["heads"] <= MAX_HEADS:
        raise UsageError("--heads %d is out of range: use 1 to %d" % (o["heads"], MAX_HEADS))
    if not 2 <= o["dim"] <= MAX_DIM:
        raise UsageError("--dim %d is out of range: use 2 to %d" % (o["dim"], MAX_DIM))
    if o["dim"] % o["heads"]:
        raise UsageError("--dim %d is not divisible by --heads %d: each head gets dim/heads "
                         "channels; use e.g. --dim %d"
                         % (o["dim"], o["heads"], -(-o["dim"] // o["heads"]) * o["heads"]))
    if o["dim"] % 2:
        raise UsageError("--dim %d is odd: the sinusoidal positions pair channels; use an even "
                         "--dim" % o["dim"])
    if not 1 <= o["layers"] <= MAX_LAYERS:
        raise UsageError("--layers %d is out of range: use 1 to %d" % (o["layers"], MAX_LAYERS))
    if not 2 <= o["context"] <= MAX_CONTEXT:
        raise UsageError("--context %d is out of range: use 2 to %d"
                         % (o["context"], MAX_CONTEXT))
    if not 1 <= o["batch"] <= 4096:
        raise UsageError("--batch %d is out of range: use 1 to 4096" % o["batch"])
    if o["steps"] > 100000000 or o["epochs"] > 100000:
        raise UsageError("--steps or --epochs is too large")
    if o["steps"] and o["warmup"] is not None and o["warmup"] >= o["steps"]:
        raise UsageError("--warmup %d is not below --steps %d: use fewer warmup steps (about 3%% "
                         "of the steps)" % (o["warmup"], o["steps"]))
    if o["max_vocab"] and o["max_vocab"] < NSPECIAL + 1:
        raise UsageError("--max-vocab %d leaves no room for characters: the 3 special tokens "
                         "count; use at least 4 (or 0 for no limit)" % o["max_vocab"])
    if o["max_vocab"] > MAX_VOCAB:
        raise UsageError("--max-vocab %d is above the limit of %d" % (o["max_vocab"], MAX_VOCAB))
    att = 2.0 * o["layers"] * o["batch"] * o["heads"] * o["context"] ** 2 * 4
    if att > 8e9:
        raise UsageError("--batch %d with --context %d, --heads %d and --layers %d needs %.1f GB "
                         "for attention weights alone: use a smaller --batch or --context"
                         % (o["batch"], o["context"], o["heads"], o["layers"], att / 1e9))
    try:
        Config(OBJECTIVES_BY_NAME[o["objective"]], o["max_vocab"] or 1000, o["dim"], o["heads"],
               o["layers"], o["context"]).check()
    except ConfigError as e:
        raise UsageError(str(e)) from None


OBJECTIVES_BY_NAME = {v: k for k, v in OBJECTIVES.items()}


def resolve_options(a):
    """(options dict, set of the options given) from the parsed arguments."""
    given = {k for k in DEFAULTS if getattr(a, k, None) is not None}
    o = {k: (getattr(a, k) if k in given else v) for k, v in DEFAULTS.items()}
    if "epochs" in given:
        if "steps" in given:
            raise UsageError("--steps and --epochs cannot both be given: choose one")
        o["steps"] = 0
    if getattr(a, "keep_steps", None) and "timeline_every" in given and not o["timeline_every"]:
        raise UsageError("--keep-steps keeps the models of the steps the timeline records, and "
                         "--timeline-every 0 records none: choose one")
    o["val_file"] = a.val_file
    o["init"] = a.init
    o["fixed_vocab"] = bool(a.init)
    return o, given


# ---------------------------------------------------------------- small helpers

def _mix64(x):
    """splitmix64's finaliser."""
    m = (1 << 64) - 1
    x = (x + 0x9E3779B97F4A7C15) & m
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m
    return x ^ (x >> 31)


def batch_seed(seed, step, rank):
    """The generator seed of process `rank`'s batch at `step`: batches depend
    only on (seed, step, rank), so a resumed run draws what an uninterrupted
    one would have."""
    return _mix64(_mix64(_mix64(seed ^ DATA_SALT) ^ step) ^ rank) >> 1


def format_duration(s):
    if not s >= 0 or s > 1e8:
        return "?"
    t = int(s + 0.5)
    if t >= 3600:
        return "%dh%02dm" % (t // 3600, t // 60 % 60)
    if t >= 60:
        return "%dm%02ds" % (t // 60, t % 60)
    return "%ds" % t


def _base_name(path, strip_ext):
    b = os.path.basename(path)
    if strip_ext:
        dot = b.rfind(".")
        if dot > 0:
            b = b[:dot]
    return b


def creation_time():
    """attnview's train_creation_time: the creation time a new run records,
    SOURCE_DATE_EPOCH when set and not empty (seconds since 1970-01-01 UTC in
    decimal digits, as `date +%s` prints them), else the clock."""
    s = os.environ.get("SOURCE_DATE_EPOCH")
    if not s:
        return int(time.time())
    if not re.fullmatch("[0-9]+", s) or int(s) > 2**63 - 1:
        raise UsageError('SOURCE_DATE_EPOCH is "%s", not a number of seconds since 1970-01-01 '
                         'UTC (digits only, as date +%%s prints it): set it to one or unset it'
                         % quote(s)[:40])
    return int(s)


def _check_output(path, magics):
    """attnview's train_check_output: an existing file must be ours, the
    directory writable."""
    try:
        may_replace(path, magics)
    except OSError as e:
        raise TrainError(error_text(e)) from None
    d = os.path.dirname(path) or "."
    try:
        st = os.stat(d)
    except FileNotFoundError:
        raise TrainError("cannot write %s: directory %s does not exist; create it or choose "
                         "another output file" % (quote(path), quote(d))) from None
    except OSError as e:
        raise TrainError("cannot write %s: cannot reach directory %s: %s"
                         % (quote(path), quote(d), e.strerror)) from None
    if not stat.S_ISDIR(st.st_mode):
        raise TrainError("cannot write %s: %s is not a directory" % (quote(path), quote(d)))
    if not os.access(d, os.W_OK):
        raise TrainError("cannot write %s: directory %s is not writable"
                         % (quote(path), quote(d)))


_shell_quote = shell_quote


# ---------------------------------------------------------------- the corpus between processes

def _share_corpus(ctx, c):
    """Rank 0's Corpus on every rank (the ids, the vocabulary, the counts)."""
    if not ctx.distributed:
        return c
    import json
    info = None
    if ctx.main:
        info = json.dumps(dict(ntrain=c.ntrain, nval=c.nval, vocab=c.vocab, distinct=c.distinct,
                               unk_val=c.unk_val, paths=c.paths,
                               val_path=c.val_path, digest=c.digest)).encode()
    info = json.loads(distributed.share_bytes(ctx, info).decode())
    ids = distributed.share_tensor(ctx, c.ids if ctx.main else None)
    counts = distributed.share_tensor(ctx, c.id_count if ctx.main else None)
    if ctx.main:
        return c
    return Corpus(ids=ids, id_count=counts, stats=CleanStats(), val_stats=None, **info)


# ---------------------------------------------------------------- the trainer

class Trainer:
    def __init__(self, args, ctx):
        self.args, self.ctx = args, ctx
        self.stop_signal = 0
        self.step = 0
        self.tokens = 0
        self.recent = []
        self.evals = []
        self.base = dict(steps=0, tokens=0)
        self.init_timeline = None  # --init's model's timeline, which the run goes on with

    def say(self, text, end="\n"):
        if self.ctx.main:
            print(visible(text), end=end, flush=True)

    def error(self, msg):
        if self.ctx.main:
            sys.stderr.write(visible("%s: %s\n" % (PROG, msg)))
            sys.stderr.flush()

    # -- setup, phase by phase; rank 0 reads, everyone agrees on failures

    def _rank0(self, fn):
        """Run fn on rank 0; every rank learns whether it failed (then
        raises _Failed with the exit status)."""
        code, out = EXIT_OK, None
        if self.ctx.main:
            try:
                out = fn()
            except UsageError as e:
                self.error(error_text(e))
                code = EXIT_USAGE
            except (TrainError, CorpusError, FormatError, OSError) as e:
                self.error(error_text(e))
                code = EXIT_RUNTIME
        code = distributed.agree(self.ctx, code)
        if code:
            raise _Failed(code)
        return out

    def setup(self):
        a, ctx = self.args, self.ctx
        o, given = resolve_options(a)
        created = creation_time()  # a malformed SOURCE_DATE_EPOCH before anything is read
        if a.resume and a.init:
            raise UsageError("--resume and --init cannot both be given: a checkpoint holds its "
                             "model")
        ck = None
        if a.resume:
            data = distributed.share_bytes(ctx, self._rank0(lambda: read_file(a.resume)))
            try:
                ck = decode_checkpoint(data, a.resume)
            except FormatError as e:
                self.error(error_text(e))
                raise _Failed(EXIT_RUNTIME) from None
            state = ck[0]
            stored = state["options"]
            for k in RESUME_FIXED:
                mine = o[k] if k != "steps" or "epochs" not in given else stored["steps"]
                if k in given and mine != stored.get(k):
                    flag = "--" + k.replace("_", "-")
                    raise UsageError("%s differs from the checkpoint's: --resume continues with "
                                     "the options it was started with; drop %s" % (flag, flag))
            if a.val_file and a.val_file != stored.get("val_file"):
                raise UsageError("--val-file differs from the checkpoint's; drop it")
            o = dict(stored)
            self.base = state.get("base", self.base)
        else:
            check_options(o)
        init = None
        if a.init:
            bad = [k for k in ("min_count", "max_vocab") if k in given]
            if bad:
                raise UsageError("--%s does not apply with --init: the model's vocabulary is "
                                 "kept" % bad[0].replace("_", "-"))
            data = distributed.share_bytes(ctx, self._rank0(lambda: read_file(a.init)))
            try:
                init = decode(data, a.init)
            except FormatError as e:
                self.error(error_text(e))
                raise _Failed(EXIT_RUNTIME) from None
            c = init.config
            if not c.arch.own:
                self.error("%s: this model has %s's architecture (learned positions, its GELU, "
                           "embedding and output), which attnview's trainer does not train: go "
                           "on training it where it was trained and convert it again, or train "
                           "a new model without --init" % (quote(a.init), c.arch.name("origin")))
                raise _Failed(EXIT_RUNTIME)
            have = dict(objective=OBJECTIVES[c.objective], dim=c.dim, heads=c.heads,
                        layers=c.layers, context=c.context)
            for k in INIT_FIXED:
                if k in given and o[k] != have[k]:
                    raise UsageError("--%s %s differs from the model's %s: fine-tuning keeps the "
                                     "model's sizes; drop --%s" % (k, o[k], have[k], k))
            o.update(have)
            check_options(o)
            self.base = dict(steps=init.meta["steps"], tokens=init.meta["tokens"])
            self.init_timeline = init.timeline
        self.opt = o

        # outputs
        out = a.output
        if not out:
            if a.resume and a.resume.endswith(".ckpt") and len(a.resume) > 5:
                out = a.resume[:-5]
            else:
                out = "model.attn"
        self.out = out
        self.ckpt = a.resume or out + ".ckpt"
        self._rank0(lambda: (_check_output(out, (MAGIC,)),
                             _check_output(self.ckpt, (MAGIC, CKPT_MAGIC))))

        # the corpus
        t0 = time.monotonic()
        fixed = None
        if ck is not None and o.get("fixed_vocab"):
            fixed = ck[1].vocab
        elif init is not None:
            fixed = init.vocab

        def read_corpus():
            c = load_corpus(a.corpus, o["val_file"], o["min_count"], o["max_vocab"], fixed,
                            a.init if init is not None else None)
            c.digest = c.sha256()
            self.say(c.summary(" + ".join(quote(p) for p in a.corpus)), end="")
            return c
        self.corpus = _share_corpus(ctx, self._rank0(read_corpus))
        self.load_seconds = time.monotonic() - t0
        c = self.corpus
        if ck is not None:
            want = ck[0]["corpus"]
            if (want["ntrain"], want["nval"], want["digest"]) != (c.ntrain, c.nval, c.digest):
                raise TrainError("the corpus differs from the one %s was trained on (%d + %d "
                                 "characters then, %d + %d now%s); resume with the same corpus%s"
                                 % (quote(a.resume), want["ntrain"], want["nval"], c.ntrain,
                                    c.nval,
                                    ", other text" if want["ntrain"] == c.ntrain else "",
                                    " and --val-file" if o["val_file"] else ""))
            if ck[1].vocab != c.vocab:
                raise TrainError("the corpus differs from the one the checkpoint was trained on: "
                                 "its vocabulary is not the same; resume with the same corpus")
        self.check_data()

        # sizes of the run
        W = o["context"] + (o["objective"] == "causal")
        self.window = W
        if not o["steps"]:
            per = o["batch"] * o["context"] * ctx.world
            o["steps"] = max(1, -(-o["epochs"] * c.ntrain // per))
        if o["warmup"] is None:
            o["warmup"] = auto_warmup(o["steps"])
        elif o["warmup"] >= o["steps"]:
            raise UsageError("--epochs %d makes %d steps, not more than --warmup %d: use more "
                             "epochs or fewer warmup steps" % (o["epochs"], o["steps"],
                                                                o["warmup"]))
        self.total = o["steps"]
        if o.get("timeline_every") is None:
            o["timeline_every"] = 0 if ck is not None else timeline.auto_every(self.total)
        T = o["context"]
        self.nmask = max(1, (T * 15 + 50) // 100) if o["objective"] == "masked" else T

        # the model
        cfg = Config(OBJECTIVES_BY_NAME[o["objective"]], len(c.vocab), o["dim"], o["heads"],
                     o["layers"], T)
        try:
            cfg.check()  # with the real vocabulary: the parameter limit
        except ConfigError as e:
            raise UsageError("%s: attnview could not read the model; use a smaller --dim or "
                             "--max-vocab" % e) from None
        # the file holds UTF-8: a path's undecodable bytes become U+FFFD
        meta = dict(name=file_string(_base_name(out, True)),
                    corpus=file_string("%s (%d characters)"
                                       % (" + ".join(_base_name(p, False) for p in c.paths),
                                          c.ntrain + c.nval)),
                    seed=o["seed"], created=created)
        if ck is not None:
            mf = ck[1]
            # a resumed run keeps the creation time of the run it continues
            model = AttnviewModel.from_params(mf.config, mf.vocab, mf.params, mf.meta)
        elif init is not None:
            model = AttnviewModel.from_params(init.config, init.vocab, init.params, meta)
        else:
            model = AttnviewModel(cfg, c.vocab, meta)
            model.init_weights(torch.Generator().manual_seed(o["seed"]))
        for k in ("val_loss", "val_acc", "base_loss", "base_acc"):
            model.meta[k] = float("nan")
        model.meta.pop("_nan_bits", None)
        self.model = model.to(ctx.device)
        self.named = self.model.file_parameters()
        self.optim = torch_adamw(self.named, o["lr"])
        self.timeline = None
        if ck is not None:
            self.restore(ck)
            self.timeline = ck[1].timeline if o["timeline_every"] else None
            self.keep_step()  # a run stopped at step 0 starts its kept models now
        elif o["timeline_every"]:
            self.timeline_start()  # every process: each holds the whole model
        if ctx.distributed and not os.environ.get(NO_SYNC_ENV):
            from torch.nn.parallel import DistributedDataParallel as DDP
            ids = [ctx.device.index] if ctx.device.type == "cuda" else None
            self.ddp = DDP(self.model, device_ids=ids)
        else:
            self.ddp = self.model
        # the baseline's guess: the most frequent training id, the first of
        # equals, the unknown id on a tie with it (attnview's most_frequent_id)
        top = c.id_count.max()
        self.most_frequent = 1 if c.id_count[1] == top else int((c.id_count == top).nonzero()[0])

    def check_data(self):
        o, c = self.opt, self.corpus
        W = o["context"] + (o["objective"] == "causal")
        label = " + ".join(quote(p) for p in self.args.corpus)
        if c.ntrain < W * o["batch"]:
            raise UsageError("%s: the training split has %d characters, fewer than one batch "
                             "(--batch %d x %d characters per window): use a larger corpus or a "
                             "smaller --batch or --context" % (label, c.ntrain, o["batch"], W))
        if c.nval < W:
            raise UsageError("%s: the validation split (%s) has %d characters, fewer than one "
                             "window of %d: use a larger corpus, a smaller --context, or "
                             "--val-file FILE" % (label, "the --val-file" if o["val_file"] else
                                                  "5% of the corpus", c.nval, W))

    # -- optimizer state <-> flat moments in file order

    def moments(self):
        ms, vs = [], []
        for p in self.named.values():
            st = self.optim.state.get(p, {})
            ms.append(st["exp_avg"].reshape(-1) if "exp_avg" in st else torch.zeros(p.numel()))
            vs.append(st["exp_avg_sq"].reshape(-1) if "exp_avg_sq" in st
                      else torch.zeros(p.numel()))
        return torch.cat([m.cpu() for m in ms]), torch.cat([v.cpu() for v in vs])

    def restore(self, ck):
        state, _, m, v = ck
        self.step = state["step"]
        self.tokens = state["tokens"]
        self.recent = list(state.get("recent", []))
        self.evals = [tuple(e) for e in state.get("evals", [])]
        if state["step"] > self.total or state.get("adam_step", state["step"]) != state["step"]:
            raise TrainError("%s: the training state is damaged; start the training again"
                             % quote(self.args.resume))
        if state["world_size"] != self.ctx.world:
            self.say("note: %s was written by %d processes, this run has %d: the data each step "
                     "sees differs from an uninterrupted run's" % (quote(self.args.resume),
                                                                   state["world_size"],
                                                                   self.ctx.world))
        at = 0
        for p in self.named.values():
            n = p.numel()
            if self.step:
                self.optim.state[p] = {
                    "step": torch.tensor(float(self.step)),
                    "exp_avg": m[at:at + n].reshape(p.shape).clone().to(p.device),
                    "exp_avg_sq": v[at:at + n].reshape(p.shape).clone().to(p.device)}
            at += n

    # -- the training timeline (include/attnview/timeline.h)

    def timeline_start(self):
        """The probe, as attnview --train takes it (train_timeline.c): 4
        windows of the context (64 characters at most) spread evenly over the
        validation text (the training text without one); the record of step 0.
        A model given with --init that carries a timeline brings it: the run
        goes on with its probe and records (those after the model's step
        count dropped), at this run's K, the model's state at the start
        recorded unless its last record is of that step; one that ends before
        the model's step count with nothing dropped (attnview 0.2.0 numbered
        a --init run's records from 0), or that an older attnview measured
        otherwise (version 1), is replaced by the run's own."""
        c, o = self.corpus, self.opt
        tl, now = self.init_timeline, self.base["steps"]
        if tl is not None:
            had = len(tl.steps)
            while tl.steps and tl.steps[-1] > now:
                for a in (tl.steps, tl.loss, tl.probe_loss, tl.icl, tl.values):
                    a.pop()
            if (not tl.steps or (len(tl.steps) == had and tl.steps[-1] < now)
                    or tl.version != timeline.VERSION):
                tl = None  # measured otherwise by an older attnview: the run's own
        if tl is not None:
            tl.every = o["timeline_every"]
            if tl.steps[-1] != now:
                timeline.record(tl, self.model, now, float("nan"), self.probe_held_out(tl))
            self.timeline = tl
            self.keep_step()
            return
        n = min(o["context"], timeline.PROBE_LEN)
        W = timeline.WINDOWS
        held = c.nval >= n
        first, ln = (c.ntrain, c.nval) if held else (0, c.ntrain)
        probe = []
        for w in range(W):
            start = first + (ln - n) * w // (W - 1)
            probe += [c.vocab[c.id(start + i)] for i in range(n)]
        self.timeline = timeline.create(self.model.config, probe, W, n, o["timeline_every"],
                                        o["seed"])
        timeline.record(self.timeline, self.model, now, float("nan"), held)
        self.keep_step()

    def probe_held_out(self, tl):
        """The probe is held-out text when the timeline began with a probe loss
        (the validation text of the run that made it) and this run holds out
        text too (train_timeline.c, probe_held_out)."""
        return (bool(tl.probe_loss) and not math.isnan(tl.probe_loss[0])
                and self.corpus.nval >= tl.n)

    def timeline_step(self):
        tl = self.timeline
        if not timeline.due(tl, self.step, self.total):
            return
        # records carry the model's step count, which goes on from --init's
        now, base = self.base["steps"] + self.step, self.base["steps"]
        prev = tl.steps[-1] if tl.steps else 0
        since = now - prev if base <= prev < now else self.step
        k = min(since, len(self.recent))
        loss = sum(self.recent[-k:]) / k if k else float("nan")
        timeline.record(tl, self.model, now, loss, self.probe_held_out(tl))
        self.keep_step()

    def keep_step(self):
        """--keep-steps (attnview(1); timeline_keep): the model of the step
        just recorded, when its record is one to keep, as a model file beside
        the output, without validation figures; step 0 (a new run) first
        removes the models an earlier run kept there, and nothing else."""
        tl, every = self.timeline, self.args.keep_steps or 0
        if not self.ctx.main or not every or tl is None or not tl.steps:
            return
        now, base = self.base["steps"] + self.step, self.base["steps"]
        rec = sum(1 for s in tl.steps if s >= base) - 1  # this run's records before it
        if tl.steps[-1] != now or not (rec % every == 0 or self.step == self.total):
            return
        d = self.out + KEPT_DIR
        try:
            os.mkdir(d)
        except FileExistsError:
            pass
        except OSError as e:
            raise TrainError("%s: cannot create the directory of the kept models "
                             "(--keep-steps): %s; choose another -o or make it writable"
                             % (quote(d), e.strerror)) from None
        if self.step == 0:
            for name in os.listdir(d):
                if KEPT_NAME.fullmatch(name):
                    try:
                        os.unlink(os.path.join(d, name))
                    except FileNotFoundError:
                        pass
        write_atomic(os.path.join(d, "step-%06d.attn" % now), self.model_bytes())

    # -- data

    def batch(self, step):
        """This process's batch of `step`: tokens, targets (B,T) and the flat
        rows that have a target (None: every row)."""
        o, c = self.opt, self.corpus
        B, T, W, V = o["batch"], o["context"], self.window, len(c.vocab)
        g = torch.Generator().manual_seed(batch_seed(o["seed"], step, self.ctx.rank))
        starts = torch.randint(0, c.ntrain - W + 1, (B,), generator=g)
        win = c.ids[starts[:, None] + torch.arange(W)].long()
        if o["objective"] == "causal":
            # every position has a target; the rows are given all the same, as
            # finding them on a GPU would wait for it
            return win[:, :-1].contiguous(), win[:, 1:].contiguous(), torch.arange(B * T)
        M = self.nmask
        pos = torch.rand(B, T, generator=g).argsort(dim=1)[:, :M]  # M distinct positions
        u = torch.rand(B, M, generator=g)
        rnd = torch.randint(NSPECIAL, V, (B, M), generator=g)
        orig = win.gather(1, pos)
        # 80% the mask token, 10% a random character, 10% unchanged
        new = torch.where(u < 0.8, torch.full_like(orig, TOK_MASK),
                          torch.where(u < 0.9, rnd, orig))
        tokens = win.scatter(1, pos, new)
        targets = torch.full_like(win, -1).scatter(1, pos, orig)
        rows = (torch.arange(B)[:, None] * T + pos).reshape(-1)
        return tokens, targets, rows

    def to_device(self, *ts):
        dev = self.ctx.device
        if dev.type == "cpu":
            return ts
        return tuple(None if t is None else t.pin_memory().to(dev, non_blocking=True)
                     for t in ts)

    # -- evaluation (attnview's trainer_evaluate)

    @torch.no_grad()
    def evaluate(self, final):
        o, c, ctx = self.opt, self.corpus, self.ctx
        B, T, W = o["batch"], o["context"], self.window
        maxk = B * (FINAL_BATCHES if final else EVAL_BATCHES)
        # Kw windows; masked, each is evaluated ceil(T/M) times with its own
        # masks (a short validation text gets every position hidden about
        # once), K rows in all, row k taking window k mod Kw
        Kw = max(1, c.nval // W)
        K = min(maxk, Kw * (-(-T // self.nmask) if o["objective"] != "causal" else 1))
        Kw = min(Kw, K)
        offs = [(k % Kw) * (c.nval - W) // (Kw - 1) if Kw > 1 else 0 for k in range(K)]
        g = torch.Generator().manual_seed((o["seed"] ^ EVAL_SALT) >> 1)
        causal = o["objective"] == "causal"
        if not causal:
            pos_all = torch.rand(K, T, generator=g).argsort(dim=1)[:, :self.nmask]
        logp = torch.log((c.id_count.double() + 1.0) / (c.ntrain + len(c.vocab)))
        sums = [0.0, 0.0, 0.0, 0.0, 0.0]  # loss, count, correct, baseline loss, baseline correct
        mine = list(range(ctx.rank, K, ctx.world))
        for i in range(0, len(mine), B):
            ks = mine[i:i + B]
            starts = torch.tensor([c.ntrain + offs[k] for k in ks])
            win = c.ids[starts[:, None] + torch.arange(W)].long()
            if causal:
                tokens, targets, rows = win[:, :-1], win[:, 1:], torch.arange(len(ks) * T)
            else:
                pos = pos_all[ks]
                orig = win.gather(1, pos)
                tokens = win.scatter(1, pos, torch.full_like(orig, TOK_MASK))
                targets = torch.full_like(win, -1).scatter(1, pos, orig)
                rows = (torch.arange(len(ks))[:, None] * T + pos).reshape(-1)
            y_cpu = targets.reshape(-1)
            y_cpu = y_cpu[y_cpu >= 0]
            tokens, targets, rows = self.to_device(tokens.contiguous(), targets.contiguous(), rows)
            logits, y = target_logits(self.model.config, self.named, tokens, targets, rows)
            ce = torch.nn.functional.cross_entropy(logits.double(), y, reduction="sum")
            sums[0] += float(ce)
            sums[1] += len(y_cpu)
            sums[2] += float((logits.argmax(dim=1) == y).sum())
            sums[3] -= float(logp[y_cpu].sum())
            sums[4] += float((y_cpu == self.most_frequent).sum())
        loss, count, correct, base, base_correct = distributed.all_reduce_sum(ctx, sums)
        nan = float("nan")
        return dict(count=int(count), loss=loss / count if count else nan,
                    acc=correct / count if count else nan,
                    base_loss=base / count if count else nan,
                    base_acc=base_correct / count if count else nan)

    # -- files

    def model_bytes(self, **meta):
        m = dict(self.model.meta)
        m.update(steps=self.base["steps"] + self.step, tokens=self.base["tokens"] + self.tokens)
        m.update(meta)
        return encode(self.model.config, self.model.vocab, self.named, m,
                      timeline=self.timeline)

    def write_checkpoint(self):
        o = dict(self.opt)
        c = self.corpus
        state = dict(options=o, step=self.step, tokens=self.tokens, adam_step=self.step,
                     world_size=self.ctx.world, recent=self.recent[-RECENT:],
                     evals=[list(e) for e in self.evals], base=self.base,
                     corpus=dict(ntrain=c.ntrain, nval=c.nval, digest=c.digest,
                                 files=[os.path.basename(p) for p in c.paths]),
                     torch=torch.__version__)
        m, v = self.moments()
        save_checkpoint(self.ckpt, state, self.model_bytes(), m, v)

    def weights_crc(self):
        crc = 0
        for p in self.named.values():
            crc = zlib.crc32(tensor_bytes(p), crc)
        return crc & 0xFFFFFFFF

    # -- the loop

    def install_signals(self):
        def on_signal(signo, frame):
            self.stop_signal = signo
            signal.signal(signo, signal.SIG_DFL)  # a second one ends the process at once
        self.old_signals = {s: signal.signal(s, on_signal) for s in (signal.SIGINT,
                                                                     signal.SIGTERM)}

    def restore_signals(self):
        for s, h in getattr(self, "old_signals", {}).items():
            signal.signal(s, h)

    def run(self):
        a, o, ctx = self.args, self.opt, self.ctx
        B, T = o["batch"], o["context"]
        per_step = B * T * ctx.world
        c = self.corpus
        self.say("model: %s, d=%d h=%d L=%d T=%d, %d vocabulary ids, %d parameters; batch %d x %d "
                 "process%s, %d steps, lr %g, warmup %d, %s%s, %d thread%s per process, corpus "
                 "read in %.1fs" % (o["objective"], o["dim"], o["heads"], o["layers"], T,
                                    len(c.vocab), num_params(self.model.config), B, ctx.world,
                                    "" if ctx.world == 1 else "es", self.total, o["lr"],
                                    o["warmup"], ctx.device,
                                    " (%s)" % ctx.backend if ctx.backend else "",
                                    torch.get_num_threads(),
                                    "" if torch.get_num_threads() == 1 else "s",
                                    self.load_seconds))
        if a.resume:
            self.say("resuming %s at step %d" % (quote(a.resume), self.step))
        stop_at = int(os.environ.get(STOP_AT_ENV, "0") or 0)
        rank_dir = os.environ.get(RANK_DIR_ENV)
        batches_log = []
        self.install_signals()
        t0 = time.monotonic()
        step0 = self.step
        try:
            while self.step < self.total:
                tokens, targets, rows = self.batch(self.step)
                if rank_dir:
                    batches_log.append(zlib.crc32(tensor_bytes(tokens.float())))
                tokens, targets, rows = self.to_device(tokens, targets, rows)
                lr = lr_at(self.step, o["lr"], o["warmup"], self.total)
                for grp in self.optim.param_groups:
                    grp["lr"] = lr
                self.optim.zero_grad(set_to_none=True)
                loss = self.ddp(tokens, targets, rows)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), CLIP)
                self.optim.step()
                self.step += 1
                self.tokens += per_step
                stop = 1.0 if self.stop_signal or (stop_at and self.step == stop_at) else 0.0
                lsum, stops = distributed.all_reduce_sum(ctx, [float(loss), stop])
                lval = lsum / ctx.world
                self.recent.append(lval)
                del self.recent[:-RECENT]
                if not math.isfinite(lval):
                    raise TrainError("the training loss became %g at step %d: the learning rate "
                                     "is probably too high; lower --lr and start again"
                                     % (lval, self.step))
                self.timeline_step()
                evaluated = None
                if o["eval_every"] and self.step % o["eval_every"] == 0:
                    evaluated = self.evaluate(False)
                    self.evals.append((self.step, evaluated["loss"], evaluated["acc"]))
                if evaluated:
                    el = time.monotonic() - t0
                    done = self.step - step0
                    n = min(100, len(self.recent))
                    self.say("step %d/%d: train loss %.4f, val loss %.3f, val acc %.2f%%, %.0f "
                             "tok/s, ETA %s" % (self.step, self.total,
                                                sum(self.recent[-n:]) / n, evaluated["loss"],
                                                100 * evaluated["acc"],
                                                done * per_step / el if el > 0 else 0,
                                                format_duration(el / done * (self.total
                                                                             - self.step))))
                if self.step == self.total:
                    break
                if stops:
                    signo = self.stop_signal or signal.SIGINT
                    if ctx.main:
                        self.write_checkpoint()
                    distributed.barrier(ctx)
                    q = _shell_quote
                    self.error("stopped at step %d of %d; checkpoint written to %s\nresume with: "
                               "%s %s --resume %s -o %s%s"
                               % (self.step, self.total, quote(self.ckpt), PROG,
                                  " ".join(q(p) for p in a.corpus), q(self.ckpt), q(self.out),
                                  " --nproc %d" % a.nproc if a.nproc else ""))
                    return 128 + int(signo)
                if o["checkpoint_every"] and self.step % o["checkpoint_every"] == 0:
                    if ctx.main:
                        self.write_checkpoint()
            elapsed = time.monotonic() - t0
        finally:
            self.restore_signals()
        final = self.evaluate(True)
        crcs = distributed.all_gather_ints(ctx, self.weights_crc())
        if rank_dir:
            with open(os.path.join(rank_dir, "rank%d.attn" % ctx.rank), "wb") as f:
                f.write(self.model_bytes())
            with open(os.path.join(rank_dir, "rank%d.batches" % ctx.rank), "w") as f:
                f.write("".join("%08x\n" % x for x in batches_log))
        if len(set(crcs)) != 1:
            raise TrainError("the processes hold different weights at the end (CRC-32 %s): "
                             "the gradients were not synchronised" % " ".join("%08x" % x
                                                                             for x in crcs))
        if ctx.main:
            data = self.model_bytes(val_loss=final["loss"], val_acc=final["acc"],
                                    base_loss=final["base_loss"], base_acc=final["base_acc"])
            write_atomic(self.out, data)
            if is_attnview_file(self.ckpt, (CKPT_MAGIC,)):
                os.unlink(self.ckpt)
        distributed.barrier(ctx)
        done = self.step - step0
        if ctx.world > 1:
            self.say("weights identical on all %d processes (CRC-32 %08x)" % (ctx.world, crcs[0]))
        self.say("validation (%d %s characters): loss %.4f nats/char, accuracy %.2f%%\n"
                 "unigram baseline on the same characters: loss %.4f, accuracy %.2f%%\n"
                 "trained %d steps in %.1fs: %.0f tokens/s (%d per step)\n"
                 "wrote %s (%d steps, %s)"
                 % (final["count"], "next" if o["objective"] == "causal" else "masked",
                    final["loss"], 100 * final["acc"], final["base_loss"],
                    100 * final["base_acc"], done, elapsed,
                    done * per_step / elapsed if elapsed > 0 else 0, per_step, quote(self.out),
                    self.step, format_duration(elapsed)))
        return EXIT_OK


class _Failed(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def run(args):
    """One process of the run (rank from the environment); its exit status."""
    try:
        ctx = distributed.init(args.device)
    except (distributed.LaunchError, RuntimeError, ValueError) as e:
        sys.stderr.write(visible("%s: %s\n" % (PROG, e)))
        return EXIT_RUNTIME
    threads = args.threads or max(1, (os.cpu_count() or 1) // ctx.local_world)
    torch.set_num_threads(threads)
    t = Trainer(args, ctx)
    code = EXIT_RUNTIME
    try:
        t.setup()
        code = t.run()
    except _Failed as e:
        code = e.code
    except UsageError as e:
        t.error("%s (see %s --help)" % (e, PROG))
        code = EXIT_USAGE
    except (TrainError, CorpusError, FormatError, OSError, RuntimeError) as e:
        # RuntimeError: also a collective that failed because another process
        # ended (its own message says why)
        if ctx.main:
            t.error(error_text(e))
        else:
            sys.stderr.write(visible("%s: process %d: %s\n" % (PROG, ctx.rank, error_text(e))))
        code = EXIT_RUNTIME
    except BaseException:
        if not ctx.distributed:
            raise
        import traceback
        traceback.print_exc()  # finish() below ends the process without Python's report
        code = EXIT_RUNTIME
    finally:
        # one of several processes does not return: see distributed.finish
        code = distributed.finish(ctx, code)
    return code


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.nproc and os.environ.get("WORLD_SIZE"):
        sys.stderr.write("%s: --nproc starts its own processes; under a launcher (WORLD_SIZE is "
                         "set) drop it\n" % PROG)
        return EXIT_USAGE
    if args.nproc and args.nproc > 1:
        threads = args.threads or max(1, (os.cpu_count() or 1) // args.nproc)
        return distributed.launch(args.nproc, run, (args,), threads)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
