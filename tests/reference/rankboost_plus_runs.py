"""Recorded RankBoost+ runs: the estimator's outputs before the issue-15 speed-up, as a fixture.

`record()` fits every configuration of `CONFIGS` (Rb-d, Rb-c, efficient and optimal Rb+, the eps-=0
modes, positive alphas) on small MovieLens-shaped and MSLR-shaped tasks, runs the paper protocol's
`_fold_run` on every fold of one task, and stores per round the chosen stump, alpha, eps+/eps-/eps0, Z,
the train losses, and the scores; ``tests/models/test_rankboost_plus_speed.py`` compares the current code with
the file. The file ``rankboost_plus_runs.npz`` was written by the code at commit b913e3d (before the
fused kernels and the incremental loss tracking) with ``python -m tests.reference.rankboost_plus_runs``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from lrank.data.container import RankingData

FIXTURE = Path(__file__).with_name("rankboost_plus_runs.npz")
#: history columns a speed-up must keep bit for bit (the model: stumps, weights, pair statistics)
EXACT = ["feature", "threshold", "eps_plus", "eps_minus", "eps_zero", "alpha", "alpha_prime", "Z",
         "n_independent"]
#: diagnostics that may move in the last bits (summation order): compared with a relative tolerance
CLOSE = ["train_E1", "train_log_E1", "train_E2", "train_log_E2", "train_R1", "train_R2", "log_prod_Z",
         "bound"]


def movielens_like(seed: int, n: int = 150, F: int = 30, missing: float = 0.45) -> RankingData:
    """One MovieLens-shaped task: ratings 1..5 as features (NaN unrated), labels 1..5 related to them."""
    rng = np.random.default_rng(seed)
    taste = rng.normal(size=n)
    X = np.clip(np.round(3 + taste[:, None] * rng.uniform(0, 1.2, F) + rng.normal(size=(n, F))), 1, 5)
    X[rng.random((n, F)) < missing] = np.nan
    y = np.clip(np.round(3 + taste + 0.7 * rng.normal(size=n)), 1, 5).astype(np.int32)
    return RankingData(X.astype(np.float32), y, np.array([0, n]))


def mslr_like(seed: int, n: int = 120, F: int = 25) -> RankingData:
    """One MSLR-shaped query: continuous features (many thresholds), 5 grades."""
    from lrank.data import make_letor_like

    return make_letor_like(n_queries=1, docs_per_query=n, n_features=F, n_grades=5, noise=2.0,
                           random_state=seed)


def feedback(seed: int, n: int = 30, F: int = 4, levels: int = 5) -> SimpleNamespace:
    """General pair feedback with random weights (as ``tests/models/test_rankboost_plus.py``)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, F)).astype(np.float32)
    X[rng.random((n, F)) < 0.1] = np.nan
    y = rng.integers(0, 3, size=n)
    cp = RankingData(X, y, np.array([0, n])).pairs()
    w = rng.random(cp.hi.size) + 0.5
    return SimpleNamespace(X=X, hi=cp.hi, lo=cp.lo, weight=w / w.sum())


def tasks() -> dict:
    from lrank.papers.rankboost_plus import lemma1_data, lemma2_data

    return {"ml0": movielens_like(0), "ml1": movielens_like(1, n=220, F=60, missing=0.6),
            "web0": mslr_like(0), "fb0": feedback(2, n=40), "lemma1": lemma1_data(4),
            "lemma2": lemma2_data(2), "ml_small": movielens_like(3, n=18, F=40, missing=0.3)}


#: name -> (task, estimator parameters)
CONFIGS = {
    "ml0_d": ("ml0", dict(variant="d", n_estimators=300, max_thresholds=254)),
    "ml0_c": ("ml0", dict(variant="c", n_estimators=300, max_thresholds=254)),
    "ml0_plus": ("ml0", dict(variant="plus", n_estimators=300, max_thresholds=254)),
    "ml1_d": ("ml1", dict(variant="d", n_estimators=300, max_thresholds=254)),
    "ml1_c": ("ml1", dict(variant="c", n_estimators=300, max_thresholds=254)),
    "ml1_plus": ("ml1", dict(variant="plus", n_estimators=300, max_thresholds=254)),
    "web0_d": ("web0", dict(variant="d", n_estimators=200, max_thresholds=255)),
    "web0_c": ("web0", dict(variant="c", n_estimators=200, max_thresholds=255)),
    "web0_plus": ("web0", dict(variant="plus", n_estimators=200, max_thresholds=255)),
    "fb0_plus_opt": ("fb0", dict(variant="plus", implementation="optimal", n_estimators=60)),
    "fb0_plus": ("fb0", dict(variant="plus", n_estimators=80)),
    "fb0_c_pos": ("fb0", dict(variant="c", alpha_sign="positive", n_estimators=60)),
    "fb0_d_query": ("ml0", dict(variant="d", pair_weighting="query", n_estimators=50, max_thresholds=3)),
    "ml_small_plus": ("ml_small", dict(variant="plus", n_estimators=100, max_thresholds=254)),
    "ml_small_d": ("ml_small", dict(variant="d", n_estimators=100, max_thresholds=254)),
    "lemma1_halt": ("lemma1", dict(variant="d", n_estimators=10)),
    "lemma1_inf": ("lemma1", dict(variant="d", eps_minus_zero="infinite", n_estimators=10)),
    "lemma2_const": ("lemma2", dict(variant="d", eps_minus_zero="constant", large_alpha=40.0,
                                    n_estimators=10)),
    "lemma2_c_const": ("lemma2", dict(variant="c", eps_minus_zero="constant", n_estimators=10)),
}
FOLD_TASK, FOLD_ROUNDS = "ml0", 100


def fit(name: str, data: dict):
    """The fitted estimator of configuration ``name``."""
    from lrank.models.rankboost_plus import RankBoostPlus

    task, params = CONFIGS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return RankBoostPlus(random_state=0, **params).fit(data[task])


def fold_runs(data: dict) -> list[dict]:
    """`_fold_run` of every algorithm on every fold of `FOLD_TASK` (the protocol of notebook 05)."""
    from lrank.papers.rankboost_plus import ALGORITHMS, METRICS, _fold_run

    folds = data[FOLD_TASK].task_folds(5, 0)
    return [_fold_run(v, dict(max_thresholds=254, random_state=0), f, FOLD_ROUNDS, list(METRICS), {})
            for v in ALGORITHMS.values() for f in folds]


def record(path: Path = FIXTURE) -> None:
    data = tasks()
    out = {}
    for name, (task, _) in CONFIGS.items():
        m = fit(name, data)
        for col in EXACT + CLOSE:
            out[f"{name}/{col}"] = m.history_[col].to_numpy(dtype=np.float64)
        out[f"{name}/kind"] = m.history_["kind"].to_numpy(dtype=str)
        out[f"{name}/predict"] = m.predict(data[task].X)
        out[f"{name}/n_iter"] = np.array(m.n_iter_)
    for i, r in enumerate(fold_runs(data)):
        for key in ("valid", "test", "train_E1", "train_log_E2"):
            out[f"fold{i}/{key}"] = np.asarray(r[key], dtype=np.float64)
        out[f"fold{i}/n_iter"] = np.array(r["n_iter"])
    np.savez_compressed(path, **out)


if __name__ == "__main__":  # pragma: no cover
    record()
