#!/usr/bin/env bash
# attnview --train after a first run: a finished run
# continued with more --steps (from OUT.ckpt, or from OUT), --steps that is not
# more refused; --init MODEL: a run from a model's weights, its sizes and
# vocabulary, the characters it lacks said; options that contradict the model
# refused with the file named.
set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
corpus="$data/data/corpus/mixed.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
tiny=(--dim 16 --heads 2 --layers 1 --context 16 --batch 4 --warmup 1 --threads 1)
export SOURCE_DATE_EPOCH=1700000000

# info_is FILE FIELD VALUE: attnview --info's line "FIELD: VALUE".
info_is() {
	checks=$((checks + 1))
	local got
	got=$("$bin" --info --model "$1" | sed -n "s/^$2: //p")
	[ "$got" = "$3" ] || fail "$1: $2 is '$got', not '$3'"
}

# -- a finished run keeps its state beside the model, and goes on with more steps
m="$tmp/m.attn"
expect 0 "wrote .*m.attn \(20 steps" -- "$bin" --train "$corpus" "${tiny[@]}" --steps 20 -o "$m"
checks=$((checks + 1))
[ -f "$m.ckpt" ] || fail "a finished run leaves no $m.ckpt to continue from"
expect 2 "m.attn.ckpt holds a run that finished at step 20: give --steps N, more than 20" -- \
	"$bin" --train "$corpus" --resume "$m.ckpt"
expect 2 "finished at step 20: --steps 20 is not more than that" -- \
	"$bin" --train "$corpus" --resume "$m.ckpt" --steps 20
expect 2 "finished at step 20: --steps 10 is not more than that" -- \
	"$bin" --train "$corpus" --resume "$m.ckpt" --steps 10
cp "$m" "$tmp/m20.attn"
cp "$m.ckpt" "$tmp/m20.attn.ckpt"
want='continuing .*m.attn.ckpt from step 20 to step 40 \(it was to end at step 20\): the model '
want="${want}and AdamW's moments go on; the learning rate follows the schedule of a run of 40 "
want="${want}steps \(warmup 1\)"
expect 0 "$want" -- "$bin" --train "$corpus" --resume "$m.ckpt" --steps 40
info_is "$m" steps 40
# the options are the checkpoint's: --steps is the only one that may change
expect 2 '--dim differs from the checkpoint' -- \
	"$bin" --train "$corpus" --resume "$m.ckpt" --steps 60 --dim 32
# the model file stands for the state kept beside it
cp "$tmp/m20.attn" "$tmp/m2.attn"
cp "$tmp/m20.attn.ckpt" "$tmp/m2.attn.ckpt"
expect 0 'continuing .*m2.attn.ckpt from step 20 to step 40' -- \
	"$bin" --train "$corpus" --resume "$tmp/m2.attn" --steps 40
# continuing in two commands is continuing in one: 20 then 40 from the same state
checks=$((checks + 1))
cmp -s "$m" "$tmp/m2.attn" || fail "the same continuation twice gives two models"
info_is "$tmp/m2.attn" steps 40
rm "$tmp/m20.attn.ckpt"
expect 1 'm20.attn is a finished model, and the state of the run that wrote it .*m20.attn.ckpt.* is not there.*--init .*m20.attn' -- \
	"$bin" --train "$corpus" --resume "$tmp/m20.attn" --steps 40
# a new run writes over a finished run's state, not over a stopped run's
expect 0 "wrote .*m.attn \(20 steps" -- "$bin" --train "$corpus" "${tiny[@]}" --steps 20 -o "$m"

# -- --init: a run from a model's weights
printf 'the cat sat on the mat; the dog sat on the log. %.0s' $(seq 1 60) >"$tmp/en.txt"
"$bin" --train "$tmp/en.txt" "${tiny[@]}" --steps 20 -o "$tmp/en.attn" >/dev/null 2>&1
printf '床前明月光，疑是地上霜。%.0s' $(seq 1 150) >"$tmp/zh.txt"
printf 'the cat sat on the mat. 床前明月光 %.0s' $(seq 1 60) >"$tmp/mix.txt"
want="vocabulary: .*en.attn's, [0-9]+ ids, covering [0-9.]+% of the training text"
expect 0 "$want" -- "$bin" --train "$tmp/mix.txt" --init "$tmp/en.attn" --steps 10 \
	--threads 1 -o "$tmp/ft.attn"
