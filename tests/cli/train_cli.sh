#!/usr/bin/env bash
# attnview --train as a user meets it: a 300-character text in one
# command, with heads that differ; the verdict against the unigram baseline,
# the over-fitting warning and --patience on crafted runs; several corpus
# files, standard input, pipes and FIFOs; the encoding hint; stdout and stderr
# in the order they were written.
set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
corpus="$data/data/corpus/mixed.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
tiny=(--dim 16 --heads 2 --layers 1 --context 16 --batch 4 --warmup 1 --steps 20 --threads 1)
export SOURCE_DATE_EPOCH=1700000000 # the same bytes from a file and from a pipe

# same_dump A.attn B.attn: the two models give the same weights.
same_dump() {
	checks=$((checks + 1))
	local t='The cat sat by the door.'
	if ! cmp -s <("$bin" --dump --format tsv --text "$t" --model "$1" 2>&1) \
		<("$bin" --dump --format tsv --text "$t" --model "$2" 2>&1); then
		fail "$1 and $2 give different weights"
	fi
}

# -- a 300-character text, three files of 100 characters: no options needed
printf '%s%s\n' 'The cat sat on the mat and looked at the rain. ' \
	'The dog lay by the door and waited for the sun to co' >"$tmp/p1.txt"
printf '%s%s\n' 'When the sun came out, the cat and the dog went out ' \
	'into the garden and played on the wet green gra' >"$tmp/p2.txt"
printf '%s%s\n' 'In the evening they came back in, sat by the fire, ' \
	'and the cat slept while the dog watched the door.' >"$tmp/p3.txt"
"$bin" --train "$tmp/p1.txt" "$tmp/p2.txt" "$tmp/p3.txt" -o "$tmp/small.attn" --threads 1 \
	>"$tmp/small.out" 2>"$tmp/small.err"
st=$?
checks=$((checks + 1))
[ "$st" -eq 0 ] || fail "300 characters in one command: status $st: $(cat "$tmp/small.err")"
for want in 'the text is short \(301 characters\): --context 32 instead of 128; give --context' \
	'--batch 8 instead of 32' '--lr 0.00125 instead of 0.005' \
	'validation: the last 32 characters \(10.6% instead of 5%\)'; do
	checks=$((checks + 1))
	grep -qE -- "$want" "$tmp/small.err" || fail "small corpus: no note '$want' on stderr"
done
for want in '^p1.txt|/p1.txt: 100 bytes' 'corpus: 3 files, 301 characters in all \(0 line breaks' \
	'^verdict: ' '^wrote '; do
	checks=$((checks + 1))
	grep -qE -- "$want" "$tmp/small.out" || fail "small corpus: no '$want' in the summary"
done
expect 0 '^context: 32$' -- "$bin" --info --model "$tmp/small.attn"
# What the heads do, a line per layer, as --dump labels them on the same text.
checks=$((checks + 1))
grep -qE '^what the heads do on the first 32 characters of the validation text' "$tmp/small.out" &&
	[ "$(grep -cE '^  layer [01]: ' "$tmp/small.out")" = 2 ] ||
	fail "small corpus: no line per layer of what the heads do: $(tail -4 "$tmp/small.out")"
# (the sample ends with the text's line break, which $(...) would drop)
sample=$(tail -c 32 <(cat "$tmp/p1.txt" "$tmp/p2.txt" "$tmp/p3.txt"); printf x)
sample=${sample%x}
line0=$(grep -E '^  layer 0: ' "$tmp/small.out")
while IFS= read -r label; do
	checks=$((checks + 1))
	grep -qF -- "$label (" <<<"$line0" || fail "layer 0's line ($line0) lacks --dump's label $label"
done < <("$bin" --dump --text "$sample" --model "$tmp/small.attn" --layer 0 --top 0 |
	sed -n 's/.*"label": "\([^"]*\)".*/\1/p' | sort -u)
# A model whose heads are all broad gets advice.
expect 0 '^advice: no head has a role on this sample' -- "$bin" --train "$tmp/p1.txt" "$tmp/p2.txt" \
	"$tmp/p3.txt" --dim 16 --heads 2 --layers 1 --context 16 --batch 4 --warmup 0 --steps 1 \
	--threads 1 -o "$tmp/broad.attn"
