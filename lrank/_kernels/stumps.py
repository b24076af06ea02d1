"""RankBoost kernels: potentials, the potential histogram of WeakLearn (Fig. 3), pair updates.

Notation (Freund, Iyer, Schapire, Singer 2003): a crucial pair ``p`` has ``hi[p]`` (the instance x_1
that should rank higher) and ``lo[p]`` (x_0), weight ``D[p]``. A binary stump on feature ``f`` with bin
threshold ``j`` and default ``q`` is ``h(x) = [code(x) > j]`` for a known value and ``q`` for a missing
one (code 0), Eq. (9). Bin ``j`` ranges over ``0..k+1``: ``j = 0`` is ``theta = -inf`` (every known value
scores 1) and ``j = k + 1`` is ``theta = +inf`` (no known value scores 1).

Codes are passed feature-major, ``codes_t[f, i]``, so that the histogram pass reads memory in order.

Choices independent of the CPU's last bits (the stump searches and the WeakLearn.cum test): r (Eq. 14)
and Z (Eq. 3) are sums of potentials and pair weights that total at most 2 and 1, computed in the last
bits differently from one CPU to the next (numpy's SIMD ``exp``/``log`` in the weight updates, fused
multiply-adds); two stumps that split the pairs alike then swap places in a strict comparison (notebook
01's Fig. 7 chose feature 79 or 94 at one round, both with r = 0.3352091, with numpy's AVX-512 paths on
or off). So two candidates whose |r| (or Z) differ by at most ``TIE_TOL = 1e-10`` are equally good and
the first in scan order is kept (a later one must be better by more than ``TIE_TOL``); |r| <=
``TIE_TOL`` counts as r = 0 (no stump); a cumulative weight must exceed ``TIE_TOL`` to count as
positive. (Step 6's choice of q needs no tolerance: where |L| and |L - R| tie, |r| = |R| / 2, while the
stump at theta = +inf with q = 1 has |r| = |R|, so a stump decided by that tie is never the best.)

Measured over the 60,186 WeakLearn.3.cum rounds of notebook 01's Figs. 5-7 (quick profile), the gap
between the best |r| and the next smaller one: below 1e-15 (rounding) in 2,943 rounds, none between
1e-15 and 1e-13, 9 between 1e-13 and 1e-10 (now ties: the first stump is kept, |r| smaller by less than
1e-10), 2 between 1e-10 and 1e-9, the rest above. A choice can still depend on the CPU only where a gap
lies within the CPUs' difference in r of ``TIE_TOL``: the r of the same stump differed by at most
2.2e-16 between numpy with and without its AVX-512 paths (Fig. 7's 228 fits, up to 55 rounds).
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

#: |r| or Z closer than this are equally good (module docstring); r and Z are at most 2 and 1
TIE_TOL = 1e-10


# --------------------------------------------------------------------------------------- potentials
@njit(cache=True)
def _potentials_from_pairs(hi, lo, D, pi):
    """pi(x) = sum_x' D(x', x) - D(x, x')  (Eq. 10): + weight where x is hi, - where x is lo.

    ``pi`` (float64, n_docs) is passed in zeroed by the caller and returned.
    """
    for p in range(hi.size):
        w = D[p]
        pi[hi[p]] += w
        pi[lo[p]] -= w
    return pi


@njit(cache=True)
def _potentials_bipartite(v, side, c, doc_query, pi):
    """pi(x) = d(x) s(x) with d(x) = c_q v(x) (Eq. 8; each side's v sums to 1 within its query).

    ``pi`` (float64, like ``v``) is passed in; every entry is written.
    """
    for i in range(v.size):
        s = side[i]
        if s == 0:
            pi[i] = 0.0
        else:
            pi[i] = s * c[doc_query[i]] * v[i]
    return pi


# ------------------------------------------------------------------------------ WeakLearn histogram
# hist[f, c] = sum of pi(x) over the feedback instances x with code c on feature f (the input of Fig. 3's
# L and R, Eq. 10-14). Arithmetic (fixed, so results depend on the data only): of n listed instances the
# t-th goes into partial histogram t mod 4, the last n mod 4 into partial 0, instances in increasing t,
# and hist = (p0 + p1) + (p2 + p3).
# Four features are histogrammed in one pass over the instances (each pi(x) loaded once for four
# scatters, four independent store-to-load chains in flight); per feature the arithmetic is unchanged, so
# the grouping changes no bit (tests check the result against a NumPy model of exactly this arithmetic).
_GROUP = 4  # features per pass; `_histogram_groups` spells out the four (ta, tb, tc, td)


@njit(cache=True)
def _histogram_one(codes_t, rows, dense, pi, f, tmp, hist):
    """One feature's histogram (the features left over after the groups of four)."""
    n = pi.size if dense else rows.size
    n4 = n - n % 4
    col = codes_t[f]
    tmp[:] = 0.0
    for t in range(0, n4, 4):
        for k in range(4):
            i = t + k if dense else rows[t + k]
            tmp[k, col[i]] += pi[i]
    for t in range(n4, n):
        i = t if dense else rows[t]
        tmp[0, col[i]] += pi[i]
    for c in range(hist.shape[1]):
        hist[f, c] = (tmp[0, c] + tmp[1, c]) + (tmp[2, c] + tmp[3, c])


@njit(cache=True)
def _histogram_groups(codes_t, rows, dense, pi, hist, tmp):
    """Fill ``hist`` (float64, ``(F, n_bins)``; every entry is written) with the potential histogram.

    ``tmp`` (float64, ``(4, 4, n_bins)``) holds the four features' partial histograms; its contents on
    entry do not matter (zeroed here before each use).
    """
    F = codes_t.shape[0]
    n_bins = hist.shape[1]
    n = pi.size if dense else rows.size
    ta = tmp[0]
    tb = tmp[1]
    tc = tmp[2]
    td = tmp[3]
    n4 = n - n % 4
    FG = F - F % _GROUP
    for f in range(0, FG, _GROUP):
        ca = codes_t[f]
        cb = codes_t[f + 1]
        cc = codes_t[f + 2]
        cd = codes_t[f + 3]
        ta[:] = 0.0
        tb[:] = 0.0
        tc[:] = 0.0
        td[:] = 0.0
        for t in range(0, n4, 4):
            for k in range(4):  # unrolled by LLVM; partial histogram k takes instance t + k
                i = t + k if dense else rows[t + k]
                p = pi[i]
                ta[k, ca[i]] += p
                tb[k, cb[i]] += p
                tc[k, cc[i]] += p
                td[k, cd[i]] += p
        for t in range(n4, n):
            i = t if dense else rows[t]
            p = pi[i]
            ta[0, ca[i]] += p
            tb[0, cb[i]] += p
            tc[0, cc[i]] += p
            td[0, cd[i]] += p
        for c in range(n_bins):
            hist[f, c] = (ta[0, c] + ta[1, c]) + (ta[2, c] + ta[3, c])
            hist[f + 1, c] = (tb[0, c] + tb[1, c]) + (tb[2, c] + tb[3, c])
            hist[f + 2, c] = (tc[0, c] + tc[1, c]) + (tc[2, c] + tc[3, c])
            hist[f + 3, c] = (td[0, c] + td[1, c]) + (td[2, c] + td[3, c])
    for f in range(FG, F):
        _histogram_one(codes_t, rows, dense, pi, f, ta, hist)
    return hist


@njit(cache=True)
def _potential_histogram(codes_t, rows, pi, hist, tmp):
    """hist[f, c] = sum of pi(x) over feedback instances x (``rows``, in that order) with code c on f.

    ``hist`` (``(F, n_bins)``, every entry written) and the workspace ``tmp`` (``(4, 4, n_bins)``) are
    passed in (`potential_histogram`).
    """
    return _histogram_groups(codes_t, rows, False, pi, hist, tmp)


@njit(cache=True)
def _potential_histogram_dense(codes_t, pi, hist, tmp, no_rows):
    """As `_potential_histogram` with every row (in order) a feedback instance; ``no_rows`` is an empty
    int64 array (the unused ``rows`` of the shared loop), ``hist`` and ``tmp`` as there."""
    return _histogram_groups(codes_t, no_rows, True, pi, hist, tmp)


@njit(cache=True)
def _alpha_third(r):
    # Eq. (6): alpha = 1/2 ln((1 + r) / (1 - r))
    return 0.5 * np.log((1.0 + r) / (1.0 - r))


@njit(cache=True)
def _scan_third(hist, n_thresholds, qmode):
    """WeakLearn (Fig. 3): maximise |r| = |L - q R| (Eq. 14) over features, thresholds, q_def.

    ``qmode``: -1 chooses q_def in {0, 1} by step 6, 0 or 1 fixes it (step 6 skipped). Thresholds are
    scanned as in Fig. 3, from theta = +inf (L = 0) downwards; a tie within ``TIE_TOL`` keeps the first
    stump found. Returns (f*, j*, q*, r*); f* = -1 when every stump has |r| <= ``TIE_TOL``.
    """
    F = hist.shape[0]
    best_abs = 0.0
    bf, bj, bq, br = -1, -1, 0, 0.0
    for f in range(F):
        k = n_thresholds[f]
        R = 0.0  # step 2: R = sum of pi over ranked instances (summed in L's order, so L = R at j = 0)
        for c in range(k + 1, 0, -1):
            R += hist[f, c]
        L = 0.0
        for j in range(k + 1, -1, -1):  # theta_{k+1} = +inf first, theta_0 = -inf last
            if j < k + 1:
                L += hist[f, j + 1]  # step 5: L = sum_{x: f(x) > theta_j} pi(x)
            if qmode >= 0:
                q = qmode
            elif abs(L) > abs(L - R):  # step 6
                q = 0
            else:
                q = 1
            r = L - q * R  # Eq. (14)
            if abs(r) > best_abs + TIE_TOL:  # step 9
                best_abs = abs(r)
                bf, bj, bq, br = f, j, q, r
    return bf, bj, bq, br


@njit(cache=True)
def _scan_third_cum(hist, n_thresholds, qmode, cum):
    """WeakLearn.3.cum: max |r| among stumps whose cumulative weight stays positive.

    Unlike `scan_third`, q_def is not fixed by step 6 (the constrained optimum may need the other q).
    Ties within ``TIE_TOL`` keep the first stump; the cumulative weight plus alpha must exceed ``TIE_TOL``.
    """
    F = hist.shape[0]
    best_abs = 0.0
    bf, bj, bq, br = -1, -1, 0, 0.0
    for f in range(F):
        k = n_thresholds[f]
        R = 0.0
        for c in range(k + 1, 0, -1):
            R += hist[f, c]
        L = 0.0
        for j in range(k + 1, -1, -1):
            if j < k + 1:
                L += hist[f, j + 1]
            for qq in range(2):
                if qmode >= 0 and qq != qmode:
                    continue
                r = L - qq * R
                a = abs(r)
                if a > best_abs + TIE_TOL:
                    lo_c = -1.0 + 1e-15  # min(max(r, lo_c), hi_c) as numba's min / max select
                    hi_c = 1.0 - 1e-15
                    rc = lo_c if lo_c > r else r
                    rc = hi_c if hi_c < rc else rc
                    if not (cum[f, j, qq] + _alpha_third(rc) > TIE_TOL):
                        continue
                    best_abs = a
                    bf, bj, bq, br = f, j, qq, r
    return bf, bj, bq, br


# ------------------------------------------------------------------ WeakLearn.2: pair histograms
@njit(cache=True)
def _pair_split_histograms(codes_t, hi, lo, D, mass, count):
    """Per feature, pair-weight histograms giving W_- and W_+ of every stump (one pass over the pairs).

    With a = code(x_1) (``hi``), b = code(x_0) (``lo``), 0 = missing, slot ``s`` of ``mass[s, f, c]``:
    0/1: a > b > 0 at c = b / c = a (pair correctly split, W_-, iff b <= j < a);
    2/3: 0 < a < b at c = a / c = b (pair wrongly split, W_+, iff a <= j < b);
    4: b missing, at c = a (h(x_1) = [a > j], h(x_0) = q); 5: a missing, at c = b.
    ``count`` holds the same histograms as integer counts, so that an empty split is exactly 0.
    ``mass`` (float64) and ``count`` (int64), both ``(6, F, n_bins)``, are passed in zeroed by the caller.
    """
    F = codes_t.shape[0]
    for f in range(F):
        col = codes_t[f]
        for p in range(hi.size):
            a = col[hi[p]]
            b = col[lo[p]]
            w = D[p]
            if a != 0 and b != 0:
                if a > b:
                    mass[0, f, b] += w
                    mass[1, f, a] += w
                    count[0, f, b] += 1
                    count[1, f, a] += 1
                elif a < b:
                    mass[2, f, a] += w
                    mass[3, f, b] += w
                    count[2, f, a] += 1
                    count[3, f, b] += 1
            elif a != 0:
                mass[4, f, a] += w
                count[4, f, a] += 1
            elif b != 0:
                mass[5, f, b] += w
                count[5, f, b] += 1
    return mass, count


@njit(cache=True)
def _scan_second(mass, count, n_thresholds, qmode, cum, use_cum, total, eps, work):
    """WeakLearn.2: minimise Z = W_0 + 2 sqrt(W_- W_+) (Eq. 3) over features, thresholds, q_def.

    For threshold bin j and default q (see `pair_split_histograms` for the slots):
    W_- = split_P(j) + (q = 0: sum_{c > j} slot 4; q = 1: sum_{c <= j} slot 5),
    W_+ = split_N(j) + (q = 0: sum_{c > j} slot 5; q = 1: sum_{c <= j} slot 4), W_0 = total - W_- - W_+.
    With ``use_cum`` only stumps whose cumulative weight plus alpha (Eq. 2, smoothed by ``eps`` when
    W_- or W_+ is 0) exceeds ``TIE_TOL``. Thresholds are scanned from theta = +inf down; a Z within
    ``TIE_TOL`` of the best keeps the first stump; |r| <= ``TIE_TOL`` counts as r = 0.
    ``work`` (float64, ``(6, n_bins)``) holds the per-feature prefix and suffix sums; every entry read is
    written first for that feature, so its contents on entry do not matter.
    Returns (f*, j*, q*, r*, W_-, W_0, W_+); f* = -1 when no allowed stump has r != 0.
    """
    F = mass.shape[1]
    splitP = work[0]
    splitN = work[1]
    h_le = work[2]
    l_le = work[3]
    h_gt = work[4]
    l_gt = work[5]
    best_z = np.inf
    bf, bj, bq = -1, -1, 0
    br, bm, b0, bp = 0.0, 0.0, 0.0, 0.0
    for f in range(F):
        k = n_thresholds[f]
        sp = 0.0
        sn = 0.0
        cp = 0
        cn = 0
        hl = 0.0
        ll = 0.0
        for j in range(0, k + 2):  # prefix sums "<= j"
            sp += mass[0, f, j] - mass[1, f, j]
            cp += count[0, f, j] - count[1, f, j]
            sn += mass[2, f, j] - mass[3, f, j]
            cn += count[2, f, j] - count[3, f, j]
            splitP[j] = sp if cp > 0 else 0.0
            splitN[j] = sn if cn > 0 else 0.0
            hl += mass[4, f, j]
            ll += mass[5, f, j]
            h_le[j] = hl
            l_le[j] = ll
        hg = 0.0
        lg = 0.0
        for j in range(k + 1, -1, -1):  # suffix sums "> j"
            h_gt[j] = hg
            l_gt[j] = lg
            hg += mass[4, f, j]
            lg += mass[5, f, j]
        for j in range(k + 1, -1, -1):
            for qq in range(2):
                if qmode >= 0 and qq != qmode:
                    continue
                if qq == 0:
                    wm = splitP[j] + h_gt[j]
                    wp = splitN[j] + l_gt[j]
                else:
                    wm = splitP[j] + l_le[j]
                    wp = splitN[j] + h_le[j]
                if wm < 0.0:
                    wm = 0.0
                if wp < 0.0:
                    wp = 0.0
                r = wm - wp
                if abs(r) <= TIE_TOL:
                    continue
                w0 = total - wm - wp
                if w0 < 0.0:
                    w0 = 0.0
                z = w0 + 2.0 * np.sqrt(wm * wp)  # Eq. (3)
                if z < best_z - TIE_TOL:
                    if use_cum:
                        if wm == 0.0 or wp == 0.0:
                            alpha = 0.5 * np.log((wm + eps) / (wp + eps))
                        else:
                            alpha = 0.5 * np.log(wm / wp)  # Eq. (2)
                        if not (cum[f, j, qq] + alpha > TIE_TOL):
                            continue
                    best_z = z
                    bf, bj, bq = f, j, qq
                    br, bm, b0, bp = r, wm, w0, wp
    return bf, bj, bq, br, bm, b0, bp


# ----------------------------------------------------------------------------- weak ranking values
@njit(cache=True)
def _stump_on_codes(col, j, q, h):
    """h(x) on the training rows: [code > j] for known values, q for missing (Eq. 9).

    ``h`` (float64, like ``col``) is passed in; every entry is written.
    """
    for i in range(col.size):
        c = col[i]
        if c == 0:
            h[i] = q
        elif c > j:
            h[i] = 1.0
        else:
            h[i] = 0.0
    return h


@njit(cache=True)
def _stump_scores(X, feature, theta, qdef, alpha, out):
    """out += sum_t alpha_t h_t(x) with h_t = [x_f > theta_t], q_def_t for NaN (the final ranking H)."""
    n = X.shape[0]
    for t in range(feature.size):
        f = feature[t]
        th = theta[t]
        a = alpha[t]
        aq = a * qdef[t]
        for i in range(n):
            x = X[i, f]
            if x != x:
                out[i] += aq
            elif x > th:
                out[i] += a
    return out


# ------------------------------------------------------------------------------- the Fig. 1 update
@njit(cache=True)
def _update_pairs(hi, lo, D, h, alpha):
    """D_{t+1} = D_t exp(alpha (h(x_0) - h(x_1))) / Z_t (Fig. 1), in place.

    Returns (Z_t, W_-, W_0, W_+) of the old distribution, where W_b = sum D [h(x_0) - h(x_1) = b] for
    binary h (for [0,1]-valued h, W_- and W_+ collect the negative and positive differences' weights).
    """
    Z = 0.0
    wm = 0.0
    w0 = 0.0
    wp = 0.0
    for p in range(hi.size):
        d = h[lo[p]] - h[hi[p]]
        w = D[p]
        if d < 0.0:
            wm += w
        elif d > 0.0:
            wp += w
        else:
            w0 += w
        nw = w * np.exp(alpha * d)
        D[p] = nw
        Z += nw
    for p in range(hi.size):
        D[p] /= Z
    return Z, wm, w0, wp


@njit(cache=True)
def _round_pairs(hi, lo, D, h, alpha, D1, H, pi):
    """One round's O(m) work of Fig. 1 in two passes over the pairs, in place.

    Pass 1: W_-, W_0, W_+ and D_{t+1} Z_t = D_t exp(alpha (h(x_0) - h(x_1))) (Fig. 1), and the training
    losses of the already updated ``H`` under the initial ``D1`` (Eq. 21 with ties 1/2, Eq. 1).
    Pass 2: D_{t+1} = D_{t+1} Z_t / Z_t and the next round's potentials ``pi`` (Eq. 10).
    The arithmetic is that of `_update_pairs`, `_ranking_losses` and `_potentials_from_pairs` called one
    after another (same bits, tested), done faster:

    * ``exp`` once per round for the differences -1 and +1 when h is binary (exp(alpha d) for the same
      d is the same number; w exp(0) = w w 1 = w), per pair only for a [0, 1]-valued h;
    * the sums add w 0 = +0.0 where the separate kernels skipped a pair (x + 0.0 = x for these
      non-negative sums) and w 1 = w or w 0.5 where they added w or 0.5 w: no branch depends on the
      data (mispredicted branches cost more than the whole pass otherwise);
    * pi(x) of a run of pairs with the same x_1 (pairs come grouped by x_1) is summed in a register and
      stored once: the same additions in the same order, without a store-to-load chain per pair.

    Returns (Z_t, W_-, W_0, W_+, rloss, rloss_strict).
    """
    binary = True
    for i in range(h.size):
        if h[i] != 0.0 and h[i] != 1.0:
            binary = False
            break
    e_minus = np.exp(alpha * -1.0)
    e_plus = np.exp(alpha * 1.0)
    Z = 0.0
    wm = 0.0
    w0 = 0.0
    wp = 0.0
    half = 0.0
    strict = 0.0
    m = hi.size
    for p in range(m):
        i1 = hi[p]
        i0 = lo[p]
        d = h[i0] - h[i1]
        w = D[p]
        neg = d < 0.0
        pos = d > 0.0
        wm += w * (neg * 1.0)
        wp += w * (pos * 1.0)
        w0 += w * ((d == 0.0) * 1.0)
        if binary:
            nw = w * (e_minus if neg else (e_plus if pos else 1.0))
        else:
            nw = w * np.exp(alpha * d)
        D[p] = nw
        Z += nw
        a = H[i1]  # Eq. (21) (ties 1/2) and Eq. (1) (ties count) under D1
        b = H[i0]
        v = D1[p]
        half += v * ((a < b) * 1.0 + (a == b) * 0.5)
        strict += v * ((a <= b) * 1.0)
    pi[:] = 0.0
    p = 0
    while p < m:
        x = hi[p]
        s = pi[x]
        while p < m and hi[p] == x:  # Eq. (10): + D(x', x) for x = x_1, - D(x, x') for x = x_0
            w = D[p] / Z
            D[p] = w
            s += w
            pi[lo[p]] -= w
            p += 1
        pi[x] = s
    return Z, wm, w0, wp, half, strict


@njit(cache=True)
def _update_bipartite(v, side, c, doc_query, h, alpha, sums):
    """RankBoost.B update (Fig. 2) for a sum of per-query bipartite feedback functions, in place.

    v is renormalised on each side of each query (Z^1_q, Z^0_q); the query masses c_q absorb
    Z^0_q Z^1_q / Z_t so that D(x_0, x_1) = c_q v(x_0) v(x_1) (Eq. 7). Returns (Z_t, W_-, W_0, W_+).
    ``sums`` (float64, ``(4, n_queries)``) is passed in zeroed by the caller: Z^1_q, Z^0_q and the
    v-masses of X_1 and of X_0 with h = 1 (before the update).
    """
    n_queries = sums.shape[1]
    z1 = sums[0]
    z0 = sums[1]
    a1 = sums[2]  # v-mass of X_1 with h = 1 (before the update)
    b1 = sums[3]  # v-mass of X_0 with h = 1
    binary = True  # then exp(-+alpha h) is exp(-+alpha) or 1: two exp per round (same numbers)
    for i in range(h.size):
        if h[i] != 0.0 and h[i] != 1.0:
            binary = False
            break
    e_down = np.exp(-alpha * 1.0)
    e_up = np.exp(alpha * 1.0)
    for i in range(v.size):
        s = side[i]
        if s == 0:
            continue
        q = doc_query[i]
        hi_ = h[i]
        if s > 0:
            a1[q] += v[i] * hi_
            if binary:
                v[i] = v[i] * (e_down if hi_ == 1.0 else 1.0)
            else:
                v[i] = v[i] * np.exp(-alpha * hi_)
            z1[q] += v[i]
        else:
            b1[q] += v[i] * hi_
            if binary:
                v[i] = v[i] * (e_up if hi_ == 1.0 else 1.0)
            else:
                v[i] = v[i] * np.exp(alpha * hi_)
            z0[q] += v[i]
    Z = 0.0
    wm = 0.0
    wp = 0.0
    for q in range(n_queries):
        if c[q] > 0.0:
            # binary h: W_- = P1(h=1) P0(h=0), W_+ = P0(h=1) P1(h=0) within the query
            wm += c[q] * a1[q] * (1.0 - b1[q])
            wp += c[q] * b1[q] * (1.0 - a1[q])
            c[q] = c[q] * z0[q] * z1[q]
            Z += c[q]
    for q in range(n_queries):
        c[q] /= Z
    for i in range(v.size):
        s = side[i]
        if s > 0:
            v[i] /= z1[doc_query[i]]
        elif s < 0:
            v[i] /= z0[doc_query[i]]
    return Z, wm, 1.0 - wm - wp, wp


@njit(cache=True)
def _ranking_loss(hi, lo, D, H):
    """rloss_D(H) with ties counted 1/2 (Eq. 21)."""
    s = 0.0
    for p in range(hi.size):
        a = H[hi[p]]
        b = H[lo[p]]
        if a < b:
            s += D[p]
        elif a == b:
            s += 0.5 * D[p]
    return s


@njit(cache=True)
def _ranking_losses(hi, lo, D, H):
    """(Eq. 21 with ties 1/2, Eq. 1 with ties counted as errors) in one pass."""
    half = 0.0
    strict = 0.0
    for p in range(hi.size):
        a = H[hi[p]]
        b = H[lo[p]]
        v = D[p]
        half += v * ((a < b) * 1.0 + (a == b) * 0.5)  # v, 0.5 v or +0.0: no data-dependent branch
        strict += v * ((a <= b) * 1.0)
    return half, strict


@njit(cache=True)
def _z_of_alpha(diff, w, alpha):
    """Z(alpha) = sum_p w_p exp(alpha d_p) and its derivative, d_p = h(x_0) - h(x_1)."""
    z = 0.0
    dz = 0.0
    for p in range(diff.size):
        e = w[p] * np.exp(alpha * diff[p])
        z += e
        dz += diff[p] * e
    return z, dz


@njit(cache=True)
def _streaming_pass(codes_t):
    """Read every code once (the memory-bound reference pass of the benchmark)."""
    F, n = codes_t.shape
    acc = 0
    for f in range(F):
        col = codes_t[f]
        for i in range(n):
            acc += np.int64(col[i])  # an int64 sum also without the JIT (NumPy keeps uint8 + int in uint8)
    return acc


@njit(cache=True)
def _weighted_bin_pass(codes_t, w, out):
    """The benchmark's lower bound for a potential histogram: read every code once and add the
    document's weight into its bin, in any order (four features per pass share each loaded weight;
    one accumulator row per feature, no partial histograms, no fixed summation order).
    Returns out[f, c] = sum of w[i] over the documents i with code c on feature f; ``out`` (float64,
    ``(F, n_bins)``) is passed in zeroed by the caller."""
    F, n = codes_t.shape
    FG = F - F % 4
    for f in range(0, FG, 4):
        ca = codes_t[f]
        cb = codes_t[f + 1]
        cc = codes_t[f + 2]
        cd = codes_t[f + 3]
        oa = out[f]
        ob = out[f + 1]
        oc = out[f + 2]
        od = out[f + 3]
        for i in range(n):
            x = w[i]
            oa[ca[i]] += x
            ob[cb[i]] += x
            oc[cc[i]] += x
            od[cd[i]] += x
    for f in range(FG, F):
        col = codes_t[f]
        o = out[f]
        for i in range(n):
            o[col[i]] += w[i]
    return out


_SORTED_GROUP = 8  # features whose running sums are in flight together in `_search_sorted_order`


@njit(cache=True)
def _search_sorted_order(order, n_above, pi, n_thresholds, qmode, buf):
    """WeakLearn (Fig. 3) in the paper's own summation order, the alternative to the fixed-order
    histogram: per feature, L is one running sum of pi over the instances sorted by value, highest
    first (step 5), read at each threshold; R is L at theta = -inf (step 2).

    ``order[f]``: the documents by code of feature f, descending (stable); ``n_above[f, j]``: the
    number of documents with code > j; ``buf``: workspace ``(8, n)``. Eight features' running sums are
    computed together (independent addition chains), then scanned as `_scan_third` does (same tie rule).
    Bits differ from `_scan_third` on a histogram (another summation order). Returns (f*, j*, q*, r*).
    """
    F, n = order.shape
    best_abs = 0.0
    bf, bj, bq, br = -1, -1, 0, 0.0
    for f0 in range(0, F, _SORTED_GROUP):
        G = F - f0 if F - f0 < _SORTED_GROUP else _SORTED_GROUP  # min(), without numba's builtin
        if G == _SORTED_GROUP:
            o0, o1, o2, o3 = order[f0], order[f0 + 1], order[f0 + 2], order[f0 + 3]
            o4, o5, o6, o7 = order[f0 + 4], order[f0 + 5], order[f0 + 6], order[f0 + 7]
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
            for i in range(n):
                s0 += pi[o0[i]]
                s1 += pi[o1[i]]
                s2 += pi[o2[i]]
                s3 += pi[o3[i]]
                s4 += pi[o4[i]]
                s5 += pi[o5[i]]
                s6 += pi[o6[i]]
                s7 += pi[o7[i]]
                buf[0, i] = s0
                buf[1, i] = s1
                buf[2, i] = s2
                buf[3, i] = s3
                buf[4, i] = s4
                buf[5, i] = s5
                buf[6, i] = s6
                buf[7, i] = s7
        else:
            for g in range(G):
                og = order[f0 + g]
                s = 0.0
                for i in range(n):
                    s += pi[og[i]]
                    buf[g, i] = s
        for g in range(G):
            f = f0 + g
            k = n_thresholds[f]
            a0 = n_above[f, 0]
            R = buf[g, a0 - 1] if a0 > 0 else 0.0  # step 2
            for j in range(k + 1, -1, -1):
                a = n_above[f, j]
                L = buf[g, a - 1] if a > 0 else 0.0  # step 5
                if qmode >= 0:
                    q = qmode
                elif abs(L) > abs(L - R):  # step 6
                    q = 0
                else:
                    q = 1
                r = L - q * R  # Eq. (14)
                if abs(r) > best_abs + TIE_TOL:  # step 9
                    best_abs = abs(r)
                    bf, bj, bq, br = f, j, q, r
    return bf, bj, bq, br


def sorted_order_inputs(codes_t: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, n_above, buf)`` for `_search_sorted_order` (once per fit: a stable sort per feature)."""
    codes_t = np.ascontiguousarray(codes_t)
    F, n = codes_t.shape
    idx = np.uint16 if n <= np.iinfo(np.uint16).max + 1 else np.int64
    order = np.ascontiguousarray(np.argsort(-codes_t.astype(np.int64), axis=1, kind="stable").astype(idx))
    counts = np.zeros((F, n_bins), dtype=np.int64)
    for f in range(F):
        counts[f] = np.bincount(codes_t[f], minlength=n_bins)[:n_bins]
    n_above = np.ascontiguousarray(n - np.cumsum(counts, axis=1))
    return order, n_above, np.zeros((_SORTED_GROUP, n))


# ----------------------------------------------------------------- the validating Python functions
# Each allocates its kernel's arrays in NumPy (a kernel allocating them would compile numba's own
# np.zeros / np.empty implementations, one per dtype and shape, into a first fit) and checks shapes and
# dtypes in O(1); the contents (codes below ``n_bins``, pair indices below ``n_docs``) are the caller's.
_NO_ROWS = np.zeros(0, dtype=np.int64)  # the dense histogram's unused rows (empty: never written)


def _vector(name: str, a: np.ndarray, dtype: type, ndim: int = 1) -> np.ndarray:
    """``a`` as a C-contiguous array of ``dtype`` (copied only when it is not one already)."""
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-d, got shape {a.shape}")
    return a


def _in_place(name: str, a: np.ndarray, dtype: type, ndim: int = 1) -> np.ndarray:
    """``a`` itself, which a kernel updates in place: it must already be C-contiguous ``dtype``."""
    if not (isinstance(a, np.ndarray) and a.dtype == dtype and a.ndim == ndim and a.flags.c_contiguous
            and a.flags.writeable):
        raise ValueError(f"{name} must be a writeable C-contiguous {ndim}-d {np.dtype(dtype)} array "
                         "(updated in place)")
    return a


def _codes(name: str, codes: np.ndarray, ndim: int) -> np.ndarray:
    codes = np.ascontiguousarray(codes)
    if codes.ndim != ndim or codes.dtype not in (np.uint8, np.uint16):
        raise ValueError(f"{name} must be {ndim}-d uint8 or uint16, got {codes.dtype} of shape {codes.shape}")
    return codes


def _pairs(hi: np.ndarray, lo: np.ndarray, D: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    hi = _vector("hi", hi, np.int64)
    lo = _vector("lo", lo, np.int64)
    D = _vector("D", D, np.float64)
    if not hi.size == lo.size == D.size:
        raise ValueError(f"hi, lo and D must have one length, got {hi.size}, {lo.size}, {D.size}")
    return hi, lo, D


def potentials_from_pairs(hi: np.ndarray, lo: np.ndarray, D: np.ndarray, n_docs: int) -> np.ndarray:
    """Potentials ``pi(x) = sum_x' D(x', x) - D(x, x')`` of every document (Eq. 10).

    Parameters
    ----------
    hi, lo : ndarray (n_pairs,) of int
        Crucial pairs: document ``hi[p]`` should rank above ``lo[p]`` (both below ``n_docs``).
    D : ndarray (n_pairs,)
        Pair weights.
    n_docs : int
        Documents.

    Returns
    -------
    ndarray (n_docs,) of float64
    """
    hi, lo, D = _pairs(hi, lo, D)
    return _potentials_from_pairs(hi, lo, D, np.zeros(int(n_docs)))


def potentials_bipartite(v: np.ndarray, side: np.ndarray, c: np.ndarray, doc_query: np.ndarray) -> np.ndarray:
    """Potentials ``pi(x) = d(x) s(x)`` of bipartite feedback, ``d(x) = c_q v(x)`` (Eq. 8).

    Parameters
    ----------
    v : ndarray (n_docs,)
        Per-side document weights (summing to 1 on each side of each query).
    side : ndarray (n_docs,) of int
        +1 for X_1, -1 for X_0, 0 outside the feedback.
    c : ndarray (n_queries,)
        Query masses.
    doc_query : ndarray (n_docs,) of int
        Query of each document.

    Returns
    -------
    ndarray (n_docs,) of float64
    """
    v = _vector("v", v, np.float64)
    side = _vector("side", side, np.int64)
    c = _vector("c", c, np.float64)
    doc_query = _vector("doc_query", doc_query, np.int64)
    if not v.size == side.size == doc_query.size:
        raise ValueError(f"v, side and doc_query must have one length, got {v.size}, {side.size}, "
                         f"{doc_query.size}")
    return _potentials_bipartite(v, side, c, doc_query, np.empty(v.size))


def _histogram_out(codes_t: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """The histogram ``(F, n_bins)`` (every entry written) and the kernel's workspace ``tmp``."""
    n_bins = int(n_bins)
    if n_bins < 1:
        raise ValueError(f"n_bins must be positive, got {n_bins}")
    return np.empty((codes_t.shape[0], n_bins)), np.empty((_GROUP, 4, n_bins))


def potential_histogram(codes_t: np.ndarray, rows: np.ndarray, pi: np.ndarray, n_bins: int) -> np.ndarray:
    """``hist[f, c]``: the sum of ``pi`` over the documents ``rows`` (in that order) with code ``c`` on
    feature ``f``, in the fixed arithmetic of the module's header (the input of Fig. 3's L and R).

    Parameters
    ----------
    codes_t : ndarray (n_features, n_docs) of uint8 / uint16
        Feature-major bin codes, each below ``n_bins``.
    rows : ndarray of int
        The feedback instances (indices of documents).
    pi : ndarray (n_docs,)
        Potentials (Eq. 10).
    n_bins : int
        Codes per feature.

    Returns
    -------
    ndarray (n_features, n_bins) of float64
    """
    codes_t = _codes("codes_t", codes_t, 2)
    rows = _vector("rows", rows, np.int64)
    pi = _vector("pi", pi, np.float64)
    return _potential_histogram(codes_t, rows, pi, *_histogram_out(codes_t, n_bins))


def potential_histogram_dense(codes_t: np.ndarray, pi: np.ndarray, n_bins: int) -> np.ndarray:
    """`potential_histogram` with every document (in order) a feedback instance; ``pi`` has one entry
    per column of ``codes_t``. Returns ``(n_features, n_bins)`` float64."""
    codes_t = _codes("codes_t", codes_t, 2)
    pi = _vector("pi", pi, np.float64)
    if pi.size != codes_t.shape[1]:
        raise ValueError(f"pi must have one entry per document ({codes_t.shape[1]}), got {pi.size}")
    return _potential_histogram_dense(codes_t, pi, *_histogram_out(codes_t, n_bins), _NO_ROWS)


def pair_split_histograms(codes_t: np.ndarray, hi: np.ndarray, lo: np.ndarray, D: np.ndarray,
                          n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """The pair-weight histograms of WeakLearn.2 (see `_pair_split_histograms` for the six slots).

    Parameters
    ----------
    codes_t : ndarray (n_features, n_docs) of uint8 / uint16
        Feature-major bin codes, each below ``n_bins``.
    hi, lo : ndarray (n_pairs,) of int
        Crucial pairs (``hi`` should rank above ``lo``).
    D : ndarray (n_pairs,)
        Pair weights.
    n_bins : int
        Codes per feature.

    Returns
    -------
    mass : ndarray (6, n_features, n_bins) of float64
    count : ndarray (6, n_features, n_bins) of int64
    """
    codes_t = _codes("codes_t", codes_t, 2)
    hi, lo, D = _pairs(hi, lo, D)
    shape = (6, codes_t.shape[0], int(n_bins))
    return _pair_split_histograms(codes_t, hi, lo, D, np.zeros(shape), np.zeros(shape, dtype=np.int64))


def scan_second(mass: np.ndarray, count: np.ndarray, n_thresholds: np.ndarray, qmode: int, cum: np.ndarray,
                use_cum: bool, total: float, eps: float) -> tuple[int, int, int, float, float, float, float]:
    """WeakLearn.2: the stump of minimum Z (Eq. 3) from `pair_split_histograms`' output.

    Parameters
    ----------
    mass, count : ndarray (6, n_features, n_bins)
        From `pair_split_histograms`.
    n_thresholds : ndarray (n_features,) of int64
        Thresholds per feature (each at most ``n_bins - 2``).
    qmode : int
        -1: choose q_def; 0 or 1: fixed.
    cum : ndarray (n_features, n_bins, 2)
        Cumulative weights (read only with ``use_cum``).
    use_cum : bool
        Only stumps whose cumulative weight plus alpha stays positive.
    total : float
        Sum of the pair weights.
    eps : float
        Smoothing of alpha when W_- or W_+ is 0.

    Returns
    -------
    tuple
        ``(f*, j*, q*, r*, W_-, W_0, W_+)``; ``f* = -1`` when no allowed stump has r != 0.
    """
    mass = _vector("mass", mass, np.float64, 3)
    count = _vector("count", count, np.int64, 3)
    if mass.shape != count.shape or mass.shape[0] != 6:
        raise ValueError(f"mass and count must be (6, n_features, n_bins), got {mass.shape}, {count.shape}")
    n_thresholds = _vector("n_thresholds", n_thresholds, np.int64)
    cum = _vector("cum", cum, np.float64, 3)
    return _scan_second(mass, count, n_thresholds, int(qmode), cum, bool(use_cum), float(total), float(eps),
                        np.empty((6, mass.shape[2])))


def stump_on_codes(col: np.ndarray, j: int, q: float) -> np.ndarray:
    """``h(x)`` of the stump ``[code > j]`` with ``q`` on missing values (code 0) on the training rows.

    Parameters
    ----------
    col : ndarray (n_docs,) of uint8 / uint16
        One feature's codes.
    j : int
        Threshold bin.
    q : float
        q_def.

    Returns
    -------
    ndarray (n_docs,) of float64
    """
    col = _codes("col", col, 1)
    return _stump_on_codes(col, int(j), float(q), np.empty(col.size))


def update_bipartite(v: np.ndarray, side: np.ndarray, c: np.ndarray, doc_query: np.ndarray, h: np.ndarray,
                     alpha: float, n_queries: int) -> tuple[float, float, float, float]:
    """RankBoost.B's update (Fig. 2) of ``v`` and ``c``, in place.

    Parameters
    ----------
    v : ndarray (n_docs,) of float64
        Per-side document weights, updated in place.
    side : ndarray (n_docs,) of int
        +1 for X_1, -1 for X_0, 0 outside the feedback.
    c : ndarray (n_queries,) of float64
        Query masses, updated in place.
    doc_query : ndarray (n_docs,) of int
        Query of each document.
    h : ndarray (n_docs,)
        The weak ranking's values.
    alpha : float
        Its weight.
    n_queries : int
        Queries.

    Returns
    -------
    tuple
        ``(Z_t, W_-, W_0, W_+)``.
    """
    v = _in_place("v", v, np.float64)
    c = _in_place("c", c, np.float64)
    side = _vector("side", side, np.int64)
    doc_query = _vector("doc_query", doc_query, np.int64)
    h = _vector("h", h, np.float64)
    if not v.size == side.size == doc_query.size == h.size or c.size != int(n_queries):
        raise ValueError("v, side, doc_query and h must have one length, c one entry per query")
    return _update_bipartite(v, side, c, doc_query, h, float(alpha), np.zeros((4, int(n_queries))))


def weighted_bin_pass(codes_t: np.ndarray, w: np.ndarray, n_bins: int) -> np.ndarray:
    """The benchmark's unordered histogram: ``out[f, c]`` = sum of ``w`` over the documents with code
    ``c`` on feature ``f`` (codes below ``n_bins``). Returns ``(n_features, n_bins)`` float64."""
    codes_t = _codes("codes_t", codes_t, 2)
    w = _vector("w", w, np.float64)
    return _weighted_bin_pass(codes_t, w, np.zeros((codes_t.shape[0], int(n_bins))))


def _length_error(names: str, *arrays: np.ndarray) -> ValueError:
    """The error for ``arrays`` (named ``names``) that should have one length and do not."""
    return ValueError(f"{names} must have one length, got {', '.join(str(a.shape[0]) for a in arrays)}")


def _features_matrix(X: np.ndarray) -> np.ndarray:
    """``X`` itself when it is a 2-d float32 or float64 array (no copy: any memory layout)."""
    if not (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype in (np.float32, np.float64)):
        raise ValueError(f"X must be a 2-d float32 or float64 array, got "
                         f"{getattr(X, 'dtype', type(X).__name__)} of shape {np.shape(X)}")
    return X


def _thresholds(n_thresholds: np.ndarray, n_features: int) -> np.ndarray:
    """``n_thresholds`` as int64 with one entry per feature (``n_features``)."""
    n_thresholds = _vector("n_thresholds", n_thresholds, np.int64)
    if n_thresholds.size != n_features:
        raise ValueError(f"n_thresholds must have one entry per feature ({n_features}), "
                         f"got {n_thresholds.size}")
    return n_thresholds


def _qmode(qmode: int) -> int:
    qmode = int(qmode)
    if qmode not in (-1, 0, 1):
        raise ValueError(f"qmode must be -1, 0 or 1, got {qmode}")
    return qmode


def scan_third(hist: np.ndarray, n_thresholds: np.ndarray, qmode: int) -> tuple[int, int, int, float]:
    """WeakLearn (Fig. 3): the stump of maximum |r| = |L - q R| (Eq. 14) from a potential histogram.

    Parameters
    ----------
    hist : ndarray (n_features, n_bins) of float64
        From `potential_histogram` or `potential_histogram_dense`.
    n_thresholds : ndarray (n_features,) of int64
        Thresholds per feature (each at most ``n_bins - 2``).
    qmode : int
        -1: choose q_def by step 6; 0 or 1: fixed.

    Returns
    -------
    tuple
        ``(f*, j*, q*, r*)``; ``f* = -1`` when every stump has |r| <= ``TIE_TOL``.
    """
    hist = _vector("hist", hist, np.float64, 2)
    return _scan_third(hist, _thresholds(n_thresholds, hist.shape[0]), _qmode(qmode))


def scan_third_cum(hist: np.ndarray, n_thresholds: np.ndarray, qmode: int,
                   cum: np.ndarray) -> tuple[int, int, int, float]:
    """WeakLearn.3.cum: `scan_third` among the stumps whose cumulative weight plus alpha stays positive.

    Parameters
    ----------
    hist : ndarray (n_features, n_bins) of float64
        From `potential_histogram` or `potential_histogram_dense`.
    n_thresholds : ndarray (n_features,) of int64
        Thresholds per feature (each at most ``n_bins - 2``).
    qmode : int
        -1: either q_def; 0 or 1: fixed.
    cum : ndarray (n_features, n_bins, 2) of float64
        Cumulative weight of each stump ``(f, j, q_def)``.

    Returns
    -------
    tuple
        ``(f*, j*, q*, r*)``; ``f* = -1`` when no allowed stump has |r| > ``TIE_TOL``.
    """
    hist = _vector("hist", hist, np.float64, 2)
    cum = _vector("cum", cum, np.float64, 3)
    if cum.shape != hist.shape + (2,):
        raise ValueError(f"cum must have shape {hist.shape + (2,)} (hist's and 2), got {cum.shape}")
    return _scan_third_cum(hist, _thresholds(n_thresholds, hist.shape[0]), _qmode(qmode), cum)


def search_sorted_order(order: np.ndarray, n_above: np.ndarray, pi: np.ndarray, n_thresholds: np.ndarray,
                        qmode: int, buf: np.ndarray) -> tuple[int, int, int, float]:
    """WeakLearn (Fig. 3) in the paper's own summation order (see `_search_sorted_order`).

    Parameters
    ----------
    order : ndarray (n_features, n_docs) of uint16 / int64
        From `sorted_order_inputs`: the documents by code of each feature, descending.
    n_above : ndarray (n_features, n_bins) of int64
        From `sorted_order_inputs`: the number of documents with code > j.
    pi : ndarray (n_docs,) of float64
        Potentials (Eq. 10).
    n_thresholds : ndarray (n_features,) of int64
        Thresholds per feature (each at most ``n_bins - 2``).
    qmode : int
        -1: choose q_def by step 6; 0 or 1: fixed.
    buf : ndarray (8, n_docs) of float64
        Workspace from `sorted_order_inputs`, overwritten.

    Returns
    -------
    tuple
        ``(f*, j*, q*, r*)``; ``f* = -1`` when every stump has |r| <= ``TIE_TOL``.
    """
    order = np.ascontiguousarray(order)
    if order.ndim != 2 or order.dtype not in (np.uint16, np.int64):
        raise ValueError(f"order must be 2-d uint16 or int64, got {order.dtype} of shape {order.shape}")
    n_above = _vector("n_above", n_above, np.int64, 2)
    pi = _vector("pi", pi, np.float64)
    buf = _in_place("buf", buf, np.float64, 2)
    F, n = order.shape
    if n_above.shape[0] != F:
        raise ValueError(f"n_above must have one row per feature ({F}), got {n_above.shape[0]}")
    if pi.size != n or buf.shape != (_SORTED_GROUP, n):
        raise ValueError(f"pi must have one entry per document ({n}) and buf shape {(_SORTED_GROUP, n)}, "
                         f"got {pi.size} and {buf.shape}")
    return _search_sorted_order(order, n_above, pi, _thresholds(n_thresholds, F), _qmode(qmode), buf)


def stump_scores(X: np.ndarray, feature: np.ndarray, theta: np.ndarray, qdef: np.ndarray, alpha: np.ndarray,
                 out: np.ndarray) -> np.ndarray:
    """Add ``sum_t alpha_t h_t(x)`` to ``out``, ``h_t(x) = [x_f > theta_t]`` and ``q_def_t`` for NaN.

    Parameters
    ----------
    X : ndarray (n_docs, n_features) of float32 / float64
        Raw feature values (NaN: missing).
    feature : ndarray (n_stumps,) of int64
        Each stump's feature (below ``n_features``).
    theta, qdef, alpha : ndarray (n_stumps,) of float64
        Each stump's threshold, value on a missing feature and weight.
    out : ndarray (n_docs,) of float64
        Scores, added to in place.

    Returns
    -------
    ndarray (n_docs,) of float64
        ``out``.
    """
    X = _features_matrix(X)
    feature = _vector("feature", feature, np.int64)
    theta = _vector("theta", theta, np.float64)
    qdef = _vector("qdef", qdef, np.float64)
    alpha = _vector("alpha", alpha, np.float64)
    out = _in_place("out", out, np.float64)
    if not feature.size == theta.size == qdef.size == alpha.size:
        raise _length_error("feature, theta, qdef and alpha", feature, theta, qdef, alpha)
    if out.size != X.shape[0]:
        raise ValueError(f"out must have one entry per row of X ({X.shape[0]}), got {out.size}")
    return _stump_scores(X, feature, theta, qdef, alpha, out)


def update_pairs(hi: np.ndarray, lo: np.ndarray, D: np.ndarray, h: np.ndarray,
                 alpha: float) -> tuple[float, float, float, float]:
    """Fig. 1's update ``D_{t+1} = D_t exp(alpha (h(x_0) - h(x_1))) / Z_t`` of ``D``, in place.

    Parameters
    ----------
    hi, lo : ndarray (n_pairs,) of int64
        Crucial pairs: document ``hi[p]`` should rank above ``lo[p]`` (both below ``h.size``).
    D : ndarray (n_pairs,) of float64
        Pair weights, updated in place.
    h : ndarray (n_docs,) of float64
        The weak ranking's values.
    alpha : float
        Its weight.

    Returns
    -------
    tuple
        ``(Z_t, W_-, W_0, W_+)`` of the old distribution.
    """
    hi = _vector("hi", hi, np.int64)
    lo = _vector("lo", lo, np.int64)
    D = _in_place("D", D, np.float64)
    h = _vector("h", h, np.float64)
    if not hi.size == lo.size == D.size:
        raise _length_error("hi, lo and D", hi, lo, D)
    return _update_pairs(hi, lo, D, h, float(alpha))


def round_pairs(hi: np.ndarray, lo: np.ndarray, D: np.ndarray, h: np.ndarray, alpha: float, D1: np.ndarray,
                H: np.ndarray, pi: np.ndarray) -> tuple[float, float, float, float, float, float]:
    """One round's O(m) work of Fig. 1, in place: the update of ``D``, the training losses of ``H`` and
    the next round's potentials ``pi`` (see `_round_pairs`; the same bits as `update_pairs`,
    `ranking_losses` and `potentials_from_pairs` called one after another).

    Parameters
    ----------
    hi, lo : ndarray (n_pairs,) of int64
        Crucial pairs: document ``hi[p]`` should rank above ``lo[p]`` (both below ``n_docs``), grouped by
        ``hi``.
    D : ndarray (n_pairs,) of float64
        Pair weights, updated in place.
    h : ndarray (n_docs,) of float64
        The weak ranking's values.
    alpha : float
        Its weight.
    D1 : ndarray (n_pairs,) of float64
        The initial pair weights (of the losses).
    H : ndarray (n_docs,) of float64
        The final ranking, already updated with ``alpha h``.
    pi : ndarray (n_docs,) of float64
        Overwritten with the potentials of the updated ``D`` (Eq. 10).

    Returns
    -------
    tuple
        ``(Z_t, W_-, W_0, W_+, rloss, rloss_strict)``.
    """
    hi = _vector("hi", hi, np.int64)
    lo = _vector("lo", lo, np.int64)
    D = _in_place("D", D, np.float64)
    D1 = _vector("D1", D1, np.float64)
    h = _vector("h", h, np.float64)
    H = _vector("H", H, np.float64)
    pi = _in_place("pi", pi, np.float64)
    if not hi.size == lo.size == D.size == D1.size:
        raise _length_error("hi, lo, D and D1", hi, lo, D, D1)
    if not h.size == H.size == pi.size:
        raise _length_error("h, H and pi", h, H, pi)
    return _round_pairs(hi, lo, D, h, float(alpha), D1, H, pi)


def ranking_loss(hi: np.ndarray, lo: np.ndarray, D: np.ndarray, H: np.ndarray) -> float:
    """``rloss_D(H)``: the weight of the pairs ``H`` misorders, ties counted 1/2 (Eq. 21).

    Parameters
    ----------
    hi, lo : ndarray (n_pairs,) of int64
        Crucial pairs: document ``hi[p]`` should rank above ``lo[p]`` (both below ``H.size``).
    D : ndarray (n_pairs,) of float64
        Pair weights.
    H : ndarray (n_docs,) of float64
        Scores.

    Returns
    -------
    float
    """
    hi, lo, D = _pairs(hi, lo, D)
    return _ranking_loss(hi, lo, D, _vector("H", H, np.float64))


def ranking_losses(hi: np.ndarray, lo: np.ndarray, D: np.ndarray, H: np.ndarray) -> tuple[float, float]:
    """``rloss_D(H)`` with ties counted 1/2 (Eq. 21) and with ties counted as errors (Eq. 1), in one pass.

    Parameters
    ----------
    hi, lo : ndarray (n_pairs,) of int64
        Crucial pairs: document ``hi[p]`` should rank above ``lo[p]`` (both below ``H.size``).
    D : ndarray (n_pairs,) of float64
        Pair weights.
    H : ndarray (n_docs,) of float64
        Scores.

    Returns
    -------
    tuple
        ``(rloss, rloss_strict)``.
    """
    hi, lo, D = _pairs(hi, lo, D)
    return _ranking_losses(hi, lo, D, _vector("H", H, np.float64))


def z_of_alpha(diff: np.ndarray, w: np.ndarray, alpha: float) -> tuple[float, float]:
    """``Z(alpha) = sum_p w_p exp(alpha d_p)`` and its derivative in ``alpha``.

    Parameters
    ----------
    diff : ndarray (n_pairs,) of float64
        ``d_p = h(x_0) - h(x_1)``.
    w : ndarray (n_pairs,) of float64
        Pair weights.
    alpha : float
        Where Z is evaluated.

    Returns
    -------
    tuple
        ``(Z, dZ / dalpha)``.
    """
    diff = _vector("diff", diff, np.float64)
    w = _vector("w", w, np.float64)
    if diff.size != w.size:
        raise _length_error("diff and w", diff, w)
    return _z_of_alpha(diff, w, float(alpha))


def streaming_pass(codes_t: np.ndarray) -> int:
    """The sum of every code (the memory-bound reference pass of the benchmark).

    Parameters
    ----------
    codes_t : ndarray (n_features, n_docs) of uint8 / uint16
        Feature-major bin codes.

    Returns
    -------
    int
    """
    return _streaming_pass(_codes("codes_t", codes_t, 2))


def warmup() -> None:
    """Compile this module's kernels on a toy problem (uint8 and uint16 codes)."""
    hi = np.array([2, 1], dtype=np.int64)
    lo = np.array([0, 0], dtype=np.int64)
    D = np.array([0.5, 0.5])
    pi = potentials_from_pairs(hi, lo, D, 3)
    nt = np.array([1, 1], dtype=np.int64)
    cum = np.zeros((2, 3, 2))
    for dt in (np.uint8, np.uint16):
        codes_t = np.array([[0, 1, 2], [1, 1, 2]], dtype=dt)
        hist = potential_histogram(codes_t, np.arange(3, dtype=np.int64), pi, 3)
        potential_histogram_dense(codes_t, pi, 3)
        mass, count = pair_split_histograms(codes_t, hi, lo, D, 3)
        h = stump_on_codes(codes_t[0], 1, 0.0)
        _streaming_pass(codes_t)  # the benchmark's other reference kernels compile when it runs
    _scan_third(hist, nt, -1)
    _scan_third_cum(hist, nt, -1, cum)
    scan_second(mass, count, nt, -1, cum, True, 1.0, 0.1)
    _ranking_loss(hi, lo, D, h)
    _ranking_losses(hi, lo, D, h)
    _update_pairs(hi, lo, D.copy(), h, 0.5)
    _round_pairs(hi, lo, D.copy(), h, 0.5, D, h, np.zeros(3))
    side = np.array([-1, 1, 1], dtype=np.int64)
    dq = np.zeros(3, dtype=np.int64)
    v = np.array([1.0, 0.5, 0.5])
    c = np.ones(1)
    potentials_bipartite(v, side, c, dq)
    update_bipartite(v, side, c, dq, h, 0.5, 1)
    X = np.array([[0.0, np.nan], [1.0, 2.0]], dtype=np.float32)
    _stump_scores(X, np.array([0], dtype=np.int64), np.array([0.5]), np.array([0.0]), np.array([1.0]),
                 np.zeros(2))
    _z_of_alpha(np.array([1.0, -1.0]), D, 0.1)
