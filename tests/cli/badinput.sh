#!/usr/bin/env bash
# The bad-input matrix of attnview(1) (section BAD INPUT of man/attnview.1), at the
# command line, as a user meets it: for each bad input, the exit status, what
# the message says, and that nothing is lost. Each check is named after its
# row ("[row] what"); rows backed by other tests name them in the man page.
set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
model="$data/golden/fwd_masked.attn"
corpus="$data/data/corpus/mixed.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
tiny=(--dim 16 --heads 2 --layers 1 --context 16 --batch 4 --warmup 1 --steps 3 --threads 1)
# Models of separate runs are compared byte for byte: one creation time.
export SOURCE_DATE_EPOCH=1767225600

fail() {
	fails=$((fails + 1))
	printf 'FAIL: %s\n' "$*" >&2
}

# expect ROW STATUS PATTERN -- command...: exit status and combined output.
expect() {
	local row=$1 want=$2 pattern=$3
	shift 4
	checks=$((checks + 1))
	local out status
	out=$(timeout 60 "$@" 2>&1)
	status=$?
	if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
		fail "[$row] $*: status $status (want $want), output:"
		head -c 800 <<<"$out" >&2
		echo >&2
	fi
}

# same ROW FILE1 FILE2: byte for byte.
same() {
	checks=$((checks + 1))
	cmp -s "$2" "$3" || fail "[$1] $2 and $3 differ"
}

# A corpus: LINE repeated N times (enough characters for a batch).
repeat() {
	local n=$1 line=$2 i
	for ((i = 0; i < n; i++)); do printf '%b' "$line"; done
}

# -- invalid UTF-8: replaced by U+FFFD and counted in a corpus or --input;
# refused on the command line.
repeat 200 'caf\xc3\xa9 \xff\xfe abc \xe4\xbd\n' >"$tmp/utf8.txt"
expect utf8 0 'invalid UTF-8 sequences? replaced.*first at byte 6' -- \
	"$bin" --train "$tmp/utf8.txt" "${tiny[@]}" -o "$tmp/utf8.attn"
expect utf8 1 'invalid UTF-8 at byte 1 of --text' -- "$bin" --dump --text $'a\xc3' --model "$model"

# -- NUL bytes: removed and counted as control characters (a quarter of the
# file here: mostly not text, so --any-encoding).
repeat 200 'ab\0c d\0\0ef\n' >"$tmp/nul.txt"
expect nul 0 'removed 600 control characters' -- \
	"$bin" --train "$tmp/nul.txt" "${tiny[@]}" --any-encoding -o "$tmp/nul.attn"
printf 'a\0b\n' >"$tmp/nul-input.txt"
expect nul 0 '"n_tokens": 2' -- "$bin" --dump --input "$tmp/nul-input.txt" --model "$model"

# -- ANSI escapes (as in fortunes-zh): removed whole and counted; none of
# their characters reach the vocabulary.
repeat 100 '\e[1;31m红\e[0m色 \e]0;title\a文字\n' >"$tmp/ansi.txt"
expect ansi 0 'removed 300 ANSI escape sequences' -- \
	"$bin" --train "$tmp/ansi.txt" "${tiny[@]}" -o "$tmp/ansi.attn"
expect ansi 0 'vocabulary: 9 \(6 characters' -- "$bin" --info --model "$tmp/ansi.attn"
printf 'a\e[31mb\n' >"$tmp/ansi-input.txt"
expect ansi 0 '"n_tokens": 2' -- "$bin" --dump --input "$tmp/ansi-input.txt" --model "$model"

# -- byte order mark and CRLF: the BOM dropped, CRLF made LF, both reported.
{ printf '\xef\xbb\xbf'; repeat 200 'line one\r\n'; } >"$tmp/bom.txt"
expect bom 0 'byte order mark removed' -- "$bin" --train "$tmp/bom.txt" "${tiny[@]}" -o "$tmp/bom.attn"
# Files with BOMs joined: every U+FEFF is a byte order mark, counted as one,
# and none reaches the vocabulary (7 characters, as without them).
cat "$tmp/bom.txt" "$tmp/bom.txt" "$tmp/bom.txt" >"$tmp/bom3.txt"
expect bom 0 '3 byte order marks removed' -- \
	"$bin" --train "$tmp/bom3.txt" "${tiny[@]}" -o "$tmp/bom3.attn"
