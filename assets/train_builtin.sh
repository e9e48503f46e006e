#!/bin/sh
# Train a built-in model from the Debian packages fortunes-zh (modern
# Chinese prose, 300 Tang poems, 100 Song lyrics; also converted to
# traditional characters with opencc) and fortunes (English quotations):
# assets/builtin.attn (masked, OBJECTIVE=masked, the default) or
# assets/builtin-causal.attn (next character, OBJECTIVE=causal).
#
#   sudo apt-get install fortunes-zh fortunes opencc
#   meson setup build && ninja -C build
#   assets/train_builtin.sh [path/to/attnview]          # the masked model
#   OBJECTIVE=causal assets/train_builtin.sh            # the causal one
#   meson compile -C build                              # embeds the new models
#
# Both have context 128 and 32 sequences a step. The masked model: 2
# layers of 4 heads, d=192, 10000 steps on 1 thread, the poems 80 times
# over (what makes it right on two thirds of their characters), short
# records twice (DOUBLE=2) and 15,000 repeated lines of the text, then 1500
# steps more with --sharpen 2 (SHARPEN, below), which names most of its
# heads. The causal
# one: 4 layers of 4 heads, d=128, 8000 steps on 1 thread, the poems 20
# times over, short records twice, 15,000 lines of repeated random strings
# and 15,000 of repeated lines of the text (what grows its induction head),
# then 1500 steps of --sharpen 2 in the same way. Each model's timeline
# shows both runs (--init goes on with the first run's).
# STEPS, DIM, HEADS, LAYERS, THREADS, OUT, SHARPEN and the data mix below change
# that; the committed models are the defaults. See doc/training.md, "The
# built-in models", for how long that takes. The data mix: POEMS (the
# poems' records that many times over, every other extra copy with its
# couplets on one line), DOUBLE (short records twice in a row), INDUCTION
# (lines of repeated random strings), PHRASES (lines of the text itself,
# repeated), SHAPES (lines that repeat by place; none) and TRAD (the
# Chinese again in traditional characters), below; doc/training.md,
# "Towards models that teach", says what they did.
#
# Reproducible: the same packages, attnview and thread count give the same
# bytes (the seed is fixed, and the model's creation date is the date of the
# newest corpus file, passed as SOURCE_DATE_EPOCH).
#
# The corpora are fortune cookie files: records separated by lines holding
# only "%", full of ANSI colour escapes (attnview's cleaner removes them and
# reports how many). Every 20th record, in both languages, goes to the
# validation file, so the validation loss measures Chinese and English alike.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
bin=${1:-$top/build/src/attnview}
objective=${OBJECTIVE:-masked}
case $objective in
masked) out=${OUT:-$here/builtin.attn} ;;
causal) out=${OUT:-$here/builtin-causal.attn} ;;
*) echo "train_builtin.sh: OBJECTIVE is masked or causal, not $objective" >&2; exit 2 ;;
esac
# Each objective's recipe (the committed models).
case $objective in
masked) steps=${STEPS:-10000} heads=${HEADS:-4} threads=${THREADS:-1} poems=${POEMS:-80}
	double=${DOUBLE:-2} induction=${INDUCTION:-0} phrases=${PHRASES:-15000}
	dim=${DIM:-192} layers=${LAYERS:-2} sharpen=${SHARPEN:-2} ;;
causal) steps=${STEPS:-8000} heads=${HEADS:-4} threads=${THREADS:-1} poems=${POEMS:-20}
	double=${DOUBLE:-2} induction=${INDUCTION:-15000} phrases=${PHRASES:-15000}
	dim=${DIM:-128} layers=${LAYERS:-4} sharpen=${SHARPEN:-2} ;;
