#!/usr/bin/env bash
# Untrusted names and model files: a corpus, a model and folders
# whose names hold terminal commands (OSC, CSI, SGR, BEL, DEL, C1 controls,
# invalid UTF-8, a tab, a line break, a bidirectional override), and a model
# whose metadata holds every control character, go through every mode that
# prints and every error path they reach, under C.UTF-8 and zh_CN.UTF-8.
# Nothing any of them writes to stdout or stderr may be a control sequence
# (tests/lib/hostile.c check: no C0 but line feed and tab, no DEL, no C1, only
# valid UTF-8); --info has no tab and one "key: value" per line; the names
# are shown in their escaped form; the model with hostile metadata loads.
set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
hostile=${HOSTILE_BIN:?set by meson}
model="$data/golden/fwd_masked.attn"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
tiny=(--dim 16 --heads 2 --layers 1 --context 16 --batch 4 --warmup 1 --steps 3 --threads 1)
export SOURCE_DATE_EPOCH=1767225600

fail() {
	fails=$((fails + 1))
	printf 'FAIL: %s\n' "$*" | LC_ALL=C cat -v >&2
}

zh=$(locale -a 2>/dev/null | grep -i -m1 -E '^zh_CN\.utf-?8$')
if [ -z "$zh" ]; then
	mkdir -p "$tmp/locale"
	if localedef -i zh_CN -f UTF-8 "$tmp/locale/zh_CN.UTF-8" 2>/dev/null; then
		export LOCPATH="$tmp/locale"
		zh=zh_CN.UTF-8
	else
		echo "no zh_CN.UTF-8 locale and localedef cannot make one: Chinese left out"
	fi
fi
unset LANG LANGUAGE LC_MESSAGES
locales=(C.UTF-8 ${zh:+"$zh"})

# The hostile names: a title-setting OSC, a red SGR, a C1 CSI (U+009B) and
# the byte 0x9B alone, DEL, a tab, a line break, a right-to-left override.
evil=$'x\e]0;pwned\a\e[31mRED\xc2\x9b\x9b\x7f\t\n\xe2\x80\xae.txt'
# A folder with a clear-screen in its name holds everything.
dir="$tmp/d"$'\e[2J\e]52;c;cHduZWQ=\a'
mkdir "$dir" || exit 1
corpus="$dir/$evil"
for ((i = 0; i < 40; i++)); do
	printf 'The cat sat on the mat, %d times. 猫坐在垫子上。\n' "$i"
done >"$corpus"
# Text with escapes, controls and invalid UTF-8 (cleaned, with notes naming
# the file).
printf 'abc \e[31mred\e[0m \x01\x02 caf\xc3\xa9 \xff\xfe \xc2\x9b\n' >"$dir/in$evil"
# The same text in Latin-1 (the encoding hint names the file and the iconv
# command).
for ((i = 0; i < 60; i++)); do printf 'Caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade.\n'; done \
	>"$dir/latin$evil"

# run_in LOCALE NAME STATUS [--lines] -- command...: the exit status is
# STATUS, a failure says why on stderr, and nothing printed is a control
# sequence; --lines: stdout is "key: value" lines without tabs (--info).
# The output is left in $tmp/out and $tmp/err.
run_in() {
	local loc=$1 name="$2 [$1]" want=$3 lines= st
	shift 3
	[ "$1" = --lines ] && lines=--lines && shift
	shift
	checks=$((checks + 1))
	LC_ALL=$loc timeout 120 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
	if [ "$st" -ne "$want" ]; then
		fail "$name: status $st (want $want): $(head -c 600 "$tmp/err")"
		return
	fi
	if [ "$want" -ne 0 ] && [ ! -s "$tmp/err" ]; then
		fail "$name: printed nothing"
	fi
	if ! "$hostile" check $lines "$tmp/out" || ! "$hostile" check "$tmp/err"; then
		fail "$name: a control sequence in its output (above)"
	fi
	if [ -n "$lines" ] && grep -vqE '^[a-z][a-z ]*: ' "$tmp/out"; then
		fail "$name: a line of --info is not 'key: value':" \
			"$(grep -vE '^[a-z][a-z ]*: ' "$tmp/out" | head -3)"
	fi
}

# run NAME STATUS [--lines] -- command...: run_in under each locale.
run() {
	local loc
	for loc in "${locales[@]}"; do
		run_in "$loc" "$@"
	done
}

# shows NAME PATTERN: the last run printed PATTERN (a fixed string).
shows() {
	checks=$((checks + 1))
	grep -qF -- "$2" "$tmp/out" "$tmp/err" ||
		fail "$1: '$2' not in the output: $(head -c 600 "$tmp/out" "$tmp/err")"
}

# The escaped forms the messages must show.
shown_evil='x\e]0;pwned\a\e[31mRED\xc2\x9b\x9b\x7f\t\n\xe2\x80\xae.txt'
shown_dir='d\e[2J\e]52;c;cHduZWQ=\a'

