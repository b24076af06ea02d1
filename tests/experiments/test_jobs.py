"""Checkpointed, resumable experiment loops (lrank.experiments.jobs): a run killed midway and started
again gives the uninterrupted run's results bit for bit; failures name their job; checkpoints stay off
unless asked."""

import json
import os
import pickle
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lrank.data import RankingData
from lrank.data.generators import make_letor_like
from lrank.experiments import cross_validate, jobs, run_grid
from lrank.experiments.jobs import CHECKPOINT_ENV, JobError, checkpoint_folder, fingerprint
from lrank.paths import repo_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_experiments import FeaturePrefixRanker, data  # noqa: E402


@pytest.fixture
def count_jobs(monkeypatch):
    """Counts the jobs that actually run (in this process: n_jobs=1)."""
    ran = []
    real = jobs._call

    def spy(i, func, args):
        ran.append(i)
        return real(i, func, args)

    monkeypatch.setattr(jobs, "_call", spy)
    return ran


def _files(folder):
    return sorted(Path(folder).rglob("*.npz"))


def _key(path):
    """The job key stored in a checkpoint file's header."""
    with np.load(path, allow_pickle=False) as npz:
        return json.loads(str(npz["__header__"]))["key"]


def _assert_same(a, b):
    """Equal frames, dtypes included, floats compared bit for bit."""
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    for c in a.columns:
        if a[c].dtype.kind == "f":
            assert np.array_equal(a[c].to_numpy().view(np.int64), b[c].to_numpy().view(np.int64)), c


# ------------------------------------------------------------------------------ kill and resume
SCRIPT = """
import pickle, sys, time
sys.path.insert(0, {tests!r})
from test_experiments import data
from lrank.experiments import run_grid
from lrank.models.gbrt import LambdaMART
from lrank.models.rankboost_plus import RankBoostPlus

FITS = []

class SlowLambdaMART(LambdaMART):
    def fit(self, *args, **kwargs):
        FITS.append(1)
        time.sleep(0.8)  # long enough for the test to kill the run between two jobs, even under load
        return super().fit(*args, **kwargs)

tasks = {{"a": data(1, 30), "b": data(2, 30)}}
algos = {{"lm": lambda: SlowLambdaMART(n_estimators=8, num_leaves=4, min_child_samples=2, random_state=0),
         "rb+": lambda: RankBoostPlus(variant="plus", n_estimators=6, max_thresholds=8, random_state=0)}}
out = run_grid(tasks, algos, n_folds=3, metrics=["ndcg@3", "r2", "map"], verbose=False,
               checkpoint=sys.argv[1] if sys.argv[1] != "off" else False)
with open(sys.argv[2], "wb") as fh:
    pickle.dump((out, len(FITS)), fh)
"""


