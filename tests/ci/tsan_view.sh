#!/usr/bin/env bash
# The real program's threads under ThreadSanitizer: in a
# -Db_sanitize=thread build, run the interactive view in tmux and drive it hard
# (typing faster than the worker computes, a paste, heads, layers, the
# overview, resizes), then quit. Passes when attnview exits 0 and TSan wrote
# no report. Nothing here depends on how fast the screen updates: the check is
# the race detector's, not the screen's. (The screen itself is tested by
# tests/tui/; the worker's protocol by test_worker, also under TSan.)
set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
command -v tmux >/dev/null || { echo "tmux not found"; exit 77; }
tmp=$(mktemp -d)
sock="attnview-tsan-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
runs=0
fails=0

run_view() { # NAME MODEL: one session
	local name=$1 model=$2
	rm -f "$tmp/tsan".*
	# A fresh server each time: one still shutting down would refuse.
	tmux -L "$sock" kill-server 2>/dev/null
	runs=$((runs + 1))
	sock="attnview-tsan-$$-$runs"
	tmux -L "$sock" -f /dev/null new-session -d -x 100 -y 30 \
		"env LC_ALL=C.UTF-8 TERM=xterm-256color OPENBLAS_NUM_THREADS=1 \
		TSAN_OPTIONS='halt_on_error=0 exitcode=66 log_path=$tmp/tsan' \
		$(printf '%q ' "$bin" --model "$model"); echo EXITED \$? >$tmp/status; sleep 60"
	local k=(tmux -L "$sock" send-keys)
	sleep 1
	"${k[@]}" -l '床前明月光，疑是地上霜。 the cat sat'
	for i in 1 2 3 4 5 6; do "${k[@]}" BSpace; "${k[@]}" -l "x$i"; done
	"${k[@]}" -l $'\e[200~pasted\ttext\r\nwith a line\e[201~'
	"${k[@]}" Tab Tab BTab C-n C-p Up Down Up
	"${k[@]}" Enter Down Down Right Right Up F3
	tmux -L "$sock" resize-window -x 60 -y 16 2>/dev/null
	"${k[@]}" F3 F2 Left Left F4 F6 F5
	tmux -L "$sock" resize-window -x 120 -y 40 2>/dev/null
	"${k[@]}" Escape C-u
	"${k[@]}" -l 'again'
	sleep 2
	"${k[@]}" C-q C-q
	local i
	for ((i = 0; i < 300; i++)); do
		[ -s "$tmp/status" ] && break
		sleep 0.1
	done
	local status
	status=$(cat "$tmp/status" 2>/dev/null)
	rm -f "$tmp/status"
	if [ "$status" != "EXITED 0" ] || ls "$tmp"/tsan.* >/dev/null 2>&1; then
		fails=$((fails + 1))
		echo "FAIL: $name: ${status:-did not exit}" >&2
		cat "$tmp"/tsan.* 2>/dev/null | head -80 >&2
		tmux -L "$sock" capture-pane -p >&2
	else
		echo "ok $name: no data race reported"
	fi
}

run_view masked "$data/golden/fwd_masked.attn"
run_view causal "$data/golden/fwd_causal.attn"
echo "tsan_view: 2 checks, $fails failed"
[ "$fails" -eq 0 ]
