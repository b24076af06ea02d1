"""``reproduce --plan`` (`lrank.papers.plan`): the cost model, the table, and a probe run end to end."""

import subprocess
import sys

import numpy as np
import pytest

from lrank.data import Fold, make_letor_like
from lrank.papers import budgets, plan


def test_the_cost_model_recovers_a_linear_cost_exactly(monkeypatch):
    """Probed at (k1, d), (k2, d), (k2, m d): fixed 0.01 s a document, 0.5 s + 0.2 ms a document a round."""
    calls = []

    def truth(k, d):
        return 0.01 * d + k * (0.5 + 2e-4 * d)

    monkeypatch.setattr(plan, "_cpu", lambda fn: (fn(), truth(*calls[-1]))[1])
    folds = make_letor_like(n_queries=20, docs_per_query=(5, 15), n_features=3, random_state=0).kfold(4)
    c = plan._cost(lambda f, k: calls.append((k, plan._docs(f))), folds, 5, 25)
    assert [k for k, _ in calls] == [1, 5, 25, 25] and calls[-1][1] == 4 * calls[0][1]
    for k, d in ((1000, 1_200_192), (3, 10), (300, 50_000)):
        assert c(k, d) == pytest.approx(truth(k, d), rel=1e-9)


def test_replicate_multiplies_the_documents():
    d = make_letor_like(n_queries=6, docs_per_query=4, n_features=2, random_state=1)
    (f,) = plan._replicate([Fold(d, None, d)], 3)
    assert f.train.n_docs == 3 * d.n_docs and f.valid is None and np.array_equal(f.test.X[: d.n_docs], d.X)


def test_replicate_loads_a_fold_left_on_disk(tmp_path, monkeypatch):
    # the paper profile's MSLR folds are FoldFiles (one fold in memory at a time): the tree-fitting probe
    # replicates one of them
    from lrank.data import fetch, standins

    standins.write_standin("mslr-web10k", tmp_path)
    monkeypatch.setenv("LRANK_DATA", str(tmp_path))
    ff = fetch("mslr-web10k").fold_files(1, ("train", "test"))
    loaded = ff.load()
    (f,) = plan._replicate([ff], 2)
    assert f.train.n_docs == 2 * loaded.train.n_docs and f.valid is None
    assert plan._docs([ff]) == loaded.train.n_docs


def test_wall_time_divides_only_parallel_grids():
    serial = plan.Estimate("a", "b", "t", [], "w", 3600.0, 16, False, "x")
    grid = plan.Estimate("a", "c", "t", [], "w", 3600.0, 8, True, "x")
    assert serial.wall_s(16) == serial.floor_s() == 3600.0
    assert grid.wall_s(2) == 1800.0 and grid.wall_s(16) == 450.0 and grid.floor_s() == 450.0
    t = plan.table([serial, grid], cores=(2, 16))
    assert list(t["wall, 2 cores"]) == ["60 min", "30 min", "1.5 h"]  # the total row last
    assert list(t["CPU"])[-1] == "2.0 h"


def test_every_budget_has_a_plan_row():
    assert set(plan.PROBES) == set(budgets.BUDGETS)
    for key, (_, data, work, fits, _) in plan.PROBES.items():
        p = dict(budgets.BUDGETS[key].paper)
        if key == ("05_rankboost_plus", "mq"):
            p["n_rounds"] = 300
        assert work(p) and fits(p) >= 1
        assert all(n in plan.REAL_DOCS or n in ("mslr-sample", "movielens-100k", "stockfish") for n in data)


def test_plan_cli_probes_on_standins_and_names_the_missing_data(tmp_path):
    import os

    out_dir = tmp_path.parent / f"{tmp_path.name}-out"
    r = subprocess.run([sys.executable, "-m", "lrank", "reproduce", "--profile", "paper", "--plan", "--only",
                        "02", "--data-root", str(tmp_path)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "LRANK_OUTPUT_DIR": str(out_dir)})
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    assert "02_adarank" in out and "ohsumed missing: python -m lrank fetch ohsumed" in out
    assert "RankBoost 300 rounds, Ranking SVM on all pairs" in out  # the paper's budget
    assert "01_rankboost" not in out and "Assumption: a fit's cost grows linearly" in out
    assert not list(tmp_path.iterdir())  # the probes' stand-ins went to a temporary folder
    assert not (out_dir / "checkpoints").exists()  # probes are timed, never read from or left as checkpoints
