"""The time-to-accuracy benchmark's arithmetic and its stamped fits (issue 35.4), on small data."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from lrank.benchmarks import time_to_accuracy as B
from lrank.data.generators import make_letor_like


def test_best_point_and_time_to_a_value():
    c = B.Curve(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0.5, 0.7, 0.8, 0.8, 0.6]))
    assert c.best() == (0.8, 2)  # the first tree reaching the highest value
    assert c.time_to(0.7) == (2.0, 1)
    assert c.time_to(0.75) == (3.0, 2)
    assert c.time_to(0.81) == (float("inf"), None)
    with pytest.raises(ValueError, match="not finite at tree 2 of 3"):
        B.Curve(np.array([1.0, 2.0, 3.0]), np.array([0.5, np.nan, 0.9])).best()
    with pytest.raises(ValueError, match="has no tree"):
        B.Curve(np.zeros(0), np.zeros(0)).best()


def _rows(ours, peer):
    cs = {"lrank": B.Curve(*map(np.array, ours)), "lightgbm": B.Curve(*map(np.array, peer))}
    return B._rows("toy", 1, cs, {"lrank": len(ours[0]), "lightgbm": len(peer[0])}, 3, 0.2)


def test_rows_are_met_only_when_lrank_gets_there_sooner_and_as_high():
    peer = ([2.0, 4.0, 6.0], [0.6, 0.9, 0.85])  # best 0.9 at tree 2, 4 s
    (won,) = _rows(([1.0, 2.0, 3.0], [0.7, 0.9, 0.95]), peer)
    assert won["status"] == "met" and (won["ours_s"], won["reference_s"], won["ratio"]) == (2.0, 4.0, 2.0)
    (late,) = _rows(([1.0, 5.0, 6.0], [0.7, 0.8, 0.91]), peer)  # reaches 0.9 at 6 s: later
    assert late["status"] == "missed" and late["ours_s"] == 6.0
    (never,) = _rows(([1.0, 2.0, 3.0], [0.7, 0.8, 0.89]), peer)
    assert never["status"] == "missed" and never["ours_s"] == float("inf")
    assert "never reaches" in never["notes"]


def test_a_row_met_on_one_fold_split_only_is_undecided():
    """A row met on the timed split stays met only where lrank's best is at least the peer's on every other
    fold split; one split below makes it undecided (not missed); the notes give every split's difference."""
    peer = ([2.0, 4.0, 6.0], [0.6, 0.9, 0.85])
    cs = {"lrank": B.Curve(np.array([1.0, 2.0, 3.0]), np.array([0.7, 0.9, 0.95])),
          "lightgbm": B.Curve(*map(np.array, peer))}
    budgets = {"lrank": 3, "lightgbm": 3}
    held = [{"lrank": 0.41, "lightgbm": 0.40}, {"lrank": 0.42, "lightgbm": 0.42}]
    (row,) = B._rows("toy", 1, cs, budgets, 3, 0.2, splits=held, seeds=(1, 2))
    assert row["status"] == "met"
    assert "lrank's best is at least the peer's on 2 of 2 (lrank - peer: +0.0100, +0.0000)" in row["notes"]
    assert row["target"].endswith(B.SPLIT_TARGET)
    flipped = [*held, {"lrank": 0.40, "lightgbm": 0.43}]
    (row,) = B._rows("toy", 1, cs, budgets, 3, 0.2, splits=flipped, seeds=(1, 2, 3))
    assert row["status"] == "undecided" and not row["met"]
    assert "on 2 of 3 (lrank - peer: +0.0100, +0.0000, -0.0300)" in row["notes"]
    (never,) = _rows(([1.0, 2.0, 3.0], [0.7, 0.8, 0.89]), peer)  # no other split: the timed split decides
    assert never["status"] == "missed" and "fold splits" not in never["notes"]
    assert not never["target"].endswith(B.SPLIT_TARGET)


