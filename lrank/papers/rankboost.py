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
from lrank.papers import budgets
from lrank.stats import paired_comparison

NB = "01_rankboost"


# ------------------------------------------------------------------------ profiles: budgets and data
def budget(experiment: str, profile: str) -> Any:
    """This notebook's budget of ``experiment`` in ``profile`` (`lrank.papers.budgets`)."""
    return budgets.budget(NB, experiment, profile)


def homepage_data(profile: str, sample: tuple[RankingData, RankingData]) -> tuple[RankingData, str]:
    """Fig. 4 / Table 1's data cast as homepage finding (`as_homepage_finding`), and its description.

    ``"quick"``: the MSLR sample (``sample``: its train and test). ``"paper"`` / ``"rehearsal"``: every
    query of LETOR 3.0 HP2003 (the three files of fold 1), real or stand-in; a missing download raises
    `lrank.data.FetchError` naming the fetch command.
    """
    if profile == "quick":
        parts = list(sample)
        what = "MSLR-WEB10K sample (real; Fold1 train + test queries, cast as homepage finding)"
    else:
        from lrank.data import fetch

        hp = fetch("hp2003").fold(1)
        parts = [hp.train, hp.valid, hp.test]
        what = f"LETOR 3.0 HP2003 ({budgets.data_kind(hp.train)}; all queries, one target per query)"
    return as_homepage_finding(RankingData.concat(parts)), what


# ---------------------------------------------------------------------------------- Theorem 3
def vc_bound(m: float, n: float, T: float, d: float = 2.0, delta: float = 0.05) -> float:
    """Theorem 3: with probability 1 - delta, |train error - generalisation error| is at most this.

    ``m``, ``n``: sizes of the two training samples S_0, S_1; ``T`` rounds; ``d`` the VC dimension of the
    weak rankings (>= 2); d' = 2 (d + 1)(T + 1) log2(e (T + 1)). NaN where the formula is undefined
    (a sample far smaller than d' makes the square root's argument negative).
    """
    dp = 2.0 * (d + 1.0) * (T + 1.0) * np.log2(np.e * (T + 1.0))

    def eps(k: float) -> float:
        arg = (dp * (np.log(2.0 * k / dp) + 1.0) + np.log(18.0 / delta)) / k
        return 2.0 * float(np.sqrt(arg)) if arg >= 0 else float("nan")

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
    """Fig. 4 for one weak learner: mean train / test error per round (``n_estimators`` long, a run that
    stopped early keeps its final model), and per-query errors (Eq. 21 within each query) after the
    rounds in ``at``: ``test_per_query[k]`` over every test query (each query is tested once over the
    folds, in fold order), ``train_per_query[k]`` over every (fold, training query)."""

    train: np.ndarray
    test: np.ndarray
    test_per_query: dict
    train_per_query: dict