expect bom 0 'vocabulary: 10 \(7 characters' -- "$bin" --info --model "$tmp/bom3.attn"
expect crlf 0 '200 CR or CRLF line ends made LF' -- \
	"$bin" --train "$tmp/bom.txt" "${tiny[@]}" -o "$tmp/crlf.attn"
expect crlf 0 'vocabulary: 10 \(7 characters' -- "$bin" --info --model "$tmp/crlf.attn"

# -- empty and whitespace-only corpora: refused, naming the file; nothing written.
: >"$tmp/empty.txt"
expect empty 1 'empty\.txt.*empty' -- "$bin" --train "$tmp/empty.txt" -o "$tmp/empty.attn"
printf ' \n\t\r\n\xe3\x80\x80\n' >"$tmp/blank.txt"
expect empty 1 'blank\.txt.*only whitespace' -- \
	"$bin" --train "$tmp/blank.txt" -o "$tmp/blank.attn"
checks=$((checks + 1))
[ ! -e "$tmp/empty.attn" ] && [ ! -e "$tmp/blank.attn" ] || fail "[empty] a model was written"

# -- a corpus of one character: trains, and the model works.
repeat 400 'x' >"$tmp/one.txt"
expect one 0 'vocabulary: 4 ids' -- "$bin" --train "$tmp/one.txt" "${tiny[@]}" --context 8 \
	-o "$tmp/one.attn"
expect one 0 '"n_tokens": 3' -- "$bin" --dump --text 'xyx' --model "$tmp/one.attn"

# -- a directory, a missing or unreadable file as corpus, model or --input:
# refused at once with the file named. A FIFO as a model is refused without
# waiting; as text it is read like standard input, and while it has no
# writer attnview says what it waits for (never a silent hang).
mkdir "$tmp/dir"
mkfifo "$tmp/fifo"
expect dir 1 'dir is a directory' -- "$bin" --train "$tmp/dir" -o "$tmp/d.attn"
expect dir 1 'dir is a directory' -- "$bin" --dump --input "$tmp/dir" --model "$model"
expect dir 1 'dir: is a directory' -- "$bin" --info --model "$tmp/dir"
expect dir 1 'fifo: is a special file' -- "$bin" --dump --text a --model "$tmp/fifo"
expect fifo 124 'waiting for .*fifo to give text' -- timeout 3 "$bin" --train "$tmp/fifo" \
	-o "$tmp/d.attn"
expect fifo 124 'waiting for .*fifo to give text' -- timeout 3 "$bin" --dump --input "$tmp/fifo" \
	--model "$model"
# (the writers give up after a while if attnview never opens the FIFO)
timeout 20 sh -c 'sleep 1.5; cat "$1" >"$2"' _ "$corpus" "$tmp/fifo" &
expect fifo 0 'wrote .*fifo\.attn' -- "$bin" --train "$tmp/fifo" "${tiny[@]}" \
	-o "$tmp/fifo.attn"
wait
timeout 20 sh -c 'sleep 0.2; printf abc >"$1"' _ "$tmp/fifo" &
expect fifo 0 '"n_tokens": 3' -- "$bin" --dump --input "$tmp/fifo" --model "$model"
wait
expect dir 1 'nothere\.txt: No such file' -- "$bin" --train "$tmp/nothere.txt" -o "$tmp/d.attn"
cp "$model" "$tmp/locked.attn"
cp "$corpus" "$tmp/locked.txt"
chmod 000 "$tmp/locked.attn" "$tmp/locked.txt"
as_user=()
if [ "$(id -u)" -eq 0 ]; then
	# root reads anything: drop to nobody to see what a user sees.
	if command -v setpriv >/dev/null; then
		chmod 755 "$tmp"
		mkdir -m 777 "$tmp/out"
		as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
	else
		as_user=(skip)
	fi
