"""The benchmark modules stay runnable: every name they import exists (their imports sit inside ``run``,
so a renamed kernel or helper is otherwise found only when ``python -m lrank bench`` runs)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect

import pytest

from lrank import benchmarks

NAMES = benchmarks.modules()


def _imports(module) -> list[tuple[str, str]]:
    tree = ast.parse(inspect.getsource(module))
    return [(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module and node.module.startswith("lrank") for alias in node.names]


@pytest.mark.parametrize("name", NAMES)
def test_benchmark_module_imports_resolve(name):
    module = benchmarks.load(name)
    assert callable(getattr(module, "run", None)), f"lrank.benchmarks.{name} has no run(profile)"
    missing = [f"from {mod} import {attr}" for mod, attr in _imports(module)
               if not hasattr(importlib.import_module(mod), attr)
               and importlib.util.find_spec(f"{mod}.{attr}") is None]
    assert not missing, f"lrank.benchmarks.{name}: {missing} no longer resolve"



def _page(tmp_path, rows, header):
    import pandas as pd

    md = tmp_path / "benchmarks.md"
    md.write_text(header + "\n\n(table)\n", encoding="utf-8")
    pd.DataFrame(rows).to_csv(md.with_suffix(".csv"), index=False)
    return md


def test_bench_page_merge_keeps_rows_of_the_other_profile(tmp_path):
    """`bench --into-page` puts the 1M rows of the paper profile into the stored page, replacing rows of the
    same name; a later whole quick run keeps them (and their sentence) and replaces every quick row."""
    import argparse

    import pandas as pd

    from lrank.__main__ import _merge_page

    stored = [dict(module="gbrt", benchmark="a", ratio=1.0), dict(module="scale", benchmark="b", ratio=2.0),
              dict(module="scale", benchmark="1M", ratio=0.1)]
    md = _page(tmp_path, stored, "Benchmarks (quick profile), run Q.")
    paper = pd.DataFrame([dict(module="scale", benchmark="1M", ratio=3.0, profile="paper")])
    merged, header = _merge_page(paper, md, "Benchmarks (paper profile), measured on X. ratio = r.",
                                 argparse.Namespace(into_page=True, profile="paper", only=["scale"]))
    assert list(merged["benchmark"]) == ["a", "b", "1M"] and list(merged["ratio"]) == [1.0, 2.0, 3.0]
    assert header.startswith("Benchmarks (quick profile), run Q. Rows with profile=paper in module(s) scale")
    merged.to_csv(md.with_suffix(".csv"), index=False)
    md.write_text(header + "\n", encoding="utf-8")
    quick = pd.DataFrame([dict(module="gbrt", benchmark="a", ratio=5.0, profile="quick"),
                          dict(module="scale", benchmark="b", ratio=6.0, profile="quick")])
    merged, header = _merge_page(quick, md, "Benchmarks (quick profile), run R.",
                                 argparse.Namespace(into_page=False, profile="quick", only=None))
    assert sorted(zip(merged["benchmark"], merged["ratio"])) == [("1M", 3.0), ("a", 5.0), ("b", 6.0)]
    assert header.startswith("Benchmarks (quick profile), run R. Rows with profile=paper in module(s) scale")


def test_bench_page_merge_into_page_keeps_module_places(tmp_path):
    """`bench --only M --into-page` that replaces every row of module M leaves M where the page had it."""
    import argparse

    import pandas as pd

    from lrank.__main__ import _merge_page

    stored = [dict(module="gbrt", benchmark="a", ratio=1.0), dict(module="scale", benchmark="b", ratio=2.0),
              dict(module="startup", benchmark="c", ratio=3.0)]
    md = _page(tmp_path, stored, "Benchmarks (quick profile), run Q.")
    new = pd.DataFrame([dict(module="scale", benchmark="b", ratio=5.0, profile="quick"),
                        dict(module="scale", benchmark="b2", ratio=6.0, profile="quick"),
                        dict(module="new", benchmark="d", ratio=7.0, profile="quick")])
    merged, _ = _merge_page(new, md, "Benchmarks (quick profile), run R. ratio = r.",
                            argparse.Namespace(into_page=True, profile="quick", only=["scale", "new"]))
    assert list(zip(merged["module"], merged["benchmark"], merged["ratio"])) == [
        ("gbrt", "a", 1.0), ("scale", "b", 5.0), ("scale", "b2", 6.0), ("startup", "c", 3.0),
        ("new", "d", 7.0)]


def test_settle_waits_for_a_quiet_machine(monkeypatch):
    """settle() returns at once without a budget, polls the load average until it falls below 1 within
    the budget, gives up at the budget, and names the variable when it is not a number."""
    from lrank.benchmarks import _timing as T

    loads = iter([1.8, 1.4, 0.7, 0.6])
    monkeypatch.setattr(T, "load", lambda: next(loads))
    monkeypatch.setattr(T.time, "sleep", lambda s: None)
    monkeypatch.delenv(T.SETTLE_ENV, raising=False)
    assert T.settle() == 1.8  # no budget: no wait
    monkeypatch.setenv(T.SETTLE_ENV, "60")
    assert T.settle() == 0.7  # 1.4, then 0.7 < 1
    loads = iter([0.996, 0.99])
    assert T.settle() == 0.99  # 0.996 would read 1.0 in a row: not quiet yet
    monkeypatch.setattr(T, "load", lambda: 1.5)
    monkeypatch.setenv(T.SETTLE_ENV, "0.01")
    assert T.settle(poll=0.001) == 1.5  # the budget runs out: the load is reported as it is
    monkeypatch.setenv(T.SETTLE_ENV, "soon")
    with pytest.raises(ValueError, match=T.SETTLE_ENV):
        T.settle()


def test_median_ms_is_one_untimed_call_then_the_median_in_ms(monkeypatch):
    """BoostingTree's per-operation timer (`median_seconds` with a warm-up call, in ms), on a fake clock
    that each call of ``fn`` moves by the next of ``durations``: the warm-up is not timed."""
    from lrank.benchmarks import _timing as T
    from lrank.benchmarks.boostingtree import _median_ms

    durations = iter([100.0, 0.003, 0.001, 0.002, 0.010])
    clock = [0.0]

    def fn():
        clock[0] += next(durations)

    monkeypatch.setattr(T.time, "perf_counter", lambda: clock[0])
    assert _median_ms(fn, 4) == pytest.approx(2.5, rel=1e-9)  # the median of 3, 1, 2, 10 ms
    assert next(durations, None) is None  # five calls in all

def test_page_rows_name_the_commit_they_timed(tmp_path, monkeypatch):
    """The page's ``commit`` column: the short id of HEAD, ``+dirty`` while ``lrank/`` has uncommitted
    changes, ``unknown`` outside a git checkout."""
    import subprocess

    import lrank.paths
    from lrank.__main__ import _code_commit

    repo = tmp_path / "repo"
    (repo / "lrank").mkdir(parents=True)
    (repo / "lrank" / "k.py").write_text("x = 1\n")
    (repo / "README.md").write_text("r\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "c"], check=True)
    head = subprocess.run([*git, "rev-parse", "--short=7", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
    monkeypatch.setattr(lrank.paths, "repo_dir", lambda: repo)
    assert _code_commit() == head
    (repo / "README.md").write_text("changed outside lrank/\n")
    assert _code_commit() == head
    (repo / "lrank" / "k.py").write_text("x = 2\n")
    assert _code_commit() == head + "+dirty"
    plain = tmp_path / "plain"                                      # a folder outside any checkout
    plain.mkdir()
    monkeypatch.setattr(lrank.paths, "repo_dir", lambda: plain)
    assert _code_commit() == "unknown"


def test_bench_writes_side_files_beside_the_page(tmp_path, monkeypatch):
    """A module's ``side_files()`` tables are written beside the page it fills, with ``profile`` and
    ``commit``: ``figures/<name>.csv`` with ``--into-page`` (or a whole run),
    ``figures/benchmarks_<only>_<name>.csv`` for a trial run with ``--only`` alone (the stored file stays
    as it was)."""
    import types

    import pandas as pd

    from lrank import benchmarks as B
    from lrank.__main__ import main
    from lrank.benchmarks import _timing as T

    fake = types.ModuleType("fake")
    fake.run = lambda profile="quick": [T.row("x", 1.0, "y", 2.0, target="(report)", ok=None, threads=1,
                                              repeats=3, timing=T.WALL, load=0.0)]
    fake.side_files = lambda: {"fake_times": pd.DataFrame({"round": [1, 2], "a (s)": [0.1, 0.2]})}
    monkeypatch.setattr(B, "modules", lambda: ["fake"])
    monkeypatch.setattr(B, "load", lambda name: fake)
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    figures = tmp_path / "figures"
    assert main(["bench", "--only", "fake"]) == 0
    trial = pd.read_csv(figures / "benchmarks_fake_fake_times.csv")
    assert not (figures / "fake_times.csv").exists()
    assert list(trial.columns) == ["round", "a (s)", "profile", "commit"]
    assert set(trial["profile"]) == {"quick"}
    assert main(["bench", "--only", "fake", "--into-page"]) == 0
    stored = pd.read_csv(figures / "fake_times.csv")
    page = pd.read_csv(figures / "benchmarks.csv")
    assert list(stored["a (s)"]) == [0.1, 0.2] and set(stored["commit"]) == set(page["commit"])


def test_page_keeps_a_number_like_commit_as_text(tmp_path, monkeypatch):
    """A short commit id of digits and one ``e`` (``836e026``) stays text through a page merge: in the CSV
    read back, in the stored rows kept by ``--into-page`` and in the Markdown (not ``8.36e+28``)."""
    import types

    import lrank.__main__ as cli
    from lrank import benchmarks as B
    from lrank.__main__ import main
    from lrank.benchmarks import _timing as T

    def fake_module(name):
        fake = types.ModuleType(name)
        fake.run = lambda profile="quick": [T.row(f"{name} row", 1.0, "y", 2.0, target="(report)", ok=None,
                                                  threads=1, repeats=3, timing=T.WALL, load=0.0)]
        return fake

    monkeypatch.setattr(B, "modules", lambda: ["a", "b"])
    monkeypatch.setattr(B, "load", fake_module)
    monkeypatch.setattr(cli, "_code_commit", lambda: "836e026")
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    figures = tmp_path / "figures"
    assert main(["bench"]) == 0
    monkeypatch.setattr(cli, "_code_commit", lambda: "1234e56")
    assert main(["bench", "--only", "b", "--into-page"]) == 0
    page = B.read_table(figures / "benchmarks.csv")
    assert list(page["commit"]) == ["836e026", "1234e56"]
    md = (figures / "benchmarks.md").read_text(encoding="utf-8")
    assert "| 836e026 " in md and "| 1234e56 " in md and "e+" not in md.split("\n", 2)[2]


def test_fig1_times_round_trip(tmp_path):
    """What the Fig. 1 benchmark measures is what notebook 05 reads: the stored per-round medians of the
    notebook's own four fits (one task definition), refused when absent or of another task; the summary
    finds efficient Rb+'s slowest round after the first and its medians after the pruning round."""
    import numpy as np

    from lrank.benchmarks import rankboost_plus_fig1 as bench
    from lrank.papers import rankboost_plus as rbp

    path = tmp_path / f"{rbp.FIG1_TIMES}.csv"
    assert rbp.fig1_stored_times(path=path) == (None, f"figures/{path.name} is absent")
    table, pruning, threads, _ = bench.measure(3)
    assert pruning == rbp.fig1_models()["Efficient Rb+"].fit(rbp.fig1_task()).prune_iteration_
    assert threads == 1 and len(table) == rbp.FIG1_ROUNDS
    table.assign(profile="quick", commit="abc1234").to_csv(path, index=False)
    times, shown = rbp.fig1_stored_times(path=path)
    assert shown == f"figures/{path.name}" and list(times["round"]) == list(range(1, rbp.FIG1_ROUNDS + 1))
    assert rbp.fig1_stored_times(seed=1, path=path)[0] is None  # another seed: another task
    assert np.all(times[[rbp.fig1_column(v) for v in rbp.FIG1_VARIANTS]].to_numpy() > 0)
    toy = times.copy()
    col = rbp.fig1_column("Efficient Rb+")
    toy[col] = 1.0
    toy.loc[toy["round"] == 1, col] = 50.0  # the set-up round does not count
    toy.loc[toy["round"] == 80, col] = 9.0
    toy.loc[toy["round"] > 80, col] = 0.5
    s = rbp.fig1_summary(toy, 80)
    assert (s["slowest_round"], s["slowest_s"], s["pruning_round"]) == (80, 9.0, 80)
    assert s["after_pruning_s"]["Efficient Rb+"] == 0.5 and s["rounds_after_pruning"] == rbp.FIG1_ROUNDS - 80
    assert s["median_s"]["Efficient Rb+"] == 1.0