def test_web10k_is_timed_on_fold1_and_checked_again_on_folds_2_to_5(rehearsal):
    """The paper profile's MSLR-WEB10K set (on the stand-in files here): the timed split is the official
    Fold1 (train against test), the other splits are Folds 2-5, and the rows' notes name them so."""
    from lrank.data.fetch import load_fold

    what, build, budgets, repeats, resplit = B._sets("paper", only="web10k")["web10k"]
    assert "MSLR-WEB10K" in what and repeats == 3 and budgets["lrank"] == B.LRANK_TREES * budgets["lightgbm"]

    def qids(d):
        return np.unique(d.qid).tolist()

    for fold, got in [(1, build()), *((s + 1, resplit(s)) for s in B.SPLIT_SEEDS)]:
        ref = load_fold("mslr-web10k", fold)
        ((train, test),) = got
        assert (qids(train), qids(test)) == (qids(ref.train), qids(ref.test)), fold
        assert not set(qids(train)) & set(qids(test))
    assert qids(build()[0][1]) != qids(resplit(1)[0][1])  # another fold, other test queries
    cs = {"lrank": B.Curve(np.array([1.0, 2.0]), np.array([0.5, 0.6])),
          "lightgbm": B.Curve(np.array([2.0, 4.0]), np.array([0.55, 0.5]))}
    splits = [{"lrank": 0.5, "lightgbm": 0.4}] * 4
    (row,) = B._rows(what, 1, cs, {"lrank": 2, "lightgbm": 2}, 3, 0.2, splits=splits, seeds=B.SPLIT_SEEDS,
                     split_names=B.SPLIT_NAMES["web10k"])
    assert "on the other fold splits (MSLR-WEB10K's official Folds 2-5, untimed)" in row["notes"]


def test_a_data_set_that_cannot_be_had_gives_rows_that_are_never_met(monkeypatch):
    """A paper-profile data set that is absent and cannot be downloaded is not a crash of the whole bench:
    each peer's row says why it was not measured, with status ``error``."""
    from lrank.data.fetch import FetchError

    def absent():
        raise FetchError("mslr-web10k: could not download\n  (no network)")

    monkeypatch.setattr(B, "_sets", lambda profile: {"web10k": ("MSLR-WEB10K (toy)", absent, {}, 3, None)})
    rows = B.run("paper")
    assert [r["benchmark"] for r in rows] == [f"test NDCG@10 reached per second vs {p}, MSLR-WEB10K (toy)"
                                              for p in B.PEERS]
    assert all(r["status"] == "error" and r["met"] is False for r in rows)
    assert all("could not download   (no network)" in r["notes"] for r in rows)


def test_split_bests_are_each_sides_best_mean_curve_on_each_split(monkeypatch):
    """`split_bests` fits every side on the folds of each seed and keeps its best mean NDCG@10."""
    seen = []

    def fake_run_side(side, folds, threads, n):
        seen.append((side, folds, threads, n))
        per_query = np.array([[0.1, 0.3], [0.5, np.nan], [0.2, 0.2]]) + (0.1 if side == "lightgbm" else 0.0)
        return np.zeros(3), per_query * folds

    monkeypatch.setattr(B, "run_side", fake_run_side)
    out = B.split_bests(lambda seed: seed, (1, 2), {"lrank": 3, "lightgbm": 2})
    assert seen == [("lrank", 1, 1, 3), ("lightgbm", 1, 1, 2), ("lrank", 2, 1, 3), ("lightgbm", 2, 1, 2)]
    assert out == [{"lrank": 0.5, "lightgbm": 0.6}, {"lrank": 1.0, "lightgbm": 1.2}]
    assert out[0] == {s: B._curve(*fake_run_side(s, 1, 1, 3)).best()[0] for s in ("lrank", "lightgbm")}
    # the best of a split is `Curve.best`'s, the one definition of a side's best
    monkeypatch.setattr(B.Curve, "best", lambda self: (float(self.ndcg[-1]), len(self.ndcg) - 1))
    assert B.split_bests(lambda seed: seed, (1,), {"lrank": 3}) == [{"lrank": 0.2}]


def test_split_bests_resume_from_a_store_and_refold_only_when_a_fit_is_missing(monkeypatch, tmp_path):
    """With a store per split (``LRANK_BENCH_RESUME``) a second call fits nothing and gives the same bests;
    a lost fit is measured alone, and a split whose fits are all kept is not re-folded."""
    seen, folded = [], []

    def fake_run_side(side, folds, threads, n):
        seen.append((side, folds))
        return np.arange(n, dtype=float), np.linspace(0.1, 0.4, 2 * n).reshape(n, 2) * folds

    def resplit(seed):
        folded.append(seed)
        return seed

    monkeypatch.setattr(B, "run_side", fake_run_side)
    budgets = {"lrank": 3, "lightgbm": 2}
    store_for = B._split_store(str(tmp_path), "toy", "a toy set", budgets)
    first = B.split_bests(resplit, (1, 2), budgets, store_for)
    assert len(seen) == 4 and folded == [1, 2]
    assert first == B.split_bests(resplit, (1, 2), budgets)  # the same bests as without a store
    seen.clear(), folded.clear()
    assert B.split_bests(resplit, (1, 2), budgets, store_for) == first
    assert seen == [] and folded == []
    store_for(2).path("lightgbm", 0).unlink()
    assert B.split_bests(resplit, (1, 2), budgets, store_for) == first
    assert seen == [("lightgbm", 2)] and folded == [2]
    assert B._split_store("", "toy", "a toy set", budgets) is None
    assert store_for(1).path("lrank", 0) != store_for(2).path("lrank", 0)