# -- training on a file with a hostile name, into a model with one: its
# name and corpus description hold the controls (all but the invalid byte,
# which the format cannot hold: U+FFFD).
out="$dir/$evil.attn"
run "train" 0 -- "$bin" --train "$corpus" "${tiny[@]}" -o "$out"
shows "train" "$shown_dir/$shown_evil"
LC_ALL=C.UTF-8 "$bin" --train "$corpus" "${tiny[@]}" -o "$out" >/dev/null 2>&1 ||
	fail "the model with a hostile name was not written"
run "info of a hostile name" 0 --lines -- "$bin" --info --model "$out"
shows "info" 'name: "x\e]0;pwned\a\e[31mRED\xc2\x9b'
# (0x9B alone is invalid UTF-8, which the file cannot hold: U+FFFD)
shows "info" 'RED\xc2\x9b'$'\xef\xbf\xbd''\x7f\t\n'
# Every printing mode on the model whose metadata holds every control.
meta="$dir/meta$evil.attn"
"$hostile" model "$model" "$meta" || fail "hostile model: cannot write $meta"
run "info of hostile metadata" 0 --lines -- "$bin" --info --model "$meta"
shows "info" 'corpus: "\e]52;c;cHduZWQ=\a\e[2J\e[31m\xc2\x80\xc2\x81'
shows "info" '\r\n\tcorpus.txt\e[0m"'
run "dump json" 0 -- "$bin" --dump --text '他说 a cat' --model "$meta"
run "dump tsv" 0 -- "$bin" --dump --format tsv --text $'tab\there' --model "$meta"
run "dump generate" 0 -- "$bin" --dump --text 'ab' --generate 3 --model "$data/golden/fwd_causal.attn"
run "dump input" 0 -- "$bin" --dump --input "$dir/in$evil" --model "$meta"
shows "dump input" "$shown_evil"
run "dump latin-1 input" 0 -- "$bin" --dump --input "$dir/latin$evil" --model "$meta"
run "dump --text with escapes" 0 -- "$bin" --dump --text $'a\e[2Jb\e]0;t\ac' --model "$meta"
run "export" 0 -- "$bin" --export "$dir/fig$evil.svg" --text 'abc' --model "$meta" --force
run "export exists" 1 -- "$bin" --export "$dir/fig$evil.svg" --text 'abc' --model "$meta"
shows "export exists" "$shown_evil"
run "export bad extension" 2 -- "$bin" --export "$dir/fig$evil" --text 'abc' --model "$meta"
run "export no folder" 1 -- "$bin" --export "$dir/no$evil/f.svg" --text 'abc' --model "$meta"
run "export title" 0 -- "$bin" --export "$dir/t.svg" --title $'\e]0;t\a' --text 'a' \
	--model "$meta" --force
run "export png" 0 -- "$bin" --export "$dir/t.png" --text 'a' --model "$meta" --force

# -- the view, which needs a terminal: its refusals name what they refuse.
run "view without a terminal" 2 -- "$bin" --model "$meta" --text 'abc'
run "view missing model" 1 -- "$bin" --model "$dir/no$evil.attn"
shows "view missing model" "$shown_evil"

# -- model files that are missing, not models, damaged, folders.
run "info missing" 1 -- "$bin" --info --model "$dir/no$evil"
shows "info missing" "$shown_dir/no$shown_evil"
run "info not a model" 1 -- "$bin" --info --model "$corpus"
head -c 300 "$meta" >"$dir/cut$evil.attn"
run "info damaged" 1 -- "$bin" --info --model "$dir/cut$evil.attn"
printf 'X' | dd of="$dir/cut$evil.attn" bs=1 seek=100 conv=notrunc 2>/dev/null
cp "$meta" "$dir/crc$evil.attn"
printf 'X' | dd of="$dir/crc$evil.attn" bs=1 seek=100 conv=notrunc 2>/dev/null
run "info checksum" 1 -- "$bin" --info --model "$dir/crc$evil.attn"
mkdir "$dir/folder$evil"
run "info folder" 1 -- "$bin" --info --model "$dir/folder$evil"
run "dump missing input" 1 -- "$bin" --dump --input "$dir/no$evil" --model "$meta"
run "dump folder input" 1 -- "$bin" --dump --input "$dir/folder$evil" --model "$meta"

# -- option values that are terminal commands.
e=$'\e]0;pwned\a\e[2J\xc2\x9b\x9b'
run "unknown option" 2 -- "$bin" "--$e"
run "unknown train option" 1 -- "$bin" --train "--$e"
run "unknown dump option" 2 -- "$bin" --dump "--$e"
run "unknown export option" 2 -- "$bin" --export x.svg "--$e"
run "modes" 2 -- "$bin" --info "--dump=$e"
run "stray argument" 2 -- "$bin" --dump --text a "$e"
run "view stray argument" 2 -- "$bin" "$e"
for opt in --layer --head --format --top --query --key --ablate --generate --temperature \
	--top-k --seed; do
	run "dump $opt" 2 -- "$bin" --dump --text 'abc' --model "$meta" "$opt" "$e"
