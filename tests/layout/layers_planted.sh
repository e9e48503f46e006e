#!/usr/bin/env bash
# tests/layout/layers.sh catches an include against the direction of the layers: a
# copy of the tree passes, then each planted include (one at a time, in a
# fresh copy) must fail it with a message naming the file and the header.
set -u
root=${1:-$(dirname "$0")/../..}
root=$(cd "$root" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

fresh() {
	rm -rf "$tmp/tree"
	mkdir -p "$tmp/tree/tests/layout"
	cp -r "$root/src" "$root/include" "$root/tools" "$tmp/tree/"
	cp "$root/tests/layout/layers.sh" "$tmp/tree/tests/layout/"
}

fresh
if ! out=$(bash "$tmp/tree/tests/layout/layers.sh" "$tmp/tree" 2>&1); then
	echo "FAIL: the unchanged tree does not pass tests/layout/layers.sh:"
	echo "$out"
	exit 1
fi

# plant FILE INCLUDE EXPECTED: FILE gets "#include INCLUDE"; layers.sh must
# fail and print EXPECTED.
plant() {
	local file=$1 inc=$2 want=$3 out
	fresh
	if [ ! -f "$tmp/tree/$file" ]; then
		echo "FAIL: $file is gone: update tests/layout/layers_planted.sh"
		fail=1
		return
	fi
	printf '#include %s\n' "$inc" >>"$tmp/tree/$file"
	if out=$(bash "$tmp/tree/tests/layout/layers.sh" "$tmp/tree" 2>&1); then
		echo "FAIL: $file including $inc passes tests/layout/layers.sh"
		fail=1
	elif ! grep -qF -- "$want" <<<"$out"; then
		echo "FAIL: $file including $inc: expected '$want', got:"
		echo "$out"
		fail=1
	else
		echo "ok: $want"
	fi
}

plant src/core/model.c '"attnview/figure.h"' 'src/core/model.c: core may not include attnview/figure.h'
plant src/core/infer.c '"attnview/dump.h"' 'src/core/infer.c: core may not include attnview/dump.h'
plant include/attnview/analysis.h '"attnview/scale.h"' \
	'include/attnview/analysis.h: core may not include attnview/scale.h'
plant src/core/modelfile.c '"json_out.h"' 'src/core/modelfile.c: core may not include "json_out.h"'
plant src/train/train.c '"attnview/colormap.h"' 'src/train/train.c: train may not include attnview/colormap.h'
plant src/render/figure.c '"attnview/train.h"' 'src/render/figure.c: render may not include attnview/train.h'
plant src/render/dump.c '"state.h"' 'src/render/dump.c: render may not include "state.h"'
plant src/render/scale.c '<curses.h>' 'src/render/scale.c: render may not use curses'
plant src/render/cairo/figure_cairo.c '"attnview/train.h"' \
	'src/render/cairo/figure_cairo.c: render may not include attnview/train.h'
plant src/view/worker.c '"attnview/figure.h"' \
	"src/view/worker.c: the view's worker and input line may not include attnview/figure.h"
plant src/view/heatmap.c '"attnview/corpus.h"' 'src/view/heatmap.c: view may not include attnview/corpus.h'
exit $fail