def test_stored_page_rows_are_medians_of_three_on_a_quiet_machine():
    """Issue 15's acceptance on the committed page: every row is a median of at least three repeats
    (the standard for timings), measured with the load average below 1 before its block (said in the row),
    ran (no ``error`` / ``invalid`` status) and names the commit it timed. A page benched on a busy
    machine, or a benchmark that times once, fails here: re-run ``python -m lrank bench``."""
    from lrank.benchmarks import read_table
    from lrank.paths import repo_dir

    page = read_table(repo_dir() / "figures" / "benchmarks.csv")
    few = page.loc[page["repeats"] < 3, "benchmark"].tolist()
    loaded = page.loc[~(page["load"] < 1.0), ["benchmark", "load"]].values.tolist()
    ran = page["status"].isin(["met", "missed", "undecided", "report"])
    broken = page.loc[~ran, ["benchmark", "status"]].values.tolist()
    uncommitted = page.loc[page["commit"].isna(), "benchmark"].tolist()
    assert not few, f"rows timed fewer than 3 times: {few}"
    assert not loaded, f"rows whose block started at a load average of 1 or more: {loaded}"
    assert not broken, f"rows that did not run: {broken}"
    assert not uncommitted, f"rows without the commit they timed: {uncommitted}"


def test_a_timed_call_starts_after_a_garbage_collection(monkeypatch):
    # a collection of one side's garbage inside the other side's timed call hid AdaRank's per-round
    # difference (T(1) ~ T(200): the row went "invalid"); `_clock` collects first, untimed
    from lrank.benchmarks import _timing as T

    calls = []
    monkeypatch.setattr(T.gc, "collect", lambda *a: calls.append("collect"))
    wall, cpu = T._clock(lambda: calls.append("timed"))
    assert calls == ["collect", "timed"]
    assert wall >= 0.0 and cpu >= 0.0


