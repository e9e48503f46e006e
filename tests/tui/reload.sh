#!/usr/bin/env bash
# Watching a model learn: attnview --model FILE loads FILE again
# when it is replaced, and FILE.ckpt while a --train run writing FILE has
# only its checkpoint; the text, cursor, head and scale stay; the status line
# shows the step and validation loss; a file that does not load is reported
# and the model shown stays. First with files replaced by hand, then the
# two-pane recipe of doc/training.md with a real training run.
. "$(dirname "$0")/lib.sh"

corpus="$data/data/corpus/mixed.txt"
text="the moon is bright"
small=(--dim 32 --heads 4 --layers 2 --context 32 --batch 8 --threads 1 --eval-every 50
	--checkpoint-every 0)
m="$tmpdir/m.attn"

# Replace FILE with SRC as a training run does: a new file renamed over it.
replace() { # SRC FILE
	cp "$1" "$2.new" && mv "$2.new" "$2"
}
status_line() {
	screen | grep -E '^ (TYPE|MAP) \|'
}
# The validation loss on the status line after "step N, val ".
status_val() { # N
	status_line | sed -n "s/.*(step $1, val \([0-9.]*\)).*/\1/p"
}
info_val() { # FILE
	"$bin" --info --model "$1" | sed -n 's/^validation loss: \([0-9.]*\).*/\1/p'
}

# ---- files replaced by hand --------------------------------------------------
"$bin" --train "$corpus" "${small[@]}" --steps 100 -o "$tmpdir/a.attn" >"$tmpdir/a.log" 2>&1 ||
	{ echo "cannot train the first model:"; cat "$tmpdir/a.log"; exit 1; }
"$bin" --train "$corpus" "${small[@]}" --steps 300 --seed 7 -o "$tmpdir/b.attn" >/dev/null 2>&1 ||
	{ echo "cannot train the second model"; exit 1; }
cp "$tmpdir/a.attn" "$m"

tui_start 120 36 TERM=xterm-256color -- --model "$m" --text "$text" --layer 1 --head 2 \
	--scale fixed --cells scroll
wait_result
check "status line: the model's step and validation loss" wait_for_re "\\| a \\(step 100, val [0-9]\\.[0-9]{3}\\) \\|"
keys Left Left Left
keys Enter Down Down Right
expect_screen "Query 2 "
before=$(panel_weight)

replace "$tmpdir/b.attn" "$m"
check "the replaced file is loaded: step 300" wait_for "| b (step 300, val " 5
got=$(status_val 300)
want=$(info_val "$tmpdir/b.attn")
check "with its validation loss: $got, --info $want" close "$got" "$want" 0.0006
check "a note says what was loaded" wait_for_re "reloaded .*m\\.attn: step 300, val [0-9.]+ \\([0-9]+ ms\\)"
wait_result
check "the text stays" grep -qF "text> $text" <<<"$(line 0)"
check "the head stays" wait_for "Layer 1  Head 2"
check "the scale stays" grep -qF "fixed" <<<"$(screen)"
check "the query row and key column stay" wait_for "Query 2 "
check "still on the map" grep -qE '^ MAP \|' <<<"$(status_line)"
after=$(panel_weight)
want=$(dump_weight "$text" "$tmpdir/b.attn" 1 2 2 1)
check "the weight shown is the new model's: panel $after, --dump $want" close "$after" "$want" 0.000001
check "and not the old one's ($before)" test "$after" != "$before"
type_text "X"
check "the text cursor stayed where it was (3 from the end)" wait_for "text> the moon is briXght"
keys BSpace

# A file that is not a model: said, and the model shown stays.
printf 'ATTNVIEW truncated' >"$tmpdir/bad"
replace "$tmpdir/bad" "$m"
check "a file that does not load is reported" wait_for "changed but could not be loaded (keeping the model shown)" 5
check "and the model shown stays" wait_for "| b (step 300,"
replace "$tmpdir/a.attn" "$m"
check "the next good file loads" wait_for "| a (step 100," 5

# ---- the two-pane recipe: train in one, watch in the other -------------------
rm -f "$m"
"$bin" --train "$corpus" --dim 32 --heads 4 --layers 2 --context 32 --batch 8 --threads 1 \
	--steps 600 --eval-every 50 --checkpoint-every 50 -o "$m" >"$tmpdir/train.log" 2>&1 &
train_pid=$!
for ((i = 0; i < 500; i++)); do
	[ -e "$m.ckpt" ] && break
	sleep 0.01
done
check "a training run writes its checkpoint when it starts" test -e "$m.ckpt"
check "... and not the model yet" test ! -e "$m"
tui_start 120 36 TERM=xterm-256color -- --model "$m" --text "$text"
wait_result
check "the view opens the checkpoint while the model does not exist" wait_for_re "^ TYPE \\| m( \\(step [0-9]+|) "
seen=$(status_line)
wait "$train_pid"
check "the training run ended well" test $? -eq 0
check "the model written after the finished run's state" test ! "$m.ckpt" -nt "$m"
check "the view ends on the final model: step 600" wait_for "m (step 600, val " 5
# The checkpoint of step 600 (its validation loss from the last evaluation)
# may be on screen a moment before the final model (the full validation's).
want=$(info_val "$m")
final_val() {
	local i
	for ((i = 0; i < 100; i++)); do
		got=$(status_val 600)
		close "$got" "$want" 0.0006 && return 0
		sleep 0.05
	done
	echo "the status line's validation loss: $got" >&2
	return 1
}
check "with its validation loss, --info's $want within 0.0006, in 5 s" final_val
echo "first status line seen: $seen"
finish
