#!/usr/bin/env python3
"""Writes ratio_oracle.csv: exact conditional confidence limits for the
ratio of two Poisson means (equal exposure), the oracle compare_test.go
checks ci.RatioInterval against for plain counts (weight 1, variance =
count), where Fay's F interval must reduce to it.

Given counts x_new and x_base, x_new | x_new + x_base = n is Binomial(n, p)
with p = θ/(1+θ). The limits are Clopper–Pearson's for p, found here by
bisection on binomial tail sums computed with exact integer binomial
coefficients: no statistics library is involved, so the table is
independent of gonum and of heapest's code.

Run: python3 ratio_oracle.py > ratio_oracle.csv
"""
import math

def tail_ge(x, n, p):
    """P(X >= x) for X ~ Binomial(n, p)."""
    return math.fsum(math.comb(n, k) * p**k * (1 - p)**(n - k) for k in range(x, n + 1))

def tail_le(x, n, p):
    return math.fsum(math.comb(n, k) * p**k * (1 - p)**(n - k) for k in range(0, x + 1))

def solve(f, target):
    """p in (0,1) with f(p) = target, f increasing."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if f(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2

print("alpha,x_new,x_base,lo,hi")
for alpha in (0.05, 0.01):
    for xn in (0, 1, 2, 3, 5, 10, 20, 50, 150):
        for xb in (0, 1, 2, 4, 10, 30, 100):
            if xn == 0 and xb == 0:
                continue
            n = xn + xb
            g = alpha / 2
            if xn == 0:
                lo = 0.0
            else:
                pl = solve(lambda p: tail_ge(xn, n, p), g)
                lo = pl / (1 - pl)
            if xb == 0:
                hi = math.inf
            else:
                pu = solve(lambda p: -tail_le(xn, n, p), -g)
                hi = pu / (1 - pu)
            print(f"{alpha},{xn},{xb},{lo!r},{hi!r}")
