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
    """Fig. 4 for one weak learner: mean train / test error per round over every fold of every repeat
    (``n_estimators`` long; a run that stopped early keeps its final model), and per-query errors (Eq. 21
    within each query) after the rounds in ``at``, as Series indexed by query id: ``test_per_query[k]``
    averages a query over the repeats (it is tested once per repeat), ``train_per_query[k]`` over every
    (repeat, fold) in which it trains. One value per query: the unit of the paired tests."""

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
    paired comparisons over queries. Each (learner, repeat, fold) is one job; ``checkpoint`` keeps each
    finished one, so that the same call after an interruption runs only the rest, with identical results
    (default: on for the paper profile only; see `lrank.experiments.jobs`); ``verbose``: a bar
    (the same default).

    ``folds``: the folds of one cross-validation, or a list of such lists (repeated cross-validation with
    different fold seeds, pooled per query: see `Fig4Run`).
    """
    from lrank.experiments.jobs import Job, run_jobs

    at = tuple(int(k) for k in at)
    learners = learners or LEARNERS
    repeats = [folds] if folds and hasattr(folds[0], "train") else folds
    flat = [(r, i, fold) for r, rep in enumerate(repeats) for i, fold in enumerate(rep)]
    jobs = [Job({"learner": name, "repeat": r, "fold": i, "seed": random_state},
                (kw, fold, n_estimators, at, q_def, random_state))
            for name, kw in learners.items() for r, i, fold in flat]
    outs = iter(run_jobs(_fig4_job, jobs, label="rankboost_fig4", checkpoint=checkpoint, verbose=verbose,
                         desc="RankBoost Fig. 4"))

    def pool(parts: list) -> pd.Series:
        return pd.concat(parts).groupby(level=0).mean().sort_index()

    out = {}
    for name in learners:
        runs = [next(outs) for _ in flat]
        pairs = list(zip(runs, (f for _, _, f in flat)))
        te_q = {k: pool([pd.Series(r[2][k], index=f.test.qid) for r, f in pairs]) for k in at}
        tr_q = {k: pool([pd.Series(r[3][k], index=f.train.qid) for r, f in pairs]) for k in at}
        out[name] = Fig4Run(np.mean([r[0] for r in runs], axis=0), np.mean([r[1] for r in runs], axis=0),
                            te_q, tr_q)
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


def movie_means(df: pd.DataFrame, xcol: str) -> pd.DataFrame:
    """Mean of every measure per (x value, algorithm) over the tasks (the points of Fig. 5-7)."""
    return df.groupby([xcol, "algorithm", "measure"])["value"].mean().unstack("measure")[list(MEASURES)]


def movie_figure(df: pd.DataFrame, xcol: str, xlabel: str):
    """Fig. 5/6/7: one panel per measure (2 x 2), one line per algorithm (`lrank.plots.algo_style`), random
    guessing dashed, one legend outside the panels.

    Returns the matplotlib figure (save it with `lrank.plots.save_figure`)."""
    import matplotlib.pyplot as plt

    from lrank.plots import algo_style

    mean = movie_means(df, xcol)
    fig, axes = plt.subplots(2, 2, figsize=(9.0, 6.2), sharex=True, layout="constrained")
    for ax, meas in zip(axes.ravel(), MEASURES):
        for alg in ALGORITHMS:
            s = mean.xs(alg, level="algorithm")[meas]
            ax.plot(s.index, s.values, "-", label=alg, ms=5, **algo_style(alg))
        s = mean.xs("random", level="algorithm")[meas]
        ax.plot(s.index, s.values, "--", lw=1, label="random guessing", color=algo_style("random")["color"])
        ax.set_ylabel(meas if meas in ("disagreement", "coverage") else meas.upper())
        ax.set_title(("lower is better" if meas == "disagreement" else "higher is better"), fontsize=9)
    fig.supxlabel(xlabel)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper")
    return fig


def movie_sentence(df: pd.DataFrame, xcol: str) -> str:
    """What to see in Fig. 5/6/7, rendered from the plotted means: who is best on each measure at the
    largest x value, and where RankBoost stands."""
    mean = movie_means(df, xcol)
    x_hi = mean.index.get_level_values(0).max()
    last = mean.xs(x_hi, level=0).drop(index="random")
    best = {m: (last[m].idxmin() if m == "disagreement" else last[m].idxmax()) for m in MEASURES}
    rb_best = [m for m in MEASURES if best[m] == "RankBoost"]
    others = ", ".join(f"{'PROT' if m == 'prot' else ('AP' if m == 'ap' else m)}: {best[m]}"
                       for m in MEASURES if best[m] != "RankBoost")
    head = (f"At the largest {xcol} ({x_hi:g}) RankBoost is best on {len(rb_best)} of the four measures"
            + (f" (best elsewhere: {others})" if others else ""))
    nn_prot = mean.xs("NN", level="algorithm")["prot"]
    rnd_prot = mean.xs("random", level="algorithm")["prot"]
    below = int((nn_prot < rnd_prot).sum())
    return (head + f"; NN's PROT lies below random guessing's at {below} of {nn_prot.size} {xcol} values "
                   f"(the "
            "paper: below at every value). The verdicts of the paper's sentences on this figure follow, "
            "decided over the target users.")


def fig4_figure(runs: dict, shown: int):
    """Fig. 4: mean train (left) and test (right) ranking loss per round of the four weak learners."""
    import matplotlib.pyplot as plt

    from lrank.plots import algo_style

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    for name, run in runs.items():
        st = algo_style(name)
        for ax, curve in zip(axes, (run.train, run.test)):
            ax.plot(np.arange(1, shown + 1), curve[:shown], label=name, color=st["color"],
                    marker=st["marker"],
                    markevery=max(1, shown // 8), ms=5)
    axes[0].set_title("train error")
    axes[1].set_title("test error")
    for ax in axes:
        ax.set_xlabel("round")
        ax.set_ylabel("ranking loss (Eq. 21)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper")
    return fig


def fig4_sentence(runs: dict, early: int, late: int) -> str:
    """What to see in Fig. 4, rendered from the curves: the order of the train and test errors at round
    ``late`` and which learners' test error rose after round ``early``."""
    tr = sorted(runs, key=lambda k: runs[k].train[late - 1])
    te = sorted(runs, key=lambda k: runs[k].test[late - 1])
    rose = [k for k in runs if runs[k].test[late - 1] > runs[k].test[early - 1]]
    return (f"At round {late} the train error orders the learners {' < '.join(tr)} (the paper: WeakLearn.2 < "
            f"WeakLearn.3 < the two .cum learners) and the test error {' < '.join(te)} (the paper: the .cum "
            f"learners lowest); the test error rose from round {early} to {late} for "
            f"{', '.join(rose) if rose else 'none of them'} (the paper: for the counterparts, not the .cum "
            "learners). The per-query tests below decide each sentence.")


