#!/usr/bin/env bash
# doc/design.md's "Source layout" table in step with the tree: every source file
# (.c) under src/ is named in the section of its folder, and every file the
# table names there exists. A section starts at the table's bold row for the
# folder (| **`src/core/`** | ...) and runs to the next bold row; a file is
# named in backquotes, relative to the folder (`cairo/figure_cairo.c`).
set -u
root=${1:-$(dirname "$0")/../..}
cd "$root" || exit 1
readme=doc/design.md
fail=0

table=$(sed -n '/^## Source layout/,/^## /p' "$readme" | grep '^|')
[ -n "$table" ] || { echo "FAIL: $readme has no Source layout table"; exit 1; }

# named DIR: the files the section of src/DIR/ names, one a line.
named() {
	awk -v dir="$1" '
		/^\| \*\*`/ { insec = index($0, "**`src/" dir "/`**") > 0 }
		insec {
			line = $0
			while (match(line, /`[A-Za-z0-9_\/.-]+\.[ch]`/)) {
				print substr(line, RSTART + 1, RLENGTH - 2)
				line = substr(line, RSTART + RLENGTH)
			}
		}' <<<"$table" | sort -u
}

for d in src/*/; do
	dir=$(basename "$d")
	if ! grep -qF "**\`src/$dir/\`**" <<<"$table"; then
		echo "FAIL: src/$dir/ has no section in $readme's Source layout"
		fail=1
		continue
	fi
	list=$(named "$dir")
	# Every .c of the folder (and of its subfolders) is named ...
	while IFS= read -r f; do
		rel=${f#"src/$dir/"}
		grep -qxF -- "$rel" <<<"$list" ||
			{ echo "FAIL: $f is not in $readme's Source layout (section src/$dir/)"; fail=1; }
	done < <(find "src/$dir" -name '*.c' | sort)
	# ... and every file named is there.
	while IFS= read -r rel; do
		[ -n "$rel" ] || continue
		[ -f "src/$dir/$rel" ] ||
			{ echo "FAIL: $readme's Source layout names src/$dir/$rel, which does not exist"; fail=1; }
	done <<<"$list"
done
# debian/copyright names files by path; one that moved makes lintian warn
# (superfluous-file-pattern) only at the end of the package build.
while IFS= read -r pat; do
	case $pat in *'*'*) continue ;; esac
	[ -e "$pat" ] ||
		{ echo "FAIL: debian/copyright names $pat, which does not exist"; fail=1; }
done < <(awk '/^Files:/ { sub(/^Files:/, ""); inf = 1 }
	/^[A-Z][A-Za-z-]*:/ && !/^Files:/ { inf = 0 }
	inf { for (i = 1; i <= NF; i++) print $i }' debian/copyright)
[ $fail = 0 ] && echo "source layout: doc/design.md names every source file, and only those; debian/copyright's paths exist"
exit $fail
