#!/usr/bin/env bash
# Regenerates the screen pictures in README.md and doc/ (assets/screens/*.png) from the
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
	sleep "${SETTLE:-1}"
	"$shot" "$out/$name.png" -L "$sock" -t 0 >/dev/null
	tmux -L "$sock" kill-server
	echo "$out/$name.png"
}

screen map 120 32 -- --head 2 --text "$poem" -- Enter Down Down Right
screen values 200 60 -- --text "$poem" -- Enter F2 Down Right
screen overview 120 40 -- --text "$en" -- F3
SETTLE=6 screen compact 120 40 -- --cells compact --head 3 --text "$(printf '%s' "$en $poem $en")" -- Enter
screen breakdown 120 36 -- --head 3 --text "$poem" -- Enter Down Down Right F12
screen rollout 120 36 -- --layer 1 --show rollout --text "$en" -- Enter
# Why the causal model predicts the t after "frui" (Alt-L, row 29): the
# logit lens after each block and the heads' parts of the logit.
screen why 120 36 -- --model builtin-causal --layer 3 --text "$en" -- Enter \
	Down Down Down Down Down Down Down Down Down Down Down Down Down Down Down \
	Down Down Down Down Down Down Down Down Down Down Down Down Down Down M-l
# What layer 0, head 3 does from its weights alone (Alt-I): a strip of its
# positional QK profile peaking at -1, its copying score and maps, its QK
# table of the most frequent characters.
screen circuits 120 40 -- --layer 0 --head 3 --text "$poem" -- M-i
# The faithfulness meter at the i of "fruit" (Alt-U, row 29, which predicts the t): the keys whose
# blanking costs the most beside the head's weight, every head's Spearman;
# a pass per key on the worker, so the picture waits for it.
SETTLE=8 screen faith 120 36 -- --model builtin-causal --text "$en" -- Enter \
	Down Down Down Down Down Down Down Down Down Down Down Down Down Down Down \
	Down Down Down Down Down Down Down Down Down Down Down Down Down Down M-u
# Activation patching (Alt-X): 他 pinned (F9), the text's first character
# edited to 她, and the change of the last row's z(她) - z(他) with each head
# patched back.
screen patch 120 36 -- --text "他说他明天会来看我们。" -- F9 C-u "她说他明天会来看我们。" M-x \
	Enter S-End
# The causal model writing (Ctrl-G), caught after about a second: a character
# every 80 ms, each with its attention drawn and its Query row selected.
screen write 120 36 -- --model builtin-causal --layer 3 --seed 1 --text "床前明月光，" -- C-g

# The two-pane recipe of "Watching a model learn": a training run above, the
# view of its checkpoints below, in one tmux window (a tmux inside the pane
# that is pictured). Needs fortunes-zh for the corpus.
watch_screen() {
	local sock="attnview-watch-$$" inner="attnview-watch-inner-$$" dir
	dir=$(mktemp -d)
	local corpus=/usr/share/games/fortunes/tang300
	[ -f "$corpus" ] || { echo "watch: $corpus missing (apt-get install fortunes-zh)" >&2; return; }
	local train view
	train="cd $dir && $(printf '%q ' "$bin") --train $corpus -o poems.attn --layers 2 --heads 4 --dim 64 --steps 3000 --eval-every 100 --checkpoint-every 100; sleep 60"
	view="cd $dir && while [ ! -e poems.attn.ckpt ]; do sleep 0.2; done && $(printf '%q ' "$bin") --model poems.attn --text $(printf '%q' "$poem"); sleep 60"
	tmux -L "$sock" kill-server 2>/dev/null || true
	tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 44 \
		"env -u TMUX LC_ALL=C.UTF-8 TERM=xterm-256color tmux -L $inner -f /dev/null new-session \\; set -g status off \\; split-window -v -l 36 \"env TERM=xterm-256color sh -c '$view'\" \\; select-pane -t 0 \\; send-keys \"$train\" Enter"
	sleep "${WATCH_SECONDS:-60}"
	"$shot" "$out/watch.png" -L "$sock" -t 0 >/dev/null
	tmux -L "$inner" kill-server 2>/dev/null || true
	tmux -L "$sock" kill-server
	rm -rf "$dir"
	echo "$out/watch.png"
}
watch_screen
