#!/usr/bin/env bash
# The whole suite again in a clang AddressSanitizer + UndefinedBehaviorSanitizer
# build (LeakSanitizer included), plus a bounded libFuzzer run of every fuzz
# target (suite "fuzzing"), issue 5. Any report fails its test: UBSan does not
# recover, ASan aborts on the first error, leaks fail at exit.
#   tests/sanitize.sh                  build in build-asan/ and run it all
#   ATTNVIEW_ASAN_BUILD=dir            another build directory
#   ATTNVIEW_FUZZ_SECONDS=N            seconds per fuzz target (default 20)
# The ThreadSanitizer run of the worker (worker_tsan) and valgrind are part of
# the plain build's suite (tests/run.sh); they do not mix with ASan.
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${ATTNVIEW_ASAN_BUILD:-build-asan}
seconds=${ATTNVIEW_FUZZ_SECONDS:-20}

opts=(-Db_sanitize=address,undefined -Db_lundef=false
	-Dc_args=-fno-sanitize-recover=undefined
	-Dfuzz=enabled "-Dfuzz_seconds=$seconds")
if [ -f "$builddir/build.ninja" ]; then
	meson setup --reconfigure "$builddir" "${opts[@]}" >/dev/null
else
	CC=clang meson setup "$builddir" "${opts[@]}" >/dev/null
fi
ninja -C "$builddir"

# meson sets similar defaults; spelled out so a run outside meson behaves
# the same.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1:print_summary=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1:print_summary=1}
exec meson test -C "$builddir" --print-errorlogs --num-processes 2
