#!/usr/bin/env bash
# attnview --export as a user meets it (test_figure checks the pictures):
# every view it can draw gives a well-formed figure; bad requests and bad
# places get a message naming the file, exit 2 (usage) or 1, and leave no
# file, no temporary file, and an existing file as it was. In a build
# without cairo, .png and .pdf say what to install and .svg still works.
set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
causal="$data/golden/fwd_causal.attn"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
EXPECT_TIMEOUT=60 EXPECT_SHOW=800
poem='床前明月光，疑是地上霜。'

# absent FILE...: nothing written, no temporary file beside it.
absent() {
	local f
	for f in "$@"; do
		checks=$((checks + 1))
		[ -e "$f" ] && fail "$f was written"
		ls "$f".tmp.* >/dev/null 2>&1 && fail "a temporary file of $f was left"
	done
}

xml_ok() {
	checks=$((checks + 1))
	if command -v xmllint >/dev/null; then
		xmllint --noout "$1" 2>&1 || fail "$1 is not well-formed XML"
	else
		fail "xmllint is missing (apt-get install libxml2-utils)"
	fi
}

if "$bin" --version | grep -q '^figures: SVG, PNG, PDF'; then
	formats=(svg png pdf)
else
	formats=(svg)
	# -- a build without cairo and pango: what to install, no file.
	for e in png pdf; do
		expect 1 "fig\.$e: attnview was built without cairo and pango: PNG and PDF need libcairo2-dev and libpango1\.0-dev at build time; \.svg works" -- \
			"$bin" --export "$tmp/fig.$e" --text "$poem"
		absent "$tmp/fig.$e"
	done
fi

# -- every view, in every format this build writes; each run says what it
# wrote, on standard error (it used to say nothing).
wrote='^attnview: wrote .+\.(svg|png|pdf) \((svg|png|pdf), [0-9]+ KB\)$'
views=("--layer 1 --head 2" "--show mean --layer 1" "--show max" "--rollout" "--show rollout --layer 0"
	"--show all" "--overview" "--words --show mean" "--compare 床前明月光，疑是地上雪。"
	"--scale log --colormap cividis --values" "--scale head --title 静夜思"
	"--contributions --layer 1 --head 3" "--show contributions --words --values"
	"--contributions --compare 床前明月光，疑是地上雪。"
	"--query 9 --key 2 --layer 1 --head 1 --values" "--lens --values" "--dla"
	"--patch 床前明月光，疑是地上雪。")
for e in "${formats[@]}"; do
	i=0
	for v in "${views[@]}"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		expect 0 "$wrote" -- "$bin" --export "$tmp/v$i.$e" --text "$poem" $v
		checks=$((checks + 1))
		[ -s "$tmp/v$i.$e" ] || fail "--export $v wrote no $e"
		[ "$e" = svg ] && xml_ok "$tmp/v$i.svg"
	done
	expect 0 "$wrote" -- "$bin" --export "$tmp/causal.$e" --model "$causal" --text 'abc ab' --values
	printf '我|爱|北京|天安门。\n' >"$tmp/words.txt"
	expect 0 "$wrote" -- "$bin" --export "$tmp/words.$e" --input "$tmp/words.txt" --words
	# the training timeline (test_figure checks the picture)
	expect 0 "$wrote" -- "$bin" --export "$tmp/timeline.$e" --timeline \
		--model "$data/fuzz/seeds/model/timeline_causal.attn"
	checks=$((checks + 1))
	[ -s "$tmp/timeline.$e" ] || fail "--export --timeline wrote no $e"
done
xml_ok "$tmp/timeline.svg"
expect 1 'has no training timeline' -- "$bin" --export "$tmp/nt.svg" --timeline --model "$causal"
absent "$tmp/nt.svg"
expect 2 '--timeline draws the training timeline, every head, without a text' -- \
	"$bin" --export "$tmp/u.svg" --timeline --text a --model "$causal"