# The lab: a task trains, names its carrying head, and writes a model (one
# run, its summary checked line by line).
"$bin" --train --task previous --threads 1 -o "$tmp/previous.attn" >"$tmp/previous.out" 2>&1
st=$?
checks=$((checks + 1))
[ "$st" -eq 0 ] && [ -s "$tmp/previous.attn" ] ||
	fail "the previous task: status $st, model $(stat -c %s "$tmp/previous.attn" 2>&1)"
for want in 'layer 0 head 0 off: [0-9.]+%  carries the mechanism' '^  layer 0: previous \(head 0\)' \
	'^  layer 0 head 0 as previous: [0-9.]+%  the pattern does its work$'; do
	checks=$((checks + 1))
	grep -qE -- "$want" "$tmp/previous.out" || fail "the previous task: no '$want' in its summary"
done
# (a causal task's text hides no letter: no key to the hidden letters' glyph)
checks=$((checks + 1))
grep -q 'look at it on the text its heads were named on: attnview' "$tmp/previous.out" ||
	fail "the previous task's closing line: $(grep 'look at it' "$tmp/previous.out")"
# ... and a learned task is not said to be unlearned; a run too short to
# learn it says so before it says what the heads do (10 steps: near chance).
checks=$((checks + 1))
! grep -q 'has not learned' "$tmp/previous.out" ||
	fail "a learned task (previous, $(grep -o '^task accuracy: [0-9.]*%' "$tmp/previous.out")) is said not to be"
expect 0 "^the model has not learned the task \([0-9.]+%, under the 95% the lab's tests ask" \
	-- "$bin" --train --task previous --steps 10 --threads 1 -o "$tmp/short.attn"
# ... and an idle head's attention in its carrier's place: the reverse task's
# seed 3 with two heads a layer trains a copy the model does not read.
expect 0 '^  layer 0 head [01] in place of head [01]: [0-9.]+%  a copy of the mechanism that the model does not read$' \
	-- "$bin" --train --task reverse --seed 3 --heads 2 --threads 1 -o "$tmp/reverse.attn"
# The command it ends with opens the model on the text its heads were named
# on, hidden letters as the mask's glyph: the view's labels are the
# summary's (a masked task; the example text of before, unmasked, was
# "keyword o j / local" where the summary said local).
"$bin" --train --task band --threads 1 -o "$tmp/band.attn" >"$tmp/band.out" 2>&1 ||
	fail "the band task did not train: $(tail -3 "$tmp/band.out")"
look=$(sed -n "s/.*look at it .*--text '\(.*\)'$/\1/p" "$tmp/band.out")
checks=$((checks + 1))
case $look in
*▒*) grep -q '(▒: a hidden letter)' "$tmp/band.out" ||
	fail "the band task's closing line has no key to ▒" ;;
*) fail "the band task's command has no hidden letter: '$look'" ;;
esac
line0=$(grep -E '^  layer 0: ' "$tmp/band.out")
checks=$((checks + 1))
[ "$line0" = "  layer 0: local (head 0)" ] || fail "band's summary: $line0"
label=$("$bin" --dump --text "$look" --model "$tmp/band.attn" --top 0 |
	sed -n 's/.*"label": "\([^"]*\)".*/\1/p')
