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
# Each "save FILE" of it is compared with tests/screens/NAME.FILE.
# tests/screens.sh --update writes those from the program (look at the diff).
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

# The result's time changes from run to run, and a longer one (10 ms and
# more on a loaded machine) may not fit a narrow status line, which then
# leaves it out: compared without it.
steady() {
	sed -E 's/ \| [0-9]+\.[0-9] ms \|/ |/' "$1"
}

header() { # FILE KEY
	sed -n "s/^# $2: //p" "$1" | head -1
}

for script in "$data"/screens/*.script; do
	name=$(basename "$script" .script)
	eval "args=($(header "$script" args))"
	read -r cols lines <<<"$(header "$script" size)"
	term=$(header "$script" term)
	rm -rf "$tmp/run" && mkdir "$tmp/run" && ln -s "$data/golden" "$tmp/run/golden" &&
		ln -s "$data/data" "$tmp/run/data"
	(cd "$tmp/run" && ATTNVIEW_SCRIPT="$script" COLUMNS="${cols:-80}" LINES="${lines:-24}" \
		TERM="${term:-xterm-256color}" "$bin" "${args[@]}" </dev/null >"$tmp/out" 2>&1)
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
		if ! diff -u <(steady "$want") <(steady "$tmp/run/$saved") >"$tmp/diff"; then
			fail "$name: $saved differs from screens/$name.$saved:"
			cat "$tmp/diff" >&2
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

echo "screens: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
