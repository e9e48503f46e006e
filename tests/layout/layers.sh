#!/usr/bin/env bash
# The direction of the layers (src/meson.build), checked on every #include of
# the sources: core includes only core headers and no curses; render adds its
# own (never train's or the view's); train adds its own (never render's); the
# view's first library (worker, input line) has neither curses nor render; the
# view never includes a train header; tools include nothing of the project.
# tests/layout/layers_planted.sh plants includes against the direction and checks
# that this fails on each.
set -u
root=${1:-$(dirname "$0")/../..}
cd "$root" || exit 1
fail=0
core_h="common i18n tokenizer vocab ops attn_products parallel model result infer binio modelfile atomicfile blas rng analysis select explain lens circuits faith patch score_split generate input encoding verdict timeline lab_positions"
render_h="colormap scale figure dump"
train_h="corpus backward train_step optimizer checkpoint train_options train lab"

check() { # LABEL FILES ALLOWED_ATTNVIEW_HEADERS ALLOW_CURSES ALLOW_LOCAL
	local label=$1 files=$2 allowed=$3 curses=$4 local_ok=$5 f inc name line
	[ -n "$files" ] || return 0 # (grep without files would read stdin)
	# One grep for the layer's files (a grep a file took two seconds a run):
	# FILE:LINE for every #include (no source file name holds a colon).
	# shellcheck disable=SC2086 # the file list splits into names
	while IFS= read -r line; do
		f=${line%%:*} inc=${line#*:}
		case $inc in
		*'<curses.h>'* | *'<ncurses'*)
			[ "$curses" = yes ] || { echo "$f: $label may not use curses: $inc"; fail=1; } ;;
		*'"attnview/'*)
			name=?
			[[ $inc =~ \"attnview/([a-z0-9_]+)\.h\" ]] && name=${BASH_REMATCH[1]}
			case " $allowed " in
			*" $name "*) ;;
			*) echo "$f: $label may not include attnview/$name.h"; fail=1 ;;
			esac ;;
		*'"'*)
			name=?
			[[ $inc =~ \"([^\"]+)\" ]] && name=${BASH_REMATCH[1]}
			case " $local_ok " in
			*" $name "*) ;;
			*) echo "$f: $label may not include \"$name\""; fail=1 ;;
			esac ;;
		esac
	done < <(grep -s -H -E '^[[:space:]]*#[[:space:]]*include' $files)
}

view_base="src/view/worker.c src/view/worker_job.c src/view/worker.h src/view/worker_internal.h
	src/view/lineedit.c src/view/lineedit.h"
view_rest=$(ls src/view/*.c src/view/*.h | grep -v -E 'src/view/(worker|worker_job|worker_internal|lineedit)\.[ch]$')
view_local=$(cd src/view && ls *.h | tr '\n' ' ')

# The public headers of a layer (a brace list would not expand a variable).
headers() {
	local h
	for h in "$@"; do echo "include/attnview/$h.h"; done
}

# shellcheck disable=SC2086 # the header lists split into names
check core "$(ls src/core/*.c src/core/*.h; headers $core_h)" \
	"$core_h" no "vec8.h tokenizer_internal.h infer_internal.h roles_internal.h"
# shellcheck disable=SC2086
check render "$(ls src/render/*.c src/render/*.h src/render/*/*.c; headers $render_h)" \
	"$core_h $render_h" no "colormap_tables.h json_out.h dump_explain.h figure_draw.h chart.h"
check train "$(ls src/train/*.c src/train/*.h 2>/dev/null)" "$core_h $train_h" no "vec8.h corpus_internal.h train_internal.h"
check "the view's worker and input line" "$view_base" "$core_h" no "worker.h worker_internal.h lineedit.h"
check view "$view_rest" "$core_h $render_h" yes "$view_local"
for h in $train_h; do
	[ -f include/attnview/$h.h ] && check train include/attnview/$h.h "$core_h $train_h" no ""
done
check tools "$(ls tools/*.c)" "" no ""

# Every public header belongs to a layer.
for f in include/attnview/*.h; do
	name=$(basename "$f" .h)
	case " $core_h $render_h $train_h " in
	*" $name "*) ;;
	*) echo "$f: not listed in a layer of tests/layout/layers.sh"; fail=1 ;;
	esac
done
if [ $fail = 0 ]; then echo "layers: every include goes down the layers"; fi
exit $fail