def table1_experiment(fold_sets: list, ks: Any = (1, 2, 5, 10, 20, 30), n_estimators: int = 50,
                      random_state: int = 0) -> dict:
    """Table 1 (Sec. 6.1.2): RankBoost (WeakLearn.3.cum, q_def = 0) trained on each fold's training
    queries and every ranking feature alone, scored on the fold's test queries; per-query values pooled
    over the repeats of the cross-validation (``fold_sets``: a list of fold lists).

    Returns ``{"rb_top": {k: Series}, "rb_rank": Series, "feat_top": [{k: Series}] per feature,
    "feat_rank": [Series]}``, Series indexed by query id (`target_rank_stats` per query, mean over
    repeats).
    """
    ks = [int(k) for k in ks]
    rb_top: dict[int, list] = {k: [] for k in ks}
    rb_rank: list = []
    n_feat = fold_sets[0][0].train.n_features
    f_top: list = [{k: [] for k in ks} for _ in range(n_feat)]
    f_rank: list = [[] for _ in range(n_feat)]
    for fold in (f for rep in fold_sets for f in rep):
        te = fold.test
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateRoundWarning)
            model = RankBoost(n_estimators=n_estimators, alpha_method="third", cumulative_positive=True,
                              q_def=0, random_state=random_state).fit(fold.train)
        has = np.add.reduceat((te.y > 0).astype(np.int64), te.qptr[:-1]) > 0
        qid = te.qid[has]
        st = target_rank_stats(te.y, model.predict(te.X), te.qptr, ks)
        for k in ks:
            rb_top[k].append(pd.Series(st["top_per_query"][k], index=qid))
        rb_rank.append(pd.Series(st["rank"], index=qid))
        for f in range(n_feat):
            col = np.nan_to_num(te.X[:, f].astype(np.float64), nan=-np.inf)
            stf = target_rank_stats(te.y, col, te.qptr, ks)
            for k in ks:
                f_top[f][k].append(pd.Series(stf["top_per_query"][k], index=qid))
            f_rank[f].append(pd.Series(stf["rank"], index=qid))

    def pool(parts: list) -> pd.Series:
        return pd.concat(parts).groupby(level=0).mean().sort_index()

    return {"rb_top": {k: pool(v) for k, v in rb_top.items()}, "rb_rank": pool(rb_rank),
            "feat_top": [{k: pool(v) for k, v in d.items()} for d in f_top],
            "feat_rank": [pool(r) for r in f_rank]}


