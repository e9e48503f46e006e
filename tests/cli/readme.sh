#!/usr/bin/env bash
# README.md stays a newcomer's page: under 320 lines; the
# quick start's two commands (the install-build-run line and tests/run.sh);
# every key it names (<kbd>...</kbd>) is a key of the view (src/view/keys.h);
# every file and picture it or a doc/ page links exists, and every #anchor
# names a heading of the page it points to; every page of doc/ is installed.
set -u
root=${1:-$(dirname "$0")/../..}
cd "$root" || exit 1
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

n=$(wc -l <README.md)
[ "$n" -lt 320 ] || bad "README.md has $n lines: keep it under 320 (details go to doc/)"

quick=$(sed -n '/^## Quick start/,/^## /p' README.md)
grep -qF 'apt-get install -y meson' <<<"$quick" &&
	grep -qF 'meson setup build && ninja -C build && ./build/src/attnview' <<<"$quick" ||
	bad "README.md's Quick start lost its first command (install, build, run)"
grep -qx 'tests/run.sh' <<<"$quick" || bad "README.md's Quick start lost its second command, tests/run.sh"

while IFS= read -r key; do
	grep -qF "\"$key\"" src/view/keys.h ||
		bad "README.md names the key $key, which src/view/keys.h does not have"
done < <(grep -o '<kbd>[^<]*</kbd>' README.md | sed 's/<[/]*kbd>//g' | sort -u)

# slug TEXT: the anchor a heading gets (GitHub's rule: lower case, spaces to
# hyphens, punctuation dropped; other letters kept).
slug() {
	sed -E 's/^#+ +//; s/[A-Z]/\L&/g; s/[]!"#$%&'"'"'()*+,./:;<=>?@[\\^_`{|}~·×—]//g; s/ /-/g' <<<"$1"
}

# Links of the pages: [text](target) and ![alt](target), not URLs.
for page in README.md doc/*.md; do
	dir=$(dirname "$page")
	while IFS= read -r link; do
		target=${link%%#*}
		anchor=
		[ "$target" != "$link" ] && anchor=${link#*#}
		file=$page
		if [ -n "$target" ]; then
			file="$dir/$target"
			[ -e "$file" ] || { bad "$page links $target, which does not exist"; continue; }
		fi
		[ -n "$anchor" ] || continue
		found=0
		while IFS= read -r h; do
			[ "$(slug "$h")" = "$anchor" ] && { found=1; break; }
		done < <(grep -E '^#+ ' "$file")
		[ $found = 1 ] || bad "$page links $link: $file has no heading with that anchor"
	done < <(grep -oE '\]\([^)]+\)' "$page" | sed -E 's/^\]\(//; s/\)$//' |
		grep -vE '^(https?|mailto):')
done
# Every page of doc/ is installed beside README (doc/meson.build lists them).
for page in doc/*.md; do
	grep -qF "'$(basename "$page")'" doc/meson.build ||
		bad "$page is not in doc/meson.build's list: it would not be installed"
done
[ $fail = 0 ] && echo "readme: $n lines; its commands, keys, links and pictures hold"
exit $fail
