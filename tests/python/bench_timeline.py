"""What the PyTorch trainer's timeline records cost (doc/timeline.md): the
CPU time of a record (attnview_torch.timeline.measure) on MODEL and of a
training step of MODEL's size at --batch 32 on random text (masked, 15% of
the positions), one thread, and their ratio at the default interval of a
2000-step run (K = 20). Prints; asserts nothing.

    /usr/bin/python3 tests/python/bench_timeline.py MODEL

MODEL must have a timeline (attnview --train ... -o MODEL writes one)."""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
import torch  # noqa: E402

import attnview_torch as av  # noqa: E402
from attnview_torch import timeline as tlm  # noqa: E402


def main():
    torch.set_num_threads(1)
    m = av.load(sys.argv[1])
    tl = m.timeline
    tlm.measure(tl, m)
    t0 = time.process_time()
    for _ in range(20):
        tlm.measure(tl, m)
    rec = (time.process_time() - t0) / 20
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    B, T, V = 32, m.config.context, m.config.vocab_size
    tok = torch.randint(3, V, (B, T), generator=torch.Generator().manual_seed(1))
    tgt = torch.full((B, T), -1, dtype=torch.long)
    tgt[:, ::7] = tok[:, ::7]
    rows = (tgt.flatten() >= 0).nonzero().flatten()

    def step():
        opt.zero_grad()
        m.forward(tok, tgt, rows).backward()
        opt.step()
    step()
    t0 = time.process_time()
    for _ in range(10):
        step()
    st = (time.process_time() - t0) / 10
    print("a record %.1f ms, a training step %.1f ms (CPU time, one thread): %.2f%% of the "
          "training time at K = 20" % (1e3 * rec, 1e3 * st, 100 * rec / (20 * st)))


if __name__ == "__main__":
    main()