checks=$((checks + 1))
[ "$label" = local ] || fail "the view's label on the command's text is '$label', not local"
expect 2 "no task 'nope': the tasks are previous, two-back" -- "$bin" --train --task nope
expect 2 'is not needed' -- "$bin" --train "$tmp/p1.txt" --task previous
# The heads differ: the mean total-variation distance between the heads of a
# layer (0 for identical heads, 1 for disjoint ones), from the dump.
"$bin" --dump --format tsv --text 'The cat sat by the door and the dog slept.' \
	--model "$tmp/small.attn" 2>/dev/null | awk -F'\t' '
	NR > 1 { w[$1, $2, $3, $4] = $7; if ($2 > H) H = $2; if ($3 > N) N = $3; if ($1 > L) L = $1 }
	END {
		best = 0
		for (l = 0; l <= L; l++) {
			s = 0; pairs = 0
			for (a = 0; a <= H; a++) for (b = a + 1; b <= H; b++) {
				d = 0
				for (i = 0; i <= N; i++) for (j = 0; j <= N; j++) {
					x = w[l, a, i, j] - w[l, b, i, j]; d += x < 0 ? -x : x
				}
				s += d / 2 / (N + 1); pairs++
			}
			printf "layer %d: mean total-variation distance between heads %.2f\n", l, s / pairs
			if (s / pairs > best) best = s / pairs
		}
		exit best > 0.3 ? 0 : 1
	}' >"$tmp/heads.txt"
st=$?
checks=$((checks + 1))
[ "$st" -eq 0 ] || fail "the heads of the small model hardly differ: $(cat "$tmp/heads.txt")"
cat "$tmp/heads.txt"

# -- validation off, and options that contradict each other
expect 0 'split: 301 training characters, no validation text' -- "$bin" --train "$tmp/p1.txt" \
	"$tmp/p2.txt" "$tmp/p3.txt" --no-val --steps 20 --threads 1 -o "$tmp/noval.attn"
expect 0 '^verdict: none: there is no validation text' -- "$bin" --train "$tmp/p1.txt" \
	"$tmp/p2.txt" "$tmp/p3.txt" --val-share 0 --steps 20 --threads 1 -o "$tmp/noval.attn"
expect 0 '^validation loss: unknown' -- "$bin" --info --model "$tmp/noval.attn"
expect 2 'patience stops at the best validation loss, and there is no validation text' -- \
	"$bin" --train "$tmp/p1.txt" --no-val --patience 3 -o "$tmp/x.attn"
# --train's value is the corpus: an option there is named, with the command
want='takes the corpus first, and a checkpoint does not hold its text: '
want="${want}attnview --train CORPUS --resume .*m.attn.ckpt"
expect 2 "$want" -- "$bin" --train --resume "$tmp/m.attn.ckpt"
expect 2 'takes the corpus first, not the option --steps' -- "$bin" --train --steps 3 "$tmp/p1.txt"
expect 2 '--no-val and --val-share 5 contradict' -- "$bin" --train "$tmp/p1.txt" --no-val \
	--val-share 5 -o "$tmp/x.attn"
expect 2 '--val-file validates on that file' -- "$bin" --train "$tmp/p1.txt" --val-file \
	"$tmp/p2.txt" --no-val -o "$tmp/x.attn"
expect 2 '--val-share.*not a valid value' -- "$bin" --train "$tmp/p1.txt" --val-share 60
expect 2 'standard input \(-\) can be read only once' -- "$bin" --train - --val-file - \
	-o "$tmp/x.attn"

# -- the verdict: a model that learned, and one that did not
expect 0 '^verdict: beats the unigram baseline: loss [0-9.]+ against [0-9.]+ nats/char' -- \
	"$bin" --train "$data/data/corpus/repeat.txt" --dim 32 --heads 2 --layers 1 --context 16 \
	--batch 32 --steps 400 --lr 1e-2 --objective causal --threads 1 -o "$tmp/learned.attn"
"$bin" --train "$corpus" "${tiny[@]}" --steps 3 --eval-every 1 -o "$tmp/none.attn" \
	>"$tmp/none.out" 2>&1
# (still falling: more steps may help) and the state kept beside the model is
# said, with what it is for
kept='^kept .*none.attn.ckpt \([0-9]+\.[0-9] MB\) beside it, the run.s last state: '
kept="$kept"'attnview --train .* --resume .*none.attn --steps N goes on from it'
for want in '^step 1/3: .* \| unigram [0-9.]+, [0-9.]+%: not beaten$' \
	'^verdict: does not beat the unigram baseline' '^what to do: train longer' "$kept"; do
	checks=$((checks + 1))
	grep -qE -- "$want" "$tmp/none.out" || fail "untrained: no '$want':$(cat "$tmp/none.out")"
