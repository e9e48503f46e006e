#!/usr/bin/env bash
# The figure key: Ctrl-S writes what the screen shows. The file
# is byte for byte the one `attnview --export` writes for the same text and
# options (a head, its value contributions, a summary with values, the
# overview, the word view); a
# comparison with a pinned map is the map's difference; new names never
# exist; an existing name is replaced only after "y"; a bad name or folder is
# said and nothing is written.
. "$(dirname "$0")/lib.sh"

text="床前明月光，疑是地上霜。"
out="$tmpdir/figs"
mkdir "$out"

# ---- options ---------------------------------------------------------------
check "--figure-dir that does not exist: a usage error" \
	bash -c '"$1" --figure-dir "$2/nope" --text x; [ $? -eq 2 ]' _ "$bin" "$tmpdir"
check "--figure-format gif: a usage error" \
	bash -c '"$1" --figure-format gif --text x 2>&1 | grep -q "svg, png, pdf"' _ "$bin"

# Open the prompt, accept the name it offers; the name must be a new file in
# the figure folder, then the file is there.
# A summary or the overview needs every head of its layers from the worker:
# until they are in, Enter says "the text is still being computed" and the
# prompt stays open, and Enter again is what a user does.
save_offered() { # EXPECTED-NAME
	keys C-s
	check "the prompt offers $1" wait_for "Write figure (.svg .png .pdf): $out/$1"
	local tries=0
	keys Enter
	until wait_for "wrote $out/$1" 1; do
		tries=$((tries + 1))
		if [ $tries -ge 20 ] || ! screen | grep -qF "still being computed"; then
			break
		fi
		keys Enter
	done
	check "the status line says $1 was written" wait_for "wrote $out/$1"
	check "$1 exists" test -s "$out/$1"
}
# The figure --export makes of the same view.
export_same() { # NAME ARGS...
	local name=$1
	shift
	"$bin" --export "$tmpdir/want.svg" --force "$@" 2>/dev/null
	check "$name is byte for byte what --export $* writes" cmp -s "$out/$name" "$tmpdir/want.svg"
}

tui_start 120 40 TERM=xterm-256color -- --figure-dir "$out" --figure-format svg \
	--text "$text" --layer 0 --head 1 --scale fixed
wait_result

# ---- a head, a summary, the overview, the word view --------------------------
save_offered attnview-L0H1.svg
export_same attnview-L0H1.svg --text "$text" --layer 0 --head 1 --scale fixed
check "well-formed SVG" xmllint --noout "$out/attnview-L0H1.svg"
check "Chinese labels kept as text" grep -q ">床<" "$out/attnview-L0H1.svg"

# the value contributions (F11), as --export --contributions draws them
keys F11
check "value contributions" wait_for "value contributions: A[i][j]"
wait_result
save_offered attnview-L0H1-contributions.svg
export_same attnview-L0H1-contributions.svg --text "$text" --layer 0 --head 1 --scale fixed \
	--contributions
check "its title says so" grep -q "Layer 0, head 1, value contributions" \
	"$out/attnview-L0H1-contributions.svg"
keys F11
wait_result

# from head 1 past the last of the built-in model's 4 heads a layer
keys Tab Tab Tab F2
check "the mean of layer 0" wait_for "Layer 0  mean of heads 0-3"
save_offered attnview-L0-mean.svg
export_same attnview-L0-mean.svg --text "$text" --layer 0 --show mean --scale fixed --values

keys F2 F3
check "the overview" wait_for "L1 H3"
save_offered attnview-overview.svg
export_same attnview-overview.svg --text "$text" --overview --scale fixed
keys Escape

keys C-u
type_text "我|爱|北京|天安门。I love Beijing."
keys Tab Tab Tab Tab Tab F8
check "the word view" wait_for "word view"
wait_result
save_offered attnview-L0H1-words.svg
export_same attnview-L0H1-words.svg --text "我|爱|北京|天安门。I love Beijing." --words \
	--layer 0 --head 1 --scale fixed
keys F8
keys C-u
type_text "$text"
# The text's own result: the last text's time stays on the status line
# until it comes, and F9 pins nothing before it ("nothing to pin yet").
check "the text's result" wait_for_all_re 30 'Query +0 床' '\| 12 tokens \| [0-9]+\.[0-9] ms \|'
check "nothing computing" wait_gone "computing..." 30

# ---- a comparison with a pinned map -------------------------------------------
keys M-0 F9
check "pinned" wait_for "pinned"
keys M-1
check "head 1 minus the pinned head 0" wait_for "minus pinned layer 0 head 0"
save_offered attnview-L0H1-compare.svg
check "its title says what was subtracted" grep -q "Layer 0, head 1 minus pinned (layer 0 head 0, 12 tokens)" \
	"$out/attnview-L0H1-compare.svg"
check "well-formed SVG" xmllint --noout "$out/attnview-L0H1-compare.svg"
keys F9

# ---- names: never an existing file without asking -----------------------------
keys C-s
check "a second figure of the same head gets a new name" \
	wait_for "Write figure (.svg .png .pdf): $out/attnview-L0H1-2.svg"
keys C-u
type_text "$out/attnview-L0-mean.svg"
keys Enter
check "an existing name is asked about" wait_for "attnview-L0-mean.svg exists. Replace it? y: yes"
cp "$out/attnview-L0-mean.svg" "$tmpdir/before.svg"
keys n
check "n: not replaced" wait_for "not replaced: edit the name"
check "... and the file is as it was" cmp -s "$out/attnview-L0-mean.svg" "$tmpdir/before.svg"
keys Enter
check "asked again" wait_for "Replace it? y: yes"
keys y
check "y: replaced" wait_for "wrote $out/attnview-L0-mean.svg"
export_same attnview-L0-mean.svg --text "$text" --layer 0 --head 1 --scale fixed

# ---- bad names -----------------------------------------------------------------
keys C-s C-u
type_text "$out/x.gif"
keys Enter
check "an unknown extension is said" wait_for "must end in .svg, .png or .pdf"
keys C-u
type_text "$tmpdir/no/such/folder/x.svg"
keys Enter
check "a missing folder is said" wait_for "cannot create a temporary file in $tmpdir/no/such/folder"
keys Escape
check "Esc: nothing written" wait_for "no figure written"
check "no stray files in the folder" test "$(ls "$out" | grep -cvE '^attnview-(L0H1|L0H1-contributions|L0-mean|overview|L0H1-words|L0H1-compare)\.svg$')" -eq 0

# ---- PNG and PDF, when the build has cairo -------------------------------------
if "$bin" --version | grep -q "PNG"; then
	tui_start 100 30 TERM=xterm-256color -- --figure-dir "$out" --text "$text"
	wait_result
	save_offered attnview-L0H0.png
	check "a PNG file" bash -c 'head -c 8 "$1" | od -An -c | grep -q "P   N   G"' _ "$out/attnview-L0H0.png"
	keys C-s C-u
	type_text "$out/fig.pdf"
	keys Enter
	check "a PDF by its extension" wait_for "wrote $out/fig.pdf"
	check "a PDF file" bash -c 'head -c 5 "$1" | grep -q "%PDF-"' _ "$out/fig.pdf"
fi
finish
