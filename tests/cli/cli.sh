#!/usr/bin/env bash
# The command line as a user meets it: exit statuses (0 ok, 1 runtime error,
# 2 usage error), messages that name the file, and dump output shapes.
set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
model="$data/golden/fwd_masked.attn"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0

# expect STATUS PATTERN -- command...: the exit status must be STATUS and the
# combined output must match the extended regex PATTERN.
expect() {
	local want=$1 pattern=$2
	shift 3
	checks=$((checks + 1))
	local out status
	out=$("$@" 2>&1)
	status=$?
	if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
		fails=$((fails + 1))
		printf 'FAIL: %s\n  status %s (want %s), output:\n%s\n' "$*" "$status" "$want" \
			"$(head -c 600 <<<"$out")" >&2
	fi
}

expect 0 'OpenBLAS kernel: [A-Za-z0-9]+' -- "$bin" --version
expect 0 'Usage: attnview' -- "$bin" --help
expect 0 '"n_tokens": 2' -- "$bin" --dump --text '你好' --model "$model"
expect 0 '^objective: masked' -- "$bin" --info --model "$model"
# attnview's own model: its count alone (a converted one's says what it adds)
expect 0 '^parameters: [0-9]+$' -- "$bin" --info --model "$model"
expect 0 '^seed: [0-9]+$' -- "$bin" --info --model "$model"
# Each head says which lines its line-parallel rows count (every head, one
# of the three values), and the rows it counts are those: both sides, the
# 23 rows of a poem of four lines; one side, the rows with a line there.
poem=$'床前明月光\n疑是地上霜\n举头望明月\n低头思故乡'
checks=$((checks + 1))
sides=$("$bin" --model builtin --dump --text "$poem" |
	grep -oE '"parallel_side": "[a-z]+"|"parallel": \[[0-9]+, [0-9]+\]' | paste - -)
if [ "$(grep -cE '"(both|before|after)"' <<<"$sides")" -ne 8 ] ||
	grep -E '"both"' <<<"$sides" | grep -vqE '\[[0-9]+, 23\]' ||
	grep -E '"(before|after)"' <<<"$sides" | grep -vqE '\[[0-9]+, 1[5-8]\]'; then
	fails=$((fails + 1))
	printf 'FAIL: parallel_side and the rows it counts:\n%s\n' "$sides" >&2
fi
# a causal model's rows see only the line before: every head says so
expect 0 '^16$' -- bash -c '"$1" --model builtin-causal --dump --text "$2" |
	grep -c "\"parallel_side\": \"before\""' _ "$bin" "$poem"
expect 0 '^objective: causal' -- "$bin" --info --model "$data/golden/fwd_causal.attn"

# TSV: a header and one row per weight (2 layers x 4 heads x 3 x 3).
rows=$("$bin" --dump --format tsv --text 'abc' --model "$model" | wc -l)
checks=$((checks + 1))
[ "$rows" -eq $((1 + 2 * 4 * 3 * 3)) ] || { fails=$((fails + 1)); echo "FAIL: $rows TSV lines" >&2; }
rows=$("$bin" --dump --format tsv --layer 1 --head 2 --text 'abcd' --model "$model" | wc -l)
checks=$((checks + 1))
[ "$rows" -eq $((1 + 16)) ] || { fails=$((fails + 1)); echo "FAIL: $rows TSV lines for one head" >&2; }

# --lens and --dla in TSV: their tables instead of the weights. The lens: a
# line per layer, position and rank (2 x 3 x 2); the attribution: a line per
# position, a column per head (8) besides position, char, id, predicted,
# logit and rest, and the heads plus the rest are the logit.
rows=$("$bin" --dump --format tsv --lens --top 2 --text 'abc' --model "$model" | wc -l)
checks=$((checks + 1))
[ "$rows" -eq $((1 + 2 * 3 * 2)) ] || { fails=$((fails + 1)); echo "FAIL: $rows lens lines" >&2; }
dla=$("$bin" --dump --format tsv --dla --text 'abcd' --model "$model")
checks=$((checks + 1))
awk -F'\t' 'NR == 1 { if (NF != 14 || $6 != "L0H0" || $14 != "rest") exit 1; next }
	{ s = 0; for (i = 6; i <= 14; i++) s += $i; d = s - $5
	  if (d > 1e-4 || d < -1e-4) exit 1; n++ }
	END { exit n != 4 }' <<<"$dla" ||
	{ fails=$((fails + 1)); printf 'FAIL: the --dla table:\n%s\n' "$dla" >&2; }
