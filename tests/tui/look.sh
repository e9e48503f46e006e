#!/usr/bin/env bash
# What a person sees: colour scales that tell the built-in model's
# broad heads apart, the colour bar, 24-bit colour, cells that fill the screen,
# the compact mode for long texts, the panel hidden on request, headings and
# panel words, emoji sequences that keep every column in place, pasted text
# that gives the tokens of --dump --input, and typing that never quits.
. "$(dirname "$0")/lib.sh"

en="Time flies like an arrow; fruit flies like a banana, said the old teacher."
poem="床前明月光，疑是地上霜。举头望明月，低头思故乡。"

# ---- colour scales on broad heads -------------------------------------------
# The built-in model's heads are sharp (trained with --sharpen), so the broad
# heads are those of a model trained for 400 steps on the test corpus
# (tests/data/models/broad.attn, made by
#   attnview --train tests/data/corpus/mixed.txt --dim 32 --heads 4 --layers 2
#            --context 128 --steps 400 --threads 1 --timeline-every 0
# and kept: under the sanitizers its training took most of this test's time):
# its layer 1's normalised entropies are 0.85 to 0.99 on the sentence. 74
# tokens in 2-column cells from column 7, no panel: count the distinct colours
# of each head's cells under each scale.
broad="$data/data/models/broad.attn"
declare -A colours
for sc in fixed head row log; do
	for h in 0 1 2 3; do
		tui_start 200 60 TERM=xterm-256color -- --model "$broad" --scale "$sc" --layer 1 \
			--head "$h" --cells scroll --no-panel --text "$en"
		expect_screen "Layer 1  Head $h" 10 || continue
		expect_screen "74 tokens" || continue
		wait_result || continue
		colours[$sc$h]=$(distinct_colours 5 57 7 155)
		check "bar titled '$sc'" grep -q " $sc *$" <<<"$(line 3)"
	done
done
for h in 0 1 2 3; do
	echo "layer 1 head $h: distinct colours fixed ${colours[fixed$h]} head ${colours[head$h]}" \
		"row ${colours[row$h]} log ${colours[log$h]}"
	check "row scale: at least six colours in L1 H$h (${colours[row$h]})" \
		test "${colours[row$h]:-0}" -ge 6
	check "head scale: more colours than fixed in L1 H$h" \
		test "${colours[head$h]:-0}" -gt "${colours[fixed$h]:-99}"
	check "log scale: more colours than fixed in L1 H$h" \
		test "${colours[log$h]:-0}" -gt "${colours[fixed$h]:-99}"
done

# The default scale is the row scale, named on the bar; F4 cycles.
tui_start 120 40 TERM=xterm-256color -- --text "$poem"
expect_screen "24 tokens"
wait_result
check "default scale: row" grep -q "row *│" <<<"$(line 3)"
check "row scale's unit on the bar" grep -q "÷max" <<<"$(line 4)"
keys F4
check "F4: the log scale" wait_for "colour scale: log"
check "bar ticks of the log scale" wait_for ".001"
keys M-s
check "Alt-S: the lift scale" wait_for "colour scale: lift"
check "lift scale's unit on the bar" wait_for "×unif"
keys M-s M-s
check "Alt-S twice more: fixed then head" wait_for "colour scale: head"

# On 256 colours every ramp step is a colour of its own: the 16 steps of
# the colour bar are 16 colours.
tui_start 120 40 TERM=xterm-256color -- --text "$poem" --no-panel
expect_screen "24 tokens"
wait_result
s=$(screen)
bar_x=$(col_of "$(line 3)" "row")
check "colour bar found" test "$bar_x" -gt 0
nbar=$(distinct_colours 5 28 "$bar_x" $((bar_x + 1)))
check "the bar's 16 steps are distinct colours ($nbar in its lower halves)" test "$nbar" -ge 15

