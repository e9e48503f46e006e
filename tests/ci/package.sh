#!/usr/bin/env bash
# The Debian packages:
#   1. `dpkg-buildpackage -us -uc -b` on a fresh copy of the sources (the
#      release tarball given, else the last commit): attnview and
#      python3-attnview-torch, with dh_auto_test running the quick tests;
#   2. lintian on them, and on the source package dpkg-source makes of a
#      pristine copy: no error and no warning (an override would have to go
#      in debian/*.lintian-overrides with its reason; there is none);
#   3. every file `meson install` installs is in the attnview package (the
#      shell completions too, completions/meson.build);
#   4. a fresh Debian 12 (debootstrap --variant=minbase) installs the
#      attnview package with apt-get, which brings its dependencies from the
#      mirror, and runs there: attnview --version, --dump --text 你好,
#      --export x.svg, its help in Chinese (the catalogue), the causal
#      built-in model;
#   5. python3-attnview-torch, unpacked: attnview-torch-train --help and two
#      training steps with this machine's python3-torch, and the chroot's
#      attnview opens the model.
# Needs root (debootstrap, chroot), the build dependencies (debian/control;
# tests/run.sh installs them) and a Debian mirror (ATTNVIEW_DEBIAN_MIRROR,
# default http://deb.debian.org/debian). Prints how long each step took
# (debootstrap runs beside the build, lintian beside steps 3 to 5: they wait
# mostly on the mirror and on one core).
#   tests/ci/package.sh [TARBALL]     (work folder: ATTNVIEW_PACKAGE_DIR,
#                                   default build-package; logs stay there)
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
work=$top/${ATTNVIEW_PACKAGE_DIR:-build-package}
mirror=${ATTNVIEW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
tarball=${1:-}
root=$work/chroot
fail() {
	echo "tests/ci/package.sh: FAIL: $*" >&2
	exit 1
}
step() {
	echo "tests/ci/package.sh: $* ($((SECONDS - step_start)) s)"
	step_start=$SECONDS
}
step_start=$SECONDS
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap and chroot)"
for tool in dpkg-buildpackage dpkg-checkbuilddeps lintian debootstrap; do
	command -v "$tool" >/dev/null ||
		fail "$tool not found (apt-get install dpkg-dev lintian debootstrap)"
done

# A Debian build sees Debian's tools only: a Python earlier on PATH (pyenv, a
# virtual environment) would otherwise build the PyTorch package for itself.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
unset PYTHONPATH VIRTUAL_ENV

debootstrap_pid="" lintian_pid=""
cleanup() {
	local pid
	for pid in $debootstrap_pid $lintian_pid; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	if mountpoint -q "$root/proc" 2>/dev/null; then umount "$root/proc" || true; fi
}
trap cleanup EXIT
cleanup
rm -rf --one-file-system "$work"
mkdir -p "$work/src"

# 1. The sources and the build.
version=$(dpkg-parsechangelog -l debian/changelog -S Version)
upstream=${version%-*}
src=$work/src/attnview-$upstream
unpack() { # FOLDER: the sources, under FOLDER/attnview-VERSION
	mkdir -p "$1"
	if [ -n "$tarball" ]; then
		tar -xJf "$tarball" -C "$1"
	else
		git archive --prefix="attnview-$upstream/" HEAD | tar -x -C "$1"
	fi
}
# The chroot of step 4, made while the packages build.
nice debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 &
debootstrap_pid=$!
unpack "$work/src"
[ -d "$src/debian" ] || fail "no $src/debian"
(cd "$src" && dpkg-checkbuilddeps) ||
	fail "build dependencies missing (as root: apt-get build-dep ./)"