want='training characters \(5 distinct, the most frequent: .光. .前. .床. .明. .月.\) are not '
want="${want}in it: they are read as the unknown character"
expect 0 "$want" -- "$bin" --train "$tmp/mix.txt" --init "$tmp/en.attn" --steps 10 \
	--threads 1 -o "$tmp/ft.attn"
expect 0 "starting from .*en.attn's weights, with its objective, sizes and vocabulary \(it had 20 steps" \
	-- "$bin" --train "$tmp/mix.txt" --init "$tmp/en.attn" --steps 10 --threads 1 \
	-o "$tmp/ft.attn"
info_is "$tmp/ft.attn" steps 30
info_is "$tmp/ft.attn" dim 16
info_is "$tmp/ft.attn" context 16
checks=$((checks + 1))
[ "$("$bin" --info --model "$tmp/ft.attn" | grep '^vocabulary:')" = \
	"$("$bin" --info --model "$tmp/en.attn" | grep '^vocabulary:')" ] ||
	fail "--init did not keep the model's vocabulary"
checks=$((checks + 1))
t='the cat sat'
cmp -s <("$bin" --dump --format tsv --text "$t" --model "$tmp/ft.attn") \
	<("$bin" --dump --format tsv --text "$t" --model "$tmp/en.attn") &&
	fail "--init: training did not change the weights"
# bad inputs: what conflicts with the model, named with the file
expect 2 "--dim 32 differs from .*en.attn's 16: --init trains the model as it is.*drop --dim" \
	-- "$bin" --train "$tmp/mix.txt" --init "$tmp/en.attn" --dim 32
expect 2 "--context 64 differs from .*en.attn's 16" -- \
	"$bin" --train "$tmp/mix.txt" --init "$tmp/en.attn" --context 64
expect 2 "--objective causal differs from .*en.attn's masked" -- \
	"$bin" --train "$tmp/mix.txt" --init "$tmp/en.attn" --objective causal
expect 2 "--max-vocab does not apply with --init: the model's vocabulary is kept" -- \
	"$bin" --train "$tmp/mix.txt" --init "$tmp/en.attn" --max-vocab 50
expect 2 "--resume and --init cannot both be given" -- \
	"$bin" --train "$tmp/mix.txt" --init "$tmp/en.attn" --resume "$tmp/en.attn.ckpt"
expect 1 "none of the characters of .*zh.txt is in .*en.attn's vocabulary" -- \
	"$bin" --train "$tmp/zh.txt" --init "$tmp/en.attn" -o "$tmp/z.attn"
checks=$((checks + 1))
[ -e "$tmp/z.attn" ] && fail "a refused --init wrote a model"
expect 1 "nope.attn: cannot open" -- "$bin" --train "$tmp/mix.txt" --init "$tmp/nope.attn"
printf 'not a model\n' >"$tmp/junk.attn"
expect 1 "junk.attn" -- "$bin" --train "$tmp/mix.txt" --init "$tmp/junk.attn"
# a text shorter than the model's context: the context cannot shrink
printf 'the cat\n' >"$tmp/tiny.txt"
expect 2 "with --init the context is .*en.attn's, 16 characters: give a longer text" -- \
	"$bin" --train "$tmp/tiny.txt" --init "$tmp/en.attn" -o "$tmp/t.attn"
# The timeline goes on: the model's records, then this run's, at the model's
# step count and this run's K, on the model's probe; its kept models are named
# by those steps, the first of them (step 20, the model it started from)
# starting the run's (on another text: the probe is still the model's).
# --timeline-every 0 drops it.
tl_steps() { "$bin" --dump --timeline --format tsv --model "$1" | awk -F'\t' 'NR > 1 { print $1 }' |
	uniq | tr '\n' ' '; }
