#!/usr/bin/env bash
# Two tiers (doc/testing.md has their times):
#   tests/run.sh dev   before each commit: builds build/ and runs its dev
#                      setup (tests/meson.build: every test but the tmux ones,
#                      the other OpenBLAS kernels, PyTorch, valgrind,
#                      ThreadSanitizer, the lab's trainings, the fuzzers and
#                      the 1 GB corpus), a few minutes;
#   tests/run.sh       the whole suite, what CI (.ci/run) and README run.
# The whole suite runs from a clean clone on Debian 12:
# installs the build and test dependencies if they are missing (apt-get, as
# root or through sudo), then four stages:
#   1. build/ (gcc): every test but the tmux ones (tui) and the 1 GB corpus
#      (long), among them those only a plain build can run: the numeric
#      checks on each OpenBLAS kernel (kernels; the PyTorch reference on the
#      kernel OpenBLAS picks is one of them, so its plain run, python_native,
#      is left out), the PyTorch package against the program (python,
#      python3-torch), valgrind memcheck of the program (valgrind) and the
#      ThreadSanitizer runs of the worker, the view's forward pass and the
#      thread pool (tsan); the lab's trainings (lab: arithmetic, whose
#      memory the train suites and the lab's generators, lab_positions,
#      check under ASan); then each tmux test on one OpenBLAS kernel
#      (kernels_tui_one; ATTNVIEW_KERNELS_TUI=all: on all four); then
#      build-nocairo/ (-Dcairo=disabled): the program without cairo and
#      pango, whose figure tests check that SVG works and PNG/PDF say what
#      to install;
#   2. build-asan/ (clang, tests/ci/sanitize.sh): the tests again but those
#      that test sums or PyTorch (the crash and full-disk saves, the replay
#      of every fuzz input, the real view in tmux, the 1 GB corpus, ...)
#      under AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer,
#      then each libFuzzer target for ATTNVIEW_FUZZ_SECONDS (10 here, 20 in
#      tests/ci/sanitize.sh alone) seconds;
#   3. build-tsan/ (gcc, tests/ci/sanitize.sh): the training and CLI tests and
#      the real view in tmux under ThreadSanitizer;
#   4. the release: tests/ci/dist.sh (meson dist in build-dist/, while
#      stage 3 runs: the tarball packed, its files exactly those git
#      tracks, so the tests stage 1 ran are its tests; the same bytes
#      twice) and tests/ci/package.sh (the Debian packages built from that
#      tarball, with DEB_BUILD_OPTIONS=nocheck: stage 1 ran the quick tests
#      on the same files; lintian, installed into a fresh Debian 12 chroot
#      and run there; in build-package/). Each counts as one test in the
#      tally. It needs root, a committed tree and the Debian mirror;
#      ATTNVIEW_RELEASE=0 leaves it out.
# It prints "N passed, N failed" over all stages last (after a line with the
# number skipped, if any) and exits non-zero if any test failed or a stage
# did not run.
# ATTNVIEW_QUICK=1 runs stage 1 only, with every test of the plain build
# (not in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
tier=${1:-all}
case $tier in
all | dev) ;;
*)
	echo "usage: tests/run.sh [dev]   (dev: the tests to run before each commit)" >&2
	exit 2
	;;
esac

packages=(meson ninja-build pkg-config gcc libncurses-dev libutf8proc-dev libopenblas-dev tmux
	ncurses-term clang libclang-rt-14-dev valgrind libtsan2 python3-torch
	python3-pip python3-setuptools python3-wheel
	libcairo2-dev libpango1.0-dev fonts-noto-cjk fonts-noto-color-emoji librsvg2-bin poppler-utils
	libxml2-utils groff-base gettext locales zsh fish
	dpkg-dev debhelper dh-python pybuild-plugin-pyproject python3-all lintian debootstrap)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "tests/run.sh: installing ${missing[*]}" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
fi

# The translations' tests run the program in Chinese: make the zh_CN.UTF-8
# locale if the system has none (they make one of their own, or skip, when
# this cannot).
if ! locale -a 2>/dev/null | grep -q -i -E '^zh_CN\.utf-?8$'; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo localedef -i zh_CN -f UTF-8 zh_CN.UTF-8 2>/dev/null ||
		echo "tests/run.sh: cannot generate the zh_CN.UTF-8 locale" >&2
fi

builddir=${ATTNVIEW_BUILD:-build}
if [ -f "$builddir/build.ninja" ]; then
	meson setup --reconfigure -Dwerror=true "$builddir" >/dev/null
else
	meson setup -Dwerror=true "$builddir" >/dev/null
fi
ninja -C "$builddir"

