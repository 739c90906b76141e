"""The polynomial behind Activations' exact GELU: erfcx(u) = exp(u^2) erfc(u) ~ t P(t), t = 1 / (1 + u / 2), u >= 0.

    fit_erfcx.py            prints the coefficients of P (lowest power first) and the fit's largest relative error

A least-squares fit of degree 10 in relative error over u in [0, 10] (beyond it exp(-u^2) is below float32's range),
on Chebyshev-spaced points in t. Python's math.erfc is the reference (double precision)."""
import math

import numpy as np

DEGREE = 10


def erfcx(u):
    return math.exp(u * u) * math.erfc(u)


def main():
    t = np.cos(np.linspace(0, math.pi, 4000)) * 0.5 + 0.5
    t = t[t > 1 / (1 + 0.5 * 10)]
    u = (1 / t - 1) / 0.5
    f = np.array([erfcx(v) for v in u])
    basis = np.vander(t, DEGREE + 1, increasing=True) * t[:, None]
    coeffs, *_ = np.linalg.lstsq(basis / f[:, None], np.ones_like(f), rcond=None)
    grid = np.linspace(0, 10, 200001)
    tg = 1 / (1 + 0.5 * grid)
    err = np.max(np.abs(tg * np.polyval(coeffs[::-1], tg) / np.array([erfcx(v) for v in grid]) - 1))
    print("coefficients:", ", ".join("%.9ef" % c for c in coeffs))
    print("largest relative error over [0, 10]: %.2e" % err)


if __name__ == "__main__":
    main()
