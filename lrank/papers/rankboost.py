"""Paper code of Freund, Iyer, Schapire, Singer (2003), *An Efficient Boosting Algorithm for Combining
Preferences* (notebook ``01_rankboost``), built on the library.

* Theorem 3: `vc_bound`.
* Sec. 6.1 (meta-search): `as_homepage_finding` (graded data cast as one target per query),
  `fig4_runs` (the four weak learners' train / test error curves, Fig. 4), `target_rank_stats`
  (Table 1's top-k counts and average rank under random tie-breaking).
* Sec. 6.2 (movie recommendation, Fig. 5-7): `movie_task` (one target user's task), `evaluate_task` /
  `evaluate_tasks` (RankBoost and the three baselines of `lrank.baselines.collaborative` with the four
  measures of Sec. 6.2.4), `feature_size_experiment`, `feature_density_experiment`,
  `feedback_density_experiment` (the three protocols), `compare` (paired verdicts over the tasks).
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from lrank.baselines.collaborative import VSIM, NearestNeighbourRanker, RegressionRanker
from lrank.data.container import RankingData
from lrank.metrics import evaluate, r2, random_guessing
from lrank.models.rankboost import DegenerateRoundWarning, RankBoost
from lrank.stats import paired_comparison


# ---------------------------------------------------------------------------------- Theorem 3
def vc_bound(m: float, n: float, T: float, d: float = 2.0, delta: float = 0.05) -> float:
    """Theorem 3: with probability 1 - delta, |train error - generalisation error| is at most this.

    ``m``, ``n``: sizes of the two training samples S_0, S_1; ``T`` rounds; ``d`` the VC dimension of the
    weak rankings (>= 2); d' = 2 (d + 1)(T + 1) log2(e (T + 1)).
    """
    dp = 2.0 * (d + 1.0) * (T + 1.0) * np.log2(np.e * (T + 1.0))

    def eps(k: float) -> float:
        return 2.0 * np.sqrt((dp * (np.log(2.0 * k / dp) + 1.0) + np.log(18.0 / delta)) / k)

    return float(eps(m) + eps(n))


# ------------------------------------------------------------------------ Sec. 6.1 meta-search
def as_homepage_finding(data: RankingData, single_target: bool = True) -> RankingData:
    """Cast graded data as homepage finding (Sec. 6.1): one correct document per query.

    Per query the document with the highest label is the target (label 1) and every lower-labelled
    document gets label 0; queries whose labels are all equal are dropped. With ``single_target`` (the
    paper's one correct homepage per base query) only the first top-labelled document in row order is
    kept as target and the query's other top-labelled documents are removed; otherwise all of them are
    targets.
    """
    rows, ys, sizes, keep = [], [], [], []
    for q in range(data.n_queries):
        a, b = int(data.qptr[q]), int(data.qptr[q + 1])
        yq = data.y[a:b]
        if yq.max() == yq.min():
            continue
        top = yq == yq.max()
        if single_target:
            first = int(np.flatnonzero(top)[0])
            sel = np.flatnonzero(~top | (np.arange(b - a) == first))
        else:
            sel = np.arange(b - a)
        rows.append(a + sel)
        ys.append(top[sel].astype(np.int32))
        sizes.append(sel.size)
        keep.append(q)
    rows_a = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    y = np.concatenate(ys) if ys else np.zeros(0, dtype=np.int32)
    prov = dict(data.provenance, cast="homepage finding: target = the query's top-labelled document"
                + (" (first one; other top-labelled documents removed)" if single_target else "s"))
    return RankingData(data.X[rows_a], y, np.r_[0, np.cumsum(sizes)].astype(np.int64),
                       qid=data.qid[np.asarray(keep, dtype=np.int64)], feature_names=data.feature_names,
                       provenance=prov)


#: the four weak learners of Fig. 4 (Sec. 6.1.2)
LEARNERS = {"WeakLearn.2": dict(alpha_method="second"), "WeakLearn.3": dict(alpha_method="third"),
            "WeakLearn.2.cum": dict(alpha_method="second", cumulative_positive=True),
            "WeakLearn.3.cum": dict(alpha_method="third", cumulative_positive=True)}


class Fig4Run(NamedTuple):
    """Fig. 4 for one weak learner: mean train / test error per round (``rounds`` long, a run that
    stopped early keeps its final model) and every test query's error (Eq. 21) after round ``at``."""

    train: np.ndarray
    test: np.ndarray
    test_per_query: np.ndarray


def fig4_runs(folds: list, n_estimators: int, at: int = 200, q_def: int = 0, random_state: int = 0,
              learners: dict | None = None) -> dict[str, Fig4Run]:
    """Train each weak learner of `LEARNERS` on every fold (Sec. 6.1.2, four partitions), error = Eq. 21
    on all crucial pairs, averaged over the folds; per-query test errors after round ``at`` (the
    queries of all test folds, in fold order) for paired comparisons."""
    out = {}
    for name, kw in (learners or LEARNERS).items():
        tr_err, te_err, per_query = [], [], []
        for fold in folds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateRoundWarning)
                model = RankBoost(n_estimators=n_estimators, q_def=q_def, random_state=random_state,
                                  **kw).fit(fold.train)
            tr = model.history_["train_rloss"].to_numpy()
            te = model.staged_ranking_loss(fold.test)
            pad = n_estimators - tr.size  # a run that stopped early keeps its final model
            tr_err.append(np.r_[tr, np.full(pad, tr[-1])])
            te_err.append(np.r_[te, np.full(pad, te[-1])])
            t = fold.test
            per_query.append(r2(t.y, model.predict(t.X, num_iteration=min(at, model.n_iter_)), t.qptr))
        out[name] = Fig4Run(np.mean(tr_err, axis=0), np.mean(te_err, axis=0), np.concatenate(per_query))
    return out


