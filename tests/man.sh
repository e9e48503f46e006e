#!/usr/bin/env bash
# The manual pages as a reader sees them: rendered with groff (as man(1) does),
# without warnings, without roff requests leaking into the text, and with the
# formulas of attnview(5) reading as intended. Skipped (77) without groff.
set -u
data=${ATTNVIEW_TEST_DATA:?set by meson}
man="$data/../man"
command -v groff >/dev/null || { echo "groff is not installed: skipped"; exit 77; }
export LC_ALL=C.UTF-8
fails=0 checks=0

fail() {
	fails=$((fails + 1))
	printf 'FAIL: %s\n' "$*" >&2
}

# render PAGE: plain UTF-8 text, no bold or underline, 80 columns.
render() {
	groff -k -man -Tutf8 -P-cbou -rLL=80n "$1" 2>/dev/null
}

for page in "$man/attnview.1" "$man/attnview.5"; do
	name=$(basename "$page")
	checks=$((checks + 1))
	warn=$(groff -k -man -Tutf8 -ww -z "$page" 2>&1)
	[ -z "$warn" ] || fail "$name: groff warns: $warn"
	# A request that lost its line start (".SH A.SH B") is printed as text.
	checks=$((checks + 1))
	leak=$(render "$page" | grep -nE '\.(SH|SS|TP|PP|IP|EX|EE|TH)( |$)')
	[ -z "$leak" ] || fail "$name: roff requests in the rendered text: $leak"
done

# flat PAGE: the rendered page on one line, runs of spaces made one.
flat() {
	render "$1" | tr '\n' ' ' | tr -s ' '
}
# has PAGE TEXT: the rendered page contains TEXT (line breaks as spaces).
has() {
	checks=$((checks + 1))
	grep -qF -- "$2" <<<"$(flat "$1")" || fail "$(basename "$1"): no \"$2\" in the rendered page"
}

has "$man/attnview.5" "L×h×T^2 ≤ 2^27 (134217728"
has "$man/attnview.5" "P = V×d + L×(12d^2 + 13d) + 2d + V"

echo "man: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