esac
context=${CONTEXT:-128}
# POEMS: the Tang and Song poems' training records that many times over (1:
# once, as the rest); TRAD: the traditional-character copy of the Chinese
# (0: none).
trad=${TRAD:-1}
shapes=${SHAPES:-0}
lr=${LR:-5e-3}
sharpen_steps=${SHARPEN_STEPS:-1500}
sharpening=$(awk -v s="$sharpen" 'BEGIN { print (s + 0 > 0) ? 1 : 0 }')
if [ -n "${FROM:-}" ] && [ "$sharpening" = 0 ]; then
	echo "train_builtin.sh: FROM=$FROM continues a model with --sharpen, and SHARPEN is" \
		"$sharpen: give SHARPEN=2, or leave FROM out" >&2
	exit 2
fi

if [ ! -x "$bin" ]; then
	echo "train_builtin.sh: no attnview at $bin; build it first (meson setup build &&" \
		"ninja -C build) or give its path" >&2
	exit 2
fi
fort=/usr/share/games/fortunes
zh="$fort/chinese $fort/tang300 $fort/song100"
en=$(dpkg -L fortunes 2>/dev/null | grep '^/usr/share/games/fortunes/[a-z-]*$' |
	grep -v -e '/ascii-art$' -e '/art$' | sort)
for f in $zh; do
	if [ ! -f "$f" ]; then
		echo "train_builtin.sh: $f is missing: apt-get install fortunes-zh fortunes" >&2
		exit 1
	fi
done
if ! command -v opencc >/dev/null 2>&1; then
	echo "train_builtin.sh: opencc is missing: apt-get install opencc" >&2
	exit 1
fi
if [ -z "$en" ]; then
	echo "train_builtin.sh: the fortunes package is not installed:" \
		"apt-get install fortunes" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
corpus="$work/fortunes-zh+zh-hant+fortunes.txt"
val="$work/fortunes-validation.txt"

# DOUBLE=N: every Nth training record of at most 100 bytes is written twice
# in a row, so that a window often holds a text and its copy (what an
# induction head predicts: the lab's induction task in real words). 0: none.
# Records in, record-separator lines out; every 20th record to validation;
# the poems' training records (of tang300 and song100) also to POEMS.
split_records() { # TRAIN VAL POEMS FILES...
	train_out=$1 val_out=$2 poems_out=$3
	shift 3
	awk -v train="$train_out" -v val="$val_out" -v poems="$poems_out" -v every="$double" '
		function flush() {
			if (rec == "") return
			side = (n % 20 == 19) ? val : train
			printf "%s", rec > side
			if (side == train && every > 0 && length(rec) <= 100 && k++ % every == 0)
				printf "%s", rec > side
			if (side == train && poem) printf "%s", rec > poems
			rec = ""
		}
		FNR == 1 { flush(); poem = FILENAME ~ /(tang300|song100)$/ }
		/^%$/ { flush(); n++; next }
		{ rec = rec $0 "\n" }
		END { flush() }' "$@"
}
# The Chinese, the poems' training records also to poems.txt.
# shellcheck disable=SC2086
split_records "$work/zh.txt" "$work/zh-val.txt" "$work/poems.txt" $zh
# shellcheck disable=SC2086
split_records "$work/en.txt" "$work/en-val.txt" /dev/null $en
# The Chinese again in traditional characters (OpenCC, simplified to
# traditional), split the same way: a record and its conversion are on the
# same side, so validation never sees a text trained on.
: >"$work/zh-hant.txt"
: >"$work/zh-hant-val.txt"
if [ "$trad" = 1 ]; then
	opencc -c s2t.json -i "$work/zh.txt" -o "$work/zh-hant.txt"
	opencc -c s2t.json -i "$work/zh-val.txt" -o "$work/zh-hant-val.txt"
fi
: >"$work/poems-more.txt"
# The poems' verses run together on one line, as people type a poem
# (床前明月光，疑是地上霜。举头望明月，低头思故乡。): the title and author lines
# stay, the verse lines of a record are joined. Every other extra copy of
# the poems (POEMS > 1) is written this way.
awk '
	/^%$/ { if (v != "") print v; v = ""; print; next }
	/《|作者：/ { if (v != "") print v; v = ""; print; next }
	{ v = v $0 }
	END { if (v != "") print v }' "$work/poems.txt" >"$work/poems-joined.txt"
