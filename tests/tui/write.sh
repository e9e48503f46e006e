#!/usr/bin/env bash
# The model writes: Ctrl-G makes a causal model go on from the
# end of the text one character at a time, the Query row on the newest; any
# key stops it (and is not typed); the characters are the ones
# --dump --generate writes with the same seed, temperature and top-k; a
# second run takes the next seed; Alt-T goes greedy; a masked model and an
# empty text are explained.
. "$(dirname "$0")/lib.sh"

text="The cat"

# The characters --dump --generate N writes after $text, as the input line
# shows them (a line break is ⏎).
dump_written() { # N ARGS...
	local n=$1
	shift
	"$bin" --dump --model "$model_causal" --text "$text" --generate "$n" --top 0 \
		--layer 0 --head 0 "$@" 2>/dev/null |
		sed -n 's/^    "text": "\(.*\)",$/\1/p' | sed 's/\\n/⏎/g; s/\\"/"/g; s/\\\\/\\/g'
}
# The input line's text after "text> ", trailing blanks dropped.
line_text() {
	line 0 | sed 's/^text> //; s/ *$//'
}
# "wrote N characters" on the info line: N.
written() {
	screen | sed -n 's/.*wrote \([0-9]*\) characters\{0,1\}.*/\1/p' | head -1
}

# ---- a masked model, an empty text ---------------------------------------------
tui_start 100 30 TERM=xterm-256color -- --text "$text"
wait_result
keys C-g
check "a masked model says which model writes" wait_for "writing needs a causal (next-character) model"
tui_start 100 30 TERM=xterm-256color -- --model "$model_causal"
keys C-g
check "an empty text asks for a beginning" wait_for "type a beginning first"

# ---- writing until a key ----------------------------------------------------------
tui_start 110 40 TERM=xterm-256color -- --model "$model_causal" --text "$text" \
	--temperature 0.8 --top-k 20 --seed 1
wait_result
keys C-g
check "the status line says it writes" wait_for "writing: any key stops"
check "the info line, with what" wait_for_re "the model writes: [0-9]+ characters?(, the last at p [01]\\.[0-9]{3})?; seed 1, temperature 0\\.8, top-k 20"
check "characters come" wait_for_re "^text> The cat.{6}"
keys z
check "any key stops" wait_for_re "wrote [0-9]+ characters"
n=$(written)
want=$(dump_written "$n" --temperature 0.8 --top-k 20 --seed 1)
got=$(line_text)
check "the $n characters are --dump --generate $n --seed 1's ('$want')" test "$got" = "$text$want"
check "the key that stopped it was not typed" test "${got: -1}" != "z" -o "${want: -1}" = "z"
check "the status line no longer says writing" wait_gone "any key stops"
tokens=$(screen | sed -n 's/.*| \([0-9]*\) tokens |.*/\1/p')
check "the Query row is on the newest character ($((tokens - 1)))" wait_for "Query $((tokens - 1)) "

# ---- to the end of the context, then the next seed ----------------------------------
keys C-u
type_text "$text"
wait_result
keys C-g
check "the second run takes the next seed" wait_for "; seed 2, temperature 0.8"
check "it stops when the context is full" wait_for "characters: the context is full" 20
n=$(written)
check "25 characters fill the context of 32" test "$n" = 25
want=$(dump_written 40 --temperature 0.8 --top-k 20 --seed 2)
check "they are --dump --generate's with seed 2" test "$(line_text)" = "$text$want"

# ---- greedy --------------------------------------------------------------------------
keys C-u
type_text "$text"
wait_result
keys M-t
check "Alt-T: the next temperature" wait_for "writing: temperature 1.0"
keys M-t M-t
check "Alt-T round to greedy" wait_for "writing: greedy, always the most likely character"
keys C-g
check "greedy on the info line" wait_for "; greedy"
check "it runs to the end of the context" wait_for "the context is full" 20
want=$(dump_written 40 --temperature 0)
check "greedy is --dump --generate --temperature 0" test "$(line_text)" = "$text$want"
finish
