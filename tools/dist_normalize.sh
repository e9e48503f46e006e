#!/bin/sh
# meson dist runs this on the unpacked tree before it packs it (MESON_DIST_ROOT),
# so that one commit gives one tarball, byte for byte.
#
# meson 1.0 packs with Python's tarfile from files on disk: the entries come
# in name order and the files carry git archive's commit time, but the top
# folder is made afresh (the clock's time, the umask's mode) and the modes
# follow git's tar.umask. Here every entry gets the time SOURCE_DATE_EPOCH
# (the last commit's when unset) and the mode 0755 (folders, executables) or
# 0644. What stays the builder's: the owner of the files (root's 0 when run
# as root, the user's otherwise), so two builds by one account agree.
set -eu
root=${MESON_DIST_ROOT:?meson dist sets MESON_DIST_ROOT}
src=${MESON_PROJECT_SOURCE_ROOT:-${MESON_SOURCE_ROOT:?}}
when=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct HEAD)}
case $when in
'' | *[!0-9]*)
	echo "dist_normalize.sh: SOURCE_DATE_EPOCH is '$when', not seconds since 1970" >&2
	exit 1
	;;
esac
find "$root" -type d -exec chmod 0755 {} +
find "$root" -type f -perm -u+x -exec chmod 0755 {} +
find "$root" -type f ! -perm -u+x -exec chmod 0644 {} +
# Children first, then their folder (touching a file leaves its folder's time
# alone, but be plain about the order).
find "$root" -depth -exec touch -h -d "@$when" {} +
