#!/usr/bin/env bash
# The language follows the locale for people, never for scripts:
#   - --dump (JSON and TSV, with many of its options), --export's SVG and
#     --info print the same bytes under zh_CN.UTF-8 as under C.UTF-8, and
#     every mode exits with the same status on bad input;
#   - messages are Chinese under zh_CN.UTF-8 (LANG, LC_ALL, LC_MESSAGES,
#     LANGUAGE) and English under C.UTF-8;
#   - numbers are read and written with '.', whatever LC_NUMERIC says.
# Skipped (77) only when no zh_CN.UTF-8 locale exists and none can be made.
set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
model="$data/golden/fwd_masked.attn"
causal="$data/golden/fwd_causal.attn"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
fail() {
	fails=$((fails + 1))
	echo "FAIL: $*" >&2
}

zh=$(locale -a 2>/dev/null | grep -i -m1 -E '^zh_CN\.utf-?8$')
if [ -z "$zh" ]; then
	mkdir -p "$tmp/locale"
	if localedef -i zh_CN -f UTF-8 "$tmp/locale/zh_CN.UTF-8" 2>/dev/null; then
		export LOCPATH="$tmp/locale"
		zh=zh_CN.UTF-8
	else
		echo "no zh_CN.UTF-8 locale and localedef cannot make one: skipping"
		exit 77
	fi
fi
unset LANG LANGUAGE LC_MESSAGES LC_NUMERIC
zh_env=(env LC_ALL="$zh")
c_env=(env LC_ALL=C.UTF-8)

# same NAME ARGS...: stdout, stderr and the status under both locales; stdout
# and the status must be identical.
same() {
	local name=$1
	shift
	checks=$((checks + 1))
	"${c_env[@]}" "$bin" "$@" >"$tmp/c.out" 2>"$tmp/c.err"
	local sc=$?
	"${zh_env[@]}" "$bin" "$@" >"$tmp/zh.out" 2>"$tmp/zh.err"
	local sz=$?
	if [ "$sc" -ne "$sz" ]; then
		fail "$name: exit status $sc under C.UTF-8, $sz under $zh"
	elif ! cmp -s "$tmp/c.out" "$tmp/zh.out"; then
		fail "$name: output differs between C.UTF-8 and $zh"
		diff "$tmp/c.out" "$tmp/zh.out" | head -5 >&2
	fi
}

text='他说北京的天气很好, today!'
same "json" --dump --text "$text" --model "$model"
same "tsv" --dump --format tsv --text "$text" --model "$model"
same "json, one head, top 3" --dump --text "$text" --model "$model" --layer 1 --head 2 --top 3
same "tsv, one layer" --dump --format tsv --text "$text" --model "$model" --layer 0
same "aggregates and rollout" --dump --text "$text" --model "$model" --aggregates --rollout
same "aggregates, tsv" --dump --format tsv --text "$text" --model "$model" --aggregates --rollout
same "contributions" --dump --text "$text" --model "$model" --contributions
same "logits" --dump --text "$text" --model "$model" --logits --top 0
same "q·k breakdown" --dump --text "$text" --model "$model" --query 3 --key 1
same "words" --dump --text '北京|的 天气|很好' --model "$model" --words
same "compare" --dump --text '他说北京' --compare '她说上海' --model "$model"
same "ablate" --dump --text "$text" --model "$model" --ablate 0.1,1.2
same "generate" --dump --text '今天' --model "$causal" --generate 5 --temperature 0.7 --seed 3
same "lens and attribution" --dump --text "$text" --model "$model" --lens --dla --ablate 0.1
same "lens, tsv" --dump --format tsv --text "$text" --model "$causal" --lens --top 2
same "attribution, tsv" --dump --format tsv --text "$text" --model "$causal" --dla
same "circuits" --dump --text "$text" --model "$model" --circuits
same "circuits, tsv" --dump --format tsv --text "$text" --model "$causal" --circuits
same "faithfulness" --dump --text '今天' --model "$model" --faithfulness
same "faithfulness, tsv" --dump --format tsv --text '今天天气' --model "$causal" --faithfulness
same "score split, tsv" --dump --format tsv --text "$text" --model "$model" --query 3 --key 1 \
	--layer 1 --head 2
same "patching" --dump --text '他说北京' --patch '她说上海' --model "$model"
same "patching, tsv" --dump --format tsv --text '他说北京' --patch '她说上海' --model "$causal"
same "built-in model" --dump --text "$text"
timeline="$data/fuzz/seeds/model/timeline_causal.attn"
same "timeline" --dump --timeline --model "$timeline"
same "timeline, tsv, one head" --dump --timeline --format tsv --layer 0 --head 1 --model "$timeline"
same "no timeline" --dump --timeline --model "$model"
printf '第一行\n第二行 line two\n' >"$tmp/in.txt"
same "input file" --dump --format tsv --input "$tmp/in.txt" --model "$model"
same "info" --info --model "$model"
same "info of the built-in model (with its verdict)" --info
same "svg figure" --export "$tmp/fig.svg" --force --text "$text" --model "$model"
"${c_env[@]}" "$bin" --export "$tmp/c.svg" --text "$text" --model "$model" 2>/dev/null
"${zh_env[@]}" "$bin" --export "$tmp/zh.svg" --text "$text" --model "$model" 2>/dev/null
checks=$((checks + 1))
cmp -s "$tmp/c.svg" "$tmp/zh.svg" || fail "--export: the SVG differs between the locales"

