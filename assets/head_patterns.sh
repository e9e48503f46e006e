#!/bin/sh
# What each head of a model does with a text, in numbers: the figures behind
# the table of the built-in model's heads in doc/training.md.
#
#   assets/head_patterns.sh [TEXT [path/to/attnview [MODEL]]]
#
# For every layer and head, over the rows (queries) of TEXT:
#   before, self, after   mean share of a row's weight on keys before the
#                         query, on the query itself, after it
#   near                  mean share on keys at most 3 positions away
#   distance              mean weighted distance |key - query|
#   max=prev/self/next    share of rows whose largest weight is on the
#                         previous character, the character itself, the next
#                         (rows where that key exists)
# The numbers come from `attnview --dump --format tsv`; without MODEL, the
# built-in model.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
text=${1:-床前明月光，疑是地上霜。举头望明月，低头思故乡。}
bin=${2:-$(dirname "$here")/build/src/attnview}
if [ ! -x "$bin" ]; then
	echo "head_patterns.sh: no attnview at $bin; build it first (meson setup build &&" \
		"ninja -C build) or give its path" >&2
	exit 1
fi
model=${3:-}
set -- --dump --format tsv --text "$text"
if [ -n "$model" ]; then
	set -- "$@" --model "$model"
fi

"$bin" "$@" | awk -F '\t' '
NR == 1 { next }
{
	l = $1; h = $2; q = $3; k = $4; w = $7
	id = l " " h
	if (!(id in seen)) { seen[id] = 1; order[++nh] = id }
	if (q + 1 > n) n = q + 1
	if (k < q) before[id] += w; else if (k == q) self[id] += w; else after[id] += w
	d = k > q ? k - q : q - k
	if (d <= 3) near[id] += w
	dist[id] += w * d
	rk = id " " q
	if (!(rk in best) || w > best[rk]) { best[rk] = w; arg[rk] = k }
}
END {
	printf "%-5s %-4s %7s %7s %7s %7s %8s %9s %9s %9s\n", "layer", "head", "before",
	    "self", "after", "near", "distance", "max=prev", "max=self", "max=next"
	for (i = 1; i <= nh; i++) {
		id = order[i]
		p = s = x = 0
		for (q = 0; q < n; q++) {
			a = arg[id " " q]
			if (a == q - 1) p++
			if (a == q) s++
			if (a == q + 1) x++
		}
		split(id, f, " ")
		printf "%-5d %-4d %6.1f%% %6.1f%% %6.1f%% %6.1f%% %8.2f %8.1f%% %8.1f%% %8.1f%%\n",
		    f[1], f[2], 100 * before[id] / n, 100 * self[id] / n, 100 * after[id] / n,
		    100 * near[id] / n, dist[id] / n, (n > 1 ? 100 * p / (n - 1) : 0),
		    100 * s / n, (n > 1 ? 100 * x / (n - 1) : 0)
	}
	printf "(%d characters)\n", n
}'
