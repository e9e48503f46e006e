#!/usr/bin/env bash
# Getting around: the overview of all heads (keys and mouse), the help screen,
# long texts that scroll with their labels in view, text beyond the model's
# context, unknown characters, bracketed paste of Chinese and English.
. "$(dirname "$0")/lib.sh"

text="Attention (注意力) is all you need!"
tui_start 120 40 TERM=xterm-256color -- --model "$model_masked" --text "$text"
expect_screen "Query 0 "

# Overview from the map: every head of every layer, numbered from 0 as --dump
# numbers them, arrows select, Enter opens.
keys Enter F3
expect_screen "Overview: 2 layers x 4 heads"
for l in 0 1; do
	for h in 0 1 2 3; do
		check "overview shows L$l H$h" wait_for "L$l H$h "
	done
done
check "no head numbered past the count" wait_gone "L2 H"
check "no head 4" bash -c '! grep -q "L[0-9] H4" <<<"$1"' _ "$(screen)"
# A tile says its role with its score, two roles that both fit, or
# "unclear" with the share of rows of the closest.
role='(previous|next|self|first|delimiter|duplicate|induction|local|broad|[2-8] left|[2-8] right|keyword [^ ]+( [^ ]+)?|same script|line-parallel|mirror|word start)'
check "every tile says what its head does" \
	test "$(screen | grep -oE "L[01] H[0-3] ($role( / $role)?|unclear(: [0-9]+% $role)?)" | wc -l)" = 8
check "with its score where it fits" \
	test "$(screen | grep -oE "L[01] H[0-3] $role( / $role)? [01]\.[0-9][0-9]" | wc -l)" -ge 1
check "overview status" wait_for " OVERVIEW |"
keys Right Right Down Enter
check "Enter opens the selected head (layer 1, head 2)" wait_for "| layer 1 head 2 |"
check "back on the map" wait_for " MAP |"

# Overview from the input line with F3; Esc goes back to the input line.
keys Escape
expect_screen " TYPE |"
keys F3
expect_screen "Overview:"
keys Escape
check "Esc closes the overview, back to the input line" wait_for " TYPE |"

# A click selects a head in the overview, a second click opens it. The
# tiles are drawn once every layer is in ("computing..." before): wait for
# them before reading where L1 H3 is.
keys F3
check "the overview's tiles are drawn" wait_for "L1 H3 "
s=$(screen)
y=$(printf '%s\n' "$s" | grep -n "L1 H3 " | head -1 | cut -d: -f1)
x=$(col_of "$(printf '%s\n' "$s" | sed -n "${y}p")" "L1 H3")
type_text $'\e[<0;'"$((x + 2))"';'"$((y + 1))"'M'
type_text $'\e[<0;'"$((x + 2))"';'"$((y + 1))"'m'
check "one click selects L1 H3 (the heading says what it does)" wait_for "  L1 H3: "
check "one click does not open" wait_for "Overview:"
type_text $'\e[<0;'"$((x + 2))"';'"$((y + 1))"'M'
type_text $'\e[<0;'"$((x + 2))"';'"$((y + 1))"'m'
check "a second click on L1 H3 opens it" wait_for "| layer 1 head 3 |"
check "the overview is closed" wait_gone "Overview:"