done
for opt in --layer --head --scale --colormap --cells --show --figure-format --temperature \
	--top-k --seed; do
	run "view $opt" 2 -- "$bin" --model "$meta" "$opt" "$e"
done
for opt in --layer --head --show --scale --colormap; do
	run "export $opt" 2 -- "$bin" --export "$dir/x.svg" --text 'abc' --model "$meta" \
		"$opt" "$e"
done
for opt in --objective --dim --heads --layers --context --batch --steps --epochs --lr \
	--warmup --seed --threads --min-count --max-vocab --val-share --eval-every --patience \
	--checkpoint-every; do
	run "train $opt" 2 -- "$bin" --train "$corpus" -o "$dir/o.attn" "$opt" "$e"
done
run "export missing value" 2 -- "$bin" --export
run "compare" 0 -- "$bin" --dump --text 'abc' --compare $'a\e[2Jc' --model "$meta"

# -- training's error paths with hostile names.
run "train missing corpus" 1 -- "$bin" --train "$dir/no$evil" "${tiny[@]}" -o "$dir/o.attn"
shows "train missing corpus" "$shown_evil"
run "train folder corpus" 1 -- "$bin" --train "$dir/folder$evil" "${tiny[@]}" -o "$dir/o.attn"
run "train over a text" 1 -- "$bin" --train "$corpus" "${tiny[@]}" -o "$dir/in$evil"
run "train into a folder" 1 -- "$bin" --train "$corpus" "${tiny[@]}" -o "$dir/folder$evil"
run "train into no folder" 1 -- "$bin" --train "$corpus" "${tiny[@]}" -o "$dir/no$evil/m.attn"
run "train missing val-file" 1 -- "$bin" --train "$corpus" "${tiny[@]}" -o "$dir/o.attn" \
	--val-file "$dir/no$evil"
run "train latin-1" 0 -- "$bin" --train "$dir/latin$evil" "${tiny[@]}" -o "$dir/latin.attn"
shows "train latin-1" "iconv -f WINDOWS-1252 -t UTF-8 \$'"
rm -f "$dir/latin.attn"
run "train cleaned" 0 -- "$bin" --train "$dir/in$evil" "$corpus" "${tiny[@]}" -o "$dir/c.attn"
rm -f "$dir/c.attn"
run "resume a model" 1 -- "$bin" --train "$corpus" --resume "$meta"
run "resume missing" 1 -- "$bin" --train "$corpus" --resume "$dir/no$evil.ckpt"
# --init: a model with hostile metadata named in a refusal, and trained from
run "init other sizes" 2 -- "$bin" --train "$corpus" --init "$meta" --dim 8 -o "$dir/o.attn"
run "init missing" 1 -- "$bin" --train "$corpus" --init "$dir/no$evil.attn" -o "$dir/o.attn"
run "init a model" 0 -- "$bin" --train "$corpus" --init "$meta" --steps 2 --batch 2 \
	--threads 1 --eval-every 0 -o "$dir/init.attn"
rm -f "$dir/init.attn" "$dir/init.attn.ckpt"
touch "$dir/ck$evil.attn.ckpt"
run "checkpoint left" 1 -- "$bin" --train "$corpus" "${tiny[@]}" -o "$dir/ck$evil.attn"
shows "checkpoint left" "attnview --train \$'"
rm -f "$dir/ck$evil.attn.ckpt"
# A run with a validation file and checkpoints, interrupted: the resume
# command quotes every name.
long=(--dim 16 --heads 2 --layers 1 --context 16 --batch 8 --warmup 1 --steps 2000
	--eval-every 0 --checkpoint-every 5 --threads 1)
for loc in "${locales[@]}"; do
	o="$dir/int$evil.attn"
	rm -f "$o" "$o.ckpt"
	LC_ALL=$loc "$bin" --train "$corpus" "${long[@]}" --val-file "$dir/in$evil" -o "$o" \
		>"$tmp/out" 2>"$tmp/err" </dev/null &
	pid=$!
	for ((i = 0; i < 500; i++)); do
		[ -e "$o.ckpt" ] && break
		sleep 0.01
	done
	sleep 0.2
	kill -s INT "$pid" 2>/dev/null
	wait "$pid"
	st=$?
	checks=$((checks + 1))
	if [ "$st" -ne 130 ]; then
		fail "interrupted [$loc]: status $st: $(head -c 600 "$tmp/err")"
	elif ! "$hostile" check "$tmp/out" || ! "$hostile" check "$tmp/err"; then
		fail "interrupted [$loc]: a control sequence in its output (above)"
	fi
	shows "interrupted [$loc]" "--resume \$'"
	run_in "$loc" "resumed" 0 -- "$bin" --train "$corpus" --resume "$o.ckpt" -o "$o"
	shows "resumed [$loc]" "$shown_dir/int$shown_evil.attn.ckpt"
	rm -f "$o" "$o.ckpt"
done

# -- help and version.
run "help" 0 -- "$bin" --help
run "train help" 0 -- "$bin" --train --help
run "version" 0 -- "$bin" --version

echo "hostile: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