status=0
# The development tier: the dev setup of the plain build, and nothing else.
if [ "$tier" = dev ]; then
	devlog=$builddir/meson-logs/testlog-dev.json
	rm -f "$devlog"
	meson test -C "$builddir" --no-rebuild --print-errorlogs --setup dev || status=$?
	passed=0 failed=0 skipped=0
	if [ -f "$devlog" ]; then
		passed=$(grep -c '"result": "OK"' "$devlog" || true)
		failed=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$devlog" || true)
		skipped=$(grep -c '"result": "SKIP"' "$devlog" || true)
	fi
	[ "$skipped" -eq 0 ] || echo "(${skipped} skipped: their reasons are in the log above)"
	echo "${passed} passed, ${failed} failed (the dev tier; tests/run.sh runs the whole suite)"
	if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
		exit 1
	fi
	exit 0
fi
# Stage 1 runs the whole suite when it is the only stage; otherwise all but
# the tmux tests (run next, more at a time) and the 1 GB corpus (stage 2).
stage1=()
[ "${ATTNVIEW_QUICK:-0}" = 1 ] || stage1=(--no-suite tui --no-suite long --no-suite python_native)
meson test -C "$builddir" --print-errorlogs --num-processes 2 "${stage1[@]}" || status=$?
# Without cairo and pango (only what the figure suite needs): built while
# the tmux tests below wait on their screens, run after them.
nocairo_builddir=${ATTNVIEW_NOCAIRO_BUILD:-build-nocairo}
nocairo_log=$(mktemp) dist_log=$(mktemp)
trap 'rm -f "$nocairo_log" "$dist_log"' EXIT
# Stage 4 (the release) runs in CI, unless ATTNVIEW_RELEASE=0.
release=0 dist_builddir=${ATTNVIEW_DIST_BUILD:-build-dist} dist_pid=""
if [ "${ATTNVIEW_QUICK:-0}" != 1 ] && [ "${ATTNVIEW_RELEASE:-1}" != 0 ]; then
	release=1
fi
(
	if [ -f "$nocairo_builddir/build.ninja" ]; then
		meson setup --reconfigure -Dwerror=true -Dcairo=disabled "$nocairo_builddir"
	else
		meson setup -Dwerror=true -Dcairo=disabled "$nocairo_builddir"
	fi >/dev/null
	ninja -C "$nocairo_builddir" src/attnview tests/unit/test_figure
) >"$nocairo_log" 2>&1 &
nocairo_pid=$!
# The real view in tmux on the kernels: each tmux test under one of them
# (suite kernels_tui_one; ATTNVIEW_KERNELS_TUI=all: each under all four,
# before a change to what the view computes or draws is called done). These
# tests mostly wait for the screen, so four run at a time (their own log:
# another run of meson test would overwrite the first's).
kernels_tui=()
tui_suite=kernels_tui_one
[ "${ATTNVIEW_KERNELS_TUI:-one}" != all ] || tui_suite=kernels_tui
if [ "${ATTNVIEW_QUICK:-0}" != 1 ]; then
	meson test -C "$builddir" --no-rebuild --print-errorlogs --num-processes 4 \
		--suite "$tui_suite" --logbase kernels_tui || status=$?
	kernels_tui=("$builddir/meson-logs/kernels_tui.json")
fi

nocairo_ok=0
wait "$nocairo_pid" || nocairo_ok=$?
tail -n 3 "$nocairo_log"
if [ "$nocairo_ok" -ne 0 ]; then
	cat "$nocairo_log" >&2
	echo "tests/run.sh: the build without cairo failed" >&2
	status=1
fi
meson test -C "$nocairo_builddir" --no-rebuild --print-errorlogs --suite figure || status=$?

logs=("$builddir/meson-logs/testlog.json" "$nocairo_builddir/meson-logs/testlog.json"
	"${kernels_tui[@]}")
asan_builddir=${ATTNVIEW_ASAN_BUILD:-build-asan}
tsan_builddir=${ATTNVIEW_TSAN_BUILD:-build-tsan}
if [ "${ATTNVIEW_QUICK:-0}" != 1 ]; then
	rm -f "$asan_builddir/meson-logs/testlog.json" "$tsan_builddir/meson-logs/testlog.json"
	# Ten seconds for each fuzzer keeps CI within its half hour (the
	# committed seeds and regression inputs are replayed in full by
	# fuzz_replay either way).
	ATTNVIEW_FUZZ_SECONDS=${ATTNVIEW_FUZZ_SECONDS:-10} ATTNVIEW_ASAN_BUILD="$asan_builddir" \
		bash tests/ci/sanitize.sh asan || status=$?
	# Stage 4's tarball is packed meanwhile (xz on one core, while the
	# longest ThreadSanitizer test holds the other).
	if [ "$release" = 1 ]; then
		ATTNVIEW_DIST_CHECK=0 bash tests/ci/dist.sh "$dist_builddir" >"$dist_log" 2>&1 &
		dist_pid=$!
	fi
	ATTNVIEW_TSAN_BUILD="$tsan_builddir" bash tests/ci/sanitize.sh tsan || status=$?
	logs+=("$asan_builddir/meson-logs/testlog.json" "$tsan_builddir/meson-logs/testlog.json"
		"$asan_builddir/meson-logs/fuzzing.json")