def _fig4_job(kw: dict, fold: Any, n_estimators: int, at: tuple, q_def: int, random_state: int) -> tuple:
    """One weak learner on one fold of `fig4_runs`: train / test error per round (padded to
    ``n_estimators``) and per-query errors after each round in ``at`` (test, train)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateRoundWarning)
        model = RankBoost(n_estimators=n_estimators, q_def=q_def, random_state=random_state, **kw)
        model.fit(fold.train)
    tr = model.history_["train_rloss"].to_numpy()
    te = model.staged_ranking_loss(fold.test)
    pad = n_estimators - tr.size  # a run that stopped early keeps its final model
    te_q, tr_q = {}, {}
    for k in at:
        it = min(k, model.n_iter_)
        for part, store in ((fold.test, te_q), (fold.train, tr_q)):
            store[k] = r2(part.y, model.predict(part.X, num_iteration=it), part.qptr)
    return np.r_[tr, np.full(pad, tr[-1])], np.r_[te, np.full(pad, te[-1])], te_q, tr_q


def fig4_runs(folds: list, n_estimators: int, at: Any = (50, 200), q_def: int = 0, random_state: int = 0,
              learners: dict | None = None, checkpoint: bool | str | None = None,
              verbose: bool | None = None) -> dict[str, Fig4Run]:
    """Train each weak learner of `LEARNERS` on every fold (Sec. 6.1.2, four partitions), error = Eq. 21
    on all crucial pairs, averaged over the folds; per-query errors after each round in ``at`` for
    paired comparisons over queries. Each (learner, fold) is one job; ``checkpoint`` keeps each finished
    one, so that the same call after an interruption runs only the rest, with identical results
    (default: on for the paper profile only; see `lrank.experiments.jobs`); ``verbose``: a bar
    (the same default)."""
    from lrank.experiments.jobs import Job, run_jobs

    at = tuple(int(k) for k in at)
    learners = learners or LEARNERS
    jobs = [Job({"learner": name, "fold": i, "seed": random_state},
                (kw, fold, n_estimators, at, q_def, random_state))
            for name, kw in learners.items() for i, fold in enumerate(folds)]
    outs = iter(run_jobs(_fig4_job, jobs, label="rankboost_fig4", checkpoint=checkpoint, verbose=verbose,
                         desc="RankBoost Fig. 4"))
    out = {}
    for name in learners:
        runs = [next(outs) for _ in folds]
        out[name] = Fig4Run(np.mean([r[0] for r in runs], axis=0), np.mean([r[1] for r in runs], axis=0),
                            {k: np.concatenate([r[2][k] for r in runs]) for k in at},
                            {k: np.concatenate([r[3][k] for r in runs]) for k in at})
    return out


def target_rank_stats(y: Any, scores: Any, qptr: Any, ks: Any = (1, 2, 5, 10, 20, 30)) -> dict:
    """Table 1's numbers under random tie-breaking: per query the rank of the first target (y > 0).

    With R documents scored above the best-scored target and Q documents (q of them targets) tied with
    it, the first target's rank is R + Y with Pr[Y <= l] = 1 - C(Q - l, q) / C(Q, q) and
    E[Y] = (Q + 1) / (q + 1) (App. A, the urn of Eq. 24 with j = 1).

    Returns ``{"top": {k: expected number of queries with rank <= k}, "mean_rank": expected rank
    averaged over queries, "rank": per-query expected rank, "top_per_query": {k: per-query
    Pr[rank <= k]}}``; queries without a target are skipped.
    """
    from scipy.special import gammaln

    y = np.asarray(y)
    s = np.asarray(scores, dtype=np.float64)
    qptr = np.asarray(qptr, dtype=np.int64)
    ks = [int(k) for k in ks]
    top_q: dict[int, list] = {k: [] for k in ks}
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
                top_q[k].append(0.0)
            elif ell > Q - q:
                top_q[k].append(1.0)
            else:
                top_q[k].append(1.0 - float(np.exp(lbinom(Q - ell, q) - lbinom(Q, q))))
    ranks = np.asarray(ranks)
    per_query = {k: np.asarray(v) for k, v in top_q.items()}
    return {"top": {k: float(v.sum()) for k, v in per_query.items()},
            "mean_rank": float(ranks.mean()) if ranks.size else float("nan"), "rank": ranks,
            "top_per_query": per_query}


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


# ------------------------------------------------------------------------------------ verdicts
def evidence(c: dict) -> str:
    """The figure a verdict rests on, as text: the Wilcoxon p-value, or the 95% interval against the
    margin for a near-equality claim, or (for `all_of`) the deciding part's."""
    if "evidence" in c:
        return c["evidence"]
    if "margin" in c:
        return f"95% CI [{c['ci_low']:.4f}, {c['ci_high']:.4f}], margin {c['margin']:g}"
    return f"p = {c['p_value']:.3g}"


def all_of(parts: list[dict]) -> dict:
    """A claim made of several comparisons ("for all four measures"): HELD when every part is HELD,
    NOT HELD when any part is NOT HELD, else UNDECIDED. ``n`` is the smallest part's n; ``p_value`` and
    ``evidence`` those of the deciding part: the NOT HELD part with the smallest p when NOT HELD, else
    the part with the weakest evidence (largest p; an UNDECIDED part first)."""
    verdicts = [c["verdict"] for c in parts]
    if "NOT HELD" in verdicts:
        v = "NOT HELD"
        key = min((c for c in parts if c["verdict"] == "NOT HELD"), key=lambda c: c["p_value"])
    else:
        v = "HELD" if all(x == "HELD" for x in verdicts) else "UNDECIDED"
        key = max(parts, key=lambda c: (c["verdict"] != "HELD", c["p_value"]))
    return {"verdict": v, "n": int(min(c["n"] for c in parts)), "p_value": float(key["p_value"]),
            "evidence": evidence(key), "parts_held": int(sum(x == "HELD" for x in verdicts)),
            "parts": len(parts)}


def within_margin(a: Any, b: Any, margin: float) -> dict:
    """Claims of near-equality ("nearly identical", "closely tracked"): the paired mean difference
    ``a - b`` with its bootstrap 95% interval (`lrank.stats.paired_comparison`); HELD when the whole
    interval lies inside (-margin, margin), NOT HELD when it lies wholly outside, else UNDECIDED."""
    c = paired_comparison(a, b)
    lo, hi = c["ci_low"], c["ci_high"]
    if -margin < lo and hi < margin:
        v = "HELD"
    elif hi <= -margin or lo >= margin:
        v = "NOT HELD"
    else:
        v = "UNDECIDED"
    c.update(verdict=v, margin=float(margin))
    return c


def not_worse_by(a: Any, b: Any, margin: float) -> dict:
    """Non-inferiority: ``a`` is at most ``margin`` below ``b`` (paired). HELD when the bootstrap 95%
    interval of ``a - b`` lies above ``-margin``, NOT HELD when it lies below, else UNDECIDED."""
    c = paired_comparison(a, b)
    lo, hi = c["ci_low"], c["ci_high"]
    v = "HELD" if lo > -margin else ("NOT HELD" if hi < -margin else "UNDECIDED")
    c.update(verdict=v, margin=float(margin))
    return c


