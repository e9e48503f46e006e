#!/bin/sh
# Training throughput of the PyTorch trainer (python3 -m
# attnview_torch.train) with 1 and 2 processes beside attnview --train, on the
# same corpus and configuration (d=64 h=4 L=2 T=128, masked, 32 sequences a
# step, STEPS steps, one evaluation at the end).
#
#   tests/bench/bench_torch_train.sh [BUILD_DIR [CORPUS]]      REPS=5 STEPS=200
#
# The machine is shared and noisy: the runs alternate, REPS times each, and
# the figures are medians over the repetitions (with the smallest and largest
# value). Each figure is the trainer's own "tok/s" at its last step line
# (input tokens of all processes per second since the first step; corpus
# loading excluded, the one evaluation included, the same definition in both
# trainers). All use the OpenBLAS kernel attnview
# runs on (`attnview --version`), which PyTorch gets through OPENBLAS_CORETYPE.
# CORPUS defaults to the Chinese and English fortunes (Debian fortunes-zh and
# fortunes), as in bench_vs_torch.sh. The runs:
#   attnview_2t, attnview_1t   attnview --train --threads 2 / 1
#   torch_1p_1t, torch_1p_2t   one process, 1 / 2 PyTorch threads, --batch 32
#   torch_2p_b16               --nproc 2 --batch 16: 2 x 16 = 32 sequences a step,
#                              the same steps as attnview's
#   torch_2p_b32               --nproc 2 --batch 32: 64 sequences a step
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build}
bin=$build/src/attnview
reps=${REPS:-5}
steps=${STEPS:-200}
py=${PYTHON:-/usr/bin/python3}
if [ ! -x "$bin" ]; then
	echo "bench_torch_train.sh: no $bin; build first" >&2
	exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
# shellcheck source=tests/lib/bench_lib.sh
. "$here/../lib/bench_lib.sh"
bench_corpus bench_torch_train.sh "$work/corpus.txt" "${2:-}"
core=$("$bin" --version | sed -n 's/^OpenBLAS kernel: \([A-Za-z0-9_]*\).*/\1/p')
OPENBLAS_CORETYPE=$core
export OPENBLAS_CORETYPE PYTHONPATH="$top/python${PYTHONPATH:+:$PYTHONPATH}"
common="--steps $steps --eval-every $steps --checkpoint-every 0"

# tps NAME COMMAND...: run, keep the tok/s of the last step line
tps() {
	name=$1
	shift
	"$@" >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
	sed -n "s/^step $steps\/$steps: .* \([0-9.]*\) tok\/s.*/\1/p" "$work/out" | tail -n 1 \
		>>"$work/$name"
	printf '%s %s  ' "$name" "$(tail -n 1 "$work/$name")"
}

i=1
while [ "$i" -le "$reps" ]; do
	tps attnview_2t "$bin" --train "$corpus" -o "$work/a.attn" $common --threads 2
	tps torch_1p_1t "$py" -m attnview_torch.train "$corpus" -o "$work/p.attn" $common \
		--threads 1
	tps torch_1p_2t "$py" -m attnview_torch.train "$corpus" -o "$work/p.attn" $common \
		--threads 2
	tps torch_2p_b16 "$py" -m attnview_torch.train "$corpus" -o "$work/p.attn" $common \
		--nproc 2 --batch 16
	tps torch_2p_b32 "$py" -m attnview_torch.train "$corpus" -o "$work/p.attn" $common \
		--nproc 2
	tps attnview_1t "$bin" --train "$corpus" -o "$work/a.attn" $common --threads 1
	echo "(repetition $i/$reps)"
	i=$((i + 1))
done
echo "configuration: d=64 h=4 L=2 T=128 masked, $steps steps; corpus $corpus"
echo "OpenBLAS kernel: $core (all runs); medians of $reps alternating repetitions, tokens/s:"
echo "(name median min max)"
for n in attnview_2t attnview_1t torch_1p_1t torch_1p_2t torch_2p_b16 torch_2p_b32; do
	echo "$n $(median "$work/$n") $(sort -g "$work/$n" | head -n 1) $(sort -g "$work/$n" | tail -n 1)"
done