fi
if [ "${as_user[0]:-}" != skip ]; then
	expect dir 1 'locked\.txt: Permission denied' -- \
		"${as_user[@]}" "$bin" --train "$tmp/locked.txt" -o "$tmp/out/nobody.attn"
	expect dir 1 'locked\.attn: cannot open: Permission denied' -- \
		"${as_user[@]}" "$bin" --info --model "$tmp/locked.attn"
else
	echo "note: running as root without setpriv; the unreadable-file checks are skipped"
fi

# -- a disk that fills up while the model is saved: the save fails with the
# system's reason, the previous model is left as it was, no temporary file.
# RLIMIT_FSIZE stands in for the full disk (write fails with EFBIG, as with
# ENOSPC); SIGXFSZ is ignored so the write returns the error. First the
# model at the end (no checkpoints), then the checkpoint a run writes first.
full=(bash -c 'trap "" XFSZ; ulimit -f 8; exec "$@"' _ "$bin" --train "$corpus" --dim 32
	--heads 2 --layers 1 --context 16 --batch 4 --warmup 1 --steps 3 --threads 1)
cp "$tmp/nul.attn" "$tmp/full.attn"
cp "$tmp/full.attn" "$tmp/full.before"
expect full 1 'full\.attn: writing failed after [0-9]+ of [0-9]+ bytes; the previous file is unchanged: File too large' -- \
	"${full[@]}" --checkpoint-every 0 -o "$tmp/full.attn"
same full "$tmp/full.attn" "$tmp/full.before"
expect full 1 'full\.attn\.ckpt: writing failed after [0-9]+ of [0-9]+ bytes; the file was not created: File too large' -- \
	"${full[@]}" -o "$tmp/full.attn"
same full "$tmp/full.attn" "$tmp/full.before"
checks=$((checks + 1))
ls "$tmp"/full.attn.tmp.* "$tmp"/full.attn.ckpt* >/dev/null 2>&1 &&
	fail "[full] a temporary file or a checkpoint was left"
# Room for the model but not for the finished run's state (three times its
# size): the model is written and the run succeeds, saying the state was not
# kept.
expect full 0 "the finished run's state was not kept, so --resume --steps cannot continue it \(the model is written\): .*full2\.attn\.ckpt: writing failed" -- \
	bash -c 'trap "" XFSZ; ulimit -f 40; exec "$@"' _ "$bin" --train "$corpus" --dim 16 \
	--heads 2 --layers 1 --context 32 --batch 4 --warmup 1 --steps 3 --threads 1 \
	--checkpoint-every 0 -o "$tmp/full2.attn"
checks=$((checks + 1))
[ -s "$tmp/full2.attn" ] && ! ls "$tmp"/full2.attn.ckpt* >/dev/null 2>&1 ||
	fail "[full] without room for the state: the model missing, or a state file left"

# -- SIGINT during training: the step finishes, a checkpoint is written, exit
# 130 with the command that resumes; resuming ends in the same model, byte for
# byte, as a run that was never interrupted.
run=(--dim 32 --heads 2 --layers 1 --context 64 --batch 16 --warmup 5 --steps 1500
	--eval-every 0 --checkpoint-every 10 --threads 1)
# The model's name comes from the output's file name: the same name in
# another directory for each run.
mkdir "$tmp/whole" "$tmp/int" "$tmp/kill"
"$bin" --train "$corpus" "${run[@]}" -o "$tmp/whole/m.attn" >/dev/null 2>&1 ||
	fail "[signal] the uninterrupted run failed"
