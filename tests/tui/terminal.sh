#!/usr/bin/env bash
# The terminal around the view: resizing at any time, a too-small terminal,
# 256 colours, 8 colours (shade characters), NO_COLOR (no colour at all), and
# the screen restored on every way out: Ctrl-Q, Ctrl-C, SIGTERM, a crash.
# Also the messages for a non-terminal and a non-UTF-8 locale.
. "$(dirname "$0")/lib.sh"

text="床前明月光 the moon"

# Resizing: smaller than the minimum gives a message, larger brings it back.
tui_start 120 40 TERM=xterm-256color -- --model "$model_masked" --text "$text"
expect_screen "Query 0 "
tmux -L "$sock" resize-window -x 40 -y 10
check "too-small message" wait_for "Terminal too small (40x10)"
check "no heatmap drawn in a too-small terminal" wait_gone "Query 0 "
tmux -L "$sock" resize-window -x 90 -y 24
check "view back after enlarging" wait_for "Query 0 "
check "status line on the new last line" wait_for_re "^ TYPE \| golden fwd_masked"
check "status is line 23" grep -q "^ TYPE |" <<<"$(line 23)"
keys Enter Down Down Right
check "keys work after resizing" wait_for "Query 2 "
tmux -L "$sock" resize-window -x 60 -y 16
check "narrow: panel dropped, map still drawn" wait_for_re "^▶ +2 "

# Started too small: the message, and Ctrl-Q still quits cleanly.
tui_start 30 8 TERM=xterm-256color -- --model "$model_masked"
check "too small from the start" wait_for "Terminal too small"
keys C-q
check "Ctrl-Q quits from the too-small screen" wait_for "EXITED 0"

# 256 colours: the cells are painted with the ramp.
tui_start 100 30 TERM=xterm-256color -- --model "$model_masked" --text "$text"
expect_screen "Query 0 "
check "256-colour backgrounds in the heatmap" grep -q $'\e\\[48;5;' <<<"$(screen_esc)"
check "no 24-bit suggestion where nothing says the terminal has it" \
	bash -c '! grep -q COLORTERM <<<"$1"' _ "$(line 1)"
# A terminal that says in its own variable that it shows 24-bit colour, with
# no COLORTERM: the info line says how to get the exact ramp.
tui_start 100 30 TERM=xterm-256color VTE_VERSION=7600 -- --model "$model_masked" --text "$text"
expect_screen "Query 0 "
check "COLORTERM suggested on a VTE terminal" \
	grep -q "24-bit colour: start with COLORTERM=truecolor (VTE_VERSION=7600)" <<<"$(line 1)"

# 8 colours: shade characters carry the weights.
tui_start 100 30 TERM=xterm -- --model "$model_masked" --text "$text"
expect_screen "Query 0 "
s=$(screen)
check "shade characters on an 8-colour terminal" grep -qE '[░▒▓█]' <<<"$s"
check "no 256-colour codes on an 8-colour terminal" bash -c '! grep -q "5;[0-9]*m" <<<"$1"' _ "$(screen_esc)"
check "colour bar with shades" grep -qE '[░▒▓█ ]{2}╴1' <<<"$s"
check "the info line says why shades" grep -q "has 8 colours" <<<"$s"

# NO_COLOR (any non-empty value): shades, and not a single colour code.
tui_start 100 30 TERM=xterm-256color NO_COLOR=1 -- --model "$model_masked" --text "$text"
expect_screen "Query 0 "
s=$(screen)
e=$(screen_esc)
check "shade characters under NO_COLOR" grep -qE '[░▒▓█]' <<<"$s"
check "no colour codes at all under NO_COLOR" \
	bash -c '! grep -qE $'"'"'\e\[([0-9;]*;)?(3[0-8]|4[0-8]|9[0-7]|10[0-7])(;[0-9;]*)?m'"'"' <<<"$1"' _ "$e"
keys Enter F2
check "values mode under NO_COLOR" wait_for_re "(\.[0-9]{3}|1\.00)"

