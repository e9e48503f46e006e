#!/usr/bin/env bash
# Regenerates the figures in README.md and doc/design.md (assets/figures/*.png) with the real
# program's --export (a build with cairo and pango, and Debian's
# fonts-noto-cjk for the Chinese labels):
#
#   assets/figures.sh [build/src/attnview]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/src/attnview}
out=$here/figures
mkdir -p "$out"
line="床前明月光，疑是地上霜。"
poem="床前明月光，疑是地上霜。举头望明月，低头思故乡。"
en="Time flies like an arrow; fruit flies like a banana."

# figure NAME ARGS...: attnview --export out/NAME.png ARGS...
figure() {
	local name=$1
	shift
	"$bin" --export "$out/$name.png" --force "$@"
	echo "$out/$name.png: $(($(stat -c %s "$out/$name.png") / 1024)) KB"
}

# The commands doc/design.md shows, one for one.
figure head --text "$line" --layer 0 --head 3 --values
figure overview --overview --text "$poem"
figure words --words --show mean --layer 1 --text "我|爱|北京|天安门。I love Beijing."
figure compare --compare "她说他累了。" --text "他说她累了。" --values
# doc/why.md: the lens, the attribution, patching and the score split.
figure why-lens --lens --values --model builtin-causal --text "fruit flies like a banana"
figure why-dla --dla --model builtin-causal --text "fruit flies like a banana"
figure why-patch --patch "她说他累了。" --text "他说他累了。"
figure why-split --query 9 --key 2 --layer 1 --head 1 --text "$line"
# README.md and doc/timeline.md: how the built-in causal model's heads formed
# while it trained (the model carries its training timeline).
figure timeline-causal --timeline --model builtin-causal
# doc/timeline.md: the built-in masked model's heads sharpening in its
# --sharpen run.
figure timeline-masked --timeline
