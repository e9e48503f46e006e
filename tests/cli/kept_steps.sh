#!/usr/bin/env bash
# The models of recorded steps a run keeps (--keep-steps, attnview(1); the
# view's side is tests/tui/steps.sh): a short lab run keeps the model of every
# second record and of the last, under OUT.steps/step-SSSSSS.attn, and no
# other (an earlier run's removed); --model OUT --step S opens that file in --dump, --info and --export
# (the weights of that step, not the final ones); a step not kept, a damaged
# kept file and --keep-steps without a timeline get a message naming the file
# or the option.
set -u
bin=${ATTNVIEW_BIN:?set by meson}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
text=xqbmkwtrjqbmkwtrj

check() {
	checks=$((checks + 1))
	local what=$1
	shift
	"$@" || fail "$what"
}

out="$tmp/ind.attn"
# What an earlier run kept there goes; what is not a kept model stays.
mkdir "$out.steps"
echo old >"$out.steps/step-000999.attn"
echo notes >"$out.steps/notes.txt"
"$bin" --train --task induction --steps 240 --timeline-every 40 --keep-steps 2 --threads 1 \
	-o "$out" >"$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; exit 1; }

# Records at 0, 40, ..., 240: the 1st, 3rd, 5th and the last are kept.
for s in 0 80 160 240; do
	f=$(printf '%s.steps/step-%06d.attn' "$out" "$s")
	check "step $s is kept as $f" test -f "$f"
	expect 0 "^steps: $s\$" -- "$bin" --info --model "$out" --step "$s"
done
for s in 40 120 200; do
	check "step $s is not kept" test ! -e "$(printf '%s.steps/step-%06d.attn' "$out" "$s")"
done
check "nothing else is kept" test "$(ls "$out.steps" | grep -c '^step-')" -eq 4
check "the model an earlier run kept is gone" test ! -e "$out.steps/step-000999.attn"
check "another file stays" test -f "$out.steps/notes.txt"

# --step S opens the file: the same dump, and not the final model's.
"$bin" --dump --text "$text" --model "$out" --step 80 >"$tmp/step.json"
"$bin" --dump --text "$text" --model "$out.steps/step-000080.attn" >"$tmp/file.json"
"$bin" --dump --text "$text" --model "$out" >"$tmp/final.json"
check "--step 80 dumps the kept file" cmp -s "$tmp/step.json" "$tmp/file.json"
check "which is not the final model" test -n "$(cmp "$tmp/step.json" "$tmp/final.json")"
# Its timeline: the final model's records up to step 80.
"$bin" --dump --timeline --format tsv --model "$out" --step 80 >"$tmp/tl80.tsv"
"$bin" --dump --timeline --format tsv --model "$out" >"$tmp/tl.tsv"
check "the kept model's timeline ends at step 80" \
	test "$(awk -F'\t' 'NR > 1 { print $1 }' "$tmp/tl80.tsv" | sort -un | tail -1)" = 80
check "and is the final model's up to there" \
	cmp -s "$tmp/tl80.tsv" <(awk -F'\t' 'NR == 1 || $1 <= 80' "$tmp/tl.tsv")
expect 0 "" -- "$bin" --export "$tmp/step80.svg" --text "$text" --model "$out" --step 80
check "--export --step writes the figure" test -s "$tmp/step80.svg"

# A step not kept, a damaged kept file, --step without --model.
expect 1 "ind\\.attn\\.steps/step-000040\\.attn: no model kept of step 40" -- \
	"$bin" --dump --text "$text" --model "$out" --step 40
cp "$out.steps/step-000160.attn" "$tmp/keep"
head -c 2000 "$tmp/keep" >"$out.steps/step-000160.attn"
expect 1 "step-000160\\.attn" -- "$bin" --dump --text "$text" --model "$out" --step 160
expect 2 "--step opens a model a training run kept" -- "$bin" --dump --text "$text" --step 80
# A built-in model was given: the message does not ask for --model again.
expect 2 "the built-in model builtin-causal keeps none" -- \
	"$bin" --info --model builtin-causal --step 80
expect 2 "--step takes a step number, not 'x'" -- "$bin" --info --model "$out" --step x
expect 2 "--keep-steps keeps the models of the steps the timeline records" -- \
	"$bin" --train --task induction --timeline-every 0 --keep-steps 1 -o "$tmp/no.attn"

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
