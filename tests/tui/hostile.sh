#!/usr/bin/env bash
# A model whose name is a terminal command: the view's status line
# shows the name quoted as --info does (\e, \a, \xc2\x9b), the key hint whole
# after it; the terminal's title and colours are untouched; a reload notice
# quotes the file's name too.
. "$(dirname "$0")/lib.sh"

corpus="$data/data/corpus/mixed.txt"
# The output's name becomes the model's: OSC title, red SGR, a C1 CSI.
base=$'x\e]0;pwned\a\e[31mRED\xc2\x9b'
m="$tmpdir/$base.attn"
"$bin" --train "$corpus" --dim 16 --heads 2 --layers 1 --context 16 --batch 4 --steps 20 \
	--threads 1 -o "$m" >"$tmpdir/train.log" 2>&1 ||
	{ echo "cannot train the model:"; cat "$tmpdir/train.log"; exit 1; }
shown='"x\e]0;pwned\a\e[31mRED\xc2\x9b"'

cols=150
tui_start "$cols" 30 TERM=xterm-256color -- --model "$m" --text "the cat"
wait_result
status=$(screen | grep -E '^ (TYPE|MAP) \|')
check "the status line shows the name quoted: $status" grep -qF " | $shown (step 20" <<<"$status"
check "the key hint is whole at the end" grep -qE 'F1 help *$' <<<"$status"
check "the title was not set" test "$(tvar pane_title)" != "pwned"
# No red foreground anywhere (SGR 31 from the name would colour what follows);
# palette colour 31 (38;5;31, a blue of the ramp) is not red.
no_red() {
	! screen_esc | sed -E 's/[34]8;5;[0-9]+//g' | grep -qE $'\e\\[([0-9;]*;)?31m'
}
check "no red text" no_red

# A reload: the notice names the file quoted.
cp "$m" "$m.new" && mv "$m.new" "$m"
check "the reload notice quotes the file's name" wait_for "reloaded \"$tmpdir/x\\e]0;pwned" 5
finish