# ---- 24-bit colour ------------------------------------------------------------
# Exact viridis: a cell's background is the table entry of its weight.
viridis() { # LEVEL -> R,G,B from src/render/colormap_tables.h
	sed -n '/viridis_table/,/};/p' "$data/../src/render/colormap_tables.h" |
		grep -o '{[0-9]*, [0-9]*, [0-9]*}' | sed -n "$(($1 + 1))p" | tr -d '{} '
}
tui_start 120 40 TERM=xterm-256color COLORTERM=truecolor -- --model "$model_masked" \
	--scale fixed --cells scroll --text "abcd"
expect_screen "4 tokens"
wait_result
checks=$((checks + 1))
if screen_esc | grep -q $'\e\\[48;2;'; then
	for q in 0 1 2 3; do
		w=$(dump_weight "abcd" "$model_masked" 0 0 "$q" 3)
		lvl=$(awk -v w="$w" 'BEGIN { l = int(w * 256); print (l > 255 ? 255 : l) }')
		got=$(backgrounds $((5 + q)) $((5 + q)) 13 14)
		check "24-bit cell ($q,3), weight $w: 2:$(viridis "$lvl"), got $got" \
			test "$got" = "2:$(viridis "$lvl")"
	done
else
	fail "no 24-bit colours with COLORTERM=truecolor"
fi
tui_start 120 40 TERM=xterm-256color -- --model "$model_masked" --text "abcd"
expect_screen "4 tokens"
wait_result
check "no 24-bit colours without COLORTERM" bash -c '! grep -q $'"'"'\e\[48;2;'"'"' <<<"$1"' _ "$(screen_esc)"
tui_start 120 40 TERM=xterm-256color COLORTERM=truecolor -- --colormap cividis --text "$poem"
expect_screen "24 tokens"
wait_result
check "cividis: the bar's top is cividis' yellow" \
	grep -q '2:254,232,56\|2:253,231,55\|2:25[0-5],2[23][0-9],[3-6][0-9]' <<<"$(backgrounds 5 5 0 200)"

# 8 colours and NO_COLOR: shades, and the info line says why, once.
tui_start 100 30 TERM=xterm -- --text "$poem"
check "8 colours explained" wait_for "TERM=xterm has 8 colours: weights are drawn as shades"
keys Right
check "said once: gone after a key" wait_gone "has 8 colours"
tui_start 100 30 TERM=xterm-256color NO_COLOR=1 -- --text "$poem"
check "NO_COLOR explained" wait_for "NO_COLOR is set"

# ---- the map uses the screen ----------------------------------------------------
# A 24-character poem at 200x60 gets cells of 6 columns and 2 lines.
tui_start 200 60 TERM=xterm-256color -- --text "$poem"
expect_screen "24 tokens"
wait_result
keys Enter
expect_screen "Query 0 "
x0=$(col_of "$(screen | grep -m1 '<>')" "<>")
keys Right
expect_screen "Key   1 "
x1=$(col_of "$(screen | grep -m1 '<>')" "<>")
y0=$(screen | grep -n '^▶' | head -1 | cut -d: -f1)
keys Down
expect_screen "Query 1 "
y1=$(screen | grep -n '^▶' | head -1 | cut -d: -f1)
check "cells widen at 200x60: $((x1 - x0)) columns (want >= 4)" test $((x1 - x0)) -ge 4
check "rows grow at 200x60: $((y1 - y0)) lines (want 2)" test $((y1 - y0)) -eq 2
last=$(screen | grep -n '^ *23 ' | cut -d: -f1)
check "the whole poem on screen: row 23 at line $last" test "${last:-99}" -le 60