done

# -- on a terminal the live line does not overwrite the evaluations: each one's
# line stays above it
if command -v script >/dev/null; then
	script -q -c "$(printf '%q ' "$bin" --train "$corpus" "${tiny[@]}" --steps 4 \
		--eval-every 2 -o "$tmp/tty.attn")" /dev/null </dev/null >"$tmp/tty.out" 2>&1
	checks=$((checks + 1))
	kept=$(tr '\r' '\n' <"$tmp/tty.out" | sed 's/\x1b\[K//g' |
		grep -cE '^step [24]/4: train loss .*, val loss ')
	[ "$kept" -eq 2 ] || fail "on a terminal the evaluations are not kept: $(cat -v "$tmp/tty.out")"
	# The sparkline says what it draws (a label: it once had none and
	# rescaled at every redraw), on a scale that changes only when the
	# losses leave it or use a small part of it, so that it is not flat when
	# the loss moves within a small part of a range fixed at the start.
	script -q -c "stty cols 160; $(printf '%q ' "$bin" --train "$corpus" "${tiny[@]}" \
		--steps 40 --eval-every 20 -o "$tmp/tty2.attn")" /dev/null </dev/null \
		>"$tmp/tty2.out" 2>&1
	sparks=$(tr '\r' '\n' <"$tmp/tty2.out" | sed 's/\x1b\[K//g' |
		grep -oE '^step [0-9]+/40  .*  loss [0-9.]+-[0-9.]+ [▁▂▃▄▅▆▇█]+$' |
		grep -oE 'loss [0-9.]+-[0-9.]+ [▁▂▃▄▅▆▇█]+$')
	scales=$(grep -oE '^loss [0-9.]+-[0-9.]+' <<<"$sparks" | uniq)
	checks=$((checks + 1))
	[ -n "$scales" ] && [ "$(wc -l <<<"$scales")" -le 3 ] ||
		fail "the sparkline's label and scale: '$scales' in $(cat -v "$tmp/tty2.out")"
	heights=$(tail -1 <<<"$sparks" | sed 's/^loss [0-9.-]* //' | grep -o . | sort -u | wc -l)
	checks=$((checks + 1))
	[ "$heights" -ge 3 ] || fail "the last sparkline is flat ($heights heights): $(tail -1 <<<"$sparks")"
fi

# -- a crafted over-fitting run (as in tests/unit/test_train.c): random
# syllables, next-character prediction, a model far too big trained too long
awk 'BEGIN {
	x = 7; cons = "bdgkmnprst"; vow = "aeiou"; s = ""
	while (length(s) < 600) {
		x = (x * 1103515245 + 12345) % 2147483648; n = 1 + int(x / 65536) % 3
		for (k = 0; k < n; k++) {
			x = (x * 1103515245 + 12345) % 2147483648
			s = s substr(cons, 1 + int(x / 65536) % 10, 1)
			x = (x * 1103515245 + 12345) % 2147483648
			s = s substr(vow, 1 + int(x / 65536) % 5, 1)
		}
		s = s " "
	}
	printf "%s", substr(s, 1, 600) }' >"$tmp/syl.txt"
over=(--objective causal --context 32 --batch 8 --steps 700 --warmup 50 --lr 3e-3
	--eval-every 50 --val-share 20 --threads 1)
"$bin" --train "$tmp/syl.txt" "${over[@]}" -o "$tmp/over.attn" >"$tmp/over.out" 2>"$tmp/over.err"
checks=$((checks + 1))
if grep -q 'warning: over-fitting: the validation loss has not improved for [0-9]* evaluations' \
	"$tmp/over.err" && grep -q -- '--patience 3 to stop at the best' "$tmp/over.err"; then
	grep -qE '^(note|what to do): the validation loss was lowest at step [0-9]+' \
		"$tmp/over.out" || fail "over-fitting: the summary does not say where the best was"
else
	fail "over-fitting: no warning: $(grep -E '^step' "$tmp/over.out" | cut -c1-70)"
