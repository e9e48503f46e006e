#!/bin/sh
# The PyTorch package as pip installs it: ./python is
# installed with /usr/bin/python3's pip into a temporary prefix, offline
# (--no-index --no-deps --no-build-isolation: the build backend is Debian's
# python3-setuptools, torch is Debian's python3-torch), then its console entry
# attnview-torch-train prints its help and trains two steps on a tiny text,
# and attnview opens the model it wrote.
#
# Debian 12 marks its Python as externally managed (PEP 668), which stops
# `pip install` into the system; pip 23 makes no such check for --prefix,
# --root or --target, so a temporary prefix needs no --break-system-packages
# and no virtual environment, and the system is never touched. The source is
# copied first: pip builds in the tree it is given, and the test must not
# write into the sources (a release tarball's check runs from a read-only
# copy of them).
#
# Skipped (77) when that Python has no torch, pip, setuptools or wheel.
#   tests/python/pip.sh        (ATTNVIEW_BIN, ATTNVIEW_TEST_DATA from meson)
set -u
py=${ATTNVIEW_PYTHON:-/usr/bin/python3}
for mod in torch pip setuptools wheel; do
	if ! "$py" -c "import $mod" >/dev/null 2>&1; then
		echo "skipped: $py cannot import $mod (apt-get install python3-torch python3-pip" \
			"python3-setuptools python3-wheel)"
		exit 77
	fi
done
src=$(cd "$ATTNVIEW_TEST_DATA/../python" && pwd) || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

# The package's files as the repository has them (a developer's build/,
# *.egg-info and caches left out).
mkdir "$tmp/src" "$tmp/home" || exit 1
(cd "$src" && tar -c --exclude=build --exclude='*.egg-info' --exclude=__pycache__ .) |
	(cd "$tmp/src" && tar -x) || fail "cannot copy $src"

# pip reads no user or site configuration (an index URL there would not
# matter with --no-index, but a config could add options), keeps no cache,
# and writes nothing under the real home.
export HOME="$tmp/home" PIP_CONFIG_FILE=/dev/null PYTHONNOUSERSITE=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
cd "$tmp" || exit 1
"$py" -m pip install --no-index --no-deps --no-build-isolation --no-cache-dir \
	--disable-pip-version-check --root-user-action=ignore --quiet --prefix "$tmp/prefix" "$tmp/src" ||
	fail "pip install --prefix $tmp/prefix ./python"

# Where pip put it: the console script in a bin/, the package in one
# site-packages directory of the prefix (Debian's pip adds local/ to a prefix:
# prefix/local/bin, prefix/local/lib/python3.11/dist-packages).
entry=$(find "$tmp/prefix" -path '*/bin/attnview-torch-train')
[ -n "$entry" ] && [ -x "$entry" ] ||
	fail "no console entry bin/attnview-torch-train; the prefix holds: $(find prefix | head -20)"
pkgs=$(find "$tmp/prefix" -type d -name attnview_torch -path '*-packages/*')
[ "$(printf '%s\n' "$pkgs" | grep -c .)" -eq 1 ] || fail "not one attnview_torch in the prefix: $pkgs"
export PYTHONPATH="${pkgs%/attnview_torch}"
where=$("$py" -c 'import attnview_torch; print(attnview_torch.__file__)') ||
	fail "the installed attnview_torch does not import"
case $where in
"$tmp/prefix/"*) echo "imported from $where" ;;
*) fail "attnview_torch imported from $where, not from the prefix" ;;
esac
head -1 "$entry" | grep -q "^#!$py" || fail "the entry's interpreter is $(head -1 "$entry"), not $py"
# The package's requirements hold for what this Python has (--no-deps leaves
# that unchecked): Debian 12's torch is 1.13.0a0+gitunknown by its metadata.
"$py" - <<'EOF' || fail "the installed package's requirements are not met by this Python's packages"
from importlib.metadata import requires, version
try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement
for line in requires("attnview-torch") or []:
    req = Requirement(line)
    have = version(req.name)
    ok = req.specifier.contains(have)
    print("requires %s: %s has %s (%s)" % (req, req.name, have, "ok" if ok else "NOT MET"))
    assert ok
EOF

# The console entry's help.
"$entry" --help >help.txt 2>&1 || fail "attnview-torch-train --help exits $?: $(cat help.txt)"
for opt in --steps --objective --nproc --resume; do
	grep -q -e "$opt" help.txt || fail "attnview-torch-train --help names no $opt: $(cat help.txt)"
done
echo "attnview-torch-train --help: $(wc -l <help.txt) lines"
# Its manual page (installed by the Debian package) has every option; the
# converter's entry and page the same.
conv=$(find "$tmp/prefix" -path '*/bin/attnview-torch-convert')
[ -n "$conv" ] && [ -x "$conv" ] || fail "no console entry bin/attnview-torch-convert"
"$conv" --help >convert-help.txt 2>&1 || fail "attnview-torch-convert --help exits $?"
for cmd in attnview-torch-train attnview-torch-convert; do
	h=help.txt
	[ $cmd = attnview-torch-convert ] && h=convert-help.txt
	page="$src/$cmd.1"
	for opt in $(grep -o -E -- '--[a-z][a-z-]*' $h | sort -u); do
		grep -q -F -e "$(printf '%s' "$opt" | sed 's/-/\\-/g')" "$page" ||
			fail "$opt of $cmd --help is not in python/$cmd.1"
	done
done

# Two training steps on a tiny text, and the model opens in attnview.
i=0
while [ $i -lt 20 ]; do
	printf '床前明月光，疑是地上霜。举头望明月，低头思故乡。\nThe cat sat on the mat.\n'
	i=$((i + 1))
done >tiny.txt
"$entry" tiny.txt -o tiny.attn --steps 2 --eval-every 0 --dim 16 --heads 2 --layers 1 \
	--context 16 --batch 4 --threads 1 >train.txt 2>&1 ||
	fail "attnview-torch-train (2 steps) exits $?: $(cat train.txt)"
tail -3 train.txt
[ -s tiny.attn ] || fail "attnview-torch-train wrote no tiny.attn"
"$ATTNVIEW_BIN" --info --model tiny.attn >info.txt 2>&1 ||
	fail "attnview --info cannot open the model pip's trainer wrote: $(cat info.txt)"
grep -q "^steps: 2$" info.txt || fail "attnview --info does not say 2 steps: $(cat info.txt)"
"$ATTNVIEW_BIN" --dump --model tiny.attn --text '明月' >dump.json 2>&1 ||
	fail "attnview --dump on that model: $(cat dump.json)"
echo "pip-installed attnview_torch trained 2 steps; attnview opens the model"