# Help lists the keys; any key closes it.
keys F1
expect_screen "attnview keys"
# settled: the screen once two looks in a row agree (a frame drawn whole).
settled() {
	local a b i
	a=$(screen)
	for i in $(seq 200); do
		sleep 0.05
		b=$(screen)
		[ "$a" = "$b" ] && break
		a=$b
	done
	printf '%s\n' "$a"
}
# help_text: every page of the help, from the top, PageDown after PageDown
# until its last line (24-bit colour) shows; each page taken once the screen
# has changed and holds still. Back at the top after. The help is one column
# in these terminals (two need more than 120 columns), so that line is on
# its last page.
help_text() {
	local first page prev all i j
	first=$(settled)
	page=$first all=$first
	for i in $(seq 30); do
		grep -qF "24-bit colour" <<<"$page" && break
		prev=$page
		keys NPage
		for j in $(seq 200); do
			[ "$(screen)" != "$prev" ] && break
			sleep 0.05
		done
		page=$(settled)
		[ "$page" != "$prev" ] || return 1
		all+=$'\n'$page
	done
	printf '%s\n' "$all"
	keys PPage PPage PPage PPage PPage PPage
	for i in $(seq 200); do
		[ "$(screen)" = "$first" ] && return 0
		sleep 0.05
	done
	return 1
}
ok=1
help=$(help_text) || ok=0
check "help: paged to its last line, then back at the top" test "$ok" = 1
for want in "next head" "previous head" "next layer" "Ctrl-U" "clear the line" \
	"overview of all heads" "values mode" "Mouse" "edit the text" \
	"head 0..9, from 0 as in --dump" "training timeline" \
	"COLORTERM=truecolor, if the terminal has it (now 256)" \
	"Head roles: where most rows look"; do
	check "help mentions '$want'" grep -qF -- "$want" <<<"$help"
done
# Each key group on one row: its full names, at least two spaces, then the
# description of what those keys do (Shift-Tab was once listed under Tab,
# "select the head on the right", as "l, Right, Tab, Shi", and
# "Enter, Ctrl-J, Esc" ran into its text).
help_row() { # NAMES [DESC]: a row of stdin starting " NAMES  " with DESC after the gap
	awk -v n="$1" -v d="${2:-}" '{
		i = index(" " $0, " " n "  ")
		if (!i) next
		rest = substr($0, i + length(n))
		sub(/^ +/, "", rest)
		if (substr(rest, 1, length(d)) == d) found = 1
	} END { exit !found }'
}
help_groups=(
	"F1, Alt-?|help" "Ctrl-Q, F10|quit" "F2, Alt-V|values mode" "F3, Alt-O|overview"
	"F4, Alt-S|colour scale" "F5, Alt-P|hide or show the details panel"
	"F6, Alt-C|cells" "F7, Alt-M|colours" "Tab|next head" "Shift-Tab|previous head"
	"Alt-0..9|head 0..9" "Shift-Home|first Query row" "Shift-End|last Query row"
	"Enter, Ctrl-J, Esc|the arrows move" "Left|cursor a character left"
	"Right|cursor a character right" "Home|start of the line"
	"End|end of the line" "Ctrl-B|cursor a character left"
	"Ctrl-F|cursor a character right" "Ctrl-A|start of the line" "Ctrl-E|end of the line"
	"Ctrl-H|delete the character before" "Ctrl-D|delete the character at"
	"Esc, Enter|back to the text cursor"
	"Left|previous Key column" "Right|next Key column" "Home|first Key column"
	"End|last Key column" "Up|select the head above" "Down|select the head below"
	"Left, Shift-Tab|select the head on the left"
	"Right, Tab|select the head on the right"
)
help_groups+=("Backspace|delete the character before" "Delete|delete the character at"
	"Enter|open the selected head" "Esc|close the overview"
	"Left|the recorded step before (also [)" "Home|the first recorded step"
	"Esc|close the timeline")
# What each head role says, the last section (a student reads the label
# first, then looks here for what it claims).
help_groups+=("previous|most rows look at the character before them"
	"induction|rows look just after an earlier copy of themselves"
	"keyword|most rows look at one or two characters, wherever (� any unknown)"
	"delimiter|rows look at their phrase's nearest space or mark"
	"line-parallel|rows look at their place in the line before or after"
	"unclear|no role holds for half the rows beyond chance; the closest is named")
for g in "${help_groups[@]}"; do
	check "help row '${g%%|*}': full names, then '${g#*|}'" \
		help_row "${g%%|*}" "${g#*|}" <<<"$help"
done
keys Escape
check "a key closes help" wait_gone "attnview keys"
check "back where help was opened" wait_for " MAP |"
# Alt-digits are head numbers from 0: 4 is one past the last of 4 heads.
keys M-4
check "a head that does not exist is explained" \
	wait_for "head 4 does not exist: this model has 4 heads, 0 to 3"
check "and the head stays" wait_for "| layer 1 head 3 |"
keys M-0
check "Alt-0 selects head 0" wait_for "| layer 1 head 0 |"