expect 2 'in TSV ask for one' -- "$bin" --dump --format tsv --lens --dla --text a --model "$model"
expect 2 'in TSV ask for one' -- "$bin" --dump --format tsv --dla --circuits --text a --model "$model"
# --circuits in TSV: a line per head shown (4 in layer 1), its peak the
# offset of the largest column of the positional profile (a column per
# offset key - query the model has: -63 .. 63 for a context of 64).
circ=$("$bin" --dump --format tsv --circuits --layer 1 --text 'abcd' --model "$model")
checks=$((checks + 1))
awk -F'\t' 'NR == 1 { if ($3 != "peak" || $9 != "q_max" || $15 != -63 || $NF != 63) exit 1
		    for (i = 15; i <= NF; i++) off[i] = $i; n0 = NF; next }
	{ best = 15; for (i = 16; i <= NF; i++) if ($i + 0 > $best + 0) best = i
	  if (NF != n0 || $1 != 1 || off[best] != $3) exit 1; n++ }
	END { exit n != 4 }' <<<"$circ" ||
	{ fails=$((fails + 1)); printf 'FAIL: the --circuits table:\n%s\n' "$circ" >&2; }
expect 2 'give --top 1' -- "$bin" --dump --lens --top 0 --text a --model "$model"

# --faithfulness in TSV: a line per position, its loss and a column per
# head (8) of the Spearman correlation, each within -1..1 or nan; a causal
# model's last position has no loss.
faith=$("$bin" --dump --format tsv --faithfulness --text 'abcab' --model "$data/golden/fwd_causal.attn")
checks=$((checks + 1))
awk -F'\t' 'NR == 1 { if (NF != 3 + 6 || $3 != "loss" || $4 != "L0H0") exit 1; next }
	{ for (i = 4; i <= NF; i++) if ($i != "nan" && ($i < -1 || $i > 1)) exit 1
	  last = $3; n++ }
	END { exit n != 5 || last != "nan" }' <<<"$faith" ||
	{ fails=$((fails + 1)); printf 'FAIL: the --faithfulness table:\n%s\n' "$faith" >&2; }
# --patch in TSV: per head (8) a line for every position at once and one per
# position (3); the text patched into itself changes nothing, exactly.
patch=$("$bin" --dump --format tsv --patch 'abd' --text 'abc' --model "$model")
checks=$((checks + 1))
awk -F'\t' 'NR == 1 { if ($0 != "layer\thead\tposition\tchar\tchange") exit 1; next }
	{ n++ } END { exit n != 8 * 4 }' <<<"$patch" ||
	{ fails=$((fails + 1)); printf 'FAIL: the --patch table:\n%s\n' "$patch" >&2; }
patch=$("$bin" --dump --format tsv --patch 'abc' --text 'abc' --model "$model")
checks=$((checks + 1))
awk -F'\t' 'NR > 1 && $5 != "0" { exit 1 }' <<<"$patch" ||
	{ fails=$((fails + 1)); printf 'FAIL: patched into itself:\n%s\n' "$patch" >&2; }
# --query/--key in TSV: the score split, a line per pair of parts (1 + 2 +
# 4 heads + 2 = 9 in layer 1 of the golden masked model), adding up to the
# score of the JSON dump.
split=$("$bin" --dump --format tsv --query 2 --key 1 --layer 1 --text 'abc' --model "$model")
score=$("$bin" --dump --query 2 --key 1 --layer 1 --head 0 --text 'abc' --model "$model" |
	sed -n 's/.*"score_split":.*"score": \([^,]*\),.*/\1/p')
checks=$((checks + 1))
awk -F'\t' -v score="$score" 'NR == 1 { if ($0 != "query_part\tkey_part\tvalue") exit 1; next }
	{ s += $3; n++ } END { d = s - score; exit n != 81 || d > 1e-4 || d < -1e-4 }' \
	<<<"$split" || { fails=$((fails + 1)); printf 'FAIL: the split (score %s):\n%s\n' \
	"$score" "$(head -5 <<<"$split")" >&2; }