# At 80x24 the colour bar still shows, and the panel steps aside for the
# map's labels; scrolling cells (F6) have it beside them.
tui_start 80 24 TERM=xterm-256color -- --text "$poem"
expect_screen "24 tokens"
wait_result
check "80x24: colour bar titled" grep -q "row" <<<"$(line 3)"
check "80x24: bar ticks" bash -c 'grep -q "╴1" <<<"$1" && grep -q "╴0" <<<"$1"' _ "$(screen)"
check "80x24: the panel steps aside" wait_gone "│Query 0 "
check "80x24: labelled 2-column cells, no compact" wait_gone "compact"
keys F6
check "F6 scroll: the panel beside the cells" wait_for "│Query 0 "
keys F5
check "F5 hides the panel" wait_gone "│Query 0 "
keys M-p
check "Alt-P shows it again" wait_for "│Query 0 "

# ---- compact mode on 128 tokens --------------------------------------------------
long=$(printf 'The quick brown fox jumps over the lazy dog while 学生们在教室里认真地学习注意力机制。%.0s' 1 2 3 | cut -c1-128)
n=$("$bin" --dump --format tsv --text "$long" | awk -F'\t' 'NR > 1 && $1 == 0 && $2 == 0 && $3 == 0' | wc -l)
# Fit keeps labelled cells that scroll; compact is asked for.
tui_start 120 40 TERM=xterm-256color -- --head 1 --text "$long"
expect_screen "$n tokens"
wait_result
check "fit: no compact for $n tokens at 120x40, labelled cells" wait_gone "compact"
tui_start 120 40 TERM=xterm-256color -- --head 1 --cells compact --text "$long"
expect_screen "$n tokens"
wait_result
check "compact for $n tokens at 120x40" wait_for "compact"
s=$(screen)
lines=$(grep -c '▀' <<<"$s")
check "two Query rows per line: $lines lines of half blocks for $n rows" \
	test "$lines" -ge $((n / 4)) -a "$lines" -le $(((n + 1) / 2 + 1))
# The next-character head stays a sharp line: nearly every line has a cell of
# the ramp's top colour (227 on 256 colours) in its upper or lower half.
top_lines=$(screen_esc | sed -n '6,40p' | grep -c '5;227m')
check "next-character diagonal kept by max pooling: $top_lines of $lines lines" \
	test "$top_lines" -ge $((lines * 8 / 10))
keys F6
check "F6: cells fit" wait_for "cells: fit"
check "no compact when fitting" wait_gone "compact"
keys F6 F6
check "F6 twice: compact" wait_for "cells: compact"

# ---- edges and words -----------------------------------------------------------
tui_start 80 20 TERM=xterm-256color -- --cells scroll --text "床前明月光，疑是地上霜。举头望明月"
expect_screen "17 tokens"
wait_result
keys Enter
expect_screen "Query 0 "
check "keys hidden on the right: marked" grep -q "▶" <<<"$(line 4)"
check "rows hidden below: marked" wait_for_re "^▼ rows 0-"
check "footer says which keys" wait_for_re "keys 0-[0-9]+ of 17"
keys End
expect_screen "Key   16 "
check "keys hidden on the left: marked" grep -q "◀" <<<"$(line 4)"
keys S-End
expect_screen "Query 16 "
check "rows hidden above: marked" test "$(char_at "$(line 3)" 0)" = "▲"

tui_start 120 40 TERM=xterm-256color -- --layer 1 --head 3 --text "$poem"
expect_screen "24 tokens"
wait_result
check "heading names layer and head from 0, with the ranges" \
	wait_for "Layer 1  Head 3  (layers 0-1, heads 0-3)"
check "mean distance, in positions" wait_for "mean distance"
check "masked prediction says so" wait_for "Predicted at 0 (masked)"
check "status names the head as --dump does" wait_for "| layer 1 head 3 |"
out=$("$bin" --layer 2 --text x 2>&1 </dev/null)
check "--layer beyond the model: refused" grep -q -- "--layer 2 is out of range: this model has layers 0\.\.1" <<<"$out"
out=$("$bin" --scale linear --text x 2>&1 </dev/null)
check "--scale unknown: the choices" grep -q "fixed, head, row, log or lift" <<<"$out"

