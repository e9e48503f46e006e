# What the training benchmarks share (POSIX sh, sourced by
# tests/bench/bench_vs_torch.sh, bench_torch_train.sh and bench_train_e2e.sh).

# bench_corpus NAME FILE [CORPUS]: sets corpus to CORPUS when given, else
# writes the built-in model's texts (Debian's fortunes-zh and fortunes) into
# FILE and sets corpus to it; a missing package ends the benchmark, NAME
# saying which.
bench_corpus() {
	if [ -n "${3:-}" ]; then
		corpus=$3
		return
	fi
	corpus=$2
	for f in chinese tang300 song100 fortunes; do
		f=/usr/share/games/fortunes/$f
		if [ ! -f "$f" ]; then
			echo "$1: $f is missing: apt-get install fortunes-zh fortunes," \
				"or give a corpus" >&2
			exit 1
		fi
		cat "$f" >>"$corpus"
	done
}

# median FILE: the median of the numbers in FILE, one a line.
median() {
	sort -g "$1" | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