expect 1 'same length' -- "$bin" --dump --patch 'ab' --text 'abc' --model "$model"
# Two texts longer than the context are cut alike: the same length (TEXT2
# once stayed whole and was "of another length").
long=$(printf 'abc%.0s' {1..100})
expect 0 '"patching":' -- "$bin" --dump --text "$long" --patch "$long" --model "$model"
# --query alone with --patch: where the patching is read (the manual's "at
# --query"); without --patch it still needs --key.
expect 0 '"position": 1,' -- "$bin" --dump --text abc --patch abb --query 1 --model "$model"
expect 2 'go together' -- "$bin" --dump --text abc --query 1 --model "$model"
# An option of another mode is named as such, with the modes that take it.
expect 2 "--ablate does not go with --export \\(it goes with --dump\\)" -- \
	"$bin" --export "$tmp/x.svg" --text abc --ablate 1.2 --model "$model"
expect 2 "unknown or incomplete option '--frobnicate' for --dump" -- \
	"$bin" --dump --text abc --frobnicate --model "$model"
expect 1 '--query 7: the text has 3 tokens' -- "$bin" --dump --text abc --patch abb --query 7 \
	--model "$model"
# Patching's two characters: by default, where the texts differ in one place,
# the text's character there and TEXT2's (the question: which heads carry 他
# rather than 她); --targets A B (or AB) chooses, its D the opposite; each
# must be one character the model knows; --export takes it too.
pt=(--text 她说他累了。 --patch 他说他累了。)
expect 0 '"position": 5, "targets": \[[0-9]+, [0-9]+\], "chars": \["她", "他"\], "targets_from": "difference",' \
	-- "$bin" --dump "${pt[@]}"
expect 0 '"chars": \["他", "她"\], "targets_from": "given",' -- "$bin" --dump "${pt[@]}" --targets 他 她
expect 0 '"chars": \["他", "她"\], "targets_from": "given",' -- "$bin" --dump "${pt[@]}" --targets 他她
d1=$("$bin" --dump "${pt[@]}" | sed -n 's/.*"diff": \([^,]*\),.*/\1/p')
d2=$("$bin" --dump "${pt[@]}" --targets 他 她 | sed -n 's/.*"diff": \([^,]*\),.*/\1/p')
checks=$((checks + 1))
awk -v a="$d1" -v b="$d2" 'BEGIN { exit !(a != "" && a + b < 1e-4 && a + b > -1e-4) }' ||
	{ fails=$((fails + 1)); printf 'FAIL: --targets 他 她: D %s, not -(%s)\n' "$d2" "$d1" >&2; }
expect 0 '"targets_from": "top-1"' -- \
	"$bin" --dump --patch 'xyz' --text 'abc' --model "$model"
expect 2 '--targets takes two characters.*not .他.' -- "$bin" --dump "${pt[@]}" --targets 他
expect 1 "--targets: '龘' is not in the model's vocabulary" -- "$bin" --dump "${pt[@]}" \
	--targets 他 龘
expect 0 '' -- "$bin" --export "$tmp/targets.svg" "${pt[@]}" --targets 他 她
checks=$((checks + 1))
grep -q 'change of z(他) - z(她)' "$tmp/targets.svg" ||
	{ fails=$((fails + 1)); echo "FAIL: --export --targets: no z(他) - z(她) in the title" >&2; }
expect 2 'tables of their own' -- "$bin" --dump --format tsv --patch a --lens --text a \
	--model "$model"

# Usage errors: exit 2 and a hint.
expect 2 'exactly one of --text' -- "$bin" --dump --model "$model"
expect 2 'json or tsv' -- "$bin" --dump --format xml --text a --model "$model"
expect 2 'cannot be combined' -- "$bin" --dump --info --model "$model"
expect 2 'cannot be combined' -- "$bin" --dump --train x --text a
expect 2 'unknown or incomplete option' -- "$bin" --dump --text a --bogus
# Options are written in full: getopt_long would take "--hel" for --help in
# the mode's parser, where main() has already decided the mode by whole
# names, and "--tas" for --task after cli_train chose a corpus run.
expect 2 "'--hel' is short for --help" -- "$bin" --dump --text a --hel --model "$model"
expect 2 "'--vers' is short for --version" -- "$bin" --dump --text a --vers --model "$model"
expect 2 "'--tex' is short for --text" -- "$bin" --dump --tex a --model "$model"
expect 2 "'--mod' is short for --model" -- "$bin" --info --mod "$model"
expect 2 "'--tas' is short for --task" -- "$bin" --train "$tmp/none.txt" --tas previous
expect 2 "'--see' is short for --seed" -- "$bin" --train --task previous --see 3
expect 2 "unknown or incomplete option '--help=x'" -- "$bin" --dump --text a --help=x
expect 0 '"n_tokens": 1' -- "$bin" --dump --text=a --model="$model"
expect 2 'layers 0\.\.1' -- "$bin" --dump --text a --layer 5 --model "$model"
# --generate: the sampler's options, their ranges, a masked model, the names
# of the built-in models.
causal="$data/golden/fwd_causal.attn"
expect 0 '"generated": \{"from": 2, "count": 3, "temperature": 0, "top_k": 20, "seed": 1' -- \
	"$bin" --dump --text ab --model "$causal" --generate 3 --temperature 0