fi
# random letters: nothing to learn, the validation loss rises from the start
# (no over-fitting warning: the best never beat the baseline); the summary
# says that no step beat the baseline and what helps (more text, how much, a
# smaller model, the lab), never "train longer", never a losing step to keep
# (--steps N, --patience 3); with --patience too, after it stopped the run
awk 'BEGIN { x = 11; s = ""; while (length(s) < 600) {
	x = (x * 1103515245 + 12345) % 2147483648
	s = s substr("abcdefghijklmnopqrst", 1 + int(x / 65536) % 20, 1) }
	printf "%s", s }' >"$tmp/rnd.txt"
unlearnt='^what to do: no evaluation beat the unigram baseline \(the best, step [0-9]+: .*'
unlearnt="$unlearnt"'more text \(this one has [0-9]+ training characters for [0-9]+ distinct ones'
unlearnt="$unlearnt"'(; about [0-9]+ or more, 20 for each|, [0-9]+ for each already; twice).*'
unlearnt="$unlearnt"'a smaller model \(--dim 8 --layers 1\).*'
unlearnt="$unlearnt"'the lab \(attnview --train --task induction\)$'
for extra in "" "--patience 2"; do
	"$bin" --train "$tmp/rnd.txt" "${over[@]}" --steps 400 --warmup 20 --dim 16 --heads 2 \
		$extra -o "$tmp/rnd.attn" >"$tmp/rnd.out" 2>&1
	checks=$((checks + 1))
	grep -qE "$unlearnt" "$tmp/rnd.out" && ! grep -qE 'train longer|--patience 3 keeps' \
		"$tmp/rnd.out" ||
		fail "random letters ${extra:-}: the summary does not say nothing was learnt: $(grep \
			-A3 '^verdict' "$tmp/rnd.out")"
	# its distinct characters are the split line's (the special ids aside),
	# and with 20 or more for each it does not ask for 20 for each
	checks=$((checks + 1))
	n=$(sed -n 's/.*vocabulary: [0-9]* ids (\([0-9]*\) characters of.*/\1/p' "$tmp/rnd.out")
	c=$(sed -n 's/^split: \([0-9]*\) training.*/\1/p' "$tmp/rnd.out")
	[ "$n" = 20 ] && [ "$c" -ge 400 ] &&
		grep -q "$c training characters for $n distinct ones, $((c / n)) for each already;" \
			"$tmp/rnd.out" ||
		fail "random letters ${extra:-}: the advice counts other characters than the split's ($c, $n)"
done
best=$(sed -n 's/.*lowest at step \([0-9]*\).*/\1/p' "$tmp/over.out")
"$bin" --train "$tmp/syl.txt" "${over[@]}" --patience 3 -o "$tmp/pat.attn" >"$tmp/pat.out" 2>&1
checks=$((checks + 1))
want="^patience: stopped at step $((best + 150)) of 700, 3 evaluations without a new best;"
want="$want the model written is step $best's"
grep -qE "$want" "$tmp/pat.out" ||
	fail "--patience 3 (best at step $best): $(grep -E '^(patience|verdict)' "$tmp/pat.out")"
expect 0 "^steps: $best\$" -- "$bin" --info --model "$tmp/pat.attn"

# -- several files: one text, a line break between files that lack one
printf 'abc abc' >"$tmp/a.txt"
printf 'xyz\n' >"$tmp/b.txt"
cp "$corpus" "$tmp/c.txt"
{ printf 'abc abc\nxyz\n'; cat "$corpus"; } >"$tmp/abc.txt"
mkdir "$tmp/one" "$tmp/many"
expect 0 'corpus: 3 files, [0-9]+ characters in all \(1 line break added between files\)' -- \
	"$bin" --train "$tmp/a.txt" "$tmp/b.txt" "$tmp/c.txt" "${tiny[@]}" -o "$tmp/many/m.attn"
expect 0 '^wrote' -- "$bin" --train "$tmp/abc.txt" "${tiny[@]}" -o "$tmp/one/m.attn"
same_dump "$tmp/many/m.attn" "$tmp/one/m.attn"
expect 0 '^corpus: a.txt \+ b.txt \+ c.txt \([0-9]+ characters\)' -- "$bin" --info \
	--model "$tmp/many/m.attn"