fi

# 4. The release: the tarball, then the Debian packages from it.
release_passed=0 release_failed=0
if [ "$release" = 1 ]; then
	tarball=()
	# Packed, not built and tested again: stage 1 ran the same files'
	# tests, package.sh builds and installs the tarball.
	dist_ok=0
	wait "$dist_pid" || dist_ok=$?
	cat "$dist_log"
	if [ "$dist_ok" -eq 0 ]; then
		release_passed=$((release_passed + 1))
		tarball=("$(ls -t "$dist_builddir"/meson-dist/attnview-*.tar.xz | head -1)")
	else
		echo "tests/run.sh: tests/ci/dist.sh failed (the packages are built from the last commit)" >&2
		release_failed=$((release_failed + 1))
	fi
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	if $sudo env DEB_BUILD_OPTIONS=nocheck bash tests/ci/package.sh "${tarball[@]}"; then
		release_passed=$((release_passed + 1))
	else
		echo "tests/run.sh: tests/ci/package.sh failed" >&2
		release_failed=$((release_failed + 1))
	fi
fi

# Stages that must have run (a missing tool would otherwise skip them quietly).
need_ok() { # LOG TESTNAME
	if ! grep -q -E "\"name\": \"[^\"]* / $2\".*\"result\": \"OK\"" "$1" 2>/dev/null; then
		echo "tests/run.sh: $2 did not run and pass in $(dirname "$(dirname "$1")")" >&2
		status=1
	fi
}
# The log holding the tests stage 1 leaves to stage 2.
full=${logs[0]} tuilog=${logs[0]}
[ "${ATTNVIEW_QUICK:-0}" = 1 ] || full=${logs[3]} tuilog=${logs[2]}
need_ok "${logs[0]}" worker_tsan
need_ok "${logs[0]}" infer_tsan
need_ok "${logs[0]}" valgrind
need_ok "$full" crash_save
need_ok "$full" fuzz_replay
# The translations: gettext and the zh_CN.UTF-8 locale are installed above.
need_ok "$full" i18n_po
need_ok "$full" i18n_cli
need_ok "$full" tui_i18n
for t in format vocab ddp attnview resume pip; do
	need_ok "${logs[0]}" "python_$t"
done
need_ok "${logs[0]}" lab
need_ok "$full" figure
# The numeric checks on OpenBLAS's kernels (tests/ci/kernel.sh): the generic one
# everywhere, Haswell's and Zen's on every AVX2 CPU, SkylakeX's with AVX-512.
all_kernels=(Haswell Zen SkylakeX Prescott) # the order of tests/meson.build
kernels=(Prescott)
grep -q -w avx2 /proc/cpuinfo && kernels+=(Haswell Zen)
grep -q -w avx512bw /proc/cpuinfo && kernels+=(SkylakeX)
for k in "${kernels[@]}"; do
	for t in model infer explain generate dump backward python_reference screens; do
		need_ok "${logs[0]}" "${t}_$k"
	done
	n=0
	for t in $(sed -n '/^tui_names = \[/,/\]/p' tests/tui/meson.build | grep -o "'[a-z0-9_]*'" |
		tr -d "'"); do
		# kernels_tui_one: the n-th test under the (n mod 4)-th kernel.
		if [ "$tui_suite" = kernels_tui ] || [ "${all_kernels[$((n % 4))]}" = "$k" ]; then
			need_ok "$tuilog" "tui_${t}_$k"
		fi
		n=$((n + 1))
	done
done
need_ok "${logs[1]}" figure_cli
if [ "${ATTNVIEW_QUICK:-0}" != 1 ]; then
	for t in model text corpus dump keys; do
		need_ok "${logs[5]}" "fuzz_$t"
	done
	need_ok "${logs[4]}" tsan_view
fi

passed=0 failed=0 skipped=0
for log in "${logs[@]}"; do
	[ -f "$log" ] || continue
	passed=$((passed + $(grep -c '"result": "OK"' "$log" || true)))
	failed=$((failed + $(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)))
	skipped=$((skipped + $(grep -c '"result": "SKIP"' "$log" || true)))
done
passed=$((passed + release_passed)) failed=$((failed + release_failed))
[ "$skipped" -eq 0 ] || echo "(${skipped} skipped: their reasons are in the logs above)"
echo "${passed} passed, ${failed} failed"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
	exit 1
fi