# Bad input: the same status (and nothing on stdout).
same "unknown option" --dump --nonsense
same "bad --layer" --dump --text a --layer x
same "layer out of range" --dump --text a --model "$model" --layer 9
same "bad --format" --dump --text a --format xml
same "invalid UTF-8" --dump --text $'\xff\xfe' --model "$model"
same "missing model" --dump --text a --model "$tmp/none.attn"
printf 'not a model' >"$tmp/bad.attn"
same "not a model" --dump --text a --model "$tmp/bad.attn"
same "empty corpus" --train /dev/null -o "$tmp/m.attn"
same "train: bad option" --train "$tmp/in.txt" --dim x
same "view without a terminal" --text abc </dev/null
same "export: bad extension" --export "$tmp/x.gif" --text a --model "$model"

# Messages: Chinese under zh_CN, English under C.
msg() { # ENV... -- ARGS: the first line of stderr
	local envs=()
	while [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	env -u LANG -u LC_ALL -u LANGUAGE "${envs[@]}" "$bin" "$@" 2>&1 >/dev/null | head -1
}
expect_msg() { # WHAT PATTERN ENV... -- ARGS
	local what=$1 pattern=$2
	shift 2
	checks=$((checks + 1))
	local got
	got=$(msg "$@")
	grep -qE -- "$pattern" <<<"$got" || fail "$what: got '$got', want /$pattern/"
}
expect_msg "usage error, LC_ALL=zh_CN" '^attnview: --layer 取从 0 起的层号，而不是“x”$' \
	LC_ALL="$zh" -- --dump --text a --layer x
expect_msg "usage error, C" "^attnview: --layer takes a layer number from 0, not 'x'$" \
	LC_ALL=C.UTF-8 -- --dump --text a --layer x
expect_msg "missing file, LANG=zh_CN" "^attnview: .*none\.attn：没有这个文件；--model 接受" \
	LANG="$zh" -- --dump --text a --model "$tmp/none.attn"
expect_msg "missing file, C" "^attnview: .*none\.attn: no such file; --model takes a model file" \
	LANG=C.UTF-8 -- --dump --text a --model "$tmp/none.attn"
expect_msg "layer out of range, C" "^attnview: --layer 9 is out of range: this model has layers 0\.\." \
	LANG=C.UTF-8 -- --dump --text a --model "$model" --layer 9
expect_msg "head out of range, LANG=zh_CN" "^attnview: --head 9 超出范围" \
	LANG="$zh" -- --dump --text a --model "$model" --head 9
expect_msg "LC_MESSAGES=zh_CN alone" '不是有效的值' \
	LC_MESSAGES="$zh" LANG=C.UTF-8 -- --train "$tmp/in.txt" --dim x
expect_msg "LANGUAGE=zh_CN over LANG=C.UTF-8" '不是有效的值' \
	LANGUAGE=zh_CN LANG=C.UTF-8 -- --train "$tmp/in.txt" --dim x
expect_msg "LANGUAGE is ignored in the C locale" 'is not a valid value' \
	LANGUAGE=zh_CN LANG=C -- --train "$tmp/in.txt" --dim x
checks=$((checks + 1))
"${zh_env[@]}" "$bin" --help | grep -q '^用法：attnview' || fail "--help is not in Chinese"
checks=$((checks + 1))
"${zh_env[@]}" "$bin" --train --help | grep -q '^用法：attnview --train' ||
	fail "--train --help is not in Chinese"
checks=$((checks + 1))
"${c_env[@]}" "$bin" --help | grep -q '^Usage: attnview' || fail "--help is not English under C"

# Numbers: a locale with a decimal comma changes neither the options read nor
# the numbers printed.
comma=$(locale -a 2>/dev/null | grep -i -m1 -E '^(de_DE|fr_FR|ru_RU)\.utf-?8$')
comma_env=(env -u LC_ALL LANG="$zh" LC_NUMERIC="$comma")
if [ -z "$comma" ] && mkdir -p "$tmp/loc2" &&
	localedef -i de_DE -f UTF-8 "$tmp/loc2/de_DE.UTF-8" 2>/dev/null &&
	localedef -i zh_CN -f UTF-8 "$tmp/loc2/zh_CN.UTF-8" 2>/dev/null; then
	comma=de_DE.UTF-8
	comma_env=(env -u LC_ALL LOCPATH="$tmp/loc2" LANG=zh_CN.UTF-8 LC_NUMERIC=de_DE.UTF-8)
fi
if [ -n "$comma" ]; then
	for args in "--dump --text 今天 --model $causal --generate 3 --temperature 0.5" \
		"--dump --format tsv --text 今天天气 --model $model --layer 1"; do
		checks=$((checks + 1))
		# shellcheck disable=SC2086
		"${c_env[@]}" "$bin" $args >"$tmp/c.out" 2>&1
		# shellcheck disable=SC2086
		"${comma_env[@]}" "$bin" $args >"$tmp/comma.out" 2>&1
		cmp -s "$tmp/c.out" "$tmp/comma.out" || fail "LC_NUMERIC=$comma changes: $args"
	done
else
	echo "no locale with a decimal comma: the LC_NUMERIC check is left out"
fi

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
