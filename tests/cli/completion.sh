#!/usr/bin/env bash
# The shell completions the build writes (completions/meson.build, from
# attnview --completions): bash's driven as bash drives it (COMP_WORDS,
# COMP_CWORD, the function `complete -F` registered) in a folder with a
# model file, a text and a folder, and its candidates checked for prefixes a
# person types; every option of the table offered in some mode; zsh's and
# fish's parsed by the shells where they are installed, fish's candidates
# checked too.
set -u
bin=${ATTNVIEW_BIN:?set by meson}
dir=${ATTNVIEW_COMPLETIONS:?set by meson}
checks=0 fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
touch model.attn corpus.txt
mkdir figures

# candidates WORD...: what Tab offers after the words (the last one is the
# word being completed), sorted, on one line.
candidates() {
	bash --norc --noprofile -c '
		source "$0" || exit 1
		[ "$(complete -p attnview)" = "complete -F _attnview attnview" ] || exit 1
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMPREPLY=()
		_attnview
		printf "%s\n" "${COMPREPLY[@]}"' "$dir/attnview" "$@" | sort | paste -sd' '
}
# expect 'WANT' WORD...
expect() {
	local want=$1
	shift
	checks=$((checks + 1))
	local got
	got=$(candidates "$@")
	[ "$got" = "$want" ] || fail "bash: attnview ${*:2}<Tab> offers [$got], want [$want]"
}

expect '--scale' attnview --sc
expect 'fixed head lift log row' attnview --scale ''
expect 'row' attnview --scale = r
expect 'cividis viridis' attnview --colormap ''
expect 'compact fit scroll' attnview --cells ''
expect 'json tsv' attnview --dump --format ''
expect 'causal masked' attnview --train corpus.txt --objective ''
expect 'all contributions head max mean overview rollout' attnview --show ''
expect 'bash fish zsh' attnview --completions ''
expect 'band class delimiter duplicate first induction line-parallel list next previous reverse script two-back word-start' attnview --train --task ''
# --model: the built-in models, model files and folders, not other files.
expect 'builtin builtin-causal figures model.attn' attnview --model ''
expect 'builtin builtin-causal figures model.attn' attnview -m ''
expect 'builtin builtin-causal' attnview --model b
# --init takes a model as --model does
expect 'builtin builtin-causal figures model.attn' attnview --train corpus.txt --init ''
# Files where a file is asked for.
expect 'corpus.txt figures model.attn' attnview --train ''
expect 'corpus.txt figures model.attn' attnview --train corpus.txt ''
expect 'corpus.txt figures model.attn' attnview --dump --input ''
expect 'corpus.txt figures model.attn' attnview --train corpus.txt -o ''
expect 'figures' attnview --figure-dir ''
# Nothing for a value that is a number or a text.
expect '' attnview --text ''
expect '' attnview --train corpus.txt --lr ''
# The options of the mode: training's after --train, the others' before.
expect '--layers --lr' attnview --train corpus.txt --l
expect '--layer --lens --list-options --logits' attnview --l
expect '' attnview --dump --patie
expect '--patience' attnview --train corpus.txt --patie
expect '--layers --lr' attnview --train=corpus.txt --l
# After --dump, --info or --export, that mode's options alone: --dump and
# --info refuse --scale, which the view and --export take.
expect '--scale --seed --show --step' attnview --s
expect '--seed --step' attnview --dump --s
expect '--step' attnview --info --s
expect '--scale --show --step' attnview --export x.svg --s
expect '--scale --show --step' attnview --export=x.svg --s
expect '--train' attnview --tra

# Every option of the table is offered, before --train or after it.
offered="$(candidates attnview --) $(candidates attnview --train corpus.txt --)"
while IFS=$'\t' read -r long _; do
	checks=$((checks + 1))
	grep -qw -- "$long" <<<"$offered" || fail "bash: $long (attnview --list-options) is never offered"
done < <("$bin" --list-options)

# A shell it does not know, or none, is a usage error.
for arg in --completions=tcsh --completions; do
	checks=$((checks + 1))
	"$bin" "$arg" >/dev/null 2>&1
	[ $? -eq 2 ] || fail "attnview $arg: exit status is not 2"
done

# zsh and fish: their own parsers; fish's candidates.
if command -v zsh >/dev/null; then
	checks=$((checks + 1))
	zsh -n "$dir/_attnview" || fail "zsh -n _attnview"
	checks=$((checks + 1))
	grep -q "^[[:space:]]*'--scale=\[[^]]*\]:s:(fixed head row log lift)'\$" "$dir/_attnview" ||
		fail "zsh: no --scale spec with its values"
else
	echo "zsh is not installed: its script not checked"
fi
if command -v fish >/dev/null; then
	checks=$((checks + 1))
	fish --no-config -n "$dir/attnview.fish" || fail "fish -n attnview.fish"
	# fishes WORDS: fish's candidates, sorted, on one line.
	fishes() {
		fish --no-config -c 'source $argv[1]; complete -C $argv[2]' "$dir/attnview.fish" "$1" |
			cut -f1 | sort | paste -sd' '
	}
	for c in '--sc|--scale' '--scale |fixed head lift log row' '--train corpus.txt --l|--layers --lr' \
		'--l|--layer --lens --list-options --logits' '--dump --s|--seed --step' \
		'--export x.svg --s|--scale --show --step' '--train --task |band class delimiter duplicate first induction line-parallel list next previous reverse script two-back word-start'; do
		checks=$((checks + 1))
		got=$(fishes "attnview ${c%%|*}")
		[ "$got" = "${c#*|}" ] || fail "fish: attnview ${c%%|*}<Tab> offers [$got], want [${c#*|}]"
	done
else
	echo "fish is not installed: its script not checked"
fi

echo "completion: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