# -- standard input, /dev/stdin, a pipe by name, a FIFO: the same model
mkdir "$tmp/file" "$tmp/stdin" "$tmp/devstdin" "$tmp/procsub"
"$bin" --train "$corpus" "${tiny[@]}" -o "$tmp/file/m.attn" >/dev/null 2>&1
expect 0 '^standard input: 8028 bytes' -- bash -c 'cat "$1" | "$2" --train - "${@:4}" -o "$3"' \
	_ "$corpus" "$bin" "$tmp/stdin/m.attn" "${tiny[@]}"
same_dump "$tmp/file/m.attn" "$tmp/stdin/m.attn"
expect 0 'wrote' -- bash -c 'cat "$1" | "$2" --train /dev/stdin "${@:4}" -o "$3"' \
	_ "$corpus" "$bin" "$tmp/devstdin/m.attn" "${tiny[@]}"
same_dump "$tmp/file/m.attn" "$tmp/devstdin/m.attn"
expect 0 'wrote' -- bash -c '"$2" --train <(cat "$1") "${@:4}" -o "$3"' \
	_ "$corpus" "$bin" "$tmp/procsub/m.attn" "${tiny[@]}"
same_dump "$tmp/file/m.attn" "$tmp/procsub/m.attn"
expect 0 '^corpus: standard input \(5892 characters\)' -- "$bin" --info \
	--model "$tmp/stdin/m.attn"
# a regular file on standard input is read twice in place, not copied
expect 0 '^standard input: 8028 bytes' -- bash -c '"$2" --train - "${@:4}" -o "$3" <"$1"' \
	_ "$corpus" "$bin" "$tmp/stdin/m2.attn" "${tiny[@]}"
expect 1 'standard input is empty' -- bash -c '"$1" --train - -o "$2" </dev/null' _ "$bin" \
	"$tmp/x.attn"
# a text of one character holds no window: bad input (1), said without
# advice that cannot be followed (--batch 1 and --context 2 already)
printf '你' >"$tmp/one.txt"
expect 1 'one.txt: the training split has 1 character, fewer than the smallest window \(2 characters\): there is nothing to train on; give a longer text' -- \
	"$bin" --train "$tmp/one.txt" -o "$tmp/x.attn"
checks=$((checks + 1))
"$bin" --train "$tmp/one.txt" -o "$tmp/x.attn" 2>&1 | grep -q -e '--batch 1 instead' &&
	fail "a text of one character was told it fills a batch of 1"
# a model a run has not written yet, beside its checkpoint: --dump and
# --info name the checkpoint (the view opens it by itself)
cp "$tmp/file/m.attn" "$tmp/only.attn.ckpt"
expect 1 "only\.attn: no such file yet, but .*only\.attn\.ckpt is there: .*--model .*only\.attn\.ckpt" -- \
	"$bin" --dump --text ab --model "$tmp/only.attn"
# the held-out share left too little: it is named
printf 'ab' >"$tmp/two.txt"
expect 1 'two.txt: the training split has 1 character, .*hold out less of it \(--val-share, --no-val\)' -- \
	"$bin" --train "$tmp/two.txt" --val-share 50 -o "$tmp/x.attn"
# a context given that the text cannot fill: that option is named
printf 'abcdefghij' >"$tmp/ten.txt"
expect 2 'ten.txt: the training split has 10 characters, fewer than one window of 64: give a smaller --context' -- \
	"$bin" --train "$tmp/ten.txt" --context 64 -o "$tmp/x.attn"
# --dump --input - and a pipe
"$bin" --dump --input "$tmp/a.txt" --model "$tmp/file/m.attn" >"$tmp/d1.json" 2>&1
checks=$((checks + 1))
cmp -s "$tmp/d1.json" <("$bin" --dump --input - --model "$tmp/file/m.attn" <"$tmp/a.txt" 2>&1) ||
	fail "--dump --input - differs from --input FILE"
