#!/usr/bin/env bash
# valgrind memcheck on the program: --dump, --info, a
# short --train and --export in each format, on their success paths and on the error paths a user meets
# (a damaged model, an empty corpus). Any memory error or definite/indirect
# leak makes valgrind exit 99 and fails the test; the program's own exit
# status must also be the expected one. Run by meson test (suite valgrind)
# in builds without sanitizers.
set -u
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
# valgrind 3.19 executes AVX2 but not AVX-512: a kernel OpenBLAS was told to
# take (OPENBLAS_CORETYPE=SkylakeX, as the kernels stage of CI does on an
# Intel machine) would stop the program with SIGILL. memcheck tests memory,
# not sums: it runs on the kernel valgrind can execute.
case ${OPENBLAS_CORETYPE:-} in
SkylakeX | Cooperlake | SapphireRapids)
	if grep -q -w avx2 /proc/cpuinfo; then
		export OPENBLAS_CORETYPE=Haswell
	else
		export OPENBLAS_CORETYPE=Prescott
	fi
	echo "valgrind: OpenBLAS's $OPENBLAS_CORETYPE kernel (valgrind has no AVX-512)"
	;;
esac

# vg STATUS NAME -- args...: run attnview under memcheck; expect STATUS.
vg() {
	local want=$1 name=$2
	shift 3
	checks=$((checks + 1))
	local status
	valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
		--suppressions="$data/ci/valgrind.supp" --num-callers=40 \
		--errors-for-leak-kinds=definite,indirect --track-origins=yes \
		--log-file="$tmp/$name.vg" "$bin" "$@" >"$tmp/$name.out" 2>&1 </dev/null
	status=$?
	if [ "$status" -ne "$want" ] || [ -s "$tmp/$name.vg" ]; then
		fails=$((fails + 1))
		printf 'FAIL: %s: status %s (want %s; 99 = memcheck found errors)\n' "$name" \
			"$status" "$want" >&2
		head -c 4000 "$tmp/$name.vg" >&2
		head -c 600 "$tmp/$name.out" >&2
	else
		echo "ok $name"
	fi
}

model="$data/golden/fwd_masked.attn"
corpus="$data/data/corpus/mixed.txt"
train=(--dim 16 --heads 2 --layers 1 --context 16 --batch 4 --warmup 1 --eval-every 2)

vg 0 dump-json -- --dump --text '你好, world' --model "$model"
vg 0 dump-tsv -- --dump --format tsv --layer 1 --text 'attention' --model "$model"
printf 'ab\xffc\x1b[31md\r\n' >"$tmp/in.txt"
vg 0 dump-input -- --dump --input "$tmp/in.txt" --model "$data/golden/fwd_causal.attn"
vg 0 info -- --info --model "$model"
head -c 3000 "$model" >"$tmp/trunc.attn"
vg 1 dump-truncated -- --dump --text a --model "$tmp/trunc.attn"

vg 0 train -- --train "$corpus" "${train[@]}" --steps 6 --threads 1 -o "$tmp/m.attn"
vg 0 train-threads -- --train "$corpus" "${train[@]}" --steps 4 --threads 2 -o "$tmp/m2.attn"
vg 0 dump-trained -- --dump --text 'the' --model "$tmp/m.attn"
: >"$tmp/empty.txt"
vg 1 train-empty -- --train "$tmp/empty.txt" -o "$tmp/e.attn"

for e in svg png pdf; do
	if [ $e = svg ] || "$bin" --version | grep -q '^figures: SVG, PNG, PDF'; then
		vg 0 export-$e -- --export "$tmp/fig.$e" --text '床前明月光 ab' --values
		vg 0 export-overview-$e -- --export "$tmp/all.$e" --overview --text '床前明月光 ab'
	fi
done
vg 1 export-exists -- --export "$tmp/fig.svg" --text 'ab'
vg 2 export-extension -- --export "$tmp/fig.jpg" --text 'ab'

echo "valgrind: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
