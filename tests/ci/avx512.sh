#!/usr/bin/env bash
# The AVX-512 versions of the softmaxes, GELU, the loss (16 lanes,
# src/core/vec8.h) and the view's attention products (attn_products.c)
# give the bits of the 8-lane code: every --dump (attention,
# scores, predictions) and a training's model file, byte for byte, with and
# without ATTNVIEW_NO_AVX512; and every --dump those of the portable level
# (ATTNVIEW_SIMD=portable: the attention products as plain loops).
# --version must name the codes, so the comparison is known to compare
# them. Skipped (77) on a CPU without
# AVX-512 (x86-64-v4: F, BW, CD, DQ and VL), where only the 8-lane code runs,
# and in builds that have one version only (clang, the sanitizers).
set -u
unset ATTNVIEW_NO_AVX512 ATTNVIEW_SIMD
bin=${ATTNVIEW_BIN:?set by meson}
data=${ATTNVIEW_TEST_DATA:?set by meson}
root=$data/..
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
for f in avx512f avx512bw avx512cd avx512dq avx512vl; do
	case " $flags " in *" $f "*) ;; *)
		echo "skipped: this CPU has no $f: only the 8-lane code runs here"
		exit 77 ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
fail() {
	fails=$((fails + 1))
	echo "FAIL: $*" >&2
}

wide=$("$bin" --version | sed -n 's/^vector code: //p')
case $wide in *"no run-time choice"*)
	echo "skipped: this build has one version of its vector code ($wide)"
	exit 77 ;;
esac
narrow=$(ATTNVIEW_NO_AVX512=1 "$bin" --version | sed -n 's/^vector code: //p')
case $wide in AVX-512*) ;; *) fail "--version without ATTNVIEW_NO_AVX512: '$wide'" ;; esac
case $narrow in AVX-512* | "") fail "--version with ATTNVIEW_NO_AVX512=1: '$narrow'" ;; esac
plain=$(ATTNVIEW_SIMD=portable "$bin" --version | sed -n 's/^vector code: //p')
case $plain in portable*) ;; *) fail "--version with ATTNVIEW_SIMD=portable: '$plain'" ;; esac
case $(ATTNVIEW_SIMD=avx2 "$bin" --version) in *"vector code: $narrow"*) ;; *)
	fail "ATTNVIEW_SIMD=avx2 does not give ATTNVIEW_NO_AVX512=1's code" ;; esac
case $(ATTNVIEW_SIMD=avx-512 "$bin" --version) in *"not understood"*) ;; *)
	fail "ATTNVIEW_SIMD=avx-512 (not a level) is not reported by --version" ;; esac

# Texts that end in every part of a row: within the first 8 or 16 lanes, on
# a block's edge, in the 8-lane remainder and in the tail.
text=$(tr -d '\n#*`|' <"$root/README.md" | head -c 4000)
for model in "$root/assets/builtin.attn" "$root/assets/builtin-causal.attn" \
	"$data/data/models/notes.attn" "$data/golden/fwd_masked.attn" "$data/golden/nanogpt.attn"; do
	for len in 1 7 8 15 16 17 24 31 33 47 128; do
		t=${text:0:len}
		checks=$((checks + 1))
		if ! "$bin" --dump --format json --top 20 --model "$model" --text "$t" >"$tmp/w" ||
			! ATTNVIEW_NO_AVX512=1 "$bin" --dump --format json --top 20 --model "$model" \
				--text "$t" >"$tmp/n"; then
			fail "--dump of $(basename "$model") on $len characters failed"
			continue
		fi
		grep -q '"attention"' "$tmp/w" ||
			fail "--dump of $(basename "$model") on $len characters has no attention"
		cmp -s "$tmp/w" "$tmp/n" || fail "--dump of $(basename "$model") on $len characters" \
			"differs with ATTNVIEW_NO_AVX512=1: $(cmp "$tmp/w" "$tmp/n" | head -1)"
		# The portable level's loops are slow: on texts that end within
		# the first 16 lanes, and on the longest.
		if [ "$len" -ge 16 ] && [ "$len" != 128 ]; then
			continue
		fi
		checks=$((checks + 1))
		ATTNVIEW_SIMD=portable "$bin" --dump --format json --top 20 --model "$model" \
			--text "$t" >"$tmp/p" || fail "--dump (portable) of $(basename "$model") failed"
		cmp -s "$tmp/w" "$tmp/p" || fail "--dump of $(basename "$model") on $len characters" \
			"differs with ATTNVIEW_SIMD=portable: $(cmp "$tmp/w" "$tmp/p" | head -1)"
	done
done

# Training: the forward, GELU's derivative and the loss of every step (a
# vocabulary of some 80 characters: the loss's rows end in a tail).
export SOURCE_DATE_EPOCH=1767225600
tr -d '\n' <"$root/README.md" | head -c 60000 >"$tmp/corpus.txt"
for obj in masked causal; do
	mkdir -p "$tmp/w_$obj" "$tmp/n_$obj"
	opts=(--objective "$obj" --steps 12 --dim 48 --heads 3 --layers 2 --context 40 --batch 8
		--threads 2 --eval-every 0)
	"$bin" --train "$tmp/corpus.txt" -o "$tmp/w_$obj/m.attn" "${opts[@]}" >/dev/null 2>&1 ||
		fail "--train --objective $obj failed"
	ATTNVIEW_NO_AVX512=1 "$bin" --train "$tmp/corpus.txt" -o "$tmp/n_$obj/m.attn" \
		"${opts[@]}" >/dev/null 2>&1 || fail "--train --objective $obj (8 lanes) failed"
	checks=$((checks + 1))
	cmp -s "$tmp/w_$obj/m.attn" "$tmp/n_$obj/m.attn" ||
		fail "--train --objective $obj: the model files differ with ATTNVIEW_NO_AVX512=1"
done

echo "avx512: $checks comparisons ($wide against $narrow and $plain), $fails failed"
[ "$fails" -eq 0 ]