@pytest.mark.parametrize("only", [["nonexistent"], ["gbrt", "nonexistent"]])
def test_bench_refuses_unknown_module_names(tmp_path, monkeypatch, capsys, only):
    """``bench --only nonexistent`` exited 0 and wrote an empty page into the checkout: every name must
    match a module; the error lists the known ones and nothing is written."""
    from lrank import benchmarks as B
    from lrank.__main__ import main

    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setattr(B, "load", lambda name: pytest.fail(f"ran {name}"))
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--only", *only])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no benchmark module matches 'nonexistent'" in err
    assert "known: " + ", ".join(B.modules()) in err
    assert not (tmp_path / "figures").exists() or not list((tmp_path / "figures").iterdir())


@pytest.mark.parametrize("settle", ["-5", "nan", "inf", "soon"])
def test_bench_refuses_a_bad_settle(tmp_path, monkeypatch, capsys, settle):
    from lrank import benchmarks as B
    from lrank.__main__ import main

    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setattr(B, "load", lambda name: pytest.fail(f"ran {name}"))
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--only", "data", "--settle", settle])
    assert exc.value.code == 2
    assert "--settle: must be a finite number of seconds >= 0" in capsys.readouterr().err


def test_bench_page_sentence_is_replaced_only_by_a_run_of_the_same_modules(tmp_path):
    """A run of module ``tta`` alone replaces the sentence of an earlier ``tta`` run, not that of a run of
    ``tta`` and ``gbrt`` (whose sentence starts with the same words)."""
    import argparse

    import pandas as pd

    from lrank.__main__ import _merge_page

    stored = [dict(module="tta", benchmark="b", threads=1, ratio=1.0, profile="paper"),
              dict(module="tta", benchmark="c", threads=1, ratio=3.0, profile="paper"),
              dict(module="gbrt", benchmark="g", threads=1, ratio=2.0, profile="paper")]
    old = (" Rows with profile=paper in module(s) tta come from `python -m lrank bench A` (run A)."
           " Rows with profile=paper in module(s) tta, gbrt come from `python -m lrank bench B` (run B).")
    md = _page(tmp_path, stored, "Benchmarks (quick profile), run Q." + old)
    new = pd.DataFrame([dict(module="tta", benchmark="b", threads=1, ratio=5.0, profile="paper")])
    _, header = _merge_page(new, md, "Benchmarks (paper profile), measured on X. ratio = r.",
                            argparse.Namespace(into_page=True, profile="paper", only=["tta"]))
    assert "(run A)" not in header
    assert "module(s) tta, gbrt come from `python -m lrank bench B` (run B)." in header
    assert header.count("module(s) tta come from") == 1