checks=$((checks + 1))
cmp -s "$tmp/d1.json" <(cat "$tmp/a.txt" | "$bin" --dump --input - --model "$tmp/file/m.attn" \
	2>&1) || fail "--dump --input - from a pipe differs from --input FILE"

# -- text in another encoding: --train and --dump --input name it
# 静夜思 in GB18030, as iconv -t GB18030 writes it
{
	printf '\xb4\xb2\xc7\xb0\xc3\xf7\xd4\xc2\xb9\xe2\xa3\xac\xd2\xc9\xca\xc7\xb5\xd8\xc9\xcf\xcb\xaa'
	printf '\xa1\xa3\xbe\xd9\xcd\xb7\xcd\xfb\xc3\xf7\xd4\xc2\xa3\xac\xb5\xcd\xcd\xb7\xcb\xbc\xb9\xca'
	printf '\xcf\xe7\xa1\xa3\n'
} >"$tmp/gb.txt"
for i in 1 2 3 4 5 6; do cat "$tmp/gb.txt"; done >"$tmp/gb6.txt"
gbwant='warning: .*gb6.txt looks like GB18030 .*iconv -f GB18030 -t UTF-8 .*gb6.txt > '
gbwant="$gbwant.*gb6.utf8.txt"
# refused (it would train on replacement characters), with what was found and
# what to do; --any-encoding insists, and the warning is repeated after the verdict
want="gb6.txt is mostly not text: .*% of it is invalid UTF-8.*${gbwant#warning: }"
expect 1 "$want.*--any-encoding" -- \
	"$bin" --train "$tmp/gb6.txt" --steps 2 --threads 1 -o "$tmp/gb.attn"
checks=$((checks + 1))
[ ! -e "$tmp/gb.attn" ] || fail "a refused GB18030 corpus wrote a model"
expect 0 "$gbwant" -- "$bin" --train "$tmp/gb6.txt" --steps 2 --threads 1 -o "$tmp/gb.attn" \
	--any-encoding
checks=$((checks + 1))
"$bin" --train "$tmp/gb6.txt" --steps 2 --threads 1 -o "$tmp/gb2.attn" --any-encoding \
	>"$tmp/gb.out" 2>&1
grep -A9 '^verdict:' "$tmp/gb.out" | grep -q 'warning: .*gb6.txt looks like GB18030' ||
	fail "the encoding warning is not repeated after the verdict: $(cat "$tmp/gb.out")"
# the start of a program is not Latin-1 text
head -c 3000 "$bin" >"$tmp/elf.txt"
expect 1 'elf.txt is mostly not text: .*looks like a binary file.*--any-encoding' -- \
	"$bin" --train "$tmp/elf.txt" "${tiny[@]}" -o "$tmp/elf.attn"
expect 1 'elf.txt is mostly not text: .*binary file' -- \
	"$bin" --train "$corpus" --val-file "$tmp/elf.txt" "${tiny[@]}" -o "$tmp/elf.attn"
# --dump and --export refuse it as --train does, and look at it with --any-encoding
expect 1 'elf.txt is mostly not text: .*looks like a binary file.*--any-encoding' -- \
	"$bin" --dump --input "$tmp/elf.txt" --model "$tmp/file/m.attn"
expect 1 'elf.txt is mostly not text: .*binary file' -- \
	"$bin" --export "$tmp/elf.svg" --input "$tmp/elf.txt" --model "$tmp/file/m.attn"
expect 0 'elf.txt: .*invalid UTF-8' -- \
	"$bin" --dump --input "$tmp/elf.txt" --model "$tmp/file/m.attn" --any-encoding
expect 1 'gb.txt is mostly not text: .*gb.txt looks like GB18030.*--any-encoding' -- \
	"$bin" --dump --input "$tmp/gb.txt" --model "$tmp/file/m.attn"
expect 0 'attnview: warning: .*gb.txt looks like GB18030' -- "$bin" --dump --input "$tmp/gb.txt" \
	--model "$tmp/file/m.attn" --any-encoding
