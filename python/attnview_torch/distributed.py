"""Processes and devices for data-parallel training (torch.distributed).

One place decides how this process was started:

  - by `--nproc N`: launch() starts N local processes with
    torch.multiprocessing and sets MASTER_ADDR/MASTER_PORT, RANK, WORLD_SIZE,
    LOCAL_RANK and LOCAL_WORLD_SIZE for each;
  - by a launcher that sets those variables (torchrun, torch.distributed.run,
    a multi-node launcher), or by SLURM (srun: SLURM_PROCID, SLURM_NTASKS,
    SLURM_LOCALID are mapped to them; MASTER_ADDR must name the first node
    unless the job has one node);
  - otherwise it is the only process.

init() joins the process group with the env:// rendezvous: NCCL for CUDA
devices, gloo on the CPU. Rank 0 reads the inputs and broadcasts them
(share_bytes, share_tensor over a gloo group, so only the first node needs
the corpus), every rank trains on its own shard of each step's data, and
DistributedDataParallel keeps the weights identical.
"""

import datetime
import os
import signal
import socket
import sys
import time

import torch
import torch.distributed as dist

ENV_VARS = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK",
            "LOCAL_WORLD_SIZE")


class LaunchError(RuntimeError):
    pass


class Context:
    """rank, world, local_rank, local_world, device, backend, and the group
    for CPU broadcasts (None when alone)."""

    def __init__(self, rank=0, world=1, local_rank=0, local_world=1, device=None, backend=None):
        self.rank, self.world = rank, world
        self.local_rank, self.local_world = local_rank, local_world
        self.device = device or torch.device("cpu")
        self.backend = backend
        self.cpu_group = None

    @property
    def distributed(self):
        return self.world > 1

    @property
    def main(self):
        return self.rank == 0


def _env_int(name, default=None):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise LaunchError("%s=%r is not a number" % (name, v)) from None


def from_environment():
    """(rank, world, local_rank, local_world) from torchrun-style variables,
    else from SLURM's, else (0, 1, 0, 1). Fills in the env:// variables that
    init_process_group reads."""
    if os.environ.get("WORLD_SIZE") and os.environ.get("RANK"):
        world = _env_int("WORLD_SIZE")
        rank = _env_int("RANK")
        local_rank = _env_int("LOCAL_RANK", 0)
        local_world = _env_int("LOCAL_WORLD_SIZE", world)
    elif _env_int("SLURM_NTASKS", 1) > 1 and os.environ.get("SLURM_PROCID"):
        world = _env_int("SLURM_NTASKS")
        rank = _env_int("SLURM_PROCID")
        local_rank = _env_int("SLURM_LOCALID", 0)
        per_node = os.environ.get("SLURM_NTASKS_PER_NODE", "").split("(")[0]
        local_world = int(per_node) if per_node.isdigit() else world
        if not os.environ.get("MASTER_ADDR"):
            if _env_int("SLURM_NNODES", 1) > 1:
                raise LaunchError(
                    "SLURM job on several nodes: set MASTER_ADDR to the first node, e.g. "
                    "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | "
                    "head -n 1)")
            os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ.setdefault("MASTER_PORT", "29500")
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(local_rank),
                          LOCAL_WORLD_SIZE=str(local_world))
    else:
        return 0, 1, 0, 1
    if not 0 <= rank < world or not 0 <= local_rank:
        raise LaunchError("RANK %d / WORLD_SIZE %d / LOCAL_RANK %d make no sense"
                          % (rank, world, local_rank))
    if world > 1:
        for v in ("MASTER_ADDR", "MASTER_PORT"):
            if not os.environ.get(v):
                raise LaunchError("%s is not set: the env:// rendezvous needs MASTER_ADDR and "
                                  "MASTER_PORT (torchrun sets them; or use --nproc N)" % v)
    return rank, world, local_rank, local_world


def pick_device(want, local_rank, world):
    """auto: CUDA device LOCAL_RANK if there is CUDA, else the CPU."""
    if want in (None, "", "auto"):
        want = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(want)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise LaunchError("--device %s: this PyTorch sees no CUDA device" % want)
        n = torch.cuda.device_count()
        if dev.index is not None and world > 1:
            raise LaunchError("--device %s: with several processes each takes the CUDA device "
                              "of its LOCAL_RANK; give --device cuda (CUDA_VISIBLE_DEVICES "
                              "chooses the devices)" % want)
        index = dev.index if dev.index is not None else (local_rank if world > 1 else 0)
        if index >= n:
            raise LaunchError("process with local rank %d needs CUDA device %d, but there %s "
                              "%d" % (local_rank, index, "is" if n == 1 else "are", n))
        dev = torch.device("cuda", index)
        torch.cuda.set_device(dev)
    return dev


def init(device=None, timeout_minutes=30):
    """Join the process group if this is one process of several; returns
    the Context."""
    rank, world, local_rank, local_world = from_environment()
    dev = pick_device(device, local_rank, world)
    ctx = Context(rank, world, local_rank, local_world, dev)
    if world > 1:
        ctx.backend = "nccl" if dev.type == "cuda" else "gloo"
        dist.init_process_group(ctx.backend, init_method="env://", rank=rank, world_size=world,
                                timeout=datetime.timedelta(minutes=timeout_minutes))
        ctx.cpu_group = dist.new_group(backend="gloo") if ctx.backend != "gloo" else None
    return ctx