i=1
while [ "$i" -lt "$poems" ]; do
	if [ $((i % 2)) = 1 ]; then
		cat "$work/poems-joined.txt" >>"$work/poems-more.txt"
	else
		cat "$work/poems.txt" >>"$work/poems-more.txt"
	fi
	i=$((i + 1))
done
# INDUCTION=N: N lines, each a random string of 5 to 16 characters (Latin
# letters and 200 frequent Chinese characters) written two to four times,
# spaces between: the next characters of a later copy are predictable only
# by finding the earlier copy, which is what an induction head does (the
# lab's induction task, in the corpus's characters). 0: none. The same mawk
# and N give the same lines.
awk -v n="$induction" 'BEGIN {
	zh = "的不之有人一件用子文是以在如可其行使中下者本和我上包天而也作系曰無自能山何你語语花來大日手青命心到程生春月於版爲为令来君于修置相所小事水要知風考无年了木江得多安道明言理個个出示通面方它名成式配目新软軟參参提夜表時去地好字雨王里意同统統三分接此或南矣时器見重白风流第工根更未思清序入經前定秋過信列菜过看见增高空些路由这這今管情已酒家千李兮常西具二"
	k = 0
	for (i = 1; i <= length(zh); i += 3) pool[k++] = substr(zh, i, 3)
	for (i = 0; i < 26; i++) {
		pool[k++] = sprintf("%c", 97 + i)
		pool[k++] = sprintf("%c", 65 + i)
	}
	srand(1)
	for (line = 0; line < n; line++) {
		len = 5 + int(rand() * 12)
		s = ""
		for (j = 0; j < len; j++) s = s pool[int(rand() * k)]
		reps = 2 + int(rand() * 3)
		out = s
		for (r = 1; r < reps; r++) out = out " " s
		print out
	}
}' >"$work/induction.txt"
# PHRASES=N: N lines, each a line of the training text itself (10 to 60
# bytes without its colour escapes, indentation and runs of blanks)
# written two or three times, spaces between: copying in the corpus's own
# words and phrases, as in "Mr Dursley and Mrs Dursley. Mr Dursley and Mrs
# Dursley.", where INDUCTION's random strings teach copying of strings that
# are not words. 0: none. The same mawk, training text and N give the same
# lines.
cat "$work/zh.txt" "$work/en.txt" | awk -v n="$phrases" '
	{
		gsub(/\033\[[0-9;]*[A-Za-z]/, "")
		gsub(/[ \t]+/, " ")
		sub(/^ /, "")
		sub(/ $/, "")
	}
	length($0) >= 10 && length($0) <= 60 { line[k++] = $0 }
	END {
		if (n <= 0 || k == 0) exit
		srand(2)
		for (i = 0; i < n; i++) {
			s = line[int(rand() * k)]
			reps = 2 + int(rand() * 2)
			out = s
			for (r = 1; r < reps; r++) out = out " " s
			print out
		}
	}' >"$work/phrases.txt"
# SHAPES=N: N lines whose characters repeat by place rather than by
# meaning, in INDUCTION's 200 Chinese characters: every other line a motif
# of 2 or 3 characters written over and over (12 to 31 characters: a
# character is the one 2 or 3 places away), the others a random line of 5
# or 7 characters written 2 or 4 times as the lines of a poem, "，" and "。"
# after them (a character is the one at the same place in the line before
# and after). Tried to grow heads that look by position (offset,
# line-parallel); they did not grow (doc/training.md, "Text that repeats by
# place"). 0: none, both recipes. The same mawk and N give the same lines.
awk -v n="$shapes" 'BEGIN {
	zh = "的不之有人一件用子文是以在如可其行使中下者本和我上包天而也作系曰無自能山何你語语花來大日手青命心到程生春月於版爲为令来君于修置相所小事水要知風考无年了木江得多安道明言理個个出示通面方它名成式配目新软軟參参提夜表時去地好字雨王里意同统統三分接此或南矣时器見重白风流第工根更未思清序入經前定秋過信列菜过看见增高空些路由这這今管情已酒家千李兮常西具二"
	k = 0
	for (i = 1; i <= length(zh); i += 3) pool[k++] = substr(zh, i, 3)
	srand(3)
	for (line = 0; line < n; line++) {
		out = ""
		if (line % 2 == 0) {
			m = 2 + int(rand() * 2)
			len = 12 + int(rand() * 20)
			for (j = 0; j < m; j++) motif[j] = pool[int(rand() * k)]
			for (j = 0; j < len; j++) out = out motif[j % m]
		} else {
			w = (rand() < 0.5) ? 5 : 7
			s = ""
			for (j = 0; j < w; j++) s = s pool[int(rand() * k)]
			lines = (rand() < 0.5) ? 2 : 4
			for (j = 0; j < lines; j++) out = out s ((j % 2) ? "。" : "，")
		}
		print out
	}
}' >"$work/shapes.txt"
cat "$work/zh.txt" "$work/poems-more.txt" "$work/zh-hant.txt" "$work/en.txt" \
	"$work/induction.txt" "$work/phrases.txt" "$work/shapes.txt" >"$corpus"
