#!/usr/bin/env bash
# The translations are complete and up to date with the sources:
#   - every source file with a marked message (_, N_, ngettext) is in
#     po/POTFILES;
#   - po/attnview.pot has exactly the messages xgettext finds in them now
#     (a new or changed message fails until `ninja -C build attnview-pot`);
#   - every language in po/LINGUAS passes msgfmt --check with no untranslated
#     and no fuzzy message, and translates every message of the sources.
set -u
root=${ATTNVIEW_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 1
for tool in xgettext msgfmt msgcat msgcmp; do
	if ! command -v "$tool" >/dev/null; then
		echo "$tool not found (apt-get install gettext): skipping"
		exit 77
	fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# 1. POTFILES lists every source with a marked message.
grep -v '^#' po/POTFILES | sed '/^$/d' | sort >"$tmp/listed"
find src -name '*.[ch]' -exec grep -l -E '(^|[^A-Za-z0-9_])(N?_|NC_|ngettext)\(' {} + | sort >"$tmp/marked"
missing=$(comm -13 "$tmp/listed" "$tmp/marked")
if [ -n "$missing" ]; then
	echo "FAIL: messages in files missing from po/POTFILES: $missing"
	fail=1
fi

# 2. The template is up to date (the keywords of po/meson.build).
xgettext --language=C --from-code=UTF-8 --keyword=_ --keyword=N_ --keyword=NC_:1c,2 \
	--keyword=ngettext:1,2 \
	--files-from=po/POTFILES --directory="$root" -o "$tmp/now.pot" || exit 1
msgids() { # the msgid and msgid_plural lines of a catalogue, sorted, without the header
	msgcat --no-wrap --no-location --sort-output "$1" |
		awk '/^msgid(_plural)? / { if ($0 != "msgid \"\"") print }' | sort
}
msgids "$tmp/now.pot" >"$tmp/now.ids"
msgids po/attnview.pot >"$tmp/pot.ids"
if ! diff -u "$tmp/pot.ids" "$tmp/now.ids" >"$tmp/pot.diff"; then
	echo "FAIL: po/attnview.pot is out of date with the sources (+ new, - gone):"
	grep '^[-+]msgid' "$tmp/pot.diff" | head -40
	echo "run: ninja -C build attnview-pot attnview-update-po, then translate"
	fail=1
fi

# 3. Each language: complete, no fuzzy, valid formats, every current message.
for lang in $(grep -v '^#' po/LINGUAS); do
	po=po/$lang.po
	stats=$(LC_ALL=C msgfmt --check --statistics -o "$tmp/$lang.mo" "$po" 2>&1) || {
		echo "FAIL: msgfmt --check $po:"
		echo "$stats"
		fail=1
		continue
	}
	echo "$lang: $stats"
	case $stats in
	*untranslated* | *fuzzy*)
		echo "FAIL: $po has untranslated or fuzzy messages"
		fail=1
		;;
	esac
	if ! LC_ALL=C msgcmp "$po" "$tmp/now.pot" 2>"$tmp/cmp"; then
		echo "FAIL: $po lacks translations of messages in the sources:"
		head -20 "$tmp/cmp"
		fail=1
	fi
done
[ "$fail" -eq 0 ] && echo "translations complete and up to date"
exit "$fail"
