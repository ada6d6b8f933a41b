"""Arithmetic whose rounding does not depend on the CPU: the listening front end's functions built
from operations IEEE 754 rounds exactly (+, -, *, /, sqrt, frexp), in an order fixed here.

numpy picks its kernels for transcendental functions by the CPU's SIMD level at run time (SVML or
Highway code for AVX2, AVX-512, ...), and OpenBLAS picks its matrix kernels the same way. Their last
bits differ between levels: numpy's float32 log10 gives -10.000001 for 1e-10 on a Zen 4 (AVX-512)
and -10.0 on AVX2, so the same recording gave different features, and could give a different
transcript, on another machine. Elementwise +, -, *, / and sqrt are correctly rounded whatever the
vector width, so a formula written with them alone, summed in a fixed order, gives the same bits
on every level (`make test-cpus` shows it). The few values that need sin, cos or exp (a window, a
filter table: hundreds to thousands, computed once) come from Python's `math`, one value at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["i0", "log10", "scalar", "sinc"]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_SQRT_HALF = math.sqrt(0.5)
# ln(m) = 2 atanh(s) = 2 s (1 + s^2/3 + s^4/5 + ...), s = (m - 1) / (m + 1), |s| <= 0.1716 for m in
# [sqrt(1/2), sqrt(2)): the 12th term is below 1e-18 of the first, past float64's precision.
_ATANH_TERMS = tuple(1.0 / (2 * k + 1) for k in range(12))


def log10(x: np.ndarray) -> np.ndarray:
    """log10 of positive, finite float64 values, to about one float64 ulp (well inside a float32's)."""
    x = np.asarray(x, np.float64)
    m, e = np.frexp(x)  # x = m * 2**e, m in [0.5, 1): exact
    low = m < _SQRT_HALF
    m = np.where(low, m * 2.0, m)  # exact
    e = e - low
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    acc = np.full_like(z, _ATANH_TERMS[-1])
    for c in reversed(_ATANH_TERMS[:-1]):
        acc = acc * z + c
    return (e * _LN2 + 2.0 * s * acc) / _LN10


def scalar(f: Callable[[float], float], x: np.ndarray) -> np.ndarray:
    """`f` (a function of Python's math module) on each value of `x`, as float64: the platform's C
    library, one value at a time (for the few hundred or thousand values of a table)."""
    x = np.asarray(x, np.float64)
    return np.fromiter((f(v) for v in x.reshape(-1).tolist()), np.float64, x.size).reshape(x.shape)


def sinc(x: np.ndarray) -> np.ndarray:
    """sin(pi x) / (pi x), 1 at 0 (numpy's sinc, with the sine from `scalar`)."""
    y = np.pi * np.where(x == 0, 1e-20, np.asarray(x, np.float64))
    return scalar(math.sin, y) / y


def i0(x: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind, order 0, for |x| <= 30: its power series,
    sum of ((x/2)^k / k!)^2, to float64 precision (terms are added until they stop mattering; at
    most 70 for |x| = 30)."""
    q = (np.asarray(x, np.float64) / 2.0) ** 2
    if q.size and float(q.max()) > 225.0:
        raise ValueError("i0 here is for |x| <= 30")
    total = np.ones_like(q)
    term = np.ones_like(q)
    for k in range(1, 80):
        term = term * q / float(k * k)
        total = total + term
        if not np.any(term > total * 1e-18):
            break
    return total
