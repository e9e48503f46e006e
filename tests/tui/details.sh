#!/usr/bin/env bash
# The details panel tells the truth: for cells reached by moving the cursor
# and switching heads and layers (and by a mouse click), the weight, the raw
# score, the rank in the row, the row's strongest key, the head's entropy and
# the top prediction equal what --dump computes for the same text. Masked
# cells of a causal model are shown as masked, not as zero.
. "$(dirname "$0")/lib.sh"

text="床前明月光，疑是地上霜。"
tsv="$tmpdir/dump.tsv"
"$bin" --dump --format tsv --text "$text" --model "$model_masked" >"$tsv"
"$bin" --dump --format json --top 5 --text "$text" --model "$model_masked" >"$tmpdir/dump.json"

# field L H Q K COLUMN: a column of the dump row for that cell.
field() {
	awk -F'\t' -v l="$1" -v h="$2" -v q="$3" -v k="$4" -v c="$5" \
		'NR > 1 && $1 == l && $2 == h && $3 == q && $4 == k { print $c }' "$tsv"
}

# at Q K L H: wait until the head line, the status line and the panel show this
# cell, then compare every number with the dump row of the same numbers: the
# screen numbers layers and heads from 0, as --dump does.
at() {
	local q=$1 k=$2 L=$3 H=$4 l=$3 h=$4
	checks=$((checks + 1))
	if ! wait_for "| layer $L head $H |" || ! wait_for "Query $q " ||
		! wait_for "Key   $k "; then
		fail "cursor never reached query $q key $k layer $L head $H"
		return
	fi
	local s w want
	s=$(screen)
	check "head line says layer $L head $H" grep -qF "Layer $L  Head $H  (layers 0-1, heads 0-3)" <<<"$s"
	check "panel says layer $L head $H" grep -qF "│Layer $L head $H: " <<<"$s"
	w=$(panel_weight)
	want=$(field $l $h $q $k 7)
	check "weight of ($q,$k) L$L H$H: panel $w, dump $want" close "$w" "$want" 0.000001

	local raw want_raw
	raw=$(printf '%s\n' "$s" | sed -n 's/.*│q·k \([-0-9.]*\) .*/\1/p')
	want_raw=$(field $l $h $q $k 8)
	check "raw score of ($q,$k): panel $raw, dump $want_raw" close "$raw" "$want_raw" 0.0001

	local rank want_rank
	rank=$(printf '%s\n' "$s" | sed -n 's/.*│rank *\([0-9]*\) of.*/\1/p')
	want_rank=$(awk -F'\t' -v l=$l -v h=$h -v q=$q -v w="$want" \
		'NR > 1 && $1 == l && $2 == h && $3 == q && $7 > w { r++ } END { print r + 1 }' "$tsv")
	check "rank of ($q,$k): panel $rank, dump $want_rank" test "$rank" = "$want_rank"

	# The first of the row's top keys is the row's maximum.
	local top want_top
	top=$(printf '%s\n' "$s" | sed -n '/│Top keys of row/{n;p}' | sed 's/.*│ *\([0-9]*\) .*/\1/')
	want_top=$(awk -F'\t' -v l=$l -v h=$h -v q=$q \
		'NR > 1 && $1 == l && $2 == h && $3 == q && ($7 > m || best == "") { m = $7; best = $4 } END { print best }' "$tsv")
	check "top key of row $q: panel $top, dump $want_top" test "$top" = "$want_top"

	# Entropy of the head on this text: mean over rows of -sum p ln p.
	local ent want_ent
	ent=$(printf '%s\n' "$s" | sed -n 's/.*│entropy \([0-9.]*\) nats.*/\1/p')
	want_ent=$(awk -F'\t' -v l=$l -v h=$h \
		'NR > 1 && $1 == l && $2 == h { if ($7 > 0) e -= $7 * log($7); rows[$3] = 1 }
		 END { n = 0; for (r in rows) n++; printf "%.6f\n", e / n }' "$tsv")
	check "entropy of L$L H$H: panel $ent, dump $want_ent" close "$ent" "$want_ent" 0.0006
}

# 2-column cells (--cells scroll), so that the click below lands where the
# comment says.
tui_start 120 40 TERM=xterm-256color -- --model "$model_masked" --text "$text" --cells scroll
expect_screen "Query 0 "
keys Enter
at 0 0 0 0
keys Right Right
at 0 2 0 0
keys Down
at 1 2 0 0
keys S-End
at 11 2 0 0
keys End
at 11 11 0 0
keys Tab
at 11 11 0 1
keys C-n
at 11 11 1 1
# Alt and a digit is the head's number as --dump gives it: 3 is the last of 4.
keys M-3
at 11 11 1 3
keys BTab
at 11 11 1 2
keys M-0
at 11 11 1 0
keys M-2
at 11 11 1 2
keys Up Up
at 9 11 1 2
keys Home
at 9 0 1 2
keys C-p
at 9 0 0 2
# A click on a cell (SGR mouse report, 1-based column and line): row 4,
# key 6; cells start at column 7, two columns each, rows at line 5.
type_text $'\e[<0;20;10M'
type_text $'\e[<0;20;10m'
at 4 6 0 2

# The top prediction at the Query position, as --dump --top computes it.
checks=$((checks + 1))
# Under load the pane sometimes misses the last frame drawn after a mouse
# report (the view holds the prediction and has drawn it: traced with logs,
# the cause between ncurses and tmux not found), so after 5 s one Ctrl-L
# redraws the screen; a prediction really lost would still say computing.
if wait_for "Predicted at 4 (masked)" 30 &&
	{ wait_gone "computing..." 5 || { keys C-l && wait_gone "computing..." 25; }; }; then
	pred=$(screen | sed -n '/│Predicted at 4/{n;p}' | sed 's/.*│ *\(.*\)$/\1/')
	pchar=$(printf '%s\n' "$pred" | awk '{ print $1 }')
	ppct=$(printf '%s\n' "$pred" | awk '{ sub("%", "", $NF); print $NF }')
	want=$(grep -A20 '"predictions"' "$tmpdir/dump.json" | sed -n '6p' |
		sed 's/^ *\[{"char": "\([^"]*\)", "id": [0-9]*, "p": \([0-9.e-]*\)}.*/\1 \2/')
	wchar=${want% *}
	wp=$(awk -v p="${want#* }" 'BEGIN { printf "%.1f", 100 * p }')
	check "prediction at 4: panel '$pchar' $ppct%, dump '$wchar' $wp%" \
		test "$pchar" = "$wchar" -a "$ppct" = "$wp"
else
	fail "predictions at 4 never shown"
	screen | sed 's/^/  | /'

fi

# A causal model: keys after the query are masked, drawn as such.
ctext="abcdef"
tui_start 120 40 TERM=xterm-256color -- --model "$model_causal" --text "$ctext"
expect_screen "Query 0 "
keys Enter Right Right Right
expect_screen "Key   3 "
check "masked cell says masked" wait_for "│weight masked"
row0=$(screen | grep -m1 '^▶ *0 ')
check "row 0 shows masked cells after key 0" test "$(col_of "$row0" "·")" -gt 0
# Masked cells are drawn as masked under every scale, and the fit mode's
# wide cells keep them (the row scale's maximum ignores them).
keys F4
check "log scale: masked cells still masked" bash -c 'grep -q "·" <<<"$1"' _ "$(screen | grep -m1 '^▶ *0 ')"
check "causal heading" wait_for "causal"
keys Down Down Down Down
expect_screen "Query 4 "
w=$(panel_weight)
want=$(dump_weight "$ctext" "$model_causal" 0 0 4 3)
check "causal weight (4,3): panel $w, dump $want" close "$w" "$want" 0.000001
check "causal predictions are for the next character" wait_for "Predicted after 4"

finish
