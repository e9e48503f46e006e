#!/bin/sh
# attnview's training throughput
# against PyTorch's, in the same run, on two configurations (masked, B=32):
#   ref  d=64  h=4 L=2 T=128   the reference configuration (the built-in model's)
#   big  d=128 h=8 L=4 T=256   a bigger one
#
#   tests/bench/bench_vs_torch.sh [BUILD_DIR [CORPUS]]
#   REPS=5 STEPS=20 CONFIGS="ref big" by default (CONFIGS=ref for the first only)
#
# The machine is shared and noisy, so the two programs run alternately, REPS
# times each, and the figures are medians over the repetitions:
#   - PyTorch (tests/reference/torch_train_bench.py, /usr/bin/python3) on
#     CORPUS at 1 and 2 threads; its best thread count is the comparison;
#   - bench_train at 2 threads (and 1, for the record) with PyTorch's
#     vocabulary size for this corpus. bench_train draws random batches: a
#     step's cost depends on the shapes and the number of targets (15% of
#     positions in both), not on which characters they are.
# The ratio is the median over the repetitions of attnview's tokens/s over
# PyTorch's best in the same repetition (seconds apart, so a change in the
# machine's load hits both sides of a ratio alike). Each configuration's
# share of the sgemm peak is bench_train's: the FLOPs of its matrix products
# per second over the 2-thread sgemm peak (1024^3) measured in the same run.
#
# Beside it, the 1-thread CPU-time ratio: PyTorch's CPU time per step over
# attnview's, both on 1 thread, per repetition, then the median: the work of
# a step on one core, less moved by other programs than wall-clock time
# (though caches and memory shared with them still slow both). It compares
# one core with one core, so it is not the ratio above, which sets
# attnview's 2 threads against PyTorch's best thread count.
#
# Both use the OpenBLAS kernel attnview runs with (`attnview --version`):
# where OpenBLAS misdetects the CPU, attnview switches itself to a fast
# kernel, and PyTorch gets the same OPENBLAS_CORETYPE here, or it would be
# measured on OpenBLAS's generic fallback. Set OPENBLAS_CORETYPE to compare
# on another kernel (OPENBLAS_CORETYPE=Haswell for AVX2, SkylakeX for
# AVX-512).
# CORPUS defaults to the Chinese and English fortunes of the built-in model
# (Debian fortunes-zh and fortunes).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build}
bench=$build/tests/bench/bench_train
reps=${REPS:-5}
steps=${STEPS:-20}
configs=${CONFIGS:-ref big}
py=${PYTHON:-/usr/bin/python3}

if [ ! -x "$bench" ]; then
	echo "bench_vs_torch.sh: no bench_train in $build/tests/bench; build first" \
		"(meson setup build && ninja -C build) or give the build directory" >&2
	exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# shellcheck source=tests/lib/bench_lib.sh
. "$here/../lib/bench_lib.sh"
bench_corpus bench_vs_torch.sh "$work/corpus.txt" "${2:-}"

core=$("$build/src/attnview" --version | sed -n 's/^OpenBLAS kernel: \([A-Za-z0-9_]*\).*/\1/p')
if [ -z "$core" ]; then
	echo "bench_vs_torch.sh: cannot tell attnview's OpenBLAS kernel" \
		"($build/src/attnview --version)" >&2
	exit 1
fi
OPENBLAS_CORETYPE=$core
export OPENBLAS_CORETYPE

# shape NAME: the model options of a configuration.
shape() {
	case $1 in
	ref) echo "--dim 64 --heads 4 --layers 2 --context 128" ;;
	big) echo "--dim 128 --heads 8 --layers 4 --context 256" ;;
	*)
		echo "bench_vs_torch.sh: unknown configuration '$1' (ref, big)" >&2
		exit 2
		;;
	esac
}
for c in $configs; do shape "$c" >/dev/null; done