# ------------------------------------------------------------------------ Theorem 3 and Fig. 8: figures
def thm3_figure(T_values: Any = (10, 50, 200, 1000), d: float = 2.0, delta: float = 0.05):
    """Theorem 3's bound against the sample sizes: left m = n, right m = 1e5 and n varied."""
    import matplotlib.pyplot as plt

    sizes = np.logspace(3, 8, 60)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True, layout="constrained")
    for T in T_values:
        dp = 2.0 * (d + 1.0) * (T + 1.0) * np.log2(np.e * (T + 1.0))
        ok = 2 * sizes >= dp  # the bound's domain: a sample of at least d'/2 (below, it is not monotone)
        axes[0].loglog(sizes[ok], [vc_bound(s, s, T, d, delta) for s in sizes[ok]], label=f"T = {T}")
        if 2e5 >= dp:
            axes[1].loglog(sizes[ok], [vc_bound(1e5, s, T, d, delta) for s in sizes[ok]], label=f"T = {T}")
    axes[0].set_xlabel("training sample sizes $m = n$")
    axes[1].set_xlabel("$n$ (size of $S_1$), with $m = 10^5$")
    axes[0].set_ylabel("bound on |train $-$ test error|")
    axes[0].set_title("$m = n$", fontsize=10)
    axes[1].set_title("$m = 10^5$, $n$ varied", fontsize=10)
    for ax in axes:
        ax.axhline(1.0, color="grey", ls=":", lw=1)
    fig.suptitle(f"Theorem 3 ($d = {d:g}$, $\\delta = {delta:g}$) where $2m, 2n \\geq d'$; "
                 "dotted: a gap of 1 (vacuous above)", fontsize=11)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center")
    return fig


def thm3_sentence(log10_m: float, T: int = 50) -> str:
    """What to see in the Theorem 3 figure, rendered from the threshold the notebook computed."""
    return (f"Every curve falls with the sample size and rises with the number of rounds, as the derivation "
            f"above shows; with T = {T} rounds the bound drops below 0.1 only once m = n reaches "
            f"10^{log10_m:.2f}, so on data of the paper's size (a few hundred queries) it is vacuous: "
            "Theorem 3 explains the shape of generalisation, not the errors of Fig. 4.")


