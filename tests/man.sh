#!/usr/bin/env bash
# The manual pages as a reader sees them: rendered with groff (as man(1) does),
# without warnings, without roff requests leaking into the text, and with the
# formulas of attnview(5) reading as intended, and the page's cleaning examples
# what the program does. Skipped (77) without groff.
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

# The cleaning examples of attnview(5), TOKENS: every text through the
# program gives the tokens the page says. The table starts at its header line
# "text  tokens" and ends at the blank line after it; its columns are two or
# more spaces apart, both written as bash's printf %b reads them.
bin=${ATTNVIEW_BIN:?set by meson}
model="$data/golden/fwd_masked.attn"
# codepoints TEXT: its codepoints in hex, space-separated.
codepoints() {
	printf '%s' "$1" | iconv -f UTF-8 -t UTF-32LE | od -An -v -tx4 | tr -s ' \n' '  ' |
		sed 's/^ //; s/ $//; s/\b0*\([0-9a-f]\)/\1/g'
}
table=$(render "$man/attnview.5" | sed -n '/^ *text  *tokens$/,/^$/p' | sed '1d;$d')
examples=0
while IFS= read -r line; do
	line=${line#"${line%%[! ]*}"}
	in=${line%%  *}
	out=${line#"$in"}
	out=${out#"${out%%[! ]*}"}
	printf -v text '%b' "$in"
	printf -v want '%b' "$out"
	examples=$((examples + 1))
	checks=$((checks + 1))
	got=$("$bin" --dump --top 0 --text "$text" --model "$model" 2>/dev/null |
		grep -o '"codepoint": [0-9]*' | while read -r _ cp; do printf '%x ' "$cp"; done)
	got=${got% }
	[ "$got" = "$(codepoints "$want")" ] ||
		fail "attnview(5) TOKENS: '$in' gives codepoints [$got], the page says '$out' [$(codepoints "$want")]"
done <<<"$table"
checks=$((checks + 1))
[ "$examples" -ge 20 ] || fail "attnview(5) TOKENS: $examples cleaning examples found, want 20 or more"

echo "man: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
