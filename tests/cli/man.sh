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

zh="$man/zh_CN"
for page in "$man/attnview.1" "$man/attnview.5" "$zh/attnview.1" "$zh/attnview.5"; do
	name=${page#"$man/"}
	checks=$((checks + 1))
	warn=$(groff -k -man -Tutf8 -ww -z "$page" 2>&1)
	[ -z "$warn" ] || fail "$name: groff warns: $warn"
	# A request that lost its line start (".SH A.SH B") is printed as text.
	checks=$((checks + 1))
	leak=$(render "$page" | grep -nE '\.(SH|SS|TP|PP|IP|EX|EE|TH)( |$)')
	[ -z "$leak" ] || fail "$name: roff requests in the rendered text: $leak"
	# A merge that kept both sides of a change leaves a section, or a
	# paragraph of one, twice.
	checks=$((checks + 1))
	twice=$(grep -E '^\.S[HS] ' "$page" | sort | uniq -d)
	[ -z "$twice" ] || fail "$name: a heading twice: $twice"
	checks=$((checks + 1))
	twice=$(awk 'length($0) >= 40 && length(p1) >= 40 && length(p2) >= 40 {
		w = p2 "\n" p1 "\n" $0; if (w in seen) { print FNR ": " $0; exit } seen[w] = 1 }
		{ p2 = p1; p1 = $0 }' "$page")
	[ -z "$twice" ] || fail "$name: three lines twice (a paragraph kept twice?) at line $twice"
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

# The Chinese pages break their lines between Chinese characters (zh.tmac): a
# rendered line wider than 80 columns is one of the English page's (an example
# too long for any page), never a paragraph of Chinese left unbroken.
for page in attnview.1 attnview.5; do
	checks=$((checks + 1))
	# Lines of the English page set aside first; one wc -L over the rest,
	# and only when it finds a wide line, line by line to name them (a wc
	# for every line took minutes on a loaded machine).
	rest=$(render "$zh/$page" | grep -vxF -f <(render "$man/$page"))
	wide=
	if [ "$(printf '%s\n' "$rest" | wc -L)" -gt 80 ]; then
		wide=$(printf '%s\n' "$rest" | while IFS= read -r line; do
			[ "$(printf '%s' "$line" | wc -L)" -le 80 ] || printf '%s\n' "$line"
		done | head -3)
	fi
	[ -z "$wide" ] || fail "zh_CN/$page: lines wider than 80 columns: $wide"
done

# The Chinese pages against the English ones, so that a change to an English
# page fails here until the Chinese page has it too: the same .TH (date and
# version), the same number of sections, subsections, tagged and indented
# paragraphs and examples; every option (--name, -x) of each English page in
# the Chinese one; every key of attnview(1) KEYS in the Chinese KEYS; the
# layout tables of attnview(5) (offsets, sizes, types; the tensors and their
# shapes) and its cleaning examples the same, line for line.
# options PAGE: the options the page's source names, one a line, sorted.
options() {
	perl -ne 'next if /^\.\\"/;
		while (/\\-\\-([a-z0-9]+(?:\\?-[a-z0-9]+)*)/g) { (my $o = $1) =~ s/\\-/-/g; print "--$o\n" }
		s/\\-\\-//g; while (/(?<![-\w])\\-([a-zA-Z])(?!\w)/g) { print "-$1\n" }' "$1" | sort -u
}
# keys PAGE: the keys the tags of its KEYS section name, one a line, sorted.
keys() {
	perl -ne 'if (/^\.SH /) { $in = /^\.SH ("?)(KEYS|按键)/ } next unless $in;
		if ($tag) { s/^\.BR?\s+//; s/"//g; s/,\s*/ /g;
			for (split) { print "$_\n" if /^(F\d+|(Alt|Ctrl|Shift)-\S+|Up|Down|Left|Right|PageUp|PageDown|Home|End|Tab|Enter|Esc|Backspace|Delete|paste)$/ } }
		$tag = /^\.TP/' "$1" | sort -u
}
# layout PAGE: the rows of the layout tables (offset, size, type; a tensor's
# name and shape) and the cleaning examples, in the page's order.
layout() {
	perl -ne '$ex = 1 if /^\.EX/; $ex = $tok = 0 if /^\.EE/; next unless $ex;
		if (/^\s*((?:(?:\d+[VP]?|n\d|\.)\s+){1,2}(?:bytes|u32|u64|s64|f32|u64\[4\]))(?:\s|$)/) { ($r = $1) =~ s/\s+/ /g; print "$r\n" }
		elsif (/^\s*(wte|lnf_[wb]|out_b|h<l>\.\w+|for l)\s+(\([^)]*\)|=.*)/) { print "$1 $2\n" }
		if (/^(text|文本) +(tokens|词元)$/) { $tok = 1; next } print if $tok' "$1"
}
# missing WHAT EN ZH: the lines of EN's list not in ZH's.
missing() {
	comm -23 <(printf '%s\n' "$2") <(printf '%s\n' "$3") | tr '\n' ' '
}
for page in attnview.1 attnview.5; do
	en="$man/$page" cn="$zh/$page"
	checks=$((checks + 1))
	[ "$(head -1 "$en" | cut -d' ' -f1-5)" = "$(head -1 "$cn" | cut -d' ' -f1-5)" ] ||
		fail "zh_CN/$page: .TH differs from $page's (date, version): $(head -1 "$en")"
	for req in SH SS TP IP EX; do
		checks=$((checks + 1))
		a=$(grep -c "^\.$req\b" "$en") b=$(grep -c "^\.$req\b" "$cn")
		[ "$a" = "$b" ] || fail "zh_CN/$page: $b .$req, $page has $a: translate what changed"
	done
	checks=$((checks + 1))
	m=$(missing options "$(options "$en")" "$(options "$cn")")
	[ -z "$m" ] || fail "zh_CN/$page: options of $page missing: $m"