log=$work/build.log
echo "tests/ci/package.sh: dpkg-buildpackage -us -uc -b in $src (log: $log)"
if ! (cd "$src" && nice dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
	tail -80 "$log"
	fail "dpkg-buildpackage (log: $log)"
fi
# (No summary at all when DEB_BUILD_OPTIONS=nocheck skipped the tests.)
summary=$(grep -E '^(Ok|Fail|Skipped|Timeout): ' "$log" | tr -s ' ' | paste -s -d ' ' || true)
[ -z "$summary" ] || echo "dh_auto_test (meson test, quick setup): $summary"
grep -q -E '^Ok: +[1-9]' "$log" || case ${DEB_BUILD_OPTIONS:-} in
*nocheck*) echo "dh_auto_test: skipped (DEB_BUILD_OPTIONS=nocheck)" ;;
*) fail "dh_auto_test ran no tests ($log)" ;;
esac
debs=("$work"/src/*.deb)
changes=("$work"/src/attnview_"${version}"_*.changes)
ls -l "${debs[@]}" | awk '{print $5, $NF}' | sed "s|$work/src/||"
step "built"

# 2. lintian, on the binary packages and on the source package (3.0
# (native): dpkg-source packs the pristine sources with debian/).
unpack "$work/source"
(cd "$work/source" && dpkg-source -b "attnview-$upstream") >"$work/source.log" 2>&1 ||
	fail "dpkg-source -b: $(tail -5 "$work/source.log")"
lintian --fail-on error,warning --display-info "${changes[0]}" "$work/source/attnview_$version.dsc" \
	>"$work/lintian.txt" 2>&1 &
lintian_pid=$!
step "lintian started; the source package made"

# 3. Everything meson installs is in the attnview package (man pages
# compressed by dh_compress).
deb=$(ls "$work"/src/attnview_"${version}"_*.deb)
dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|' >"$work/deb-files"
meson introspect --installed "$src/obj-$(dpkg-architecture -q DEB_HOST_GNU_TYPE)" |
	/usr/bin/python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin).values()))' \
		>"$work/meson-files"
[ -s "$work/meson-files" ] || fail "meson introspect --installed listed nothing"
while read -r f; do
	grep -q -x -F -e "$f" -e "$f.gz" -e "$f/" "$work/deb-files" ||
		fail "$f, which meson installs, is not in $(basename "$deb")"
done <"$work/meson-files"
for f in /usr/share/doc/attnview/changelog.gz /usr/share/doc/attnview/changelog.Debian.gz \
	/usr/share/doc/attnview/copyright; do
	grep -q -x -F "$f" "$work/deb-files" || fail "no $f in $(basename "$deb")"
done
# The installed README and doc/ pages: every relative link they make leads
# to a file of the package.
docs=/usr/share/doc/attnview
for page in README.md doc/*.md; do
	grep -q -x -F "$docs/$page" "$work/deb-files" || fail "no $docs/$page in $(basename "$deb")"
	while IFS= read -r target; do
		path=$(realpath -m "$docs/$(dirname "$page")/$target")
		grep -q -x -F "$path" "$work/deb-files" ||
			fail "$docs/$page links $target: $path is not in $(basename "$deb")"
	done < <(grep -oE '\]\([^)#]+' "$src/$page" | sed -E 's/^\]\(//' | grep -vE '^(https?|mailto):')
done
step "$(wc -l <"$work/meson-files") files of meson install in $(basename "$deb"), changelogs, README and doc/ with the pictures they link"

# 4. A fresh Debian 12 with the package installed by apt-get.
pid=$debootstrap_pid debootstrap_pid=""
if ! wait "$pid"; then
	tail -20 "$work/debootstrap.log"
	fail "debootstrap bookworm from $mirror (log: $work/debootstrap.log)"
fi
mount -t proc proc "$root/proc"
step "debootstrap: a minimal Debian 12 in $root (made beside the build)"
cp "$deb" "$root/tmp/"
in_root() {
	chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}
if ! in_root apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" \
	>"$work/install.log" 2>&1; then
	tail -30 "$work/install.log"
	fail "apt-get install of $(basename "$deb") in the chroot"
fi
grep -E 'newly installed' "$work/install.log" || true
step "apt-get install attnview in the chroot"

in_root attnview --version >"$work/version.txt" || fail "attnview --version exits $?"
cat "$work/version.txt"
grep -q -x "attnview $upstream" "$work/version.txt" || fail "--version does not say $upstream"
grep -q '^figures: SVG, PNG, PDF' "$work/version.txt" || fail "the package writes no PNG/PDF"
in_root attnview --dump --text 你好 >"$work/dump.json" || fail "attnview --dump --text 你好"
/usr/bin/python3 - "$work/dump.json" <<'EOF' || fail "--dump's JSON"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
chars = [t["char"] for t in d["tokens"]]
assert chars == ["你", "好"], chars
layers = d["model"]["layers"]
print("attnview --dump --text 你好: tokens %s, model %s (%d layers of %d heads)"
      % (" ".join(chars), d["model"]["name"], layers, d["model"]["heads"]))
EOF
in_root sh -c 'cd /tmp && attnview --export x.svg --text 你好' || fail "attnview --export x.svg"
xmllint --noout "$root/tmp/x.svg" 2>/dev/null || grep -q '</svg>' "$root/tmp/x.svg" ||
	fail "x.svg is not a whole SVG"
echo "attnview --export x.svg --text 你好: $(stat -c %s "$root/tmp/x.svg") bytes of SVG"
in_root sh -c 'LANGUAGE=zh_CN attnview --help' >"$work/help-zh.txt" || fail "attnview --help in Chinese"
head -1 "$work/help-zh.txt" | grep -q '^用法' ||
	fail "LANGUAGE=zh_CN attnview --help is not in Chinese: $(head -1 "$work/help-zh.txt")"
echo "LANGUAGE=zh_CN attnview --help: $(head -1 "$work/help-zh.txt" | cut -c1-40)..."
in_root attnview --model builtin-causal --dump --generate 4 --seed 1 --text 床前 >/dev/null ||
	fail "the causal built-in model does not write"
in_root test -s /usr/share/attnview/builtin-causal.attn || fail "no model files in /usr/share/attnview"
step "attnview runs in the chroot"

# 5. The PyTorch package, unpacked beside this machine's torch.
pydeb=$(ls "$work"/src/python3-attnview-torch_"${version}"_all.deb)
dpkg-deb -f "$pydeb" Depends | grep -q 'python3-torch' || fail "python3-attnview-torch needs no python3-torch"
dpkg-deb -x "$pydeb" "$work/py"
[ -f "$work/py/usr/share/man/man1/attnview-torch-train.1.gz" ] || fail "no attnview-torch-train(1)"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	export PYTHONPATH=$work/py/usr/lib/python3/dist-packages
	/usr/bin/python3 "$work/py/usr/bin/attnview-torch-train" --help >"$work/py-help.txt" ||
		fail "attnview-torch-train --help"
	for i in $(seq 20); do printf '床前明月光，疑是地上霜。The cat sat on the mat.\n'; done >"$work/tiny.txt"
	OMP_NUM_THREADS=1 /usr/bin/python3 "$work/py/usr/bin/attnview-torch-train" "$work/tiny.txt" \
		-o "$root/tmp/t.attn" --steps 2 --eval-every 0 --dim 16 --heads 2 --layers 1 \
		--context 16 --batch 4 --threads 1 >"$work/py-train.txt" 2>&1 ||
		fail "attnview-torch-train, 2 steps: $(tail -5 "$work/py-train.txt")"
	unset PYTHONPATH
	in_root attnview --info --model /tmp/t.attn | grep -q -x 'steps: 2' ||
		fail "the chroot's attnview does not open the model of python3-attnview-torch"
	step "python3-attnview-torch: --help, 2 steps, the model opens in the chroot's attnview"
else
	step "python3-attnview-torch: unpacked; not run (no python3-torch on this machine)"
fi

# 2, the end: lintian's verdict.
pid=$lintian_pid lintian_pid=""
if ! wait "$pid"; then
	cat "$work/lintian.txt"
	fail "lintian reports errors or warnings"
fi
grep -v 'running with root privileges' "$work/lintian.txt" | sed 's/^/lintian: /' || true
step "lintian: no errors, no warnings"

cleanup
rm -rf --one-file-system "$root"
echo "tests/ci/package.sh: ok: $(basename -a "${debs[@]}" | paste -s -d ' ')"
