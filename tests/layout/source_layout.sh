#!/usr/bin/env bash
# doc/design.md's "Source layout" table in step with the tree: every source file
# (.c) under src/ is named in the section of its folder, and every file the
# table names there exists. A section starts at the table's bold row for the
# folder (| **`src/core/`** | ...) and runs to the next bold row; a file is
# named in backquotes, relative to the folder (`cairo/figure_cairo.c`), in
# the first two columns.
# Every module has a test: one named after it (tests/unit/test_MODULE.c,
# tests/cli/MODULE.sh, tests/tui/MODULE.sh, tests/screens/MODULE.script), or
# its row's third column names the test that covers it, as a path under
# tests/ followed by the modules it covers: `unit/test_tokenizer.c` (cleaner,
# tokenizer). Every path that column names exists.
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
			# the path and what columns; the third names tests
			n = split($0, cell, " [|] ")
			line = cell[1] " " cell[2]
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
# listed: "DIR MODULE" for every module a row of src/DIR/ names and its
# tests column lists after a test: `PATH` (..., MODULE, ...).
listed=$(awk '
	/^\| \*\*`src\// { dir = $0; sub(/^\| \*\*`src\//, "", dir); sub(/\/`.*/, "", dir) }
	/^\| \*\*`/ && !/^\| \*\*`src\// { dir = "" }
	dir != "" {
		n = split($0, cell, " [|] ")
		if (n < 3) next
		files = cell[1] " " cell[2]
		tests = cell[3]
		while (match(tests, /`[^`]+` [(][^)]*[)]/)) {
			item = substr(tests, RSTART, RLENGTH)
			tests = substr(tests, RSTART + RLENGTH)
			sub(/^`[^`]+` [(]/, "", item)
			sub(/[)]$/, "", item)
			k = split(item, mods, ", ")
			# a module the row names
			for (i = 1; i <= k; i++)
				if (match(files, "[`/]" mods[i] "[.]c`"))
					print dir " " mods[i]
		}
	}' <<<"$table" | sort -u)
declare -A is_listed=()
while read -r d m; do
	[ -n "$d" ] && is_listed["$d $m"]=1
done <<<"$listed"

# A test named after the module.
own_test() {
	local m=$1
	[ -f "tests/unit/test_$m.c" ] || [ -f "tests/cli/$m.sh" ] || [ -f "tests/tui/$m.sh" ] ||
		[ -f "tests/screens/$m.script" ]
}

for d in src/*/; do
	dir=$(basename "$d")
	while IFS= read -r f; do
		m=${f##*/}
		m=${m%.c}
		own_test "$m" || [ -n "${is_listed["$dir $m"]:-}" ] || {
			echo "FAIL: $f has no test named after it (tests/unit/test_$m.c) and its row in" \
				"$readme's Source layout names none: add one, or name the test that covers it" \
				"in the row's third column, as \`unit/test_x.c\` ($m)"
			fail=1
		}
	done < <(find "src/$dir" -name '*.c' | sort)
done
# Every test the third column names is there.
while IFS= read -r t; do
	[ -e "tests/$t" ] ||
		{ echo "FAIL: $readme's Source layout names the test tests/$t, which does not exist"; fail=1; }
done < <(awk '/^\| path / { next } { n = split($0, cell, " [|] "); if (n < 3) next; line = cell[3]
	while (match(line, /`[^`]+`/)) { print substr(line, RSTART + 1, RLENGTH - 2)
		line = substr(line, RSTART + RLENGTH) } }' <<<"$table" | sort -u)

# debian/copyright names files by path; one that moved makes lintian warn
# (superfluous-file-pattern) only at the end of the package build.
while IFS= read -r pat; do
	case $pat in *'*'*) continue ;; esac
	[ -e "$pat" ] ||
		{ echo "FAIL: debian/copyright names $pat, which does not exist"; fail=1; }
done < <(awk '/^Files:/ { sub(/^Files:/, ""); inf = 1 }
	/^[A-Z][A-Za-z-]*:/ && !/^Files:/ { inf = 0 }
	inf { for (i = 1; i <= NF; i++) print $i }' debian/copyright)
[ $fail = 0 ] && echo "source layout: doc/design.md names every source file, and only those, and a test of each module; debian/copyright's paths exist"
exit $fail