def test_bench_page_sentence_goes_with_its_rows_not_with_a_module_named_alike(tmp_path):
    """A sentence stays while rows of its own modules stay: the sentence of module ``rbp_fig1``, all of
    whose rows a run replaced, goes even though rows of module ``rbp`` (a prefix of its name) stay."""
    import argparse

    import pandas as pd

    from lrank.__main__ import _merge_page

    stored = [dict(module="rbp", benchmark="b", threads=1, ratio=1.0, profile="quick"),
              dict(module="rbp_fig1", benchmark="c", threads=1, ratio=2.0, profile="quick")]
    old = (" Rows with profile=quick in module(s) rbp come from `python -m lrank bench A` (run A)."
           " Rows with profile=quick in module(s) rbp_fig1 come from `python -m lrank bench B` (run B).")
    md = _page(tmp_path, stored, "Benchmarks (quick profile), run Q." + old)
    new = pd.DataFrame([dict(module="rbp_fig1", benchmark="c", threads=1, ratio=5.0, profile="quick"),
                        dict(module="startup", benchmark="s", threads=1, ratio=6.0, profile="quick")])
    _, header = _merge_page(new, md, "Benchmarks (quick profile), measured on X. ratio = r.",
                            argparse.Namespace(into_page=True, profile="quick", only=["rbp_fig1", "startup"]))
    assert "(run A)." in header and "(run B)." not in header
    assert "module(s) rbp_fig1, startup come from" in header