def _tiny(seed=0):
    """A training set whose query ids are out of order (as in a shuffled fold) and a test set."""
    d = make_letor_like(n_queries=24, docs_per_query=(10, 30), n_features=8, n_grades=3, random_state=seed)
    q = np.random.default_rng(seed).permutation(d.n_queries)
    return d.subset(q[:18]), d.subset(q[18:])


def test_run_side_pools_queries_and_averages_fold_times(monkeypatch):
    """A side's per-query matrix holds every fold's test queries (each once, fold after fold), so its mean
    curve weighs a fold with more queries more; the time is the mean of the folds' stamps."""
    from lrank.metrics import evaluate

    folds = [_tiny(0), _tiny(1)]
    rng = np.random.default_rng(0)
    scores = {id(te): [rng.normal(size=te.n_docs) for _ in range(3)] for _, te in folds}

    def fake(train, test, threads, n):
        return np.array([1.0, 2.0, 4.0]) * (1 + (train is folds[1][0])), iter(scores[id(test)])

    monkeypatch.setitem(B.SIDES, "fake", fake)
    secs, per_query = B.run_side("fake", folds, 1, 3)
    np.testing.assert_allclose(secs, [1.5, 3.0, 6.0])
    assert per_query.shape == (3, sum(te.n_queries for _, te in folds))
    first = evaluate(folds[0][1].y, scores[id(folds[0][1])][2], folds[0][1].qptr, ["ndcg@10"], per_query=True)
    np.testing.assert_array_equal(per_query[2, :folds[0][1].n_queries], first["ndcg@10"])
    want = [sum(evaluate(te.y, scores[id(te)][t], te.qptr, ["ndcg@10"])["ndcg@10"] * te.n_queries
                for _, te in folds) / sum(te.n_queries for _, te in folds) for t in range(3)]
    np.testing.assert_allclose(B._curve(secs, per_query).ndcg, want, rtol=1e-12)
    monkeypatch.setitem(B.SIDES, "short", lambda tr, te, th, n: (np.ones(n - 1), iter([])))
    with pytest.raises(RuntimeError, match="stamped"):
        B.run_side("short", folds, 1, 3)


def _paired_rows(ours_best, peer_best, n_peers=1):
    """Rows from curves with per-query values: lrank's and each peer's best point (tree 2 of 3) hold the
    given per-query values; the other trees are lower."""
    low = np.zeros_like(ours_best)
    cs = {"lrank": B._curve(np.array([1.0, 2.0, 3.0]), np.array([low, ours_best, low]))}
    peers = list(B.PEERS)[:n_peers]
    for p in peers:
        cs[p] = B._curve(np.array([2.0, 4.0, 6.0]), np.array([low, peer_best, low]))
    return B._rows("toy", 1, cs, {s: 3 for s in cs}, 3, 0.2)


def test_a_row_lrank_never_reaches_is_undecided_unless_the_peer_is_significantly_better():
    rng = np.random.default_rng(0)
    peer = rng.uniform(0.3, 0.9, size=80)
    (close,) = _paired_rows(peer - 0.002 + rng.normal(0, 0.05, size=80), peer)  # lower, within the noise
    assert close["ours_s"] == float("inf") and close["status"] == "undecided" and not close["met"]
    assert "95% CI" in close["notes"] and "80 test queries" in close["notes"]
    (worse,) = _paired_rows(peer - 0.05 + rng.normal(0, 0.01, size=80), peer)  # lower on almost every query
    assert worse["status"] == "missed"
    (better,) = _paired_rows(peer + 0.01, peer)
    assert better["status"] == "met"


