#!/usr/bin/env bash
# Runs attnview's whole test suite from a clean clone on Debian 12:
# installs the build and test dependencies if they are missing (apt-get, as
# root or through sudo), builds in build/, runs `meson test`, and prints
# "N passed, N failed" last. Exits non-zero if any test failed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(meson ninja-build pkg-config gcc libncurses-dev libutf8proc-dev libopenblas-dev tmux)
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

builddir=${ATTNVIEW_BUILD:-build}
if [ -f "$builddir/build.ninja" ]; then
	meson setup --reconfigure "$builddir" >/dev/null
else
	meson setup "$builddir" >/dev/null
fi
ninja -C "$builddir"

status=0
meson test -C "$builddir" --print-errorlogs --num-processes 2 || status=$?

log="$builddir/meson-logs/testlog.json"
passed=$(grep -c '"result": "OK"' "$log" || true)
failed=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
skipped=$(grep -c '"result": "SKIP"' "$log" || true)
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
	exit 1
fi
