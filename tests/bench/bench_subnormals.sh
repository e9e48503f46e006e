#!/bin/sh
# What subnormal numbers cost: the lab's tasks trained with them flushed to
# zero (attnview's default) and kept (ATTNVIEW_KEEP_SUBNORMALS=1), side by
# side in the same run, one after the other, each twice.
#
#   tests/bench/bench_subnormals.sh [BUILD_DIR [TASK...]]
#   (default: previous induction first duplicate script)
#
# A sure head puts weights under 2^-126 on most keys, and a model whose loss
# is near 0 has gradients that small: on Intel processors every operation
# meeting one takes a microcode assist. Prints each task's wall time both
# ways (the faster of two runs), their ratio, and whether the two models are
# the same file to the bit (they differ only where a number that small
# changed a result). Printed, never asserted (doc/speed.md).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build}
[ $# -gt 0 ] && shift
attnview=$build/src/attnview
if [ ! -x "$attnview" ]; then
	echo "bench_subnormals.sh: no $attnview; build first (meson setup build &&" \
		"ninja -C build) or give the build directory" >&2
	exit 2
fi
tasks=${*:-previous induction first duplicate script}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# seconds of one training, to 0.01 s
train() { # KEEP TASK OUT
	t0=$(date +%s.%N)
	ATTNVIEW_KEEP_SUBNORMALS=$1 "$attnview" --train --task "$2" -o "$3" >/dev/null
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }'
}
faster() { echo "$1 $2" | awk '{ print ($1 < $2) ? $1 : $2 }'; }

echo "the lab with subnormal numbers kept and flushed, OpenBLAS kernel $("$attnview" --version | sed -n 's/^OpenBLAS kernel: //p'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for t in $tasks; do
	k1=$(train 1 "$t" "$tmp/kept.attn")
	f1=$(train 0 "$t" "$tmp/flushed.attn")
	k2=$(train 1 "$t" "$tmp/kept.attn")
	f2=$(train 0 "$t" "$tmp/flushed.attn")
	k=$(faster "$k1" "$k2")
	f=$(faster "$f1" "$f2")
	same=no
	cmp -s "$tmp/kept.attn" "$tmp/flushed.attn" && same=yes
	echo "$t $k $f $same" | awk '{ printf "%-14s kept %7.2f s, flushed %7.2f s: %5.2fx faster; the same model: %s\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0), $4 }'
done