#: "little better than random guessing": a mean difference in disagreement below this
LITTLE = 0.05


def movie_claims(fig5: pd.DataFrame, fig6: pd.DataFrame, fig7: pd.DataFrame) -> pd.DataFrame:
    """The paper's claims about Fig. 5-7 (Sec. 6.2.5), each tested over the tasks (target users x
    splits, pooled over the x values the sentence covers) with paired Wilcoxon tests (`compare`).

    Returns one row per claim: ``figure, claim, verdict, n, p_value, evidence, parts_held, parts``.
    """
    rows = []

    def add(figure: str, claim: str, parts: list[dict]) -> None:
        c = all_of(parts)
        rows.append(dict(figure=figure, claim=claim, verdict=c["verdict"], n=c["n"], p_value=c["p_value"],
                         evidence=c["evidence"], parts_held=c["parts_held"], parts=c["parts"]))

    def pooled(df: pd.DataFrame, col: str, keep: Any = None) -> pd.DataFrame:
        # units = (x value, split, target): fold the x value into the split key
        d = df if keep is None else df[df[col].isin(list(keep))]
        return d.assign(split=d[col].astype(str) + "/" + d["split"].astype(str))

    f5 = pooled(fig5, "size")
    add("Fig. 5", "RankBoost outperforms regression and NN on all four measures",
        [compare(f5, "RankBoost", b, m) for b in ("Regression", "NN") for m in MEASURES])
    big = [s for s in sorted(fig5["size"].unique()) if s > 200]
    if big:
        add("Fig. 5", "RankBoost outperforms VSIM when the feature set is larger than 200",
            [compare(pooled(fig5, "size", big), "RankBoost", "VSIM", m) for m in MEASURES])
    add("Fig. 5", "NN's PROT is worse than random guessing", [compare(f5, "random", "NN", "prot")])
    add("Fig. 5", "regression's AP is worse than random guessing",
        [compare(f5, "random", "Regression", "ap")])
    reg, rnd = task_values(f5, "Regression", "disagreement").align(task_values(f5, "random", "disagreement"),
                                                                   join="inner")
    add("Fig. 5", f"regression's disagreement is little better than random guessing's (by less than "
        f"{LITTLE})", [compare(f5, "Regression", "random", "disagreement"),
                       within_margin(reg.to_numpy(), rnd.to_numpy(), LITTLE)])
    f6 = pooled(fig6, "bin")
    add("Fig. 6", "RankBoost is the winner again (beats each baseline on all four measures)",
        [compare(f6, "RankBoost", b, m) for b in ("Regression", "NN", "VSIM") for m in MEASURES])
    add("Fig. 6", "NN's PROT stays worse than random guessing", [compare(f6, "random", "NN", "prot")])
    low = [b for b in sorted(fig7["bin"].unique()) if DENSITY_BINS[b][1] <= 40]
    high = [b for b in sorted(fig7["bin"].unique()) if DENSITY_BINS[b][0] > 100]
    if low:
        f7 = pooled(fig7, "bin", low)
        add("Fig. 7", "feedback density <= 40: VSIM beats RankBoost on disagreement, AP and PROT",
            [compare(f7, "VSIM", "RankBoost", m) for m in ("disagreement", "ap", "prot")])
    if high:
        add("Fig. 7", "feedback density > 100: RankBoost beats VSIM on all four measures",
            [compare(pooled(fig7, "bin", high), "RankBoost", "VSIM", m) for m in MEASURES])
    return pd.DataFrame(rows)


def movie_means(df: pd.DataFrame, xcol: str) -> pd.DataFrame:
    """Mean of every measure per (x value, algorithm) over the tasks (the points of Fig. 5-7)."""
    return df.groupby([xcol, "algorithm", "measure"])["value"].mean().unstack("measure")[list(MEASURES)]


def movie_figure(df: pd.DataFrame, xcol: str, xlabel: str):
    """Fig. 5/6/7: one panel per measure, one line per algorithm, random guessing dashed.

    Returns the matplotlib figure (save it with `lrank.plots.save_figure`)."""
    import matplotlib.pyplot as plt

    mean = movie_means(df, xcol)
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.4))
    for ax, meas in zip(axes, MEASURES):
        for alg in ALGORITHMS:
            s = mean.xs(alg, level="algorithm")[meas]
            ax.plot(s.index, s.values, "o-", label=alg)
        s = mean.xs("random", level="algorithm")[meas]
        ax.plot(s.index, s.values, "k--", lw=1, label="random")
        ax.set_xlabel(xlabel)
        ax.set_title(meas if meas != "prot" else "PROT")
    axes[0].legend(fontsize=8)
    return fig
