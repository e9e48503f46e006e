#!/bin/sh
# `attnview --train` end to end against its own training
# step, side by side in the same run, on the reference configuration (the
# defaults: d=64 h=4 L=2 T=128 B=32, masked, 2000 steps, an evaluation every
# 100 steps, a checkpoint every 500, the timeline) and the corpus of the
# built-in model (Debian fortunes-zh and fortunes).
#
#   tests/bench/bench_train_e2e.sh [BUILD_DIR [CORPUS]]
#   REPS=3 STEPS=2000 by default; `meson test --benchmark train_end_to_end`
#
# Each repetition runs the step benchmark (tests/bench/bench_train, 100 measured
# steps on the trainer's vocabulary size), then the real program,
#   attnview --train CORPUS -o OUT --steps STEPS
# timed from its start to its exit (reading the corpus, the evaluations, the
# checkpoints, the timeline, the final evaluation and the model's writing
# included), then the step benchmark again. Its end-to-end tokens/s is
# STEPS x 32 x 128 over that time; the ratio of a repetition is that over the
# mean of the two step figures around it (so a change in the machine's load
# hits both sides alike), and the figure is the median of the ratios. Beside
# it, the training loop's own tokens/s (the trainer's last progress line:
# the evaluations during training included; reading the corpus, the final
# evaluation and the writing not). Printed, never asserted: speed is not a
# test (doc/speed.md).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build}
bench=$build/tests/bench/bench_train
attnview=$build/src/attnview
reps=${REPS:-3}
steps=${STEPS:-2000}

for x in "$bench" "$attnview"; do
	if [ ! -x "$x" ]; then
		echo "bench_train_e2e.sh: no $x; build first (meson setup build &&" \
			"ninja -C build) or give the build directory" >&2
		exit 2
	fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# shellcheck source=tests/lib/bench_lib.sh
. "$here/../lib/bench_lib.sh"
bench_corpus bench_train_e2e.sh "$work/corpus.txt" "${2:-}"

now() { date +%s.%N; }

# step_tps V: the step benchmark's tokens/s at the reference configuration
# (100 steps: a few seconds, so that a moment's load weighs less).
step_tps() {
	"$bench" --steps 100 --vocab "$1" --train-only >"$work/step.out"
	awk '$1 == "train_tokens_per_s" { print $3 }' "$work/step.out"
}

# The trainer's vocabulary size (of the training split), from a one-step run.
"$attnview" --train "$corpus" -o "$work/v.attn" --steps 1 --timeline-every 0 \
	--checkpoint-every 0 >"$work/v.out" 2>&1 || { cat "$work/v.out" >&2; exit 1; }
V=$(sed -n 's/.*vocabulary: \([0-9]*\) ids.*/\1/p' "$work/v.out" | head -n 1)

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
i=1
while [ "$i" -le "$reps" ]; do
	rm -f "$work/out.attn" "$work/out.attn.ckpt"
	s1=$(step_tps "$V")
	t0=$(now)
	"$attnview" --train "$corpus" -o "$work/out.attn" --steps "$steps" \
		>"$work/train.out" 2>&1 || { cat "$work/train.out" >&2; exit 1; }
	t1=$(now)
	s2=$(step_tps "$V")
	loop=$(sed -n "s|^step $steps/$steps: .*, \\([0-9]*\\) tok/s.*|\\1|p" "$work/train.out")
	awk -v a="$t0" -v b="$t1" -v n="$steps" 'BEGIN { printf "%.0f\n", n * 32 * 128 / (b - a) }' \
		>>"$work/e2e"
	e2e=$(tail -n 1 "$work/e2e")
	[ -n "$loop" ] && echo "$loop" >>"$work/loop"
	awk -v s="$s1" -v t="$s2" 'BEGIN { printf "%.0f\n", (s + t) / 2 }' >>"$work/step"
	st=$(tail -n 1 "$work/step")
	awk -v e="$e2e" -v s="$st" 'BEGIN { printf "%.4f\n", e / s }' >>"$work/ratio"
	# No progress line at the last step unless STEPS is a multiple of 100.
	[ -n "$loop" ] && awk -v e="$loop" -v s="$st" 'BEGIN { printf "%.4f\n", e / s }' \
		>>"$work/loopratio"
	echo "repetition $i/$reps: step $s1 and $s2 tokens/s, attnview --train $e2e end to end" \
		"($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s), loop" \
		"${loop:-?}: ratio $(tail -n 1 "$work/ratio")" \
		"(load average $(cut -d' ' -f1 /proc/loadavg))"
	i=$((i + 1))
done

echo "$("$attnview" --version | grep '^OpenBLAS kernel')"
echo "reference configuration, V=$V, $steps steps; medians of $reps repetitions:"
echo "step_tokens_per_s $(median "$work/step")"
echo "train_end_to_end_tokens_per_s $(median "$work/e2e")"
touch "$work/loop" "$work/loopratio"
echo "train_loop_tokens_per_s $(median "$work/loop")"
echo "train_loop_over_step $(median "$work/loopratio")"
printf 'end_to_end_over_step %.3f (range %s-%s)\n' "$(median "$work/ratio")" \
	"$(sort -g "$work/ratio" | head -n 1)" "$(sort -g "$work/ratio" | tail -n 1)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
