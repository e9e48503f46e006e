#!/bin/sh
# One version everywhere a user reads one: the version
# meson.build gives (the argument) is what `attnview --version` prints, the
# newest entry of NEWS, the version in the head of all five manual pages, of
# the catalogues, of the PyTorch package (pyproject.toml and __version__) and
# the upstream part of debian/changelog's newest entry. A release that bumps
# one of them and forgets another fails here.
#   tests/ci/release.sh VERSION       (ATTNVIEW_BIN, ATTNVIEW_TEST_DATA from meson)
set -u
v=${1:?usage: release.sh VERSION}
cd "$ATTNVIEW_TEST_DATA/.." || exit 1
fail=0
check() { # WHAT FOUND
	if [ "$2" = "$v" ]; then
		echo "ok: $1: $v"
	else
		echo "FAIL: $1 says '${2}', meson.build $v"
		fail=1
	fi
}

check "attnview --version" "$("$ATTNVIEW_BIN" --version | sed -n '1s/^attnview //p')"
# NEWS: the first line that starts with a version, "0.2.0 (date)".
check NEWS "$(grep -m1 -E '^[0-9]+\.[0-9]+\.[0-9]+ ' "NEWS" | cut -d' ' -f1)"
for page in man/attnview.1 man/attnview.5 man/zh_CN/attnview.1 man/zh_CN/attnview.5 \
	python/attnview-torch-train.1 python/attnview-torch-convert.1; do
	check "$page (.TH)" "$(sed -n 's/^\.TH .*"attnview \([^"]*\)".*/\1/p' "$page")"
done
for po in po/attnview.pot po/*.po; do
	check "$po (Project-Id-Version)" \
		"$(sed -n 's/^"Project-Id-Version: attnview \(.*\)\\n"$/\1/p' "$po")"
done
check python/pyproject.toml "$(sed -n 's/^version = "\(.*\)"$/\1/p' "python/pyproject.toml")"
check "attnview_torch.__version__" \
	"$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "python/attnview_torch/__init__.py")"
if [ -f "debian/changelog" ]; then
	# "attnview (0.2.0) unstable; urgency=medium" (a native package; with a
	# Debian revision, 0.2.0-1, the version is what comes before its hyphen).
	deb=$(sed -n '1s/^attnview (\([^)]*\)) .*/\1/p' debian/changelog)
	check "debian/changelog" "${deb%-*}"
fi
exit "$fail"
