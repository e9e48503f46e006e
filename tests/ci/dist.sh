#!/usr/bin/env bash
# The release tarball:
#   1. `meson dist` in a build tree set up with -Dtest_setup=quick: it packs
#      the last commit (git archive), unpacks it elsewhere, builds it, runs
#      its quick tests (the quick setup of tests/meson.build: no terminal,
#      PyTorch, valgrind, ThreadSanitizer or long tests) and installs it into
#      a temporary root;
#   2. the tarball holds exactly the files git tracks, under
#      attnview-VERSION/ (nothing generated or ignored is needed), NEWS among
#      them;
#   3. `meson dist --no-tests` again, later and under another umask: the same
#      bytes (tools/dist_normalize.sh).
# ATTNVIEW_DIST_CHECK=0 packs the tarball in step 1 without building,
# testing or installing it (`meson dist --no-tests`): CI (tests/run.sh) does,
# where its first stage ran those tests on the same files (step 2 holds the
# tarball to git's) and tests/ci/package.sh builds, installs and runs the
# same tarball right after.
# SOURCE_DATE_EPOCH is the last commit's time unless it is set. Needs a git
# checkout with no uncommitted changes (meson dist packs the commit).
#   tests/ci/dist.sh [BUILDDIR]      (default build-dist; the tarball is left in
#                                  BUILDDIR/meson-dist/)
set -euo pipefail
cd "$(dirname "$0")/../.."
builddir=${1:-build-dist}
fail() {
	echo "tests/ci/dist.sh: FAIL: $*" >&2
	exit 1
}
command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1 ||
	fail "not a git checkout: meson dist packs a commit"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
echo "tests/ci/dist.sh: commit $(git rev-parse --short HEAD), SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH"

if [ -f "$builddir/build.ninja" ]; then
	meson setup --reconfigure -Dtest_setup=quick "$builddir" >/dev/null
else
	meson setup -Dtest_setup=quick "$builddir" >/dev/null
fi
check=${ATTNVIEW_DIST_CHECK:-1}
version=$(meson introspect --projectinfo "$builddir" |
	/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
name=attnview-$version
tarball=$builddir/meson-dist/$name.tar.xz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. Packed, built, tested and installed by meson dist itself (packed only
# with ATTNVIEW_DIST_CHECK=0).
start=$SECONDS
log=$builddir/meson-logs/dist.log
mkdir -p "$(dirname "$log")"
no_tests=()
[ "$check" != 0 ] || no_tests=(--no-tests)
if ! nice meson dist -C "$builddir" "${no_tests[@]}" >"$log" 2>&1; then
	tail -60 "$log"
	fail "meson dist (its log: $log)"
fi
if [ "$check" != 0 ]; then
	# The check's test summary, as meson test printed it.
	grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout): ' "$log" | tail -8 || true
	grep -q -E '^Ok: +[1-9]' "$log" || fail "meson dist ran no tests ($log)"
	echo "tests/ci/dist.sh: meson dist built and tested $tarball in $((SECONDS - start)) s"
else
	echo "tests/ci/dist.sh: meson dist packed $tarball in $((SECONDS - start)) s" \
		"(ATTNVIEW_DIST_CHECK=0: not built or tested here)"
fi
cp "$tarball" "$tmp/first.tar.xz"

# 2. What the tarball holds.
tar -tJf "$tarball" | grep -v '/$' | sed "s|^$name/||" | sort >"$tmp/in-tarball"
git ls-files | sort >"$tmp/in-git"
if ! diff -u "$tmp/in-git" "$tmp/in-tarball" >"$tmp/files.diff"; then
	head -40 "$tmp/files.diff"
	fail "the tarball's files are not git's (- git only, + tarball only)"
fi
grep -q -x NEWS "$tmp/in-tarball" || fail "no NEWS in the tarball"
grep -v -c '/$' <(tar -tJf "$tarball") | sed 's/$/ files in the tarball, exactly those git tracks/'

# 3. Again, a second later and under another umask: the same bytes.
sleep 1
start=$SECONDS
(umask 077 && nice meson dist -C "$builddir" --no-tests >"$log.2" 2>&1) ||
	fail "meson dist --no-tests ($log.2)"
sha256sum "$tmp/first.tar.xz" "$tarball" | sed "s|$tmp/||"
cmp "$tmp/first.tar.xz" "$tarball" || fail "two runs of meson dist differ"
echo "tests/ci/dist.sh: the same $(stat -c %s "$tarball") bytes twice (second run $((SECONDS - start)) s)"
echo "tests/ci/dist.sh: ok: $tarball"