i=1
while [ "$i" -le "$reps" ]; do
	for cf in $configs; do
		w=$work/$cf
		mkdir -p "$w"
		# shellcheck disable=SC2046
		"$py" "$here/reference/torch_train_bench.py" "$corpus" --steps "$steps" \
			$(shape "$cf") >"$w/torch.out" 2>&1 || { cat "$w/torch.out" >&2; exit 1; }
		V=$(sed -n 's/.* V=\([0-9]*\);.*/\1/p' "$w/torch.out" | head -n 1)
		echo "${V:-6000}" >"$w/V"
		awk '$1 == "torch_tokens_per_s" && $2 == "threads=1" { print $3 }' \
			"$w/torch.out" >>"$w/t1"
		awk '$1 == "torch_tokens_per_s" && $2 == "threads=2" { print $3 }' \
			"$w/torch.out" >>"$w/t2"
		awk '$1 == "torch_cpu_ms_per_step" && $2 == "threads=1" { print $3 }' \
			"$w/torch.out" >>"$w/tc1"
		for n in 2 1; do
			# shellcheck disable=SC2046
			"$bench" --threads "$n" --steps "$steps" --vocab "${V:-6000}" \
				$(shape "$cf") >"$w/c.out"
			awk '$1 == "train_tokens_per_s" { print $3 }' "$w/c.out" >>"$w/c$n"
			sed -n 's/^train step CPU time: \([0-9.]*\) ms.*/\1/p' "$w/c.out" \
			    >>"$w/cc$n"
			if [ "$n" = 2 ]; then
				sed -n 's/^achieved \([0-9.]*\) GFLOP\/s = \([0-9]*\)%.*/\1 \2/p' \
					"$w/c.out" >"$w/g"
				cut -d' ' -f1 "$w/g" >>"$w/gflops"
				cut -d' ' -f2 "$w/g" >>"$w/pct"
				sed -n 's/^sgemm 1024^3: .* \([0-9.]*\) GFLOP\/s on 2 threads/\1/p' \
					"$w/c.out" >>"$w/peak"
			fi
		done
		awk -v c="$(tail -n 1 "$w/c2")" -v a="$(tail -n 1 "$w/t1")" \
			-v b="$(tail -n 1 "$w/t2")" \
			'BEGIN { printf "%.3f\n", c / (a > b ? a : b) }' >>"$w/ratio"
		awk -v t="$(tail -n 1 "$w/tc1")" -v c="$(tail -n 1 "$w/cc1")" \
			'BEGIN { printf "%.3f\n", t / c }' >>"$w/cpuratio"
		echo "repetition $i/$reps, $cf: torch t1 $(tail -n 1 "$w/t1")" \
			"t2 $(tail -n 1 "$w/t2"), attnview t2 $(tail -n 1 "$w/c2")" \
			"t1 $(tail -n 1 "$w/c1") tokens/s, ratio $(tail -n 1 "$w/ratio")," \
			"$(tail -n 1 "$w/pct")% of peak"
	done
	i=$((i + 1))
done

echo "OpenBLAS kernel: $core (both); corpus $corpus"
echo "medians of $reps alternating repetitions, $steps measured steps each:"
for cf in $configs; do
	w=$work/$cf
	echo "configuration $cf: $(shape "$cf") --batch 32, masked, V=$(cat "$w/V")"
	echo "$cf torch_tokens_per_s threads=1 $(median "$w/t1")"
	echo "$cf torch_tokens_per_s threads=2 $(median "$w/t2")"
	echo "$cf attnview_tokens_per_s threads=1 $(median "$w/c1")"
	echo "$cf attnview_tokens_per_s threads=2 $(median "$w/c2")"
	echo "$cf attnview_gflops threads=2 $(median "$w/gflops")"
	echo "$cf sgemm_peak_gflops threads=2 $(median "$w/peak")"
	echo "$cf attnview_peak_percent threads=2 $(median "$w/pct")"
	printf '%s ratio_vs_best_torch threads=2 %.2f (range %s-%s)\n' "$cf" \
		"$(median "$w/ratio")" "$(sort -g "$w/ratio" | head -n 1)" \
		"$(sort -g "$w/ratio" | tail -n 1)"
	echo "$cf torch_cpu_ms_per_step threads=1 $(median "$w/tc1")"
	echo "$cf attnview_cpu_ms_per_step threads=1 $(median "$w/cc1")"
	printf '%s cpu_time_ratio threads=1 %.2f (range %s-%s)\n' "$cf" \
		"$(median "$w/cpuratio")" "$(sort -g "$w/cpuratio" | head -n 1)" \
		"$(sort -g "$w/cpuratio" | tail -n 1)"
done
