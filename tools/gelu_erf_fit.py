#!/usr/bin/python3
"""The coefficients of the exact GELU's 8-lane erf (src/core/vec8.h,
GELU_ERF_P and GELU_ERF_Q), fitted again: prints them as C.

    /usr/bin/python3 tools/gelu_erf_fit.py

With z = |x| / sqrt(2):
  P, degree 6 in s = z^2: erf(z) / z for z in [0, 1];
  Q, degree 10 in t = 1/z: erfc(z) exp(z^2) for z in [1, 9.4] (beyond,
  exp(-z^2) is below binary32's normal range).
Each a least-squares fit in binary64 on Chebyshev nodes (4000 and 8000),
against Python's math.erf and math.erfc. The fits' own error (binary64) is
1.3e-9 and 0.25 u relative; the binary32 evaluation in vec8.h is what sets
the accuracy it states (Phi within 1.7 u, gelu within 2.3 u |x|), which
tests/unit/test_model.c measures.
"""

import math

import numpy as np


def cheb(a, b, n):
    k = np.arange(n)
    return (a + b) / 2 + (b - a) / 2 * np.cos((2 * k + 1) * np.pi / (2 * n))


def main():
    z = cheb(0.0, 1.0, 4000)
    p = np.polyfit(z * z, np.array([math.erf(v) / v for v in z]), 6)
    t = cheb(1 / 9.4, 1.0, 8000)
    q = np.polyfit(t, np.array([math.erfc(1 / v) * math.exp(1 / (v * v)) for v in t]), 10)
    for name, c in (("GELU_ERF_P", p), ("GELU_ERF_Q", q)):
        print("static const float %s[%d] = {%s};"
              % (name, len(c), ", ".join("%.9ef" % x for x in c)))


if __name__ == "__main__":
    main()