def target_rank_stats(y: Any, scores: Any, qptr: Any, ks: Any = (1, 2, 5, 10, 20, 30)) -> dict:
    """Table 1's numbers under random tie-breaking: per query the rank of the first target (y > 0).

    With R documents scored above the best-scored target and Q documents (q of them targets) tied with
    it, the first target's rank is R + Y with Pr[Y <= l] = 1 - C(Q - l, q) / C(Q, q) and
    E[Y] = (Q + 1) / (q + 1) (App. A, the urn of Eq. 24 with j = 1).

    Returns ``{"top": {k: expected number of queries with rank <= k}, "mean_rank": expected rank
    averaged over queries, "rank": per-query expected rank}``; queries without a target are skipped.
    """
    from scipy.special import gammaln

    y = np.asarray(y)
    s = np.asarray(scores, dtype=np.float64)
    qptr = np.asarray(qptr, dtype=np.int64)
    ks = [int(k) for k in ks]
    top = dict.fromkeys(ks, 0.0)
    ranks = []

    def lbinom(a, b):
        return gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1)

    for qi in range(qptr.size - 1):
        yq, sq = y[qptr[qi]:qptr[qi + 1]], s[qptr[qi]:qptr[qi + 1]]
        good = yq > 0
        if not good.any():
            continue
        best = sq[good].max()
        R = int((sq > best).sum())
        Q = int((sq == best).sum())
        q = int((good & (sq == best)).sum())
        ranks.append(R + (Q + 1.0) / (q + 1.0))
        for k in ks:
            ell = k - R
            if ell <= 0:
                continue
            if ell > Q - q:
                top[k] += 1.0
            else:
                top[k] += 1.0 - float(np.exp(lbinom(Q - ell, q) - lbinom(Q, q)))
    ranks = np.asarray(ranks)
    return {"top": top, "mean_rank": float(ranks.mean()) if ranks.size else float("nan"), "rank": ranks}


# ------------------------------------------------------------------- Sec. 6.2 movie recommendation
class MovieTask(NamedTuple):
    """One target user's task: train / test halves and the viewers' statistics over all their ratings."""

    train: RankingData
    test: RankingData
    feature_means: np.ndarray
    feature_norms: np.ndarray


def movie_task(ratings: np.ndarray, target: int, feature_users: Any, random_state: Any = None,
               train_fraction: float = 0.5) -> MovieTask:
    """Sec. 6.2.5: the target's rated movies split at random into training and test halves.

    Parameters
    ----------
    ratings : ndarray (n_users, n_movies)
        NaN = unrated.
    target : int
        Row of the target user (the feedback).
    feature_users : array-like of int
        Rows of the viewers that serve as ranking features (must not contain ``target``).
    random_state : int, Generator or None
        Seeds the split.
    train_fraction : float
        Share of the target's movies used for training (the paper: one half).
    """
    R = np.asarray(ratings, dtype=np.float64)
    feats = np.asarray(feature_users, dtype=np.int64)
    if np.any(feats == target):
        raise ValueError(f"target: user {target} cannot also be one of the feature_users")
    movies = np.flatnonzero(~np.isnan(R[target]))
    if movies.size < 2:
        raise ValueError(f"target: user {target} rated {movies.size} movie(s); need at least 2")
    rng = np.random.default_rng(random_state)
    perm = rng.permutation(movies)
    n_train = int(round(train_fraction * movies.size))
    n_train = min(max(n_train, 1), movies.size - 1)
    tr, te = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    F = R[feats]
    known = ~np.isnan(F)
    cnt = known.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(cnt > 0, np.nansum(F, 1) / np.maximum(cnt, 1), np.nan)
    norms = np.sqrt(np.nansum(F * F, 1))
    names = [f"u{u + 1}" for u in feats]
    prov = {"source": "movie_task", "target": int(target) + 1}

    def part(rows: np.ndarray) -> RankingData:
        return RankingData(R[np.ix_(feats, rows)].T, R[target, rows], np.array([0, rows.size]),
                           qid=np.array([target + 1]), feature_names=names, provenance=prov)

    return MovieTask(part(tr), part(te), means, norms)