# Options that would be ignored beside the timeline are refused.
for o in --words "--compare b" --faithfulness --lens "--query 0 --key 0"; do
	# shellcheck disable=SC2086
	expect 2 '--timeline draws the training timeline' -- "$bin" --export "$tmp/u.svg" \
		--timeline $o --model "$data/fuzz/seeds/model/timeline_causal.attn"
done
# The word marks split Chinese words and are not text the model reads.
checks=$((checks + 1))
grep -q '>天安门</text>' "$tmp/words.svg" && ! grep -q '>|</text>' "$tmp/words.svg" ||
	fail "words.svg: the marked words are not the labels"
checks=$((checks + 1))
grep -q 'url(#masked)' "$tmp/causal.svg" || fail "causal.svg: no masked cells"
checks=$((checks + 1))
grep -q '>静夜思</text>' "$tmp/v11.svg" || fail "--title: not the figure's title"
# A figure of value contributions is titled with their label, the one
# --dump gives them (test_dump: the contributions', not the weights').
label=$("$bin" --dump --text "$poem" --contributions --layer 1 --head 3 |
	grep -o '"label": "[^"]*"' | tail -n 1 | sed 's/^"label": "//; s/"$//')
checks=$((checks + 1))
[ -n "$label" ] && grep -qF "Layer 1, head 3, value contributions ($label " "$tmp/v12.svg" ||
	fail "v12.svg: not titled with the contributions' label \"$label\""