def fig8_figure(left: pd.DataFrame, right: pd.DataFrame):
    """Fig. 8: random guessing's expected AP, PROT and coverage (left: against the fraction of good
    movies, 60 movies; right: against the number of movies, fraction 0.25)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True, layout="constrained")
    styles = {"ap": ("AP", "#0072B2", "o"), "prot": ("PROT", "#D55E00", "s"),
              "coverage": ("coverage", "#009E73", "^")}
    for col, (lab, colour, mk) in styles.items():
        axes[0].plot(left["fraction"], left[col], "-", marker=mk, color=colour, label=lab)
        axes[1].plot(right["n_movies"], right[col], "-", marker=mk, color=colour, label=lab)
    axes[0].set_xlabel("fraction of good movies (60 movies)")
    axes[0].invert_xaxis()
    axes[1].set_xlabel("number of movies ranked (fraction of good movies 0.25)")
    axes[1].set_xscale("log")
    axes[0].set_ylabel("expected value under random guessing")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper")
    return fig


def fig8_sentence(left: pd.DataFrame, right: pd.DataFrame) -> str:
    """What to see in Fig. 8, rendered from the closed-form values."""
    def falls(df: pd.DataFrame) -> list[str]:
        return [{"ap": "AP", "prot": "PROT", "coverage": "coverage"}[c] for c in ("ap", "prot", "coverage")
                if bool(np.all(np.diff(df[c].to_numpy()) < 0))]

    fl, fr = falls(left), falls(right)
    return (f"Left (x axis reversed: fewer good movies to the right): of AP, PROT and coverage, "
            f"{', '.join(fl) or 'none'} fall at every step as good movies become rarer. Right: "
            f"{', '.join(fr) or 'none'} fall "
            "at every step as the number of movies grows at a fixed fraction. Both as the paper says: rarer "
            "good movies make the task harder, and the measures themselves degrade with the list length.")


def fig8_simulation_error(cases: list[tuple[int, int]], n_sim: int, rng: np.random.Generator) -> float:
    """Largest |simulated - closed form| of random guessing's AP, PROT and coverage over ``cases``
    ((number of movies, number of good ones)), each by ``n_sim`` random permutations."""
    err = 0.0
    for N, K in cases:
        good = np.zeros(N, bool)
        good[:K] = True
        g = good[np.argsort(rng.random((n_sim, N)), axis=1)]  # g[s, p]: is position p + 1 good in draw s
        ranks = np.nonzero(g)[1].reshape(n_sim, K) + 1
        sim = {"ap": (np.arange(1, K + 1) / ranks).mean(axis=1).mean(), "prot": (1 / ranks[:, 0]).mean(),
               "coverage": (K / ranks[:, -1]).mean()}
        exact = random_guessing(N, K)
        err = max(err, *(abs(sim[k] - exact[k]) for k in sim))
    return float(err)


def expected_by_enumeration(y: Any, groups: list[list[int]]) -> dict[str, float]:
    """AP, PROT, coverage and disagreement averaged over every order of the tie groups (``groups``: the
    documents of each score level, best level first): the definition App. A's expectations replace."""
    import itertools

    y = np.asarray(y)
    tot = {"ap": 0.0, "prot": 0.0, "coverage": 0.0, "disagreement": 0.0}
    n = 0
    pairs = [(g, b) for g in range(y.size) for b in range(y.size) if y[g] > y[b]]
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        order = [d for p in perms for d in p]
        good = [r for r, d in enumerate(order, start=1) if y[d] == y.max()]
        pos = {d: r for r, d in enumerate(order)}
        tot["ap"] += float(np.mean([(k + 1) / r for k, r in enumerate(good)]))
        tot["prot"] += 1 / good[0]
        tot["coverage"] += len(good) / good[-1]
        tot["disagreement"] += float(np.mean([pos[g] > pos[b] for g, b in pairs]))
        n += 1
    return {k: v / n for k, v in tot.items()}


def equation_lines(obj: Any, marks: str = r"Eq\. ?\(|Fig\. [123]|step [0-9]|Theorem 1") -> str:
    """The source lines of ``obj`` that carry an equation (their comment names it), numbered as in the
    file, as a Markdown code block; a short function (at most 15 lines, whose docstring names its
    equation) is shown whole."""
    import inspect
    import re

    fn = getattr(obj, "py_func", obj)
    lines, start = inspect.getsourcelines(fn)
    path = inspect.getsourcefile(fn) or ""
    mod = path.split("lrank/")[-1] if "lrank/" in path else path
    keep = [f"{start + i:4d}  {ln.rstrip()}" for i, ln in enumerate(lines)
            if len(lines) <= 15 or re.search(marks, ln)]
    return f"`lrank/{mod}`, `{fn.__qualname__}`:\n\n```python\n" + "\n".join(keep) + "\n```"