printf '\xff\xfeh\0e\0l\0l\0o\0 \0w\0o\0r\0l\0d\0\n\0' >"$tmp/u16.txt"
expect 1 'u16.txt looks like UTF-16LE text, not UTF-8 .*iconv -f UTF-16LE' -- \
	"$bin" --dump --input "$tmp/u16.txt" --model "$tmp/file/m.attn"
expect 0 'warning: .*u16.txt looks like UTF-16LE text, not UTF-8 .*iconv -f UTF-16LE' -- \
	"$bin" --dump --input "$tmp/u16.txt" --model "$tmp/file/m.attn" --any-encoding

# -- stdout and stderr in the order they were written, both to one pipe: the
# corpus summary (stdout) before the refusal (stderr); the notes of a short
# text after the summary and before the model line
"$bin" --train "$data/data/corpus/repeat.txt" --batch 64 -o "$tmp/x.attn" 2>&1 | cat >"$tmp/order1"
checks=$((checks + 1))
[ "$(grep -n -E '^split:' "$tmp/order1" | cut -d: -f1)" -lt \
	"$(grep -n 'fewer than one batch' "$tmp/order1" | cut -d: -f1)" ] ||
	fail "the error came before the summary it follows: $(cat "$tmp/order1")"
"$bin" --train "$tmp/p1.txt" "$tmp/p2.txt" "$tmp/p3.txt" --steps 5 --threads 1 \
	-o "$tmp/x.attn" 2>&1 | cat >"$tmp/order2"
checks=$((checks + 1))
grep -qE '^attnview: the text is short' <(sed -n 6p "$tmp/order2") &&
	grep -qE '^model: ' <(sed -n 10p "$tmp/order2") ||
	fail "notes out of order: $(cat "$tmp/order2")"

# -- --sharpen: the same run with the attention's entropy in the loss gives
# heads that look at fewer keys (their mean normalised entropy on a text at
# most half of the run without), and reports the cross-entropy as before.
mean_entropy() {
	"$bin" --dump --model "$1" --text 'The cat sat on the mat and looked at the rain.' |
		tr ',' '\n' | sed -n 's/.*"entropy": *\([0-9.e-]*\).*/\1/p' |
		awk '{ s += $1; n++ } END { if (n) printf "%.4f", s / n }'
}
sharp=(--dim 32 --heads 4 --layers 2 --context 32 --batch 8 --steps 150 --threads 1 --timeline-every 0)
for s in 0 5; do
	"$bin" --train "$corpus" "${sharp[@]}" --sharpen "$s" -o "$tmp/sharp$s.attn" >"$tmp/sharp$s.out" 2>&1 ||
		fail "--sharpen $s: $(tail -3 "$tmp/sharp$s.out")"
done
e0=$(mean_entropy "$tmp/sharp0.attn") e5=$(mean_entropy "$tmp/sharp5.attn")
checks=$((checks + 1))
awk -v a="$e0" -v b="$e5" 'BEGIN { exit !(a > 0 && b <= a / 2) }' ||
	fail "--sharpen 5: mean entropy $e5, against $e0 without"
for v in 101 -1 two; do
	expect 2 "--sharpen: '$v' is not a valid value" -- \
		"$bin" --train "$corpus" "${tiny[@]}" --sharpen "$v" -o "$tmp/x.attn"
done

# Whole numbers are digits only: strtoull would skip a space and read a
# minus sign as a huge number.
for v in " -1" " 5" "0x10"; do
	expect 2 "--timeline-every: '$v' is not a valid value" -- \
		"$bin" --train "$corpus" "${tiny[@]}" --timeline-every "$v" -o "$tmp/x.attn"
done
expect 2 "--seed takes a whole number of decimal digits, not ' 1'" -- \
	"$bin" --train --task previous --seed " 1" -o "$tmp/x.attn"
# The lab's bounds, named in the message.
expect 2 "--dim takes a whole number from 1 to 512 in the lab, not '600'" -- \
	"$bin" --train --task previous --dim 600 -o "$tmp/x.attn"
expect 2 "--lr takes a number above 0 and below 1 in the lab, not '1'" -- \
	"$bin" --train --task previous --lr 1 -o "$tmp/x.attn"

echo "train_cli: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
