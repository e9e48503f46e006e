#!/usr/bin/env bash
# Headless screen tests: the real view driven by a script of keys
# (ATTNVIEW_SCRIPT, src/view/script.h), its screen saved as text and
# compared with the screens kept in tests/screens/, line by line (the
# result's time on the status line aside). They need no terminal and no
# tmux, so they run wherever the program builds; tests/tui/ keeps the tmux
# tests of what only a terminal shows (colour escapes, resizing, signals).
#
# tests/screens/NAME.script: the script, and in its header
#   # args: ARGS   the command line, quoted as bash quotes it (paths relative
#                  to tests/; the view runs in an empty folder that has them)
#   # size: C L    the screen's columns and lines (80 24)
#   # term: TERM   xterm-256color unless said
#   # language: L  the interface's language (LANGUAGE=L: zh_CN), English unless said
# Each "save FILE" of it is compared with tests/screens/NAME.FILE.
# tests/screens/screens.sh --update writes those from the program (look at the diff).
set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
update=${1:-}
export LC_ALL=C.UTF-8
# and the variables by which a terminal says it takes 24-bit colour (colors.c)
unset NO_COLOR COLORTERM VTE_VERSION KONSOLE_VERSION WT_SESSION KITTY_WINDOW_ID \
	ALACRITTY_WINDOW_ID TERM_PROGRAM
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0

fail() {
	fails=$((fails + 1))
	printf 'FAIL: %s\n' "$*" >&2
}

# The numbers on a screen depend on the OpenBLAS kernel in their last
# digits: screen_compare compares them within the bound of the pass of the
# script's model and texts (--model, --text, --compare of its args), the
# text around them exactly, and the result's time on the status line not at
# all (it changes from run to run).
compare=${SCREEN_COMPARE:?set by meson}
bound_args() { # ARGS...: screen_compare's --model and --text
	while [ $# -gt 0 ]; do
		case $1 in
		--model)
			if [ -e "$tmp/run/$2" ]; then
				printf '%s\0%s\0' --model "$tmp/run/$2"
			else # a built-in model's name
				printf '%s\0%s\0' --model "$2"
			fi
			shift
			;;
		--text | --compare) printf '%s\0%s\0' --text "$2" && shift ;;
		esac
		shift
	done
}

header() { # FILE KEY
	sed -n "s/^# $2: //p" "$1" | head -1
}

for script in "$data"/screens/*.script; do
	name=$(basename "$script" .script)
	eval "args=($(header "$script" args))"
	read -r cols lines <<<"$(header "$script" size)"
	term=$(header "$script" term)
	language=$(header "$script" language)
	rm -rf "$tmp/run" && mkdir "$tmp/run" && ln -s "$data/golden" "$tmp/run/golden" &&
		ln -s "$data/data" "$tmp/run/data"
	(cd "$tmp/run" && ATTNVIEW_SCRIPT="$script" COLUMNS="${cols:-80}" LINES="${lines:-24}" \
		TERM="${term:-xterm-256color}" LANGUAGE="$language" "$bin" "${args[@]}" \
		</dev/null >"$tmp/out" 2>&1)
	status=$?
	checks=$((checks + 1))
	if [ $status -ne 0 ]; then
		fail "$name: exit status $status: $(cat "$tmp/out")"
		continue
	fi
	for saved in $(sed -n 's/^save //p' "$script"); do
		want="$data/screens/$name.$saved"
		checks=$((checks + 1))
		if [ ! -s "$tmp/run/$saved" ]; then
			fail "$name: $saved was not saved"
			continue
		fi
		if [ "$update" = --update ]; then
			cp "$tmp/run/$saved" "$want"
			continue
		fi
		mapfile -d '' bargs < <(bound_args "${args[@]}")
		if ! "$compare" "${bargs[@]}" "$want" "$tmp/run/$saved" >"$tmp/diff" 2>&1; then
			fail "$name: $saved differs from screens/$name.$saved:"
			cat "$tmp/diff" >&2
		elif [ -n "${VERBOSE:-}" ]; then
			printf '%s.%s: %s\n' "$name" "$saved" "$(cat "$tmp/diff")"
		fi
	done
done

# A script that cannot run says where and why, and the terminal state is
# never touched (no escape sequences on standard output).
printf 'key NoSuchKey\n' >"$tmp/bad.script"
out=$(ATTNVIEW_SCRIPT="$tmp/bad.script" LINES=24 COLUMNS=80 TERM=xterm-256color \
	"$bin" --model "$data/golden/fwd_masked.attn" --text a </dev/null 2>&1)
status=$?
checks=$((checks + 1))
[ $status -eq 1 ] && grep -q "bad.script:1: no key is called 'NoSuchKey'" <<<"$out" ||
	fail "a bad key: status $status, '$out'"
checks=$((checks + 1))
grep -q $'\033' <<<"$out" && fail "escape sequences written by a headless run: $out"

# The comparison itself: a last digit passes, a weight off by more than the
# bound, a changed character or a number that moved does not.
printf ' 7 是 0.160026  rows\n x 2\n' >"$tmp/want.txt"
expect_compare() { # STATUS LINE1 LINE2 WHAT
	printf '%s\n%s\n' "$2" "$3" >"$tmp/got.txt"
	checks=$((checks + 1))
	"$compare" --model "$data/golden/fwd_masked.attn" --text '床前明月光' \
		"$tmp/want.txt" "$tmp/got.txt" >/dev/null 2>&1
	[ $? -eq "$1" ] || fail "screen_compare: $4"
}
expect_compare 0 ' 7 是 0.160025  rows' ' x 2' "the last digit differs"
expect_compare 0 ' 7 是 0.16003   rows' ' x 2' "printed one digit shorter"
expect_compare 1 ' 7 是 0.170026  rows' ' x 2' "a weight off by 0.01 passes"
expect_compare 1 ' 7 是 0.160026  rowz' ' x 2' "a changed character passes"
expect_compare 1 ' 7 是 0.160026 rows' ' x 2' "a moved word passes"
expect_compare 1 ' 8 是 0.160026  rows' ' x 2' "a changed index passes"
expect_compare 1 ' 7 是 0.160026  rows' ' x 3' "a changed count passes"

echo "screens: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