cat "$work/zh-val.txt" "$work/zh-hant-val.txt" "$work/en-val.txt" >"$val"

# KEEP=DIR: the corpus and the validation text of each language kept there
# (for assets/measure_heads.py --per-language); with TRAIN=0 nothing is trained.
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP"
	cp "$corpus" "$KEEP/corpus.txt"
	cat "$work/zh-val.txt" "$work/zh-hant-val.txt" >"$KEEP/val-zh.txt"
	cp "$work/en-val.txt" "$KEEP/val-en.txt"
	[ "${TRAIN:-1}" = 0 ] && exit 0
fi

newest=0
# shellcheck disable=SC2086
for f in $zh $en; do
	t=$(stat -c %Y "$f")
	[ "$t" -gt "$newest" ] && newest=$t
done

# With SHARPEN=X above 0 (both recipes' 2), the run's model is
# $out.base, and a second run of SHARPEN_STEPS steps at lr 1e-3 (a fifth of
# the first run's) continues from it (--init) with --sharpen X, to $out: the
# same model with sharper heads. FROM=MODEL skips the first run and
# continues from MODEL (so it needs SHARPEN above 0).
base=$out
[ "$sharpening" = 1 ] && base=$out.base
if [ -n "${FROM:-}" ]; then
	base=$FROM
else
	echo "training $base from $(wc -c < "$corpus") bytes (validation $(wc -c < "$val") bytes)"
	SOURCE_DATE_EPOCH=$newest "$bin" --train "$corpus" --val-file "$val" -o "$base" \
		--objective "$objective" --dim "$dim" --heads "$heads" --layers "$layers" --context "$context" --batch 32 \
		--steps "$steps" --lr "$lr" --warmup 200 --seed 1 --min-count 3 \
		--eval-every 250 --checkpoint-every 500 --threads "$threads"
fi
if [ "$sharpening" = 1 ]; then
	echo "sharpening $base's heads into $out (--sharpen $sharpen, $sharpen_steps steps)"
	SOURCE_DATE_EPOCH=$newest "$bin" --train "$corpus" --val-file "$val" -o "$out" \
		--init "$base" --steps "$sharpen_steps" --lr 1e-3 --warmup 100 --seed 1 \
		--sharpen "$sharpen" --eval-every 250 --checkpoint-every 500 --threads "$threads"
fi
ls -l "$out"