expect 0 '"stopped": "the context is full"' -- "$bin" --dump --text ab --model "$causal" --generate 40
expect 2 '--temperature, --top-k and --seed go with --generate N' -- \
	"$bin" --dump --text ab --model "$causal" --seed 3
expect 2 '--generate takes a number of characters from 1' -- \
	"$bin" --dump --text ab --model "$causal" --generate 0
expect 2 '--temperature takes a number from 0' -- \
	"$bin" --dump --text ab --model "$causal" --generate 2 --temperature -1
expect 2 '--top-k takes a number' -- "$bin" --dump --text ab --model "$causal" --generate 2 --top-k x
expect 2 '--seed takes a whole number' -- "$bin" --dump --text ab --model "$causal" --generate 2 --seed -4
expect 2 'cannot be combined with --words' -- "$bin" --dump --text ab --model "$causal" --generate 2 --words
expect 1 'needs a causal.*builtin-causal' -- "$bin" --dump --text ab --model "$model" --generate 2
expect 0 '^name: builtin$' -- "$bin" --info --model builtin
expect 2 '--temperature takes a number' -- "$bin" --temperature 11 --text a

# Bad text: invalid UTF-8 on the command line is an error naming the byte.
expect 1 'byte 2' -- "$bin" --dump --text $'ab\xff' --model "$model"
# ... but in an input file it is replaced and reported.
printf 'ab\xffcd\n' >"$tmp/in.txt"
expect 0 'first at byte 2' -- "$bin" --dump --input "$tmp/in.txt" --model "$model"
expect 1 'cannot open .*nothere\.txt: No such file' -- "$bin" --dump --input "$tmp/nothere.txt" --model "$model"
: >"$tmp/empty.txt"
expect 1 'empty' -- "$bin" --dump --input "$tmp/empty.txt" --model "$model"
# A text that cleaning empties: exit 1 and one message, its last line; no line
# that says nothing (an uninitialised message was once printed after it).
for text in '' $'\a' $'\e[1m'; do
	checks=$((checks + 1))
	err=$("$bin" --dump --text "$text" --model "$model" 2>&1 >/dev/null)
	status=$?
	if [ "$status" -ne 1 ] || grep -qE '^attnview: *$' <<<"$err" ||
		[ "$(tail -n 1 <<<"$err")" != "attnview: the text is empty after cleaning; give some characters to look at" ]; then
		fails=$((fails + 1))
		printf 'FAIL: --dump --text %q: status %s, stderr:\n%s\n' "$text" "$status" "$err" >&2
	fi
done

# An output directory that is missing or not a directory: said so, before the
# corpus is read.
corpus="$data/data/corpus/mixed.txt"
expect 1 "^attnview: cannot write $tmp/no/such/m\.attn: directory $tmp/no/such does not exist; create it" \
	-- "$bin" --train "$corpus" -o "$tmp/no/such/m.attn" --steps 1
echo notes >"$tmp/notes.txt"
expect 1 "^attnview: cannot write $tmp/notes\.txt/m\.attn: $tmp/notes\.txt is not a directory\$" \
	-- "$bin" --train "$corpus" -o "$tmp/notes.txt/m.attn" --steps 1