def test_bench_page_sentence_of_a_run_of_some_data_sets_keeps_the_others(tmp_path, monkeypatch):
    """A run restricted by ``LRANK_BENCH_TTA`` says which data sets it measured and keeps the sentence of the
    run that measured the others; a later run of the same data sets replaces its own sentence."""
    import argparse

    import pandas as pd

    from lrank.__main__ import _merge_page

    stored = [dict(module="tta", benchmark="mslr", threads=1, ratio=1.0, profile="quick"),
              dict(module="tta", benchmark="200k", threads=1, ratio=2.0, profile="quick")]
    old = " Rows with profile=quick in module(s) tta come from `python -m lrank bench A` (run A)."
    md = _page(tmp_path, stored, "Benchmarks (quick profile), run Q." + old)
    monkeypatch.setenv("LRANK_BENCH_TTA", "mslr")
    new = pd.DataFrame([dict(module="tta", benchmark="mslr", threads=1, ratio=5.0, profile="quick")])
    args = argparse.Namespace(into_page=True, profile="quick", only=["tta"])
    merged, header = _merge_page(new, md, "Benchmarks (quick profile), measured on X. ratio = r.", args)
    assert "(run A)." in header
    assert ("module(s) tta on data set(s) mslr come from `LRANK_BENCH_TTA=mslr python -m lrank bench "
            "--profile quick --only tta --into-page` (on X)." in header)
    merged.to_csv(md.with_suffix(".csv"), index=False)
    md.write_text(header + "\n", encoding="utf-8")
    _, header = _merge_page(new, md, "Benchmarks (quick profile), measured on Y. ratio = r.", args)
    assert "(run A)." in header and "(on Y)." in header and "(on X)." not in header


