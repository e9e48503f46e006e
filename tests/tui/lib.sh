# Shared by the screen tests: run attnview in a private tmux server, send
# keys, read the screen back, wait for text with a timeout.
# Each test sources this, then calls tui_start.

set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
colof=${COLOF_BIN:?set by meson}
model_masked="$data/golden/fwd_masked.attn"
model_causal="$data/golden/fwd_causal.attn"
export LC_ALL=C.UTF-8

if ! command -v tmux >/dev/null 2>&1; then
	echo "tmux not found: skipping the screen tests"
	exit 77
fi

sock_base="attnview-test-$$"
sock=$sock_base
starts=0
fails=0
checks=0
tmpdir=$(mktemp -d)

tui_cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null
	rm -rf "$tmpdir"
}
trap tui_cleanup EXIT

# tui_start COLS LINES ENV... -- ARGS...: attnview with ARGS in a COLS x LINES
# pane, environment ENV (e.g. TERM=xterm-256color). When attnview exits, the
# pane shows "EXITED <status>" and stays (the wrapping shell survives Ctrl-C).
tui_start() {
	local cols=$1 lines=$2
	shift 2
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	# Not the variables by which the terminal around the tests says it has
	# 24-bit colour (colors.c): the screens would suggest COLORTERM.
	local unset="-u VTE_VERSION -u KONSOLE_VERSION -u WT_SESSION -u KITTY_WINDOW_ID"
	unset+=" -u ALACRITTY_WINDOW_ID -u TERM_PROGRAM"
	local cmd="env $unset LC_ALL=C.UTF-8 ${envs[*]} $(printf '%q ' "$bin" "$@")"
	# A fresh server each time: a server still shutting down would refuse.
	tmux -L "$sock" kill-server 2>/dev/null
	starts=$((starts + 1))
	sock="$sock_base-$starts"
	tmux -L "$sock" -f /dev/null new-session -d -x "$cols" -y "$lines" \
		"trap : INT; $cmd; echo EXITED \$?; sleep 600" || { echo "cannot start tmux"; exit 1; }
	tmux -L "$sock" set-option -g window-size manual >/dev/null 2>&1
	pane_pid=$(tmux -L "$sock" display -p '#{pane_pid}')
}

screen() {
	tmux -L "$sock" capture-pane -p
}

screen_esc() {
	tmux -L "$sock" capture-pane -p -e
}

# Line N (0-based) of the screen.
line() {
	screen | sed -n "$(($1 + 1))p"
}

keys() {
	tmux -L "$sock" send-keys "$@"
}

# Type text literally (no key names).
type_text() {
	tmux -L "$sock" send-keys -l "$1"
}

tvar() {
	tmux -L "$sock" display -p "#{$1}"
}

fail() {
	fails=$((fails + 1))
	echo "FAIL: $*" >&2
	echo "---- screen ----" >&2
	screen >&2
	echo "----------------" >&2
}

check() {
	checks=$((checks + 1))
	local what=$1
	shift
	if ! "$@"; then
		fail "$what"
	elif [ -n "${TUI_VERBOSE:-}" ]; then
		echo "ok: $what"
	fi
}

# wait_for TEXT [SECONDS]: until the screen contains TEXT (fixed string).
wait_for() {
	local text=$1 limit=${2:-10} i=0
	while [ $i -lt $((limit * 20)) ]; do
		if screen | grep -qF -- "$text"; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# wait_for_re REGEX [SECONDS]
wait_for_re() {
	local re=$1 limit=${2:-10} i=0
	while [ $i -lt $((limit * 20)) ]; do
		if screen | grep -qE -- "$re"; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# wait_for_all_re SECONDS REGEX... : one capture that matches every REGEX,
# left in $captured (a frame is drawn in pieces: two captures, or a capture
# taken after a wait that matched one line, may each hold part of it).
wait_for_all_re() {
	local limit=$1 i=0 re all
	shift
	while [ $i -lt $((limit * 20)) ]; do
		captured=$(screen)
		all=1
		for re in "$@"; do
			grep -qE -- "$re" <<<"$captured" || { all=0; break; }
		done
		[ $all = 1 ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# wait_var NAME VALUE [SECONDS]: until tmux's #{NAME} of the pane is VALUE
# (the terminal's cursor moves while a frame is drawn, and comes back).
wait_var() {
	local limit=${3:-10} i=0
	while [ $i -lt $((limit * 20)) ]; do
		[ "$(tvar "$1")" = "$2" ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# wait_gone TEXT [SECONDS]
wait_gone() {
	local text=$1 limit=${2:-10} i=0
	while [ $i -lt $((limit * 20)) ]; do
		if ! screen | grep -qF -- "$text"; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# expect_wait WHAT TEXT [SECONDS]
expect_screen() {
	checks=$((checks + 1))
	if ! wait_for "$1" "${2:-10}"; then
		fail "screen never showed '$1'"
		return 1
	fi
}

# Column of NEEDLE in a screen line (terminal widths), -1 if absent.
col_of() {
	printf '%s\n' "$1" | "$colof" -f "$2"
}

# Character at column COL of a screen line.
char_at() {
	printf '%s\n' "$1" | "$colof" -a "$2"
}

# The weight --dump prints for (layer, head, query, key), 0-based.
dump_weight() {
	local text=$1 model=$2 l=$3 h=$4 q=$5 k=$6
	"$bin" --dump --format tsv --text "$text" --model "$model" |
		awk -F'\t' -v l="$l" -v h="$h" -v q="$q" -v k="$k" \
			'NR > 1 && $1 == l && $2 == h && $3 == q && $4 == k { print $7 }'
}

# The number after "weight " in the details panel.
panel_weight() {
	screen | sed -n 's/.*│weight \([0-9.e-]*\).*/\1/p' | head -1
}

# close A B TOL: |A - B| <= TOL
close() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= t) }'
}

finish() {
	echo "$checks checks, $fails failed"
	[ "$fails" -eq 0 ]
}

# Backgrounds of the cells in columns [FROM, TO) of screen lines [Y0, Y1]
# (0-based), one per cell, as colof -b prints them ("5:N", "2:R,G,B", "-").
backgrounds() {
	local y0=$1 y1=$2 from=$3 to=$4
	screen_esc | sed -n "$((y0 + 1)),$((y1 + 1))p" | "$colof" -b "$from" "$to" | tr ' ' '\n'
}

# Number of distinct colours (not the default background) among them.
distinct_colours() {
	backgrounds "$@" | grep -v '^-$' | sort -u | wc -l
}

# Until the result for the text is on screen (the status line shows its time).
wait_result() {
	expect_screen_re '\| [0-9]+\.[0-9] ms \|' "${1:-10}"
}

expect_screen_re() {
	checks=$((checks + 1))
	if ! wait_for_re "$1" "${2:-10}"; then
		fail "screen never matched '$1'"
		return 1
	fi
}
