#!/bin/sh
# Runs a numeric test on one of OpenBLAS's kernels: OpenBLAS picks its kernel
# at run time from the CPU, and other kernels sum in other orders, so the
# suite runs the forward, inference, golden and PyTorch-reference checks on
# every kernel this CPU can execute (tests/meson.build), not only on the one
# OpenBLAS picks here: CI on one machine catches what fails on another.
#	tests/ci/kernel.sh KERNEL PROGRAM [ARG...]
# Exits 77 (skipped) when the CPU cannot run KERNEL; fails when OpenBLAS
# does not take it (harness.c checks the test binaries themselves too).
kernel=$1
shift
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() {
	for f in "$@"; do
		case " $flags " in *" $f "*) ;; *) return 1 ;; esac
	done
}
case $kernel in
Haswell | Zen) need="avx2 fma" ;;
SkylakeX | Cooperlake) need="avx512f avx512bw avx512vl avx512dq" ;;
Sandybridge) need="avx" ;;
Core2) need="ssse3" ;;
Prescott | Nehalem) need="pni" ;; # SSE3
*) echo "kernel.sh: no CPU test for kernel $kernel" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
if ! has $need; then
	echo "skipped: this CPU has no $need, which OpenBLAS's $kernel kernel needs"
	exit 77
fi
export OPENBLAS_CORETYPE="$kernel" ATTNVIEW_EXPECT_CORE="$kernel"
if [ -n "$ATTNVIEW_BIN" ]; then
	got=$("$ATTNVIEW_BIN" --version | sed -n 's/^OpenBLAS kernel: \([^ ]*\).*/\1/p')
	if [ "$got" != "$kernel" ]; then
		echo "kernel.sh: OPENBLAS_CORETYPE=$kernel, but attnview runs OpenBLAS's '$got'" >&2
		exit 1
	fi
fi
exec "$@"