done
checks=$((checks + 1))
k=$(keys "$man/attnview.1")
[ "$(wc -l <<<"$k")" -ge 60 ] || fail "attnview.1 KEYS: only $(wc -l <<<"$k") keys found"
checks=$((checks + 1))
m=$(missing keys "$k" "$(keys "$zh/attnview.1")")
[ -z "$m" ] || fail "zh_CN/attnview.1: keys of attnview.1 KEYS missing: $m"
checks=$((checks + 1))
d=$(diff <(layout "$man/attnview.5") <(layout "$zh/attnview.5"))
[ -z "$d" ] || fail "zh_CN/attnview.5: layout tables or cleaning examples differ from attnview.5's: $d"
checks=$((checks + 1))
[ "$(layout "$man/attnview.5" | wc -l)" -ge 90 ] || fail "attnview.5: the layout tables were not found"

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

# The option table (src/cli/options.c, printed by --list-options) against
# attnview(1): every option of the table is documented, written as the page
# writes options (\-\-name, the hyphens inside a name plain; a short name
# as \-x), so that a search of the page for "--name" finds it; and every
# option the page's OPTIONS section describes (its tags) is in the table.
bin=${ATTNVIEW_BIN:?set by meson}
options_table=$("$bin" --list-options)
# tags PAGE: the tag lines of its OPTIONS section (the line after each .TP).
tags() {
	sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$1" | grep -A1 '^\.TP' | grep -v '^\.TP\|^--$'
}
checks=$((checks + 1))
[ "$(wc -l <<<"$options_table")" -ge 50 ] || fail "--list-options: only $(wc -l <<<"$options_table") options"
while IFS=$'\t' read -r long short _arg modes; do
	checks=$((checks + 1))
	grep -qF -- "\\-\\-${long#--}" "$man/attnview.1" ||
		fail "attnview(1): $long ($modes) is not documented as \\-\\-${long#--}"
	if [ "$short" != - ]; then
		checks=$((checks + 1))
		tags "$man/attnview.1" | grep -F -- "\\-\\-${long#--}" |
			grep -qE -- "\\\\-${short#-}([^a-z-]|\$)" ||
			fail "attnview(1): $short (short for $long) is not in the tag of $long"
	fi
done <<<"$options_table"
tagged=$(tags "$man/attnview.1" | grep -oE '\\-\\-[a-z][a-z0-9-]*' | sed 's/\\-/-/g' | sort -u)
for opt in $tagged; do
	checks=$((checks + 1))
	grep -q "^$opt"$'\t' <<<"$options_table" ||
		fail "attnview(1) OPTIONS describes $opt, which is not in the option table (--list-options)"
done
# ... and --help prints from that table: every option it names is one.
helped=$({ "$bin" --help; "$bin" --train --help; } 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
for opt in $helped; do
	checks=$((checks + 1))
	grep -q "^$opt"$'\t' <<<"$options_table" || fail "--help names $opt, which is not in the option table"
done

echo "man: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