# Start, wait until the first checkpoint exists, interrupt with $1.
start_and_signal() {
	local sig=$1 out=$2 delay=$3 args=("${run[@]}")
	# Resume what an earlier kill left (a new run would be refused).
	[ -e "$out.ckpt" ] && args=(--resume "$out.ckpt" --threads 1)
	"$bin" --train "$corpus" "${args[@]}" -o "$out" >"$out.log" 2>&1 &
	local pid=$! i
	for ((i = 0; i < 500; i++)); do
		[ -e "$out.ckpt" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	sleep "$delay"
	kill -s "$sig" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
start_and_signal INT "$tmp/int/m.attn" 0.2
status=$?
checks=$((checks + 1))
if [ "$status" -eq 0 ]; then
	echo "note: the run ended before SIGINT arrived"
elif [ "$status" -ne 130 ] || ! grep -q "resume with: attnview --train" "$tmp/int/m.attn.log"; then
	fail "[signal] SIGINT: status $status; $(tail -3 "$tmp/int/m.attn.log")"
else
	cp "$tmp/int/m.attn.ckpt" "$tmp/int/stopped.ckpt"
	expect signal 0 'resuming' -- "$bin" --train "$corpus" --resume "$tmp/int/m.attn.ckpt" \
		--threads 1 -o "$tmp/int/m.attn"
	same signal "$tmp/int/m.attn" "$tmp/whole/m.attn"
fi

# -- a new run where a stopped one left its checkpoint: refused (it would
# write over the stopped run's work), with the command that resumes it. (The
# resumed run left its finished state, which a new run writes over: the
# stopped run's checkpoint is put back.)
if [ -e "$tmp/int/stopped.ckpt" ]; then
	cp "$tmp/int/stopped.ckpt" "$tmp/int/m.attn.ckpt"
	cp "$tmp/int/m.attn.ckpt" "$tmp/int/ckpt.before"
	expect resume 1 "m\.attn\.ckpt exists: a run writing .*stopped there" -- \
		"$bin" --train "$corpus" "${run[@]}" -o "$tmp/int/m.attn"
	expect resume 1 "^resume with: attnview --train .* --resume .*m\.attn\.ckpt" -- \
		"$bin" --train "$corpus" "${run[@]}" -o "$tmp/int/m.attn"
	same resume "$tmp/int/m.attn.ckpt" "$tmp/int/ckpt.before"
fi

# -- SIGKILL during training, again and again: the checkpoint on disk is
# always whole (it loads), the model from an earlier run is untouched, and
# resuming from whatever checkpoint survived, killed again, resumed again,
# ends in the same model as the run that was never stopped.
cp "$tmp/nul.attn" "$tmp/kill/m.attn"
cp "$tmp/kill/m.attn" "$tmp/kill/before"
for delay in 0.05 0.3 0.7 0.01 0.45; do
	start_and_signal KILL "$tmp/kill/m.attn" "$delay"
	status=$?
	checks=$((checks + 1))
	[ "$status" -eq 137 ] || [ "$status" -eq 0 ] || fail "[signal] SIGKILL: status $status"
	[ "$status" -eq 0 ] && break
	same signal "$tmp/kill/m.attn" "$tmp/kill/before"
	expect signal 0 '^objective: masked' -- "$bin" --info --model "$tmp/kill/m.attn.ckpt"
done
# A run that finished before its signal keeps its state in the checkpoint
# too (a finished run can be continued with more --steps): resume only one
# that was killed.
if [ "$status" -ne 0 ] && [ -e "$tmp/kill/m.attn.ckpt" ]; then
	expect signal 0 'resuming' -- "$bin" --train "$corpus" --resume "$tmp/kill/m.attn.ckpt" \
		--threads 1 -o "$tmp/kill/m.attn"
fi
same signal "$tmp/kill/m.attn" "$tmp/whole/m.attn"
leftover=$(ls "$tmp/kill" | grep -c '\.tmp\.' || true)
echo "temporary files left by killed saves: $leftover (attnview never deletes them)"

# -- standard input that is not a terminal: the view explains, exit 2; the
# non-interactive modes work from scripts.
expect tty 2 'needs a terminal.*--dump' -- "$bin" --model "$model"
expect tty 0 '"n_tokens": 3' -- bash -c '"$@" </dev/null | cat' _ "$bin" --dump --text abc \
	--model "$model"

# -- a non-UTF-8 locale: the dump and training do not depend on it.
expect locale 0 '"n_tokens": 2' -- env LC_ALL=C "$bin" --dump --text '你好' --model "$model"
mkdir "$tmp/c" # same file name: the model's name comes from it
expect locale 0 'removed 300 ANSI escape sequences' -- env LC_ALL=C "$bin" --train "$tmp/ansi.txt" \
	"${tiny[@]}" -o "$tmp/c/ansi.attn"
same locale "$tmp/c/ansi.attn" "$tmp/ansi.attn"

echo "badinput: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