# Bracketed paste into the input line, from the map too.
keys Escape End
tmux -L "$sock" set-buffer -b p " 你好 world"
tmux -L "$sock" paste-buffer -p -b p
check "paste appended to the line" wait_for "text> $text 你好 world"
keys Escape
expect_screen " MAP |"
tmux -L "$sock" set-buffer -b p "!"
tmux -L "$sock" paste-buffer -p -b p
check "paste from the map goes to the line" wait_for "text> $text 你好 world!"
check "and focuses it" wait_for " TYPE |"
n=$("$bin" --dump --format tsv --text "$text 你好 world!" --model "$model_masked" |
	awk -F'\t' 'NR > 1 && $1 == 0 && $2 == 0 && $3 == 0' | wc -l)
check "token count after paste is $n" wait_for "$n tokens"

# An unknown character is counted and marked.
keys C-u
type_text "a☃b"
check "unknown character counted" wait_for "1 unknown (underlined)"
check "panel says unknown" wait_for_re "│Key +0 a U\+0061$"
keys Enter Right
check "unknown key described" wait_for "U+2603 unknown"

# A long text in a small terminal: the cursor's row and column scroll into
# view, with the Query and Key labels kept.
long="abcdefghijklmnopqrstuvwxyz0123456789床前明月光疑是地上霜ABCDEFGHIJKLMNO"
tui_start 80 20 TERM=xterm-256color -- --model "$model_masked" --text "$long" --cells scroll
expect_screen "Query 0 "
keys Enter S-End
expect_screen "Query 60 "
s=$(screen)
check "last row's label in view" grep -qE "^▶ *60 " <<<"$s"
check "rows scrolled: first row gone" bash -c '! grep -qE "^  *0 a" <<<"$1"' _ "$s"
keys End
expect_screen "Key   60 "
keyline=$(line 4)
check "key labels still on line 4, last key shown" test "$(col_of "$keyline" "O")" -gt 0
check "scrolled columns marked" test "$(char_at "$keyline" 6)" = "◀"
check "cursor cell on the last row" grep -qE "^▶ *60 .*<>" <<<"$(screen)"
keys S-Home Home
expect_screen "Query 0 "
expect_screen "Key   0 "
check "back at the top left" grep -qE "^▶ +0 a +<>" <<<"$(screen)"

# Text beyond the model's context (64): shown, marked, not computed.
keys Escape End
type_text "PQRSTUVW"
check "cut-off notice" wait_for "cut off after 64 tokens (the model's context): 5 ignored"
check "64 tokens computed" wait_for "| 64 tokens |"

# The narrowest terminal: one column of help, scrolled; names still whole.
tui_start 50 40 TERM=xterm-256color -- --model "$model_masked" --text "$text"
expect_screen " TYPE |"
keys F1
expect_screen "attnview keys"
ok=1
help=$(help_text) || ok=0
check "narrow help: paged to its last line, then back at the top" test "$ok" = 1
check "narrow help: 'Enter, Ctrl-J, Esc' whole" \
	help_row "Enter, Ctrl-J, Esc" "the arrows" <<<"$help"
check "narrow help: scrolled to the end" grep -qF "Mouse" <<<"$help"
check "narrow help: 'Left, Shift-Tab' whole" help_row "Left, Shift-Tab" "select the" <<<"$help"
check "narrow help: 'Right, Tab' whole" help_row "Right, Tab" "select the" <<<"$help"

# --show takes every name of what a map shows (select.h), as --export does.
tui_start 120 40 TERM=xterm-256color -- --model "$model_masked" --text "$text" --show rollout \
	--layer 1
check "--show rollout --layer 1" wait_for "Layer 1  rollout through layer 1"
tui_start 120 40 TERM=xterm-256color -- --model "$model_masked" --text "$text" \
	--show contributions --head 2
check "--show contributions" wait_for "head 2, contributions"
tui_start 120 40 TERM=xterm-256color -- --model "$model_masked" --text "$text" --show overview
check "--show overview" wait_for "Overview: 2 layers x 4 heads"
keys Escape
check "Esc leaves it for the text" wait_for " TYPE |"

finish