# Emoji sequences (ZWJ, skin tone, flag): every column stays in place.
zwj="ab👩‍👧cd 你好 👋🏽🇨🇳"
mapfile -t glyphs < <("$bin" --dump --format tsv --text "$zwj" | awk -F'\t' 'NR > 1 && $1 == 0 && $2 == 0 && $3 == 0 { print $6 }')
tui_start 120 40 TERM=xterm-256color -- --cells scroll --text "$zwj"
expect_screen "${#glyphs[@]} tokens"
wait_result
keyline=$(line 4)
x0=$(col_of "$keyline" "a")
for k in "${!glyphs[@]}"; do
	at=$(char_at "$keyline" $((x0 + 2 * k)))
	check "emoji text: key $k '${glyphs[$k]}' at its column (found '$at')" \
		test "$at" = "${glyphs[$k]:0:1}"
	at=$(char_at "$(line $((5 + k)))" $((x0 - 3)))
	check "emoji text: query $k in the label column (found '$at')" test "$at" = "${glyphs[$k]:0:1}"
done
s=$(screen)
bar=$(col_of "$(line 3)" "│")
for y in 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
	check "panel border of line $y in column $bar" test "$(char_at "$(line $y)" "$bar")" = "│"
done

# Pasted text: its final line break is dropped, as --dump --input drops it.
printf 'fox 你好\n' >"$tmpdir/paste.txt"
want=$("$bin" --dump --format tsv --input "$tmpdir/paste.txt" | awk -F'\t' 'NR > 1 && $1 == 0 && $2 == 0 && $3 == 0' | wc -l)
tui_start 100 30 TERM=xterm-256color --
expect_screen "Type some text"
tmux -L "$sock" load-buffer -b p "$tmpdir/paste.txt"
tmux -L "$sock" paste-buffer -p -b p
check "pasted file: $want tokens, as --dump --input" wait_for "$want tokens"

# ---- typing never quits ---------------------------------------------------------
# "quit the app" typed in every focus reaches the text; attnview keeps running.
tui_start 100 30 TERM=xterm-256color -- --text "x"
expect_screen "1 token"
typed() { # WHAT [KEY]: go there with KEY, type, check, back to the line, clear
	local what=$1 key=${2:-}
	[ -n "$key" ] && keys "$key"
	sleep 0.3
	type_text "quit the app"
	check "$what: text kept" wait_for "text> xquit the app"
	check "$what: still running" wait_gone "EXITED"
	# Typing took the map and the help back to the text; the overview stays.
	if [ "$what" = overview ]; then
		check "overview: still open while typing" wait_for "Overview:"
		keys Escape
	fi
	check "$what: back on the line" wait_for " TYPE |"
	keys C-u
	sleep 0.2
	type_text "x"
	expect_screen "1 token"
}
typed "input line"
typed "heatmap" Enter
typed "overview" F3
# The help hides the text: a letter closes it and is not typed.
keys F1
check "help: open" wait_for "attnview keys"
type_text "q"
check "help: a letter closes it" wait_for " TYPE |"
check "help: the letter is not typed" test "$(line 0 | sed 's/ *$//')" = "text> x"
keys C-q
check "Ctrl-Q with text asks first" wait_for "Quit? The text will be lost"
keys Right
check "another key stays" wait_gone "Quit?"
check "still running after the question" wait_gone "EXITED"
keys C-q
check "asks again" wait_for "Quit? The text will be lost"
keys n
check "n stays" wait_gone "Quit?"
check "n is not typed into the text" wait_for_re "^text> x *$"
keys C-q
check "asks a third time" wait_for "Quit?"
keys y
check "y quits" wait_for "EXITED 0"
tui_start 100 30 TERM=xterm-256color -- --text "abc"
expect_screen "Query 0 "
keys C-q C-q
check "Ctrl-Q twice quits" wait_for "EXITED 0"
tui_start 100 30 TERM=xterm-256color --
expect_screen "Type some text"
keys C-q
check "Ctrl-Q with no text quits at once" wait_for "EXITED 0"

finish
