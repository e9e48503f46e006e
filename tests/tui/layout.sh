#!/usr/bin/env bash
# Tokens stand over their columns: for English, Chinese and mixed text (with an
# emoji), every Key label sits centred over its cell, every Query label in its
# column beside its row, the cursor cell under its Key label, and the input
# line's cursor after the text at the right terminal column. Both with
# 2-column cells (--cells scroll) and with the cells the screen fits.
. "$(dirname "$0")/lib.sh"

# check_text TEXT: type it into an empty line and check the layout.
check_text() {
	local text=$1
	type_text "$text"
	local n
	n=$("$bin" --dump --format tsv --text "$text" --model "$model_masked" | awk -F'\t' 'NR > 1 && $1 == 0 && $2 == 0 && $3 == 0' | wc -l)
	expect_screen "$n tokens" || return
	expect_screen "Query 0 " || return

	# The input line: text echoed, terminal cursor right after it.
	local l0 want
	l0=$(line 0)
	check "input line shows '$text'" test "$l0" = "text> $text"
	want=$(col_of "$l0@" "@")
	wait_var cursor_x "$want" 5
	check "input cursor at column $want after '$text' (is $(tvar cursor_x))" \
		test "$(tvar cursor_x)" = "$want"

	# The cell size, from the cursor: "<>" sits in the middle of its cell.
	keys Enter
	expect_screen "<>" || return
	local ya xa yb xb cw ch
	ya=$(screen | grep -n '<>' | head -1 | cut -d: -f1)
	xa=$(col_of "$(line $((ya - 1)))" "<>")
	keys Right Down
	expect_screen "Query 1 " || return
	expect_screen "Key   1 " || return
	yb=$(screen | grep -n '<>' | head -1 | cut -d: -f1)
	xb=$(col_of "$(line $((yb - 1)))" "<>")
	cw=$((xb - xa))
	ch=$((yb - ya))
	keys Up Left
	check "cells of $cw columns and $ch lines" test "$cw" -ge 2 -a "$ch" -ge 1
	local x0=$((xa - (cw - 2) / 2)) y0=$((ya - 1 - (ch - 1) / 2))

	# Key labels on line 4, centred in their cells; Query labels at x0 - 3 on
	# the middle line of their rows; glyphs and widths as --dump has them.
	mapfile -t glyphs < <("$bin" --dump --format tsv --text "$text" --model "$model_masked" |
		awk -F'\t' 'NR > 1 && $1 == 0 && $2 == 0 && $3 == 0 { print $6 }')
	mapfile -t widths < <("$bin" --dump --text "$text" --model "$model_masked" |
		sed -n 's/.*"index": [0-9]*,.*"width": \([0-9]*\),.*/\1/p')
	local keyline k
	keyline=$(line 4)
	for k in "${!glyphs[@]}"; do
		local g=${glyphs[$k]} at x y
		x=$((x0 + cw * k + (cw - ${widths[$k]}) / 2))
		at=$(char_at "$keyline" "$x")
		check "key $k '$g' at column $x (found '$at')" test "$at" = "$g"
		y=$((y0 + ch * k + (ch - 1) / 2))
		[ "$y" -ge 38 ] && continue
		at=$(char_at "$(line "$y")" $((x0 - 3)))
		check "query $k '$g' in the label column on line $y (found '$at')" test "$at" = "$g"
	done

	# The heatmap cursor under its Key label, on its Query row.
	local last=$((${#glyphs[@]} - 1)) q=$((${#glyphs[@]} / 2))
	keys End
	for ((k = 0; k < q; k++)); do keys Down; done
	expect_screen "Query $q " || return
	expect_screen "Key   $last " || return
	local y row
	y=$((y0 + ch * q + (ch - 1) / 2))
	row=$(line "$y")
	check "cursor cell of row $q under key $last" \
		test "$(col_of "$row" "<>")" = $((x0 + cw * last + (cw - 2) / 2))
	check "row $q marked" test "$(char_at "$row" 0)" = "▶"

	# Values mode: the value equals the dump's.
	keys F2
	expect_screen "values" || return
	keys Home
	expect_screen "Key   0 " || return
	local want3 shown
	want3=$(dump_weight "$text" "$model_masked" 0 0 "$q" 0)
	shown=$(screen | grep -m1 "^▶" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(\.[0-9][0-9][0-9]|1\.00)$/) { print $i; exit } }')
	check "values mode cell ($q,0) '$shown' rounds the dump's $want3" \
		close "0$shown" "$want3" 0.0005
	keys F2
	wait_gone "values"
	# Back to the input line, clear it for the next text.
	keys Escape C-u
	expect_screen "Type some text"
}

for cells in scroll fit; do
	tui_start 120 40 TERM=xterm-256color -- --model "$model_masked" --cells "$cells"
	expect_screen "Type some text"
	check_text "Hello world"
	check_text "床前明月光，疑是地上霜。"
	check_text "Hi 你好😀 x ok"
done

finish