def finish(ctx, code):
    """End this process with `code`. One of several ends here, at once: its
    files are written and every collective is done, and PyTorch 1.13 can
    deadlock tearing down a gloo process group (the group's worker thread
    waits for the interpreter lock that the thread destroying the group
    holds, and at exit nothing breaks the wait), so the interpreter's own
    teardown is skipped."""
    if ctx.distributed:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    return code


# ---------------------------------------------------------------- collectives

def _cpu_group(ctx):
    return ctx.cpu_group  # None: the default group, which is gloo


def all_reduce_sum(ctx, values):
    """Sum a list of floats over all processes (float64)."""
    t = torch.tensor(values, dtype=torch.float64, device=ctx.device)
    if ctx.distributed:
        dist.all_reduce(t)
    return t.tolist()


def agree(ctx, code):
    """Every process passes its status (0 ok); all get the largest."""
    if not ctx.distributed:
        return code
    t = torch.tensor([code], dtype=torch.int64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=_cpu_group(ctx))
    return int(t)


_PIECE = 1 << 26


def share_tensor(ctx, t):
    """Rank 0's 1-d tensor on every rank (over gloo, as bytes, in pieces)."""
    if not ctx.distributed:
        return t
    head = torch.zeros(2, dtype=torch.int64)
    dtypes = [torch.uint8, torch.int16, torch.int32, torch.int64, torch.float32,
              torch.float64]
    if ctx.main:
        head[0], head[1] = dtypes.index(t.dtype), t.numel()
    dist.broadcast(head, 0, group=_cpu_group(ctx))
    dtype = dtypes[int(head[0])]
    if ctx.main:
        t = t.contiguous()
    else:
        t = torch.empty(int(head[1]), dtype=dtype)
    raw = t.view(torch.uint8)  # gloo does not broadcast every type
    for i in range(0, raw.numel(), _PIECE):
        dist.broadcast(raw[i:i + _PIECE], 0, group=_cpu_group(ctx))
    return t


def share_bytes(ctx, data):
    """Rank 0's bytes on every rank."""
    if not ctx.distributed:
        return data
    t = torch.frombuffer(bytearray(data), dtype=torch.uint8) if ctx.main and data else \
        torch.zeros(0, dtype=torch.uint8)
    t = share_tensor(ctx, t)
    if t.numel() == 0:
        return b""
    import ctypes
    return ctypes.string_at(t.data_ptr(), t.numel())


def all_gather_ints(ctx, value):
    if not ctx.distributed:
        return [value]
    t = torch.tensor([value], dtype=torch.int64)
    out = [torch.zeros(1, dtype=torch.int64) for _ in range(ctx.world)]
    dist.all_gather(out, t, group=_cpu_group(ctx))
    return [int(x) for x in out]


def barrier(ctx):
    if ctx.distributed:
        dist.barrier(group=_cpu_group(ctx))


# ---------------------------------------------------------------- --nproc

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child(local_rank, nproc, fn, args, env):
    os.environ.update(env)
    os.environ.update(RANK=str(local_rank), LOCAL_RANK=str(local_rank),
                      WORLD_SIZE=str(nproc), LOCAL_WORLD_SIZE=str(nproc))
    sys.exit(fn(*args))


def launch(nproc, fn, args, threads_per_process=None):
    """Run fn(*args) in nproc new local processes (torch.multiprocessing,
    spawned), as ranks 0..nproc-1 of one group; returns rank 0's exit status
    (or the first failure's). Ctrl-C reaches every process (they stop after
    their step and rank 0 writes a checkpoint); SIGTERM sent to this process
    is passed on to them."""
    import torch.multiprocessing as mp
    env = {"MASTER_ADDR": os.environ.get("MASTER_ADDR") or "127.0.0.1",
           "MASTER_PORT": os.environ.get("MASTER_PORT") or str(free_port())}
    if threads_per_process:
        for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[v] = os.environ.get(v) or str(threads_per_process)
    # the children import torch afresh: the thread variables must be set
    # before they start
    saved = {v: os.environ.get(v) for v in env}
    os.environ.update(env)
    mpc = mp.get_context("spawn")
    procs = []
    try:
        for r in range(nproc):
            p = mpc.Process(target=_child, args=(r, nproc, fn, args, env), daemon=False)
            p.start()
            procs.append(p)
    finally:
        for v, old in saved.items():
            if old is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = old

    def forward_signal(signo, frame):
        for p in procs:
            if p.is_alive():
                os.kill(p.pid, signo)

    old_int = signal.signal(signal.SIGINT, lambda s, f: None)  # the children get it too
    old_term = signal.signal(signal.SIGTERM, forward_signal)
    try:
        failed_at = None
        while any(p.is_alive() for p in procs):
            for p in procs:
                p.join(0.2)
            codes = [p.exitcode for p in procs]
            bad = [c for c in codes if c not in (None, 0, 130, 143)]
            if bad and failed_at is None:
                failed_at = time.monotonic()
            # a process that failed leaves the others waiting in a collective:
            # give them a moment to fail on their own, then end them
            if failed_at is not None and time.monotonic() - failed_at > 10:
                for p in procs:
                    if p.is_alive():
                        p.terminate()
        codes = [p.exitcode for p in procs]
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
    for c in codes:
        if c not in (0, 130, 143):
            return 1 if c is None or c < 0 else c
    return codes[0]
