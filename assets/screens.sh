#!/usr/bin/env bash
# Regenerates the screen pictures in README.md (assets/screens/*.png) from the
# real program: each runs attnview in a tmux pane of a given size, sends keys,
# and turns the pane into a PNG with a pane-to-PNG tool (SCREENSHOT, a command
# taking "OUT.png -L SOCKET -t PANE"; the workplace's ../shared/tools/screenshot
# draws every cell on an exact grid with headless Chromium).
#
#   SCREENSHOT=../shared/tools/screenshot assets/screens.sh [build/src/attnview]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/src/attnview}
shot=${SCREENSHOT:?set SCREENSHOT to a pane-to-PNG tool (OUT.png -L SOCKET -t PANE)}
out=$here/screens
mkdir -p "$out"
poem="床前明月光，疑是地上霜。举头望明月，低头思故乡。"
en="Time flies like an arrow; fruit flies like a banana, said the old teacher."

# screen NAME COLS LINES [ENV=VALUE...] -- ARGS... -- KEYS...
screen() {
	local name=$1 cols=$2 lines=$3 sock="attnview-screens-$$"
	shift 3
	local envs=() args=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	while [ "$1" != "--" ]; do args+=("$1"); shift; done
	shift
	local cmd
	cmd="env LC_ALL=C.UTF-8 TERM=xterm-256color ${envs[*]} $(printf '%q ' "$bin" "${args[@]}"); sleep 60"
	tmux -L "$sock" kill-server 2>/dev/null || true
	tmux -L "$sock" -f /dev/null new-session -d -x "$cols" -y "$lines" "$cmd"
	sleep 2
	local k
	for k in "$@"; do
		tmux -L "$sock" send-keys "$k"
		sleep 0.3
	done
	sleep 1
	"$shot" "$out/$name.png" -L "$sock" -t 0 >/dev/null
	tmux -L "$sock" kill-server
	echo "$out/$name.png"
}

screen map 120 32 -- --text "$poem" -- Enter Down Down Right
screen values 200 60 -- --text "$poem" -- Enter F2 Down Right
screen overview 120 40 -- --text "$en" -- F3
screen compact 120 40 -- --head 1 --text "$(printf '%s' "$en $poem $en")" -- Enter
screen breakdown 120 36 -- --head 1 --text "$poem" -- Enter Down Down Right F12
screen rollout 120 36 -- --layer 1 --show rollout --text "$en" -- Enter