def test_the_paired_p_values_are_holm_corrected_over_the_peers():
    rng = np.random.default_rng(1)
    peer = rng.uniform(0.3, 0.9, size=60)
    ours = peer - 0.01 + rng.normal(0, 0.03, size=60)
    one = _paired_rows(ours, peer, n_peers=1)[0]["notes"]
    five = _paired_rows(ours, peer, n_peers=5)
    cs = {"lrank": B._curve(np.ones(1), ours[None]), "xgboost": B._curve(np.ones(1), peer[None])}
    p1 = B.paired_best(cs, ["xgboost"])["xgboost"]
    assert p1["p_holm"] == p1["p_value"] and f"Holm over 1 peer: {p1['p_value']:.2g}" in one
    assert f"Holm over 5 peers: {min(1.0, 5 * p1['p_value']):.2g}" in five[0]["notes"]


def test_a_curve_that_changes_between_repeats_is_refused(monkeypatch):
    calls = []

    def drifting(train, test, threads, n):
        calls.append(1)
        rng = np.random.default_rng(len(calls))
        return np.arange(1.0, n + 1), iter([rng.normal(size=test.n_docs) for _ in range(n)])

    monkeypatch.setitem(B.SIDES, "drift", drifting)
    with pytest.raises(RuntimeError, match="not deterministic"):
        B.curves([_tiny()], 1, {"drift": 3}, repeats=2)


@pytest.mark.parametrize("side", list(B.SIDES))
def test_every_side_stamps_each_tree_and_stages_each_prediction(side):
    """Each side's fit gives one increasing time stamp per tree and one staged prediction per tree, the
    last one the model's own prediction (same ranking: the same test NDCG@10)."""
    lib = {"lrank": "lrank"}.get(side, side.split("_")[0])
    if importlib.util.find_spec(lib) is None:
        pytest.skip(f"{lib} is not installed (the [compare] extra)")
    train, test = _tiny()
    stamps, staged = B.SIDES[side](train, test, 1, 4)
    staged = [np.array(s, dtype=np.float64, copy=True) for s in staged]
    assert len(stamps) == 4 and np.all(np.diff(stamps) > 0) and stamps[0] > 0
    assert len(staged) == 4 and all(s.shape == (test.n_docs,) for s in staged)
    assert not np.array_equal(staged[0], staged[-1])  # the trees add something


def test_side_file_keeps_the_quick_curves_apart_from_the_paper_ones(monkeypatch):
    c = B.Curve(np.array([1.0, 2.0]), np.array([0.5, 0.6]))
    monkeypatch.setattr(B, "_CURVES", ["quick", ("mslr", 1, "lrank", c)])
    (name, table), = B.side_files().items()
    assert name == "time_to_accuracy_curves" and table["tree"].tolist() == [1, 2]
    monkeypatch.setattr(B, "_CURVES", ["paper", ("1m", 2, "xgboost", c)])
    assert list(B.side_files()) == ["time_to_accuracy_curves_paper"]
    monkeypatch.setattr(B, "_CURVES", [])
    assert B.side_files() == {}


def _counting_side(monkeypatch, name="count"):
    """A deterministic fake side that counts its fits (its curve is the same every fit, its times are not)."""
    calls = []

    def side(train, test, threads, n):
        calls.append(1)
        rng = np.random.default_rng(0)
        return np.arange(1.0, n + 1) * len(calls), iter([rng.normal(size=test.n_docs) for _ in range(n)])

    monkeypatch.setitem(B.SIDES, name, side)
    return calls


def test_a_resumed_block_measures_only_the_fits_it_has_not_kept(monkeypatch, tmp_path):
    """With a FitStore every finished fit is kept; a second run takes them all from the store (no fit), a
    run that lost one fit measures that one alone, and the curve's times are the same medians as if the
    block had run in one go. Another context (here: the thread count) finds nothing."""
    calls = _counting_side(monkeypatch)
    folds = [_tiny()]
    loads = iter([0.3, 0.8, 0.5])
    monkeypatch.setattr(B.T, "settle", lambda: next(loads))
    ctx = {"data": "toy", "threads": 1}
    first, ld, resumed = B.curves(folds, 1, {"count": 3}, 3, B.FitStore(tmp_path, ctx))
    assert (len(calls), resumed, ld) == (4, 0, 0.3)  # a warm-up fit, then 3 repeats
    assert len(list(tmp_path.glob("*.npz"))) == 3 and not list(tmp_path.glob("*.part"))
    again, ld, resumed = B.curves(folds, 1, {"count": 3}, 3, B.FitStore(tmp_path, ctx))
    assert (len(calls), resumed, ld) == (4, 3, 0.3)
    np.testing.assert_array_equal(again["count"].seconds, first["count"].seconds)
    B.FitStore(tmp_path, ctx).path("count", 1).unlink()
    part, ld, resumed = B.curves(folds, 1, {"count": 3}, 3, B.FitStore(tmp_path, ctx))
    assert (len(calls), resumed, ld) == (6, 2, 0.8)  # a warm-up and the lost repeat; the highest load
    np.testing.assert_array_equal(part["count"].ndcg, first["count"].ndcg)
    other = B.FitStore(tmp_path, {**ctx, "threads": 2})
    assert all(other.load("count", r) is None for r in range(3))
    stored = B.FitStore(tmp_path, ctx).load("count", 0)
    assert stored is not None and stored[2] == 0.3


