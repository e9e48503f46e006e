#!/bin/sh
# Runs one case of tests/python/test_torch.py (or test_convert.py) with Debian's /usr/bin/python3
# (python3-torch); meson's skip status 77 when that Python has no torch.
#   tests/python/run.sh CASE       (ATTNVIEW_BIN, ATTNVIEW_TEST_DATA from meson)
py=${ATTNVIEW_PYTHON:-/usr/bin/python3}
# (find_spec: whether torch is there, without the two seconds of importing it;
# a torch that is there but broken fails the test, it is not skipped)
if ! "$py" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' \
	>/dev/null 2>&1; then
	echo "skipped: $py cannot import torch; install it with apt-get install python3-torch" \
		"(or set ATTNVIEW_PYTHON to a Python that has torch)"
	exit 77
fi
# One thread per process: PyTorch's threads only slow these tiny models down,
# and the suite runs two tests at once on two cores.
# The converter's cases are in test_convert.py.
case $1 in convert*) script=test_convert.py ;; *) script=test_torch.py ;; esac
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 exec "$py" "$(dirname "$0")/$script" "$@"