def _grid_process(tmp_path, checkpoint, out):
    script = tmp_path / "grid_script.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).resolve().parent)))
    env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
    env.pop("LRANK_PROFILE", None)
    return subprocess.Popen([sys.executable, str(script), str(checkpoint), str(out)], env=env,
                            cwd=repo_dir(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_run_killed_midway_resumes_to_the_uninterrupted_results(tmp_path):
    """SIGKILL after 3 of 12 jobs; the same command again runs only the other 9 jobs and returns the
    uninterrupted run's DataFrame bit for bit."""
    ck = tmp_path / "ck"
    killed = _grid_process(tmp_path, ck, tmp_path / "never.pkl")
    t0 = time.monotonic()
    while len(_files(ck)) < 3:
        assert killed.poll() is None, killed.communicate()[1][-2000:]
        assert time.monotonic() - t0 < 300, "no checkpoint appeared"
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    done = len(_files(ck))
    assert killed.returncode == -signal.SIGKILL and 3 <= done < 12, done  # really killed midway
    lm_done = sum(_key(f)["algorithm"] == "lm" for f in _files(ck))
    resumed = _grid_process(tmp_path, ck, tmp_path / "resumed.pkl")
    plain = _grid_process(tmp_path, "off", tmp_path / "plain.pkl")
    for p in (resumed, plain):
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
    out_resumed, fits_resumed = pickle.loads((tmp_path / "resumed.pkl").read_bytes())
    out_plain, fits_plain = pickle.loads((tmp_path / "plain.pkl").read_bytes())
    assert fits_plain == 6 and lm_done >= 1
    assert fits_resumed == 6 - lm_done  # the jobs finished before the kill were not fitted again
    _assert_same(out_plain, out_resumed)
    assert len(_files(ck)) == 12


# ------------------------------------------------------------------------------ every loop resumes
def _resume(run, tmp_path, count_jobs):
    """Reference run without checkpoints, a checkpointed run, half the checkpoints deleted, the run again:
    returns the three results and checks that only the deleted jobs ran again."""
    ref = run(False)
    n0 = len(count_jobs)
    first = run(tmp_path)
    files = _files(tmp_path)
    assert len(count_jobs) - n0 == len(files) > 1
    for f in files[::2]:
        f.unlink()
    n1 = len(count_jobs)
    again = run(tmp_path)
    assert len(count_jobs) - n1 == len(files[::2])
    n2 = len(count_jobs)
    run(tmp_path)
    assert len(count_jobs) == n2  # everything from checkpoints
    return ref, first, again


def test_run_grid_and_cross_validate_resume(tmp_path, count_jobs):
    tasks = {"a": data(1), "b": data(2)}
    algos = {"x": lambda: FeaturePrefixRanker(random_state=0), "y": FeaturePrefixRanker(random_state=4)}
    kw = dict(n_folds=3, metrics=["ndcg@3", "r2"], verbose=False)
    for r in _resume(lambda ck: run_grid(tasks, algos, checkpoint=ck, **kw), tmp_path / "grid", count_jobs):
        _assert_same(r, run_grid(tasks, algos, **kw))
    for r in _resume(lambda ck: cross_validate(FeaturePrefixRanker(random_state=2), data(3), folds=4,
                                               metrics=["map"], random_state=1, checkpoint=ck),
                     tmp_path / "cv", count_jobs):
        _assert_same(r, cross_validate(FeaturePrefixRanker(random_state=2), data(3), folds=4,
                                       metrics=["map"], random_state=1))


def test_rankboost_plus_tasks_resume(tmp_path, count_jobs):
    from lrank.papers.rankboost_plus import run_tasks

    rng = np.random.default_rng(1)
    tasks = {}
    for k in range(3):
        X = rng.normal(size=(30, 3)).astype(np.float32)
        tasks[f"t{k}"] = RankingData(X, (X[:, k] > 0).astype(int) + (X[:, 2 - k] > 0.5), np.array([0, 30]))
    ref, *others = _resume(lambda ck: run_tasks(tasks, 5, seed=0, max_thresholds=8, checkpoint=ck),
                           tmp_path, count_jobs)
    for out in others:
        for key in ("selected", "folds"):
            _assert_same(ref[key], out[key])
        for key in ("curves", "train"):
            for a in ref[key]:
                _assert_same(ref[key][a], out[key][a])
        for a in ref["per_task_log_E2"]:
            assert np.array_equal(ref["per_task_log_E2"][a], out["per_task_log_E2"][a])
            assert np.array_equal(ref["per_task_curves"][a], out["per_task_curves"][a])


def test_tree_fitting_protocol_resumes(tmp_path, count_jobs):
    from lrank.papers import tree_fitting as tf

    d = make_letor_like(n_queries=15, docs_per_query=(8, 12), n_features=5, n_grades=3, random_state=0)
    folds = d.kfold(3, random_state=0, validation=False)
    ref, *others = _resume(lambda ck: tf.run_protocol({"toy": folds}, {"LambdaMART": 2, "McRank": 2},
                                                      leaves=(4,), rates=(0.1,), checkpoint=ck),
                           tmp_path, count_jobs)
    for out in others:
        for a, b in zip(ref, out):
            _assert_same(a, b)


def test_boostingtree_protocol_resumes_with_its_fitted_models(tmp_path, count_jobs):
    from lrank.models.boostingtree import BoostingTree, LambdaMARTBase, Standard
    from lrank.papers import boostingtree as bt

    d = make_letor_like(n_queries=20, docs_per_query=(5, 10), n_features=5, n_grades=3, random_state=1)
    folds = d.kfold(5, random_state=0)[:2]
    ests = {"std": Standard(LambdaMARTBase(), n_estimators=4),
            "bt": BoostingTree(LambdaMARTBase(), n_estimators=8, random_state=0),
            "rb": bt.rankboost_baseline(4, random_state=0)}
    kept = []

    def run(ck):
        keep = []
        out = bt.run_protocol(ests, folds, metric="ndcg@5", test_metrics=("ndcg@5",), lengths=(None, 1, 2),
                              keep=keep, checkpoint=ck)
        kept.append(keep)
        return out

    ref, *others = _resume(run, tmp_path, count_jobs)
    for (pq, fits), keep in zip(others, kept[1:]):
        _assert_same(ref[0], pq)
        _assert_same(ref[1].drop(columns="fit_s"), fits.drop(columns="fit_s"))
        for (f0, n0, e0), (f1, n1, e1) in zip(kept[0], keep):
            assert (f0, n0, type(e0)) == (f1, n1, type(e1))
            X = folds[f0 - 1].test.X
            assert np.array_equal(e0.predict(X), e1.predict(X))
            if isinstance(e0, BoostingTree):
                cols = [c for c in e0.rounds_ if not c.endswith("_s")]  # timings differ between runs
                _assert_same(e0.rounds_[cols], e1.rounds_[cols])


def test_adarank_protocol_and_rankboost_fig4_resume(tmp_path, count_jobs):
    from lrank.papers import adarank as ada
    from lrank.papers import rankboost as rbp

    d = make_letor_like(n_queries=20, docs_per_query=(8, 20), n_features=6, n_grades=3, random_state=0)
    exp = ada.Experiment("toy", ada._reindexed(d), 0, 2, "adarank_fig2", "synthetic")
    ref, *others = _resume(lambda ck: ada.run_protocol(exp, rankboost_rounds=3, ranksvm_max_pairs=20,
                                                       scalings=("minmax",), checkpoint=ck),
                           tmp_path / "ada", count_jobs)
    for out in others:
        for key in ("per_query", "pair_errors", "rounds"):
            _assert_same(getattr(ref, key), getattr(out, key))
        for (f0, n0, m0), (f1, n1, m1) in zip(ref.models, out.models):
            assert (f0, n0) == (f1, n1)
            _assert_same(m0.history_, m1.history_)
    meta = rbp.as_homepage_finding(d)
    folds = meta.kfold(4, random_state=0, validation=False)
    ref, *others = _resume(lambda ck: rbp.fig4_runs(folds, 12, at=(3, 12), checkpoint=ck,
                                                    learners=dict(list(rbp.LEARNERS.items())[:2])),
                           tmp_path / "fig4", count_jobs)
    for out in others:
        for name, run in ref.items():
            assert np.array_equal(run.train, out[name].train) and np.array_equal(run.test, out[name].test)
            for k in (3, 12):
                assert np.array_equal(run.test_per_query[k], out[name].test_per_query[k])
                assert np.array_equal(run.train_per_query[k], out[name].train_per_query[k])


# ------------------------------------------------------------------------------ what a checkpoint is keyed by
def test_a_changed_parameter_data_or_code_runs_the_job_again(tmp_path, count_jobs, monkeypatch):
    tasks = {"a": data(1)}
    kw = dict(n_folds=3, metrics=["ndcg@3"], verbose=False, checkpoint=tmp_path)
    run_grid(tasks, {"x": lambda: FeaturePrefixRanker(random_state=0)}, **kw)
    assert len(count_jobs) == 3
    run_grid(tasks, {"x": lambda: FeaturePrefixRanker(random_state=0)}, **kw)
    assert len(count_jobs) == 3  # same estimator, data, metrics: all from checkpoints
    run_grid(tasks, {"x": lambda: FeaturePrefixRanker(random_state=1)}, **kw)  # a parameter
    assert len(count_jobs) == 6
    run_grid(tasks, {"x": lambda: FeaturePrefixRanker(random_state=0)}, **{**kw, "metrics": ["map"]})
    assert len(count_jobs) == 9
    other = data(1)
    other.X[0, 0] = np.nextafter(other.X[0, 0], np.inf)  # one ulp of one value
    run_grid({"a": other}, {"x": lambda: FeaturePrefixRanker(random_state=0)}, **kw)
    assert len(count_jobs) == 12  # every fold holds the changed document (in train, valid or test)
    monkeypatch.setattr("lrank.results._lrank_hash", ["0" * 64])  # another version of lrank's code
    run_grid(tasks, {"x": lambda: FeaturePrefixRanker(random_state=0)}, **kw)
    assert len(count_jobs) == 15


def test_a_damaged_checkpoint_is_reported_and_run_again(tmp_path, count_jobs):
    tasks = {"a": data(1)}
    kw = dict(n_folds=3, metrics=["ndcg@3"], verbose=False, checkpoint=tmp_path)
    ref = run_grid(tasks, {"x": Seeded}, **kw)
    victim = _files(tmp_path)[1]
    victim.write_bytes(victim.read_bytes()[:100])
    with pytest.warns(RuntimeWarning, match=rf"checkpoint {victim}.*unreadable.*runs again"):
        again = run_grid(tasks, {"x": Seeded}, **kw)
    assert len(count_jobs) == 4
    _assert_same(ref, again)


def test_fingerprint_is_exact_and_refuses_what_it_cannot_describe():
    a = np.arange(6.0)
    assert fingerprint(a) == fingerprint(a.copy()) != fingerprint(a.astype(np.float32))
    b = a.copy()
    b[3] = np.nextafter(b[3], 9)
    assert fingerprint(b) != fingerprint(a) and fingerprint(0.1) != fingerprint(0.1 + 2 ** -56)
    one, two = FeaturePrefixRanker(random_state=1), FeaturePrefixRanker(random_state=2)
    assert fingerprint(one) != fingerprint(two)
    assert fingerprint(one) == fingerprint(FeaturePrefixRanker(random_state=1))
    f = [lambda k=k: FeaturePrefixRanker(n_estimators=k) for k in (2, 3)]
    assert fingerprint(f[0]) != fingerprint(f[1])
    with pytest.raises(TypeError, match="memory address"):
        fingerprint(object())


class Seeded(FeaturePrefixRanker):
    """Seeded by default, so that the class itself can be the factory of a deterministic run."""

    def __init__(self, n_estimators=4, random_state=7, halt_at=None, best=None):
        super().__init__(n_estimators, random_state, halt_at, best)


# ------------------------------------------------------------------------------ failures
class FailingRanker(FeaturePrefixRanker):
    """Fails on the fold whose training part has ``fail_n_docs`` documents while ``failing`` is set."""

    failing = True

    def __init__(self, n_estimators=4, random_state=None, halt_at=None, best=None, fail_n_docs=-1):
        super().__init__(n_estimators, random_state, halt_at, best)
        self.fail_n_docs = fail_n_docs

    def fit(self, X, y=None, **kw):
        if FailingRanker.failing and getattr(X, "n_docs", -2) == self.fail_n_docs:
            raise FloatingPointError("the weights overflowed")
        return super().fit(X, y, **kw)


def test_a_failing_job_is_named_and_the_others_are_kept(tmp_path, count_jobs, monkeypatch):
    tasks = {"a": data(1), "b": data(2)}
    fold = data(2).kfold(3, random_state=0)[1]
    algos = {"ok": lambda: FeaturePrefixRanker(random_state=0),
             "bad": lambda: FailingRanker(random_state=0, fail_n_docs=fold.train.n_docs)}
    kw = dict(n_folds=3, metrics=["ndcg@3"], verbose=False)
    ref = run_grid(tasks, {"ok": algos["ok"], "bad": lambda: FeaturePrefixRanker(random_state=0)}, **kw)
    with pytest.raises(JobError) as err:
        run_grid(tasks, algos, checkpoint=tmp_path, **kw)
    msg = str(err.value)
    assert "grid: 1 of 12 jobs failed" in msg
    assert "task='b', algorithm='bad', fold=1, seed=0: FloatingPointError: the weights overflowed" in msg
    assert str(tmp_path) in msg and "test_jobs.py" in msg  # where the others are; the worker's traceback
    assert isinstance(err.value.__cause__, FloatingPointError)
    assert err.value.failures == [({"task": "b", "algorithm": "bad", "fold": 1, "seed": 0},
                                   "FloatingPointError: the weights overflowed")]
    assert sum(r is None for r in err.value.results) == 1 and len(_files(tmp_path)) == 11
    monkeypatch.setattr(FailingRanker, "failing", False)  # the cause is fixed (not a parameter)
    n = len(count_jobs)
    fixed = run_grid(tasks, algos, checkpoint=tmp_path, **kw)
    assert len(count_jobs) - n == 1  # only the failed job ran again
    _assert_same(ref.drop(columns="stop_reason"), fixed.drop(columns="stop_reason"))


def test_a_failure_without_checkpoints_keeps_results_on_the_error():
    fold = data(1).kfold(3, random_state=0)[2]
    with pytest.raises(JobError, match=r"the others' results are in this error's \.results") as err:
        run_grid({"a": data(1)}, {"bad": lambda: FailingRanker(fail_n_docs=fold.train.n_docs)}, n_folds=3,
                 metrics=["map"], verbose=False, checkpoint=False, n_jobs=2)
    assert [r is None for r in err.value.results] == [False, False, True]


def test_an_estimator_class_is_a_factory():
    """The docs accept zero-argument callables: a class is one (it was cloned as an instance before)."""
    tasks = {"a": data(1)}
    by_class = run_grid(tasks, {"x": Seeded}, n_folds=3, metrics=["map"], verbose=False)
    by_lambda = run_grid(tasks, {"x": lambda: Seeded()}, n_folds=3, metrics=["map"], verbose=False)
    _assert_same(by_class, by_lambda)
    _assert_same(cross_validate(Seeded, data(1), folds=3, metrics=["map"]),
                 cross_validate(Seeded(), data(1), folds=3, metrics=["map"]))


# ------------------------------------------------------------------------------ when checkpoints are on
def test_checkpoints_are_off_unless_asked_and_on_for_the_paper_profile(tmp_path, monkeypatch):
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.delenv(CHECKPOINT_ENV, raising=False)
    monkeypatch.delenv("LRANK_PROFILE", raising=False)
    assert checkpoint_folder() is None and checkpoint_folder(False) is None
    monkeypatch.setenv("LRANK_PROFILE", "quick")
    assert checkpoint_folder() is None
    run_grid({"a": data(1)}, {"x": FeaturePrefixRanker}, n_folds=3, metrics=["map"], verbose=False)
    assert not (tmp_path / "out").exists()  # the quick profile writes no checkpoint
    assert checkpoint_folder(True) == tmp_path / "out" / "checkpoints" / "quick"
    monkeypatch.setenv("LRANK_PROFILE", "paper")
    assert checkpoint_folder() == tmp_path / "out" / "checkpoints" / "paper"
    run_grid({"a": data(1)}, {"x": FeaturePrefixRanker}, n_folds=3, metrics=["map"], verbose=False)
    assert len(_files(tmp_path / "out" / "checkpoints" / "paper" / "grid")) == 3
    assert checkpoint_folder(False) is None
    for off in ("0", "off", "False", "no"):
        monkeypatch.setenv(CHECKPOINT_ENV, off)
        assert checkpoint_folder() is None
    monkeypatch.setenv(CHECKPOINT_ENV, "on")
    monkeypatch.setenv("LRANK_PROFILE", "quick")
    assert checkpoint_folder() == tmp_path / "out" / "checkpoints" / "quick"
    monkeypatch.setenv(CHECKPOINT_ENV, str(tmp_path / "mine"))
    assert checkpoint_folder() == tmp_path / "mine"
    assert checkpoint_folder(tmp_path / "arg") == tmp_path / "arg"
    with pytest.raises(TypeError, match="checkpoint must be"):
        checkpoint_folder(3)


def test_the_bar_shows_done_to_go_checkpoints_and_eta(tmp_path, capsys):
    tasks = {"a": data(1), "b": data(2)}
    kw = dict(n_folds=3, metrics=["map"], checkpoint=tmp_path)
    run_grid(tasks, {"x": FeaturePrefixRanker}, verbose=False, **kw)
    for f in _files(tmp_path)[:2]:
        f.unlink()
    run_grid(tasks, {"x": FeaturePrefixRanker}, verbose=True, **kw)
    err = capsys.readouterr().err
    assert "grid:" in err and "4/6 jobs done" in err and "6/6 jobs done" in err
    assert "2 to go, 4 from checkpoints" in err and "0 to go" in err
    assert "<" in err.split("6/6 jobs done")[-1]  # elapsed<remaining: the ETA


def test_checkpointed_grid_on_dask_resumes_locally(tmp_path, count_jobs):
    """On a Dask cluster the driver writes the checkpoints; a local run afterwards reads them all."""
    distributed = pytest.importorskip("distributed")
    tasks = {"a": data(1), "b": data(2)}
    algos = {"x": Seeded, "y": lambda: FeaturePrefixRanker(random_state=5)}
    kw = dict(n_folds=3, metrics=["ndcg@3", "map"], verbose=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        remote = run_grid(tasks, algos, scheduler=cluster.scheduler_address, checkpoint=tmp_path, **kw)
    assert len(_files(tmp_path)) == 12
    n = len(count_jobs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        local = run_grid(tasks, algos, checkpoint=tmp_path, **kw)
    assert len(count_jobs) == n
    _assert_same(local, remote)
    _assert_same(local, run_grid(tasks, algos, **kw))


@pytest.mark.parametrize("profile", ["quick", None])
def test_test_tiers_never_write_checkpoints(profile, monkeypatch, tmp_path):
    """The quick profile and the default (what the unit, notebook and results tiers run) stay off."""
    monkeypatch.delenv(CHECKPOINT_ENV, raising=False)
    if profile is None:
        monkeypatch.delenv("LRANK_PROFILE", raising=False)
    else:
        monkeypatch.setenv("LRANK_PROFILE", profile)
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    cross_validate(FeaturePrefixRanker, data(1), folds=3, metrics=["map"])
    assert not list(tmp_path.rglob("*"))


def test_bars_by_default_only_outside_the_quick_profile(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    for profile, shown in (("quick", False), ("paper", True)):
        monkeypatch.setenv("LRANK_PROFILE", profile)
        cross_validate(Seeded, data(1), folds=3, metrics=["map"], checkpoint=False)
        assert ("folds:" in capsys.readouterr().err) is shown


def test_a_checkpoint_that_cannot_be_written_is_a_warning(tmp_path):
    """The checkpoint folder cannot be written (here a file stands where its folder should be): the run
    goes on and returns the same results, with a warning naming the job."""
    (tmp_path / "grid").write_text("not a folder")
    kw = dict(n_folds=3, metrics=["map"], verbose=False)
    with pytest.warns(RuntimeWarning, match="cannot write the checkpoint of job task='a', algorithm='x'"):
        out = run_grid({"a": data(1)}, {"x": Seeded}, checkpoint=tmp_path, **kw)
    _assert_same(out, run_grid({"a": data(1)}, {"x": Seeded}, **kw))


def test_unfingerprintable_arguments_are_a_clear_error(tmp_path):
    from lrank.experiments.jobs import Job, run_jobs

    with pytest.raises(TypeError, match=r"demo: job fold=0: cannot fingerprint .*checkpoint=False"):
        run_jobs(print, [Job({"fold": 0}, (object(),))], label="demo", checkpoint=tmp_path)
    assert run_jobs(len, [Job({"fold": 0}, ([object()],))], label="demo", checkpoint=False) == [1]