ALGORITHMS = ("RankBoost", "Regression", "NN", "VSIM")
#: Sec. 6.2.4; disagreement is a loss (lower is better), the other three are gains
MEASURES = ("disagreement", "ap", "prot", "coverage")


def evaluate_task(task: MovieTask, n_estimators: int | None = None, algorithms: Any = ALGORITHMS,
                  random_state: int | None = 0) -> dict[str, dict[str, float]]:
    """Fit RankBoost (WeakLearn.3.cum, q_def chosen adaptively, T = 40 + N/10, Sec. 6.2.5) and the
    baselines on the training half and return the four measures of Sec. 6.2.4 on the test half
    (expectations over random tie-breaking, good movies = the target's highest test rating)."""
    n_feat = task.train.n_features
    T = 40 + n_feat // 10 if n_estimators is None else n_estimators
    out = {}
    for name in algorithms:
        if name == "RankBoost":
            model = RankBoost(n_estimators=T, alpha_method="third", cumulative_positive=True,
                              random_state=random_state)
        elif name == "Regression":
            model = RegressionRanker(feature_means=task.feature_means)
        elif name == "NN":
            model = NearestNeighbourRanker(feature_means=task.feature_means)
        elif name == "VSIM":
            model = VSIM(feature_means=task.feature_means, feature_norms=task.feature_norms)
        else:
            raise ValueError(f"algorithms: unknown algorithm {name!r}; choose from {ALGORITHMS}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateRoundWarning)
            model.fit(task.train)
        s = model.predict(task.test.X)
        res = evaluate(task.test.y, s, task.test.qptr, ["expected_disagreement", "expected_ap",
                                                       "expected_prot", "expected_coverage"])
        out[name] = {k: float(res["expected_" + k]) for k in MEASURES}
    return out


def evaluate_tasks(ratings: np.ndarray, targets: Any, feature_users: Any, seed: int = 0,
                   random_state: int | None = 0, n_estimators: int | None = None) -> pd.DataFrame:
    """`evaluate_task` for every target user (split seeded by ``seed + target``) plus random guessing.

    Returns a tidy frame with columns ``target, algorithm, measure, value``; algorithm ``"random"`` is
    random guessing on the same test half (`lrank.metrics.random_guessing`). A target whose training or
    test half has no crucial pair (all its ratings there equal) cannot be evaluated: it is left out and
    counted in ``frame.attrs["skipped"]`` (the list of such targets).
    """
    rows, skipped = [], []
    for u in np.asarray(targets, dtype=np.int64):
        task = movie_task(ratings, int(u), feature_users, random_state=seed + int(u))
        if task.train.n_critical_pairs().sum() == 0 or task.test.n_critical_pairs().sum() == 0:
            skipped.append(int(u))
            continue
        res = evaluate_task(task, n_estimators=n_estimators, random_state=random_state)
        yt = task.test.y
        res["random"] = random_guessing(int(yt.size), int((yt == yt.max()).sum()))
        for alg, d in res.items():
            rows.extend({"target": int(u), "algorithm": alg, "measure": k, "value": float(d[k])}
                        for k in MEASURES)
    df = pd.DataFrame(rows, columns=["target", "algorithm", "measure", "value"])
    df.attrs["skipped"] = skipped
    return df


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    out = pd.concat(frames, ignore_index=True)
    out.attrs["skipped"] = sum(len(f.attrs.get("skipped", [])) for f in frames)
    return out


def feature_size_experiment(ratings: np.ndarray, sizes: Any, n_targets: int, n_splits: int,
                            seed: int = 0) -> pd.DataFrame:
    """Fig. 5's protocol: per split, a random permutation of the users gives nested feature sets
    T_1 c T_2 c ... of the given ``sizes`` (the first users) and ``n_targets`` target users among the
    others; columns ``split, size`` added to `evaluate_tasks`' frame."""
    rng = np.random.default_rng(seed)
    sizes = [int(s) for s in sizes]
    frames = []
    for split in range(n_splits):
        perm = rng.permutation(ratings.shape[0])
        pool, targets = perm[:max(sizes)], perm[max(sizes):][:n_targets]
        for size in sizes:
            frames.append(evaluate_tasks(ratings, targets, pool[:size], seed + 1000 * split, seed)
                          .assign(size=size, split=split))
    return _concat(frames)


DENSITY_BINS = ((10, 20), (21, 40), (41, 60), (61, 100), (101, 10**6))  # Sec. 6.2.5


def feature_density_experiment(ratings: np.ndarray, n_per_bin: int, n_targets: int, n_splits: int,
                               seed: int = 0, bins: Any = DENSITY_BINS,
                               min_per_bin: int = 10) -> pd.DataFrame:
    """Fig. 6's protocol: per split, ``n_targets`` random target users and, disjoint from them, up to
    ``n_per_bin`` feature users from each density bin (number of movies rated); a bin with fewer than
    ``min_per_bin`` users is skipped. Column ``density`` = the bin's mean density, ``bin`` its index."""
    rng = np.random.default_rng(seed + 1)
    n_rated = (~np.isnan(ratings)).sum(axis=1)
    frames = []
    for split in range(n_splits):
        perm = rng.permutation(ratings.shape[0])
        targets, rest = perm[:n_targets], perm[n_targets:]
        for b, (lo, hi) in enumerate(bins):
            pool = rest[(n_rated[rest] >= lo) & (n_rated[rest] <= hi)][:n_per_bin]
            if pool.size < min_per_bin:
                continue
            frames.append(evaluate_tasks(ratings, targets, pool, seed + 2000 + 1000 * split, seed)
                          .assign(density=float(n_rated[pool].mean()), bin=b, split=split))
    return _concat(frames)


def feedback_density_experiment(ratings: np.ndarray, n_features: int, n_per_bin: int, n_splits: int,
                                seed: int = 0, bins: Any = DENSITY_BINS,
                                min_per_bin: int = 5) -> pd.DataFrame:
    """Fig. 7's protocol: per split, ``n_features`` random feature users, and up to ``n_per_bin`` target
    users from each density bin among the others; a bin with fewer than ``min_per_bin`` users is
    skipped. Column ``density`` = the bin's mean density of the chosen targets, ``bin`` its index."""
    rng = np.random.default_rng(seed + 2)
    n_rated = (~np.isnan(ratings)).sum(axis=1)
    frames = []
    for split in range(n_splits):
        perm = rng.permutation(ratings.shape[0])
        fixed, rest = perm[:n_features], perm[n_features:]
        for b, (lo, hi) in enumerate(bins):
            tg = rest[(n_rated[rest] >= lo) & (n_rated[rest] <= hi)][:n_per_bin]
            if tg.size < min_per_bin:
                continue
            frames.append(evaluate_tasks(ratings, tg, fixed, seed + 3000 + 1000 * split, seed)
                          .assign(density=float(n_rated[tg].mean()), bin=b, split=split))
    return _concat(frames)


def task_values(df: pd.DataFrame, algorithm: str, measure: str, **where: Any) -> pd.Series:
    """One algorithm's per-task values of a measure (indexed by split and target), rows chosen by
    ``where`` (e.g. ``size=400``)."""
    sel = (df["algorithm"] == algorithm) & (df["measure"] == measure)
    for k, v in where.items():
        sel &= df[k] == v
    return df[sel].set_index(["split", "target"])["value"].sort_index()


def compare(df: pd.DataFrame, better: str, worse: str, measure: str, **where: Any) -> dict:
    """Paired comparison over tasks of the claim "``better`` beats ``worse`` on ``measure``" (lower
    disagreement, higher AP / PROT / coverage): `lrank.stats.paired_comparison` on the per-task values,
    sign flipped for disagreement so that "a > b" always reads "better"."""
    a = task_values(df, better, measure, **where)
    b = task_values(df, worse, measure, **where)
    a, b = a.align(b, join="inner")
    sign = -1.0 if measure == "disagreement" else 1.0
    out = paired_comparison(sign * a.to_numpy(), sign * b.to_numpy())
    out.update(better=better, worse=worse, measure=measure, mean_better=float(a.mean()),
               mean_worse=float(b.mean()))
    return out
