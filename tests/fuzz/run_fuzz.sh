#!/usr/bin/env bash
# One bounded libFuzzer run (meson test --suite fuzzing, in a clang build
# configured with -Dfuzz_seconds=N): fuzz_TARGET for N seconds, starting from
# the committed seeds and regression inputs. New interesting inputs go to a
# scratch corpus in the build directory, never into the source tree. A crash
# fails the test and names the saved input; make it a regression input with
#   cp INPUT tests/fuzz/regress/TARGET/<what-it-found>
# and fix the bug (the replay test then runs it in every build).
set -u
exe=$1 target=$2 seconds=$3 src=$4 work=$5
mkdir -p "$work/corpus-$target" "$work/crashes"
# A target may have no regression inputs yet (git keeps no empty directory).
inputs=("$src/seeds/$target")
[ -d "$src/regress/$target" ] && inputs+=("$src/regress/$target")
"$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$work/crashes/$target-" "$work/corpus-$target" "${inputs[@]}" 2>&1 |
	grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)'
status=${PIPESTATUS[0]}
# libFuzzer ends with 77 on a crash or broken invariant, which meson reads as a
# skipped test: report every failure as a failure.
[ "$status" -eq 77 ] && status=1
if [ "$status" -ne 0 ]; then
	echo "fuzz_$target: exit status $status; the crashing input, if one was found:" >&2
	ls "$work/crashes/$target-"* >&2 2>/dev/null
fi
exit "$status"
