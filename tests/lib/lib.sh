# What the shell tests of the command line share: sourced, after `set -u`,
# by tests/cli/train_cli.sh, train_continue.sh, figure_cli.sh and kept_steps.sh.
#
# fails and checks count; fail MESSAGE records a failure on stderr;
# expect STATUS PATTERN -- command...: the command's exit status is STATUS
# and its combined output matches the extended regex PATTERN (at most
# EXPECT_TIMEOUT seconds, 120 unless set; the first EXPECT_SHOW bytes of the
# output, 1500 unless set, shown on failure).
fails=0 checks=0

fail() {
	fails=$((fails + 1))
	printf 'FAIL: %s\n' "$*" >&2
}

expect() {
	local want=$1 pattern=$2
	shift 3
	checks=$((checks + 1))
	local out status
	out=$(timeout "${EXPECT_TIMEOUT:-120}" "$@" 2>&1)
	status=$?
	if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
		fail "$*: status $status (want $want), output:"
		head -c "${EXPECT_SHOW:-1500}" <<<"$out" >&2
		echo >&2
	fi
}
