#!/usr/bin/env bash
# The direction of the layers (src/meson.build), checked on every #include of
# the sources: core includes only core headers and no curses; train adds its
# own; the view's first library (worker, input line) has no curses; the view
# never includes a train header; tools include nothing of the project.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 1
fail=0
core_h="common i18n tokenizer vocab ops parallel model infer modelfile atomicfile dump colormap scale blas rng analysis explain figure generate input encoding verdict"
train_h="corpus backward train_step optimizer checkpoint train"

check() { # LABEL FILES ALLOWED_ATTNVIEW_HEADERS ALLOW_CURSES ALLOW_LOCAL
	local label=$1 files=$2 allowed=$3 curses=$4 local_ok=$5 f inc name
	for f in $files; do
		[ -f "$f" ] || continue
		while IFS= read -r inc; do
			case $inc in
			*'<curses.h>'* | *'<ncurses'*)
				[ "$curses" = yes ] || { echo "$f: $label may not use curses: $inc"; fail=1; } ;;
			*'"attnview/'*)
				name=$(sed -E 's/.*"attnview\/([a-z0-9_]+)\.h".*/\1/' <<<"$inc")
				case " $allowed " in
				*" $name "*) ;;
				*) echo "$f: $label may not include attnview/$name.h"; fail=1 ;;
				esac ;;
			*'"'*)
				name=$(sed -E 's/.*"([^"]+)".*/\1/' <<<"$inc")
				case " $local_ok " in
				*" $name "*) ;;
				*) echo "$f: $label may not include \"$name\""; fail=1 ;;
				esac ;;
			esac
		done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$f")
	done
}

view_base="src/view/worker.c src/view/worker.h src/view/lineedit.c src/view/lineedit.h"
view_rest=$(ls src/view/*.c src/view/*.h | grep -v -E 'src/view/(worker|lineedit)\.[ch]$')
view_local=$(cd src/view && ls *.h | tr '\n' ' ')

check core "$(ls src/core/*.c src/core/*.h include/attnview/{${core_h// /,}}.h 2>/dev/null)" \
	"$core_h" no "vec8.h colormap_tables.h json_out.h dump_explain.h figure_draw.h tokenizer_internal.h"
check train "$(ls src/train/*.c src/train/*.h 2>/dev/null)" "$core_h $train_h" no "vec8.h corpus_internal.h train_internal.h"
check "the view's worker and input line" "$view_base" "$core_h" no "worker.h lineedit.h"
check view "$view_rest" "$core_h" yes "$view_local"
for h in $train_h; do
	[ -f include/attnview/$h.h ] && check train include/attnview/$h.h "$core_h $train_h" no ""
done
check tools "$(ls tools/*.c)" "" no ""

# Every public header belongs to a layer.
for f in include/attnview/*.h; do
	name=$(basename "$f" .h)
	case " $core_h $train_h " in
	*" $name "*) ;;
	*) echo "$f: not listed in a layer of tests/layers.sh"; fail=1 ;;
	esac
done
if [ $fail = 0 ]; then echo "layers: every include goes down the layers"; fi
exit $fail
