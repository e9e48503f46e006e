#!/usr/bin/env bash
# The models of recorded steps in the view (--keep-steps, doc/timeline.md):
# the timeline screen (Alt-H) marks the steps whose model a short lab run
# kept, Enter on one shows that step's weights on the same text (the panel
# against --dump of the kept file, and not the final model's), and End, Enter
# brings the final model back.
. "$(dirname "$0")/lib.sh"

text=xqbmkwtrjqbmkwtrj
out="$tmpdir/ind.attn"
"$bin" --train --task induction --steps 240 --timeline-every 40 --keep-steps 2 --threads 1 \
	-o "$out" >"$tmpdir/train.log" 2>&1 || { cat "$tmpdir/train.log"; exit 1; }
step80="$out.steps/step-000080.attn"

tui_start 160 36 TERM=xterm-256color -- --model "$out" --text "$text" --layer 1 --head 0
wait_result
keys M-h
check "the timeline opens on the last step" wait_for "Training timeline: step 240 of 240"
# Records 0, 40, ..., 240 in columns 8..14 of the axis: kept 0, 80, 160, 240.
axis=$(screen | grep -E '^ {8}[◆─▲┼]+ *$' | head -1)
check "the axis marks the kept steps: '$axis'" test "${axis:8:7}" = "◆─◆─◆─▲"
keys Home Right
check "step 40 has no kept model" wait_for "◆ marks the steps whose model is kept"
keys Enter
check "Enter there says none was kept" wait_for "no model of step 40 was kept"
keys Right
check "step 80 has one" wait_for "◆ The model of this step is kept: Enter shows its weights"
keys Enter
check "Enter shows it" wait_for "The view shows the model of step 80; End, then Enter" 10
check "the timeline is still the whole run's" wait_for "step 80 of 240"
keys Escape
# The status line names the screen first: the timeline's is TIMELINE, so
# the model's name alone would not tell whether Esc was read yet.
check "Esc leaves the timeline" wait_for_re '^ (TYPE|MAP) \|' 10
check "the status line names step 80" wait_for "| induction (step 80) |" 10
wait_result
check "the text stays" grep -qF "text> $text" <<<"$(line 0)"
keys Enter Down Down Down Right
expect_screen "Query 3 "
got=$(panel_weight)
want=$(dump_weight "$text" "$step80" 1 0 3 1)
final=$(dump_weight "$text" "$out" 1 0 3 1)
check "the weight shown is step 80's: panel $got, --dump $want" close "$got" "$want" 0.000001
check "not the final model's ($final)" test "$want" != "$final"

keys M-h
check "back in the timeline, on step 80" wait_for "Training timeline: step 80 of 240"
# The timeline hides the text, and its editing keys leave it alone.
keys C-u C-w C-k
keys End Enter
check "End, Enter: the final model again" wait_for "◆ The model of this step is kept" 10
keys Escape
check "Esc leaves the timeline again" wait_for_re '^ (TYPE|MAP) \|' 10
check "the status line names the final model" wait_for "| induction (step 240, val " 10
wait_result
check "the editing keys in the timeline left the text" grep -qF "text> $text" <<<"$(line 0)"
got=$(panel_weight)
check "the weight shown is the final model's: panel $got, --dump $final" close "$got" "$final" 0.000001
keys C-q

# A kept model opened as such (its path, or --model OUT --step 80): its
# timeline, records 0, 40 and 80, marks the steps kept beside OUT.
for how in "--model $step80" "--model $out --step 80"; do
	# shellcheck disable=SC2086
	tui_start 160 36 TERM=xterm-256color -- $how --text "$text"
	wait_result
	keys M-h
	check "$how: the timeline ends at step 80" wait_for "Training timeline: step 80 of 80"
	axis=$(screen | grep -E '^ {8}[◆─▲┼]+ *$' | head -1)
	check "$how: the axis marks steps 0 and 80 kept: '$axis'" test "${axis:8:3}" = "◆─▲"
	keys Home
	check "$how: Enter on step 0 would show it" \
		wait_for "◆ The model of this step is kept: Enter shows its weights"
	keys C-q
done

# A timeline that went on from another model's (--init) at another K: 20
# steps recorded every 2, then 20 every 10; 13 records, laid out by step, so
# step 20 (record 11) is the middle column of 13, not the 11th.
printf 'the cat sat on the mat; the dog sat on the log. %.0s' $(seq 1 60) >"$tmpdir/en.txt"
"$bin" --train "$tmpdir/en.txt" --dim 16 --heads 2 --layers 1 --context 16 --batch 4 \
	--steps 20 --timeline-every 2 --threads 1 -o "$tmpdir/a.attn" >/dev/null 2>&1
"$bin" --train "$tmpdir/en.txt" --init "$tmpdir/a.attn" --steps 20 --timeline-every 10 \
	--threads 1 -o "$tmpdir/b.attn" >/dev/null 2>&1
tui_start 160 36 TERM=xterm-256color -- --model "$tmpdir/b.attn" --text "the cat"
wait_result
keys M-h
check "the continued timeline opens on its last step" wait_for "step 40 of 40 (record 13 of 13)"
keys Home
for _ in $(seq 10); do keys Right; done
check "record 11 is step 20" wait_for "step 20 of 40 (record 11 of 13)"
axis=$(screen | grep -E '^ {8}[◆─▲┼]+ *$' | head -1)
check "step 20 is drawn half way along the axis: '$axis'" test "${axis:8:13}" = "──────▲──────"
keys C-q
finish
