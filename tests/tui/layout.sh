#!/usr/bin/env bash
# Tokens stand over their columns: for English, Chinese and mixed text (with an
# emoji), every Key label sits at the start of its cell, every Query label in
# its column, the cursor cell under its Key label, and the input line's cursor
# after the text at the right terminal column.
. "$(dirname "$0")/lib.sh"

tui_start 120 40 TERM=xterm-256color -- --model "$model_masked"
expect_screen "Type some text"

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
	check "input cursor at column $want after '$text' (is $(tvar cursor_x))" \
		test "$(tvar cursor_x)" = "$want"

	# Key labels on line 4, Query labels on lines 5.., glyphs as --dump has them.
	mapfile -t glyphs < <("$bin" --dump --format tsv --text "$text" --model "$model_masked" |
		awk -F'\t' 'NR > 1 && $1 == 0 && $2 == 0 && $3 == 0 { print $6 }')
	local keys x0 k
	keys=$(line 4)
	x0=$(col_of "$keys" "${glyphs[0]}")
	check "first key label found" test "$x0" -ge 0
	for k in "${!glyphs[@]}"; do
		local g=${glyphs[$k]} at
		at=$(char_at "$keys" $((x0 + 2 * k)))
		check "key $k '$g' at column $((x0 + 2 * k)) (found '$at')" test "$at" = "$g"
		at=$(char_at "$(line $((5 + k)))" $((x0 - 3)))
		check "query $k '$g' in the label column (found '$at')" test "$at" = "$g"
	done

	# The heatmap cursor under its Key label, on its Query row.
	keys Enter
	local last=$((${#glyphs[@]} - 1)) q=$(( ${#glyphs[@]} / 2 ))
	keys '$'
	for ((k = 0; k < q; k++)); do keys j; done
	expect_screen "Query $q " || return
	expect_screen "Key   $last " || return
	local row
	row=$(line $((5 + q)))
	check "cursor cell of row $q under key $last" test "$(col_of "$row" "<>")" = $((x0 + 2 * last))
	check "row $q marked" test "$(char_at "$row" 0)" = "▶"

	# Values mode: wider cells, same alignment, the value equals the dump's.
	keys v
	expect_screen "values" || return
	keys '^'
	expect_screen "Key   0 " || return
	row=$(line $((5 + q)))
	local cell want3
	cell=$(printf '%s\n' "$row" | sed -n 's/^.\{0,200\}//; p' >/dev/null; echo)
	want3=$(dump_weight "$text" "$model_masked" 0 0 "$q" 0)
	local shown
	shown=$(printf '%s\n' "$(line $((5 + q)))" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(\.[0-9][0-9][0-9]|1\.00)$/) { print $i; exit } }')
	check "values mode cell ($q,0) '$shown' rounds the dump's $want3" \
		close "0$shown" "$want3" 0.0005
	keys v
	wait_gone "values"
	# Back to the input line, clear it for the next text.
	keys i C-u
	expect_screen "Type some text"
}

check_text "Hello world"
check_text "床前明月光，疑是地上霜。"
check_text "Hi 你好😀 x ok"

finish
