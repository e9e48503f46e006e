#!/usr/bin/env bash
# The figures of README's "What patterns to look for" and doc/training.md's
# lab (assets/figures/lab-*.png and pattern-*.png): the lab's induction task
# trained with seed 1, and heads of the built-in models, with the real program's --export (a build with cairo
# and pango, and fonts-noto-cjk):
#
#   assets/lab_figures.sh [build/src/attnview]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/src/attnview}
out=$here/figures
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

figure() { # NAME ARGS...: attnview --export out/NAME.png ARGS...
	local name=$1
	shift
	"$bin" --export "$out/$name.png" --force "$@"
	echo "$out/$name.png: $(($(stat -c %s "$out/$name.png") / 1024)) KB"
}

"$bin" --train --task induction --seed 1 --threads 2 -o "$work/induction.attn" >"$work/induction.log"
grep -E 'task accuracy:|layer [0-9]+:' "$work/induction.log"
figure lab-induction --model "$work/induction.attn" --overview --text 'xqbmkwtrjqbmkwtrjqbmkwt'

poem="床前明月光，疑是地上霜。举头望明月，低头思故乡。"
en="Time flies like an arrow; fruit flies like a banana."
# An offset head: the lab's two-back task (the built-in models' heads near
# the diagonal split their rows between one and two to the left: local).
"$bin" --train --task two-back --seed 1 --threads 2 -o "$work/two-back.attn" >"$work/two-back.log"
figure pattern-offset --model "$work/two-back.attn" --text 'kbtkqexqzfozwaiwkbtkqexqzfozwaiw'
# The built-in model's keyword and delimiter heads.
figure pattern-keyword --layer 0 --head 2 --text "$poem"
figure pattern-delimiter --layer 0 --head 1 --text "$en"
# The built-in causal model's induction head on a sentence written twice.
figure pattern-induction --model builtin-causal --layer 2 --head 1 \
	--text "Mr Dursley and Mrs Dursley. Mr Dursley and Mrs Dursley."
# Its word-start head: each letter looks at the first letter of its word.
figure pattern-wordstart --model builtin-causal --layer 1 --head 3 \
	--text "The quick brown fox jumps over the lazy dog."
