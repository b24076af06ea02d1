"""METAMAX selection: the upper-convex-hull rule of György & Kocsis (2011) used by BOOSTINGTREE.

BoostingTree paper (Kocsis, György, Bán 2013), Sec. 3, Eq. (1) and Fig. 2: in round ``r`` the node ``i``
(a model, or a local-search instance in METAMAX) is *selected* when there is a constant ``c > 0`` with

    f^_i + c h_r(n_i)  >  f^_j + c h_r(n_j)       for every j with (n_j, f^_j) != (n_i, f^_i),   (1)
    f^_i + c h_r(n_i)  >  max_j f^_j               (the virtual point (0, max f^)),

i.e. when ``(h_r(n_i), f^_i)`` is a strict corner of the upper convex hull of the points together with
the virtual point ``(0, max_j f^_j)`` (reconstructed METAMAX rule, "How to implement the selection").
Points that coincide exactly are not compared with each other: they are all selected or all not, and
the caller's same-``n`` rule keeps one of them.

The hull is computed on the distinct ``x`` values only (for each ``x`` the points of largest ``y``),
with a monotone chain.  Cross products are evaluated in floating point and, when one is too close
to zero to trust its sign, again in exact rational arithmetic (`fractions.Fraction` of the float
inputs), so the result is the exact answer for the given floats.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np

__all__ = ["hull_select", "metamax_select", "h_exp_sqrt", "c_interval"]


def h_exp_sqrt(n: np.ndarray | float, t: float) -> np.ndarray:
    """The paper's ``h_r(n) = exp(-n / sqrt(t_r))`` (Sec. 4.2.1), with ``t`` clipped below at 1."""
    return np.exp(-np.asarray(n, dtype=np.float64) / np.sqrt(max(float(t), 1.0)))


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    """Sign-exact ``(a - o) x (b - o)``: > 0 for a left (counter-clockwise) turn o -> a -> b."""
    v = (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    scale = (abs(a[0] - o[0]) + abs(b[0] - o[0])) * (abs(a[1] - o[1]) + abs(b[1] - o[1]))
    if abs(v) > 1e-9 * scale:
        return v
    fo = (Fraction(o[0]), Fraction(o[1]))
    fa = (Fraction(a[0]), Fraction(a[1]))
    fb = (Fraction(b[0]), Fraction(b[1]))
    e = (fa[0] - fo[0]) * (fb[1] - fo[1]) - (fa[1] - fo[1]) * (fb[0] - fo[0])
    return float((e > 0) - (e < 0))


def hull_select(x: np.ndarray, y: np.ndarray, virtual: bool = True) -> np.ndarray:
    """Which points are strict corners of the upper convex hull (Eq. (1), Fig. 2 of the paper).

    Parameters
    ----------
    x : array of float, shape (m,)
        ``h_r(n_i)``, positive.
    y : array of float, shape (m,)
        ``f^_i``.
    virtual : bool
        Add the virtual point ``(0, max y)`` (BOOSTINGTREE and METAMAX both do).

    Returns
    -------
    selected : bool array, shape (m,)
        ``True`` where some ``c > 0`` makes the point strictly best in ``y + c x`` against every
        non-coincident point (and the virtual point). Coincident points share their answer.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("x and y must be 1-d arrays of the same length")
    m = x.size
    out = np.zeros(m, dtype=bool)
    if m == 0:
        return out
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("x and y must be finite")
    if virtual and (x <= 0).any():
        raise ValueError("with the virtual point at x = 0 every x = h_r(n) must be positive")
    # for each distinct x, only the points of largest y can be selected (y_i > y_j at equal x)
    order = np.lexsort((-y, x))
    xs, first = np.unique(x[order], return_index=True)
    ys = y[order][first]
    pts: list[tuple[float, float]] = []
    if virtual:
        pts.append((0.0, float(y.max())))
    pts.extend(zip(xs.tolist(), ys.tolist()))
    # upper hull, x ascending; keep only strict right turns (collinear points are not corners)
    hull: list[int] = []
    for k, p in enumerate(pts):
        while len(hull) >= 2 and _cross(pts[hull[-2]], pts[hull[-1]], p) >= 0:
            hull.pop()
        hull.append(k)
    chosen: list[tuple[float, float]] = []
    for pos, k in enumerate(hull):
        if virtual and k == 0:
            continue
        px, py = pts[k]
        # c must exceed the (negated) slope to the left neighbour and be > 0; it must stay below the
        # negated slope to the right neighbour: the right neighbour must be strictly lower
        if pos + 1 < len(hull):
            qx, qy = pts[hull[pos + 1]]
            if not qy < py:
                continue
        chosen.append((px, py))  # slopes strictly decrease along the hull: the interval is non-empty
    if not chosen:
        return out
    cx = np.array([c[0] for c in chosen])
    cy = np.array([c[1] for c in chosen])
    for a, b in zip(cx, cy):
        out |= (x == a) & (y == b)
    return out


def c_interval(x: np.ndarray, y: np.ndarray, i: int, virtual: bool = True) -> tuple[float, float]:
    """The open interval of ``c > 0`` for which point ``i`` satisfies Eq. (1) (empty if lo >= hi).

    Plain O(m) evaluation of every pairwise constraint; used to draw Fig. 2 and as a check.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    lo, hi = 0.0, np.inf
    xi, yi = x[i], y[i]
    px, py = list(x), list(y)
    if virtual:
        px.append(0.0)
        py.append(float(y.max()))
    for xj, yj in zip(px, py):
        if xj == xi and yj == yi:
            continue
        if xj == xi:
            if not yi > yj:
                return (0.0, 0.0)
        elif xj < xi:
            lo = max(lo, (yj - yi) / (xi - xj))
        else:
            hi = min(hi, (yi - yj) / (xj - xi))
    return (lo, hi)


def metamax_select(n: np.ndarray, fhat: np.ndarray, t: float,
                   h: Callable[[np.ndarray, float], np.ndarray] = h_exp_sqrt) -> np.ndarray:
    """Eq. (1) on step counts: select by the hull of ``{(h(n_i, t), f^_i)} U {(0, max f^)}``.

    ``h(n, t)`` must be positive and decreasing in ``n``; the default is ``exp(-n / sqrt(t))``.
    Returns a bool mask (before the caller's same-``n`` tie rule).
    """
    x = np.asarray(h(np.asarray(n, dtype=np.float64), t), dtype=np.float64)
    return hull_select(x, np.asarray(fhat, dtype=np.float64))