# A slow model (4 s per pass): the keystroke is on screen while the result is
# still being computed, with the "computing" mark; then the result arrives.
# One capture holds both the echo and the mark (the status line's, not the
# details panel's "computing...", which stands there while predictions are
# pending), and serves the check of the old result: a frame drawn in
# pieces cannot split them, nor can a busy machine let the result land
# between two captures.
tui_start 100 30 TERM=xterm-256color ATTNVIEW_TEST_DELAY_MS=4000 -- --model "$model_masked" --text "ab" --cells scroll
expect_screen "Query 0 " 20
type_text "c"
checks=$((checks + 1))
if wait_for_all_re 5 '^ TYPE \|.*computing\.\.\. *$' '^text> abc$'; then
	check "old result still shown while computing" \
		grep -qE "^ +a b +÷max *│" <<<"$(sed -n 5p <<<"$captured")"
else
	fail "not echoed while computing: no screen with \"text> abc\" and the computing mark"
fi
check "result for the new text arrives" wait_for_re "^ +a b c +÷max *│" 15
check "computing mark gone" wait_gone "computing..." 5

# restored: after attnview exits, the pane is back on the normal screen with a
# visible cursor, mouse reporting and bracketed paste off.
restored() {
	local how=$1 status=$2
	checks=$((checks + 1))
	if ! wait_for "EXITED $status" 10; then
		fail "$how: did not exit with status $status"
		return
	fi
	check "$how: alternate screen left" test "$(tvar alternate_on)" = 0
	check "$how: cursor visible" test "$(tvar cursor_flag)" = 1
	check "$how: mouse reporting off" test "$(tvar mouse_any_flag)$(tvar mouse_standard_flag)$(tvar mouse_sgr_flag)" = 000
	# With bracketed paste still on, the tty would echo the bracket codes.
	tmux -L "$sock" set-buffer -b p "PASTED"
	tmux -L "$sock" paste-buffer -p -b p
	check "$how: bracketed paste off" wait_for "PASTED" 3
	check "$how: no bracket codes" bash -c '! grep -q "200~" <<<"$1"' _ "$(screen)"
}

attnview_pid() {
	pgrep -P "$pane_pid" -x attnview | head -1
}

start_and_wait() {
	tui_start 100 30 TERM=xterm-256color -- --model "$model_masked" --text "$text"
	expect_screen "Query 0 "
	check "alternate screen on while running" test "$(tvar alternate_on)" = 1
}

start_and_wait
keys Enter q
check "q types on the map, it does not quit" wait_for "text> ${text}q"
keys C-q
check "Ctrl-Q with text asks" wait_for "Quit?"
keys C-q
restored "Ctrl-Q, Ctrl-Q" 0

start_and_wait
keys C-c
check "Ctrl-C with text asks, as Ctrl-Q does" wait_for "Quit?"
check "Ctrl-C with text does not quit at once" test -n "$(attnview_pid)"
keys C-c
restored "Ctrl-C, Ctrl-C" 130

start_and_wait
kill -TERM "$(attnview_pid)"
restored "SIGTERM" 143

start_and_wait
kill -HUP "$(attnview_pid)"
restored "SIGHUP" 129

start_and_wait
kill -SEGV "$(attnview_pid)"
restored "a crash (SIGSEGV)" 139

start_and_wait
kill -ABRT "$(attnview_pid)"
restored "an abort (SIGABRT)" 134

# Not a terminal, not UTF-8: a clear message, exit status 2.
checks=$((checks + 1))
out=$("$bin" --model "$model_masked" </dev/null 2>&1)
st=$?
if [ $st -ne 2 ] || ! grep -q "needs a terminal" <<<"$out"; then
	fail "not a terminal: status $st, '$out'"
fi
tui_start 100 30 TERM=xterm-256color LC_ALL=C -- --model "$model_masked"
check "non-UTF-8 locale explained" wait_for "not UTF-8"
check "non-UTF-8 locale: status 2" wait_for "EXITED 2"
tui_start 100 30 TERM=dumb -- --model "$model_masked"
check "dumb terminal explained" wait_for "TERM is dumb"

finish