def test_bench_page_sentence_goes_once_later_runs_cover_its_data_sets_and_thread_counts(monkeypatch):
    """A sentence stays while some (data set, thread count) it spoke for has no later sentence: runs of the
    MSLR rows on 1 thread, on 2, then on both leave only the last; the sentence of a whole run goes once
    every data set of the profile on every thread count was measured again; another profile's, another
    module set's and a not yet re-measured data set's stay."""
    import numba

    from lrank.__main__ import _uncovered
    from lrank.benchmarks.time_to_accuracy import data_sets

    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)
    assert data_sets("quick") == ("mslr", "200k") and data_sets("paper") == ("mslr", "1m", "web10k")

    def s(what: str, profile: str = "quick", module: str = "time_to_accuracy") -> str:
        return f" Rows with profile={profile} in module(s) {module}{what} come from `x` ({what or 'all'})."

    whole, mslr, m1, m2 = s(""), s(" on data set(s) mslr"), s(" on data set(s) mslr on 1 thread"), \
        s(" on data set(s) mslr on 2 threads")
    k2, both = s(" on data set(s) 200k on 2 threads"), s(" on data set(s) mslr on 1 and 2 threads")
    paper, other = s(" on data set(s) mslr", "paper"), s("", module="time_to_accuracy, gbrt")
    assert _uncovered([whole, mslr, m1, m2, k2, both], "quick") == [whole, k2, both]  # 200k on 1 thread
    k1 = s(" on data set(s) 200k on 1 thread")
    assert _uncovered([whole, mslr, m1, m2, k2, k1, both], "quick") == [k2, k1, both]  # all re-measured
    assert _uncovered([m1, m2, both], "quick") == [both]
    assert _uncovered([both, m1], "quick") == [both, m1]  # a later, narrower run leaves the wider one
    assert _uncovered([paper, other, m1], "quick") == [paper, other, m1]
    assert _uncovered([mslr, both], "quick") == [both]  # no thread count named: both of this machine's
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 1)
    assert _uncovered([mslr, m1], "quick") == [m1]


