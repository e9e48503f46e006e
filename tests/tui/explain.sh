#!/usr/bin/env bash
# Why a weight is what it is, on the screen and against --dump:
# the summaries after a layer's heads, the head's role, the q·k breakdown,
# value contributions, the word view, the comparison with a pinned map, and
# ablation with its loss.
. "$(dirname "$0")/lib.sh"

text="床前明月光，疑是地上霜。"
j="$tmpdir/dump.json"

# jq-less JSON reading: the number after "KEY": on the first line matching RE.
json_num() { # FILE RE KEY
	grep -m1 -E "$2" "$1" | sed -n "s/.*\"$3\": \\([-0-9.e+]*\\).*/\\1/p"
}
# Row Q, column K of the first "weights" matrix after the line matching RE.
json_cell() { # FILE RE Q K
	awk -v re="$2" -v q="$3" -v k="$4" '
		found && /\[/ && !/"weights"/ { if (row == q) { gsub(/[][ ]/, ""); split($0, a, ","); print a[k + 1]; exit } row++ }
		$0 ~ re { found = 1; row = 0 }' "$1"
}

# ---- the summaries after the heads, and the head's role --------------------
"$bin" --dump --text "$text" --aggregates --rollout --top 0 >"$j"
tui_start 120 40 TERM=xterm-256color -- --cells scroll --text "$text"
expect_screen "12 tokens"
wait_result
role=$(grep -A4 -m1 '"layer": 0, "head": 0, "scores"' "$j" | sed -n 's/.*"label": "\([^"]*\)".*/\1/p')
check "head line names the role of L0 H0 as --dump does ($role)" wait_for_re "Head 0 .*$role [01]\\.[0-9][0-9]"
keys Enter Down Down Right
expect_screen "Query 2 "
keys Tab Tab Tab Tab
check "after the 4th head: the mean of the layer's heads" wait_for "Layer 0  mean of heads 0-3"
want=$(json_cell "$j" '"layer": 0, "kind": "mean"' 2 1)
# A summary waits for every head of its layer from the worker ("computing..."
# until then): the panel's weight is read once it is there.
check "the mean's weight in the panel" wait_for_re "│weight [0-9]"
got=$(panel_weight)
check "mean of layer 0 at (2,1): panel $got, dump $want" close "$got" "$want" 0.000001
keys Tab
check "then the max" wait_for "Layer 0  max of heads 0-3"
keys Tab
check "then the rollout" wait_for "rollout through layer 0"
want=$(json_cell "$j" '"rollout": \[' 2 1)
check "the rollout's weight in the panel" wait_for_re "│weight [0-9]"
got=$(panel_weight)
check "rollout R_0 at (2,1): panel $got, dump $want" close "$got" "$want" 0.000001
keys Tab
check "then all heads" wait_for "mean of all 8 heads"
keys Tab
check "and round to head 0" wait_for "Layer 0  Head 0"

# ---- the q·k breakdown -----------------------------------------------------------
"$bin" --dump --text "$text" --query 2 --key 1 --layer 0 --head 1 --top 0 >"$j"
keys Tab F12
check "breakdown page" wait_for "q·k L0 H1"
check "breakdown computed" wait_for "= weight"
s=$(screen)
got=$(sed -n 's/.*│sum  q·k = \([-0-9.]*\).*/\1/p' <<<"$s")
want=$(json_num "$j" '"dot"' score)
check "q·k of (2,1) in L0 H1: panel $got, dump $want" close "$got" "$want" 0.0001
got=$(sed -n 's/.*│= weight \([0-9.e-]*\).*/\1/p' <<<"$s")
want=$(json_num "$j" '"row_max"' weight)
check "weight at the end of the breakdown: panel $got, dump $want" close "$got" "$want" 0.000002
check "the products are listed by size, coloured" grep -qE "│ +[0-9]+ +[-0-9.]+ +[-0-9.]+ +[-+][0-9.]+" <<<"$s"
keys F12

# ---- value contributions -----------------------------------------------------------
"$bin" --dump --text "$text" --contributions --layer 0 --head 1 --top 0 >"$j"
keys F11
check "contributions on the map" wait_for "contributions"
check "the value's norm in the panel" wait_for "× |v_j W_O|"
got=$(screen | sed -n 's/.*│A\[i\]\[j\] [0-9.e+-]* × |v_j W_O| \([0-9.e+-]*\).*/\1/p')
want=$(grep -A1 '"layer": 0, "head": 1,' "$j" | grep -m1 value_norms | sed 's/.*\[//; s/\].*//' | cut -d, -f2 | tr -d ' ')
# The panel prints four significant digits: half its last digit (of the value
# in e-notation), and the kernels' 1e-4
decimals=$(sed -n 's/^[0-9]*\.\([0-9]*\)$/\1/p' <<<"$got")
tol=$(awk -v d="${#decimals}" -v g="$got" 'BEGIN { t = g ~ /e/ ? 0.0005 * (g < 0 ? -g : g) : 0.5 * 10 ^ -d
	printf "%.6g", t + 0.0001 }')
check "norm of key 1's value: panel $got, dump $want (to $tol)" close "$got" "$want" "$tol"
keys F11

# ---- ablation --------------------------------------------------------------------------
"$bin" --dump --text "$text" --ablate 0.1 --layer 0 --head 1 --top 0 >"$j"
keys M-a
check "the head is marked OFF" wait_for "Head 1 OFF"
check "loss computed" wait_for_re "│loss [0-9.]+ → [0-9.]+ nats/char" 30
got=$(screen | sed -n 's/.*│loss \([0-9.]*\) → \([0-9.]*\) nats.*/\1 \2/p')
before=$(json_num "$j" '"loss_before"' loss_before)
after=$(json_num "$j" '"loss_after"' loss_after)
check "loss before: panel ${got% *}, dump $before" close "${got% *}" "$before" 0.0006
check "loss after: panel ${got#* }, dump $after" close "${got#* }" "$after" 0.0006
# the mean-ablated loss, drawn after the others: the dump's
check "mean-ablated loss computed" wait_for_re "│loss with its mean output: [0-9.]+" 30
mean=$(screen | sed -n 's/.*│loss with its mean output: \([0-9.]*\).*/\1/p')
want=$(json_num "$j" '"loss_mean"' loss_mean)
check "mean-ablated loss: panel $mean, dump $want" close "$mean" "$want" 0.0006
w=$(panel_weight)
want=$(json_cell "$j" '"layer": 0, "head": 1,$' 2 1)
check "the ablated model's weight at (2,1): panel $w, dump $want" close "$w" "$want" 0.000001
keys F3
check "the overview marks it too" wait_for "L0 H1 OFF"
keys Escape M-a
check "on again" wait_gone "OFF"

# ---- the word view ---------------------------------------------------------------------
wtext="ab cd|ef"
"$bin" --dump --text "$wtext" --words --layer 0 --head 0 --top 0 >"$j"
tui_start 120 40 TERM=xterm-256color -- --cells scroll --text "$wtext"
expect_screen "8 tokens"
keys F8
check "word view: the mark is not a token" wait_for "7 tokens"
check "word view heading" wait_for "  words"
check "three words" wait_for_re "^▶? +0 ab +"
s=$(screen)
check "word 1 is cd" grep -qE "^ +1 cd " <<<"$s"
check "word 2 is ef" grep -qE "^ +2 ef " <<<"$s"
keys Enter Down Right Right
expect_screen "Query 1 cd"
want=$(json_cell "$j" '^    "attention": \[' 1 2)
got=$(panel_weight)
check "word attention (cd, ef): panel $got, dump $want" close "$got" "$want" 0.000001

# ---- compare ---------------------------------------------------------------------------
"$bin" --dump --text "他说你好" --compare "她说你好" --layer 0 --head 0 --top 0 >"$j"
tui_start 120 40 TERM=xterm-256color -- --cells scroll --text "她说你好"
expect_screen "4 tokens"
wait_result
keys F9
check "pinned" wait_for "pinned layer 0 head 0"
keys Home Delete
type_text "他"
check "the map is now minus pinned" wait_for "minus pinned"
keys Enter Right
expect_screen "Key   1 "
s=$(screen)
now=$(sed -n 's/.*│now *\([0-9.e-]*\).*/\1/p' <<<"$s")
pinned=$(sed -n 's/.*│pinned *\([0-9.e-]*\).*/\1/p' <<<"$s")
diff=$(sed -n 's/.*│difference \([-+0-9.e]*\).*/\1/p' <<<"$s")
want=$(json_cell "$j" '"differences"' 0 1)
check "difference at (0,1): panel $diff, dump $want" close "$diff" "$want" 0.000002
check "now minus pinned is the difference" close "$(awk -v a="$now" -v b="$pinned" 'BEGIN { print a - b }')" "$diff" 0.000002
check "a diverging ramp: near-white for 0 on the bar" grep -q "0" <<<"$(line 13)"
keys F9
check "unpinned" wait_gone "minus pinned"

finish