# steps_are WHAT MODEL STEPS: its timeline's steps; kept_are WHAT MODEL FILES:
# the files of MODEL.steps (each list ending in a space).
steps_are() {
	checks=$((checks + 1))
	[ "$(tl_steps "$2")" = "$3" ] || fail "$1: the timeline's steps are $(tl_steps "$2")"
}
kept_are() {
	checks=$((checks + 1))
	[ "$(ls "$2.steps" | tr '\n' ' ')" = "$3" ] || fail "$1 kept $(ls "$2.steps" | tr '\n' ' ')"
}
"$bin" --train "$tmp/en.txt" "${tiny[@]}" --steps 20 --timeline-every 5 -o "$tmp/tl.attn" \
	>/dev/null 2>&1
"$bin" --train "$tmp/mix.txt" --init "$tmp/tl.attn" --steps 10 --timeline-every 2 \
	--keep-steps 2 --threads 1 -o "$tmp/tl2.attn" >/dev/null 2>&1
steps_are "--init: the model's timeline goes on" "$tmp/tl2.attn" "0 5 10 15 20 22 24 26 28 30 "
checks=$((checks + 1))
cmp -s <("$bin" --dump --timeline --format tsv --model "$tmp/tl.attn") \
	<("$bin" --dump --timeline --format tsv --model "$tmp/tl2.attn" | awk -F'\t' 'NR == 1 || $1 <= 20') ||
	fail "--init: the model's records changed"
checks=$((checks + 1))
probe() { "$bin" --dump --timeline --model "$1" | grep -E '"(every|probe|repeated_probe)"'; }
[ "$(probe "$tmp/tl.attn" | grep -v every)" = "$(probe "$tmp/tl2.attn" | grep -v every)" ] &&
	probe "$tmp/tl2.attn" | grep -q '"every": 2,' ||
	fail "--init: the timeline's probe or K: $(probe "$tmp/tl2.attn")"
kept4="step-000020.attn step-000024.attn step-000028.attn step-000030.attn "
kept_are "--init --keep-steps 2" "$tmp/tl2.attn" "$kept4"
info_is "$tmp/tl2.attn.steps/step-000020.attn" steps 20
# From a model without a timeline: the run's own, from the model's step (the
# model it started from kept, an earlier run's kept model removed); with
# --no-val the probe, the model's validation text, may be trained on: no
# probe loss after the model's records.
"$bin" --train "$tmp/en.txt" "${tiny[@]}" --steps 20 --timeline-every 0 -o "$tmp/none.attn" \
	>/dev/null 2>&1
mkdir "$tmp/tl3.attn.steps" && echo old >"$tmp/tl3.attn.steps/step-000999.attn"
"$bin" --train "$tmp/en.txt" --init "$tmp/none.attn" --steps 10 --timeline-every 2 \
	--keep-steps 2 --threads 1 -o "$tmp/tl3.attn" >/dev/null 2>&1
steps_are "--init from a model without a timeline" "$tmp/tl3.attn" "20 22 24 26 28 30 "
kept_are "--init from a model without a timeline" "$tmp/tl3.attn" "$kept4"
"$bin" --train "$tmp/en.txt" --init "$tmp/tl.attn" --steps 4 --timeline-every 2 --no-val \
	--threads 1 -o "$tmp/nv.attn" >/dev/null 2>&1
checks=$((checks + 1))
[ "$("$bin" --dump --timeline --format tsv --model "$tmp/nv.attn" |
	awk -F'\t' 'NR > 1 && ($1 > 20) != ($3 == "nan") { print $1 }' | head -1)" = "" ] ||
	fail "--init --no-val: a probe loss on a probe the run may train on, or none before"
"$bin" --train "$tmp/en.txt" --init "$tmp/tl.attn" --steps 4 --timeline-every 0 --threads 1 \
	-o "$tmp/tl0.attn" >/dev/null 2>&1
checks=$((checks + 1))
[ -z "$(tl_steps "$tmp/tl0.attn" 2>/dev/null)" ] || fail "--timeline-every 0 kept the model's timeline"
# the built-in model by name
expect 0 "starting from builtin's weights" -- "$bin" --train "$tmp/mix.txt" --init builtin \
	--steps 1 --batch 1 --threads 1 --eval-every 0 --no-val -o "$tmp/b.attn"
info_is "$tmp/b.attn" context 128

echo "train_continue: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