def test_bench_page_merge_replaces_only_the_thread_count_a_run_measured(tmp_path, monkeypatch):
    """A run of one thread count (``LRANK_BENCH_THREADS=1``) replaces that count's rows and keeps the other
    count's rows of the same benchmark; the page's sentence names the restricting variables."""
    import argparse

    import pandas as pd

    from lrank.__main__ import _merge_page

    stored = [dict(module="tta", benchmark="b", threads=1, ratio=1.0, profile="paper"),
              dict(module="tta", benchmark="b", threads=2, ratio=2.0, profile="paper"),
              dict(module="tta", benchmark="c", threads=float("nan"), ratio=3.0, profile="paper")]
    md = _page(tmp_path, stored, "Benchmarks (quick profile), run Q.")
    monkeypatch.setenv("LRANK_BENCH_THREADS", "1")
    monkeypatch.setenv("LRANK_BENCH_RESUME", str(tmp_path))
    new = pd.DataFrame([dict(module="tta", benchmark="b", threads=1, ratio=5.0, profile="paper")])
    merged, header = _merge_page(new, md, "Benchmarks (paper profile), measured on X. ratio = r.",
                                 argparse.Namespace(into_page=True, profile="paper", only=["tta"]))
    assert sorted(zip(merged["benchmark"], merged["ratio"])) == [("b", 2.0), ("b", 5.0), ("c", 3.0)]
    assert "in module(s) tta on 1 thread come from `LRANK_BENCH_THREADS=1 python -m lrank bench" in header
    assert "LRANK_BENCH_RESUME" not in header
    # the 2-thread run's sentence stays beside the 1-thread run's; a second 1-thread run replaces its own
    merged.to_csv(md.with_suffix(".csv"), index=False)
    md.write_text(header.replace("on 1 thread come", "on 2 threads come") + "\n", encoding="utf-8")
    args = argparse.Namespace(into_page=True, profile="paper", only=["tta"])
    merged, header = _merge_page(new, md, "Benchmarks (paper profile), measured on Y. ratio = r.", args)
    assert "tta on 2 threads come" in header and header.count("tta on 1 thread come") == 1
    merged.to_csv(md.with_suffix(".csv"), index=False)
    md.write_text(header + "\n", encoding="utf-8")
    merged, header = _merge_page(new, md, "Benchmarks (paper profile), measured on Z. ratio = r.", args)
    assert header.count("tta on 1 thread come") == 1 and "(on Z)" in header and "(on Y)" not in header


def test_an_into_page_run_keeps_the_side_table_rows_it_did_not_measure(tmp_path):
    import pandas as pd

    from lrank.__main__ import _merge_side

    path = tmp_path / "curves.csv"
    pd.DataFrame(dict(data=["1m"] * 4, threads=[1, 1, 2, 2], tree=[1, 2, 1, 2], commit="old")).to_csv(
        path, index=False)
    new = pd.DataFrame(dict(data=["1m"] * 2, threads=[2, 2], tree=[1, 2], commit="new"))
    assert _merge_side(new, path) is new  # no keys: the new table alone
    new.attrs["keys"] = ["data", "threads"]
    got = _merge_side(new, path)
    assert list(zip(got["threads"], got["commit"])) == [(1, "old"), (1, "old"), (2, "new"), (2, "new")]


def test_page_markdown_shows_a_missing_value_as_a_blank_cell_and_keeps_commits_as_text():
    import numpy as np
    import pandas as pd

    from lrank.benchmarks import page_markdown

    df = pd.DataFrame({"module": ["a", "b"], "ratio_kind": [np.nan, "pairs"], "ratio": [1.23456, np.nan],
                       "commit": ["836e026", "abc1234"]})
    md = page_markdown(df)
    assert "nan" not in md.lower()
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()[2:]]
    assert rows == [["a", "", "1.235", "836e026"], ["b", "pairs", "", "abc1234"]]


def test_a_failing_benchmark_child_shows_its_stderr():
    import sys

    from lrank.benchmarks.scale import _child

    ok = _child([sys.executable, "-c", "print('noise'); print('{\"a\": 1}')"], 1)
    assert ok == {"a": 1}
    with pytest.raises(RuntimeError, match=r"exited with 3(.|\n)*the child's own message"):
        code = "import sys; sys.stderr.write(\"the child's own message\"); sys.exit(3)"
        _child([sys.executable, "-c", code], 1)


def test_lrank_fitter_with_bins_made_once_fits_the_same_model():
    import numpy as np

    from lrank.benchmarks.gbrt import _ours
    from lrank.data.binning import bin_features
    from lrank.data.generators import make_letor_like

    d = make_letor_like(n_queries=12, docs_per_query=(8, 15), n_features=6, n_grades=3, random_state=1)
    bins = bin_features(d.X, max_thresholds=254, threshold_strategy="quantile")
    for kind in ("regression", "lambdarank"):
        a, b = _ours(kind, d, 1)(3), _ours(kind, d, 1, bins=bins)(3)
        assert np.array_equal(a.predict(d.X), b.predict(d.X))