# --query/--key: the score split's terms, named by part, summing to the
# title's q·k (the built-in model's layer 1: 3 + 1 x 6 parts a side).
split=$tmp/v$((${#views[@]} - 3)).svg
checks=$((checks + 1))
[ "$(grep -c 'class="cell"' "$split")" -eq $((9 * 9)) ] && grep -q '>L0H3</text>' "$split" &&
	grep -q '>Score by source: layer 1, head 1, query 9' "$split" ||
	fail "--query --key: not the score split's 9 x 9 terms"
# --lens: 2 blocks x 12 positions; --dla and --patch: 8 heads x 12
# positions (and a last column "all" of a head patched everywhere), each
# cell's tooltip naming its row and column.
checks=$((checks + 1))
lens=$tmp/v$((${#views[@]} - 2)).svg dla=$tmp/v$((${#views[@]} - 1)).svg patch=$tmp/v${#views[@]}.svg
[ "$(grep -c 'class="cell"' "$lens")" -eq $((2 * 12)) ] && grep -q '>L1</text>' "$lens" &&
	grep -q '<title>block 1 L1 · position 11 。' "$lens" &&
	[ "$(grep -c 'class="cell"' "$dla")" -eq $((8 * 12)) ] && grep -q '>L1H3</text>' "$dla" &&
	[ "$(grep -c 'class="cell"' "$patch")" -eq $((8 * 13)) ] &&
	grep -q '<title>head 0 L0H0 · patched position: all' "$patch" ||
	fail "--lens, --dla, --patch: not their tables"
# The positions are numbered, "all" is not (a 12 over it, or in its cells'
# tooltips, read as a 13th).
checks=$((checks + 1))
grep -q '>10</text>' "$patch" && ! grep -q '>12</text>' "$patch" &&
	! grep -q 'position 12' "$patch" ||
	fail "--patch: the column \"all\" numbered as a position"
expect 2 'figures of their own' -- "$bin" --export "$tmp/u.svg" --text ab --lens --dla
# --faithfulness: a cell for every correlation --dump defines (heads x
# positions), none where it is undefined (a row with no loss or too few keys).
expect 0 "$wrote" -- "$bin" --export "$tmp/faith.svg" --model "$causal" --text 'abcab ab' \
	--faithfulness
defined=$("$bin" --dump --format tsv --faithfulness --model "$causal" --text 'abcab ab' |
	awk -F'\t' 'NR > 1 { for (i = 4; i <= NF; i++) n += $i != "nan" } END { print n + 0 }')
checks=$((checks + 1))
[ "$defined" -gt 0 ] && [ "$(grep -c 'class="cell"' "$tmp/faith.svg")" -eq "$defined" ] &&
	grep -q '>Faithfulness: each head' "$tmp/faith.svg" ||
	fail "--faithfulness: not a cell for each of the dump's $defined correlations"
expect 2 'figures of their own' -- "$bin" --export "$tmp/u.svg" --text ab --faithfulness --dla
expect 2 'every block and head' -- "$bin" --export "$tmp/u.svg" --text ab --dla --layer 1
expect 1 'same length' -- "$bin" --export "$tmp/u.svg" --text ab --patch abc
expect 2 'go together' -- "$bin" --export "$tmp/u.svg" --text ab --query 1
expect 2 "one head's score split" -- "$bin" --export "$tmp/u.svg" --text ab --query 1 --key 0 \
	--show mean
expect 1 "mask hides that key" -- "$bin" --export "$tmp/u.svg" --model "$causal" --text ab \
	--query 0 --key 1
absent "$tmp/u.svg"
# A title with controls and invalid UTF-8 still gives well-formed XML.
expect 0 "$wrote" -- "$bin" --export "$tmp/odd.svg" --text ab --title $'a\x01b\xffc\nd'
xml_ok "$tmp/odd.svg"

# -- usage errors: exit 2 and nothing written.
expect 2 'fig\.jpg: the file name must end in \.svg, \.png or \.pdf' -- \
	"$bin" --export "$tmp/fig.jpg" --text "$poem"
expect 2 'fig: the file name must end in' -- "$bin" --export "$tmp/fig" --text "$poem"
absent "$tmp/fig.jpg" "$tmp/fig"
expect 2 'exactly one of --text TEXT or --input FILE' -- "$bin" --export "$tmp/u.svg"
expect 2 '--head goes with --show head' -- "$bin" --export "$tmp/u.svg" --text a --show mean --head 1
expect 2 'leave out --layer' -- "$bin" --export "$tmp/u.svg" --text a --show all --layer 0
expect 2 'leave out --layer' -- "$bin" --export "$tmp/u.svg" --text a --overview --layer 1
expect 2 '--values needs one heatmap' -- "$bin" --export "$tmp/u.svg" --text a --overview --values
expect 2 "--show takes head, mean, max, rollout, all, contributions or overview, not 'heads'" -- \
	"$bin" --export "$tmp/u.svg" --text a --show heads
expect 2 "--scale takes fixed, head, row, log or lift" -- "$bin" --export "$tmp/u.svg" --text a --scale x
expect 2 "--colormap takes viridis or cividis" -- "$bin" --export "$tmp/u.svg" --text a --colormap x
expect 2 '--layer 2 is out of range: this model has layers 0\.\.1' -- "$bin" --export "$tmp/u.svg" --text a --layer 2
expect 2 'cannot be combined' -- "$bin" --export "$tmp/u.svg" --dump --text a
expect 2 "unknown or incomplete option '--bogus' for --export" -- \
	"$bin" --export "$tmp/u.svg" --text a --bogus
absent "$tmp/u.svg"

# -- bad text: exit 1, nothing written.
expect 1 'invalid UTF-8 at byte 1 of --text' -- "$bin" --export "$tmp/t.svg" --text $'a\xc3'
expect 1 'invalid UTF-8 at byte 1 of --compare' -- \
	"$bin" --export "$tmp/t.svg" --text a --compare $'b\xc3'
expect 1 'nothing but word marks' -- "$bin" --export "$tmp/t.svg" --text '||' --words
absent "$tmp/t.svg"

# -- --circuits: from the weights alone, two pictures: the positional
# patterns (a tile per head, titled with its peak) and the composition.
# It says it wrote each, on standard error.
expect 0 "$wrote" -- "$bin" --export "$tmp/circ.svg" --model "$causal" --circuits
checks=$((checks + 1))
[ "$("$bin" --export "$tmp/circ3.svg" --model "$causal" --circuits 2>&1 >/dev/null |
	grep -cE 'wrote .*circ3(-composition)?\.svg \(svg, [0-9]+ KB\)$')" = 2 ] ||
	fail "--export --circuits does not say it wrote both files"
xml_ok "$tmp/circ.svg"
xml_ok "$tmp/circ-composition.svg"
checks=$((checks + 1))
grep -q 'L0 H0 peak' "$tmp/circ.svg" && grep -q 'K composition' "$tmp/circ-composition.svg" ||
	fail "circ.svg and circ-composition.svg lack their titles"
# Neither is written when the second exists.
cp "$tmp/circ-composition.svg" "$tmp/circ2-composition.svg"
expect 1 'circ2-composition\.svg: exists; it was left untouched' -- \
	"$bin" --export "$tmp/circ2.svg" --model "$causal" --circuits
absent "$tmp/circ2.svg"
expect 2 'weights alone: leave out the text' -- "$bin" --export "$tmp/u.svg" --circuits --text a
# ... and the other figures, which it would leave out.
for o in --lens --dla --faithfulness "--patch b" "--query 0 --key 0" --timeline; do
	# shellcheck disable=SC2086
	expect 2 'and the other figures' -- "$bin" --export "$tmp/u.svg" --circuits $o \
		--model "$causal"
done

# -- an existing file is never overwritten without asking.
echo mine >"$tmp/keep.svg"
expect 1 'keep\.svg: exists; it was left untouched \(add --force to replace it\)' -- \
	"$bin" --export "$tmp/keep.svg" --text "$poem"
checks=$((checks + 1))
[ "$(cat "$tmp/keep.svg")" = mine ] || fail "keep.svg was changed"
expect 0 "$wrote" -- "$bin" --export "$tmp/keep.svg" --text "$poem" --force
xml_ok "$tmp/keep.svg"
mkdir "$tmp/dir.svg"
expect 1 'dir\.svg: is a directory' -- "$bin" --export "$tmp/dir.svg" --text "$poem" --force

# -- places that cannot be written: the file, the folder and the reason.
expect 1 'nope/fig\.svg: cannot create a temporary file in .*nope: No such file or directory' -- \
	"$bin" --export "$tmp/nope/fig.svg" --text "$poem"
mkdir "$tmp/ro"
if [ "$(id -u)" -eq 0 ]; then
	# root writes anywhere: the unwritable folder is tried as nobody.
	if command -v setpriv >/dev/null; then
		chmod 755 "$tmp" "$tmp/ro"
		as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
	else
		as_user=()
		echo "note: root without setpriv; the unwritable folder is skipped"
	fi
else
	chmod 555 "$tmp/ro"
	as_user=(env)
fi
if ((${#as_user[@]})); then
	for e in "${formats[@]}"; do
		expect 1 "ro/fig\.$e: cannot create a temporary file in .*ro: Permission denied" -- \
			"${as_user[@]}" "$bin" --export "$tmp/ro/fig.$e" --text "$poem"
		absent "$tmp/ro/fig.$e"
	done
fi

# -- a disk that fills up while the figure is written (RLIMIT_FSIZE stands
# in for it: write fails with EFBIG, as with ENOSPC): no file, and with
# --force an existing figure as it was.
for e in "${formats[@]}"; do
	expect 1 "full\.$e: writing failed after [0-9]+ (of [0-9]+ )?bytes; the file was not created: File too large" -- \
		bash -c 'trap "" XFSZ; ulimit -f 8; exec "$@"' _ "$bin" --export "$tmp/full.$e" \
		--text "$poem" --values
	absent "$tmp/full.$e"
	echo old >"$tmp/old.$e"
	expect 1 "old\.$e: writing failed after .*; the previous file is unchanged: File too large" -- \
		bash -c 'trap "" XFSZ; ulimit -f 8; exec "$@"' _ "$bin" --export "$tmp/old.$e" \
		--text "$poem" --values --force
	checks=$((checks + 1))
	[ "$(cat "$tmp/old.$e")" = old ] || fail "old.$e was changed by a failed write"
	ls "$tmp"/old."$e".tmp.* >/dev/null 2>&1 && fail "a temporary file of old.$e was left"
done

echo "figure_cli: $checks checks, $fails failed (formats: ${formats[*]})"
[ "$fails" -eq 0 ]
