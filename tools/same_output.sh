#!/usr/bin/env bash
# Two builds of attnview give the same bytes: --dump (JSON and TSV, every
# section alone and in pairs, restricted to a layer or a head), --info, and
# the messages and exit statuses of bad option values, on both built-in
# models. For a change that must not move output (CONVENTIONS, Tests):
#
#   tools/same_output.sh OLD_ATTNVIEW NEW_ATTNVIEW
#
# Prints each case that differs (with the first lines of the difference) and
# the count; exits 1 if any differed.
set -u
old=$1 new=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=0 diffs=0

same() { # ARGS...: run both, compare stdout, stderr and the status
	runs=$((runs + 1))
	LC_ALL=C.UTF-8 "$old" "$@" >"$work/o.out" 2>"$work/o.err"
	echo "status $?" >>"$work/o.err"
	LC_ALL=C.UTF-8 "$new" "$@" >"$work/n.out" 2>"$work/n.err"
	echo "status $?" >>"$work/n.err"
	if ! cmp -s "$work/o.out" "$work/n.out" || ! cmp -s "$work/o.err" "$work/n.err"; then
		diffs=$((diffs + 1))
		printf 'DIFFERS: attnview'
		printf ' %q' "$@"
		printf '\n'
		diff "$work/o.out" "$work/n.out" | head -5
		diff "$work/o.err" "$work/n.err" | head -5
	fi
}

zh='床前明月光，疑是地上霜。'
en='the cat sat on the mat'
sections=("" --contributions --aggregates --rollout --words --logits "--compare 他前明月光" \
	"--ablate 0.1,1.2" "--generate 6 --seed 3" "--generate 4 --temperature 0 --top-k 5" \
	"--patch 床前明日光，疑是地上霜。" "--patch 床前明日光，疑是地上霜。 --targets 月,日" \
	--lens --dla --circuits --faithfulness "--query 3 --key 1" "--top 0" "--top 3")
places=("" "--layer 1 --head 2")
for model in builtin builtin-causal; do
	same --info --model "$model"
	same --dump --timeline --model "$model"
	same --dump --timeline --model "$model" --format tsv --layer 1
	for s in "${sections[@]}"; do
		for p in "${places[@]}"; do
			for text in "$zh" "$en"; do
				# shellcheck disable=SC2086 # the options split into words
				same --dump --model "$model" --text "$text" $s $p
			done
			# shellcheck disable=SC2086
			same --dump --model "$model" --text "$zh" --format tsv $s $p
		done
	done
	same --dump --model "$model" --text "我|爱|北京|天安门" --words
	same --dump --model "$model" --text "我|爱|北京|天安门" --words --format tsv
	# pairs of sections, both formats (TSV refuses some: the message is compared)
	for a in "${sections[@]:1:16}"; do
		for b in --lens "--query 2 --key 0" --rollout; do
			# shellcheck disable=SC2086
			same --dump --model "$model" --text "$en" $a $b
		done
		for b in --dla --aggregates; do
			# shellcheck disable=SC2086
			same --dump --model "$model" --text "$en" --format tsv $a $b
		done
	done
done
# Values out of range and malformed, in every mode that takes them.
bad=("--top 101" "--top -1" "--top x" "--generate 0" "--generate 2000" "--format xml"
	"--layer -1" "--layer 9" "--head x" "--temperature abc" "--temperature -1"
	"--top-k -2" "--seed x" "--query 5" "--query 99 --key 0" "--ablate 9.9" "--ablate x"
	"--step x" "--show nothing" "--scale wide" "--colormap jet" "--cells huge"
	"--figure-format gif" "--targets a" "--patch")
for b in "${bad[@]}"; do
	# shellcheck disable=SC2086
	same --dump --text "$zh" $b
	# shellcheck disable=SC2086
	same --export "$work/x.svg" --text "$zh" $b
done
for b in "--steps x" "--steps 0" "--lr x" "--dim 7" "--heads 0" "--batch 0" "--context 1" \
	"--val-percent 101" "--threads 999" "--patience x" "--eval-every x" "--sharpen -1" \
	"--timeline-every x" "--keep-steps x" "--seed x" "--epochs x" "--min-count x"; do
	# shellcheck disable=SC2086
	same --train /dev/null -o "$work/m.attn" $b
done
for b in "--dim 0" "--dim 513" "--heads 17" "--layers 5" "--steps 0" "--steps 1000001" \
	"--lr 1" "--lr 0" "--lr x" "--threads 0" "--seed x" "--timeline-every x" "--keep-steps -1"; do
	# shellcheck disable=SC2086
	same --train --task previous -o "$work/lab.attn" $b
done
echo "same_output: $runs cases, $diffs differ"
[ "$diffs" -eq 0 ]