def test_a_stored_fit_is_keyed_by_cpu_library_and_versions(monkeypatch, tmp_path):
    store = B.FitStore(tmp_path, {"data": "toy"})
    path = store.path("lrank", 0)
    monkeypatch.setattr(B, "_library_sha256", lambda: "0" * 64)
    assert B.FitStore(tmp_path, {"data": "toy"}).path("lrank", 0) != path
    monkeypatch.undo()
    monkeypatch.setattr(B, "_cpu_model", lambda: "another CPU")
    assert B.FitStore(tmp_path, {"data": "toy"}).path("lrank", 0) != path
    monkeypatch.undo()
    monkeypatch.setattr(B, "_versions", lambda: {"lightgbm": "9.9"})
    assert B.FitStore(tmp_path, {"data": "toy"}).path("lrank", 0) != path
    monkeypatch.undo()
    monkeypatch.setitem(B.LRANK, "lambdarank_norm", False)  # lrank fitted with other settings
    assert B.FitStore(tmp_path, {"data": "toy"}).path("lrank", 0) != path
    monkeypatch.undo()
    monkeypatch.setattr(B, "LEAVES", 63)
    assert B.FitStore(tmp_path, {"data": "toy"}).path("lrank", 0) != path
    monkeypatch.undo()
    assert B.FitStore(tmp_path, {"data": "toy"}).path("lrank", 0) == path
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="LRANK_BENCH_RESUME"):
        B.FitStore(tmp_path / "file", {})


def test_the_row_says_how_many_fits_were_resumed():
    peer = ([2.0, 4.0, 6.0], [0.6, 0.9, 0.85])
    cs = {"lrank": B.Curve(np.array([1.0, 2.0, 3.0]), np.array([0.7, 0.9, 0.95])),
          "lightgbm": B.Curve(*map(np.array, peer))}
    (row,) = B._rows("toy", 1, cs, {"lrank": 3, "lightgbm": 3}, 3, 0.2, resumed=4)
    assert "4 of 6 fits resumed" in row["notes"]
    (row,) = B._rows("toy", 1, cs, {"lrank": 3, "lightgbm": 3}, 3, 0.2)
    assert "resumed" not in row["notes"]


def test_the_thread_counts_of_a_run(monkeypatch):
    import numba

    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)
    monkeypatch.delenv(B.THREADS_ENV, raising=False)
    assert B._threads() == (1, 2)
    monkeypatch.setenv(B.THREADS_ENV, "1")
    assert B._threads() == (1,)
    monkeypatch.setenv(B.THREADS_ENV, "2,1")
    assert B._threads() == (2, 1)
    monkeypatch.setenv(B.THREADS_ENV, "4")
    with pytest.raises(ValueError, match="LRANK_BENCH_THREADS=4"):
        B._threads()
    monkeypatch.setenv(B.THREADS_ENV, "one")
    with pytest.raises(ValueError, match="LRANK_BENCH_THREADS must be"):
        B._threads()


def test_the_library_hash_leaves_out_the_harness_only(tmp_path):
    """What a stored fit is keyed by changes with the code a fit runs (kernels, trees, models) and not with
    the benchmark harness or the command line."""
    for rel in ("_kernels/grower.py", "benchmarks/time_to_accuracy.py", "__main__.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    h = B._library_sha256(tmp_path)
    (tmp_path / "benchmarks/time_to_accuracy.py").write_text("x = 2\n")
    (tmp_path / "__main__.py").write_text("x = 2\n")
    assert B._library_sha256(tmp_path) == h
    (tmp_path / "_kernels/grower.py").write_text("x = 2\n")
    assert B._library_sha256(tmp_path) != h
    assert len(B._library_sha256()) == 64 and B._library_sha256() == B._library_sha256()