# The creation time --info shows: when the model was trained (not the corpus
# file's date), or SOURCE_DATE_EPOCH; a malformed one is a usage error.
small=(--dim 16 --heads 2 --layers 1 --context 16 --batch 4 --warmup 1 --steps 2 --threads 1)
cp "$corpus" "$tmp/old.txt"
touch -d '2001-02-03 04:05:06 UTC' "$tmp/old.txt"
before=$(date +%s)
env -u SOURCE_DATE_EPOCH "$bin" --train "$tmp/old.txt" "${small[@]}" -o "$tmp/now.attn" >/dev/null
created=$("$bin" --info --model "$tmp/now.attn" | sed -n 's/^created: //p')
checks=$((checks + 1))
when=$(date -d "$created" +%s 2>/dev/null || echo 0)
if [ "$when" -lt "$before" ] || [ "$when" -gt "$(date +%s)" ]; then
	fails=$((fails + 1))
	echo "FAIL: a model trained at $before says created: $created" >&2
fi
SOURCE_DATE_EPOCH=1767225600 "$bin" --train "$tmp/old.txt" "${small[@]}" -o "$tmp/sde.attn" >/dev/null
expect 0 '^created: 2026-01-01T00:00:00Z' -- "$bin" --info --model "$tmp/sde.attn"
expect 2 '^attnview: SOURCE_DATE_EPOCH is "soon", not a number of seconds' -- \
	env SOURCE_DATE_EPOCH=soon "$bin" --train "$tmp/old.txt" "${small[@]}" -o "$tmp/soon.attn"

# Bad model files: exit 1, the file named, what to do.
size=$(stat -c %s "$model")
head -c $((size / 2)) "$model" >"$tmp/trunc.attn"
expect 1 'trunc\.attn: truncated' -- "$bin" --info --model "$tmp/trunc.attn"
cp "$model" "$tmp/flip.attn"
printf '\x55' | dd of="$tmp/flip.attn" bs=1 seek=$((size / 3)) conv=notrunc status=none
expect 1 'flip\.attn: checksum mismatch' -- "$bin" --dump --text a --model "$tmp/flip.attn"
echo 'hello' >"$tmp/text.attn"
expect 1 'not an attnview model' -- "$bin" --info --model "$tmp/text.attn"
expect 1 'directory' -- "$bin" --info --model "$tmp"
expect 1 'missing\.attn: no such file; --model takes' -- "$bin" --info --model "$tmp/missing.attn"

# OpenBLAS kernel selection. A kernel the user chose is kept even when
# OpenBLAS would have fallen back to a generic one ...
expect 0 'OpenBLAS kernel: Haswell' -- env OPENBLAS_CORETYPE=Haswell \
	ATTNVIEW_TEST_PICKED_CORE=Prescott "$bin" --version
# ... and with no choice made, a generic fallback is replaced by restarting
# with a kernel the CPU runs. Only --version runs here: no BLAS computation
# happens under a kernel the environment did not choose.
if grep -q -w avx512f /proc/cpuinfo && grep -q -w avx512bw /proc/cpuinfo &&
	grep -q -w avx512vl /proc/cpuinfo && grep -q -w avx512dq /proc/cpuinfo; then
	better=SkylakeX
elif grep -q -w avx2 /proc/cpuinfo && grep -q -w fma /proc/cpuinfo; then
	better=Haswell
else
	better=
fi
if [ -n "$better" ]; then
	expect 0 "OpenBLAS kernel: $better" -- env -u OPENBLAS_CORETYPE \
		ATTNVIEW_TEST_PICKED_CORE=Prescott "$bin" --version
	# The restarted program keeps its name (ps, pgrep -x attnview, killall):
	# held on a text it reads from a pipe no one writes yet, once its
	# environment says it started again.
	mkfifo "$tmp/held"
	env -u OPENBLAS_CORETYPE ATTNVIEW_TEST_PICKED_CORE=Prescott "$bin" --dump \
		--input "$tmp/held" >/dev/null 2>&1 &
	held=$!
	for _ in $(seq 200); do
		tr '\0' '\n' <"/proc/$held/environ" 2>/dev/null |
			grep -q '^ATTNVIEW_BLAS_RESTARTED=1$' && break
		sleep 0.05
	done
	checks=$((checks + 1))
	name=$(cat "/proc/$held/comm" 2>/dev/null)
	if [ "$name" != attnview ]; then
		fails=$((fails + 1))
		echo "FAIL: after starting again on $better the process is called '$name'" >&2
	fi
	echo x >"$tmp/held"
	wait "$held"
fi

echo "cli: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
