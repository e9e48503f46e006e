#!/usr/bin/env bash
# The sanitizer stages of CI:
#   asan: the suite in a clang AddressSanitizer +
#         UndefinedBehaviorSanitizer build (LeakSanitizer included), then a
#         bounded libFuzzer run of every fuzz target (suite "fuzzing", two
#         at a time in a run of their own, log meson-logs/fuzzing.json); the
#         numeric checks on each OpenBLAS kernel (suite "kernels") run in
#         the plain build only (tests/run.sh's first stage): they test sums,
#         not memory; so do the lab's trainings ("lab": the training code's
#         memory is the train suites', its generators' lab_positions's,
#         here) and the PyTorch package's suite ("python"), whose
#         time goes to PyTorch (the program's hostile files and names run
#         here in the "hostile" suite and the fuzzers), and the checks of
#         the source tree's layers and layout ("layers": they run no
#         program). The plain build of CI's first stage runs these tests
#         with gcc's flags too;
#   tsan: a gcc ThreadSanitizer build: the training and CLI suites (but train_cli, and
#         hostile, whose PNG exports race inside fontconfig, which TSan does not
#         instrument; the figure suite stays out for the same reason) and the
#         real view driven in tmux (tsan_view). The worker's own test runs
#         under TSan in the plain build already (worker_tsan).
# Any report fails its test: UBSan does not recover, ASan aborts on the first
# error, leaks fail at exit, a race makes the program exit 66.
#   tests/ci/sanitize.sh [asan|tsan]...   (default both)
#   ATTNVIEW_ASAN_BUILD, ATTNVIEW_TSAN_BUILD   build directories
#                                      (build-asan, build-tsan)
#   ATTNVIEW_FUZZ_SECONDS=N            seconds per fuzz target (default 20)
# valgrind and the plain build's worker_tsan are in tests/run.sh's first stage.
set -euo pipefail
cd "$(dirname "$0")/../.."
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(asan tsan)
seconds=${ATTNVIEW_FUZZ_SECONDS:-20}
status=0

# setup DIR CC OPTIONS...: configure (or reconfigure). Nothing is built
# here: `meson test` builds what the tests it runs depend on (the TSan
# stage, four suites, compiles a third of the tree); the ASan stage, which
# runs nearly every test, builds the whole tree first.
setup() {
	local dir=$1 cc=$2
	shift 2
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		CC=$cc meson setup "$dir" "$@" >/dev/null
	fi
}

for stage in "${stages[@]}"; do
	case $stage in
	asan)
		dir=${ATTNVIEW_ASAN_BUILD:-build-asan}
		setup "$dir" clang -Db_sanitize=address,undefined -Db_lundef=false \
			-Dc_args=-fno-sanitize-recover=undefined -Dfuzz=enabled \
			"-Dfuzz_seconds=$seconds"
		ninja -C "$dir"
		# meson sets similar defaults; spelled out so a run outside
		# meson behaves the same.
		ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1:print_summary=1} \
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1:print_summary=1} \
			meson test -C "$dir" --print-errorlogs --num-processes 2 \
			--no-suite kernels --no-suite kernels_tui --no-suite python \
			--no-suite lab --no-suite fuzzing --no-suite layers || status=1
		# Alone, two at a time: a fuzzer keeps a core busy (the screen
		# tests starved beside them).
		rm -f "$dir/meson-logs/fuzzing.json"
		if [ "$seconds" -gt 0 ]; then
			meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 2 \
				--suite fuzzing --logbase fuzzing || status=1
		fi
		;;
	tsan)
		dir=${ATTNVIEW_TSAN_BUILD:-build-tsan}
		setup "$dir" gcc -Db_sanitize=thread -Db_lundef=false
		# OpenBLAS is not instrumented: one BLAS thread, so every thread
		# TSan sees is attnview's own (the worker, the training pool).
		TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1 exitcode=66 second_deadlock_stack=1} \
		OPENBLAS_NUM_THREADS=1 \
			meson test -C "$dir" --print-errorlogs --num-processes 2 \
			--suite train --suite backward --suite cli --suite tsan \
			--no-suite train_cli --no-suite kernels --no-suite hostile || status=1
		;;
	*)
		echo "tests/ci/sanitize.sh: unknown stage $stage (asan, tsan)" >&2
		exit 2
		;;
	esac
done
exit "$status"
