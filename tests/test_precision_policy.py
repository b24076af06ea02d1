"""The precision policy (lrank.results: exact vs experimental numbers, tolerances from a measured spread)
and the test command (lrank.dev: every tier runs, a summary of all, emulated CPUs)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lrank import dev, results


# ------------------------------------------------------------------------------- measured spread
def test_measure_spread_finds_moved_numbers_and_discrete_changes():
    runs = {
        "native": {"a": {"value": 0.5, "tol": 1e-9}, "b": {"value": [1.0, 2.0], "n": 3, "tol": 1e-9},
                   "c": {"value": "HELD", "tol": 0}, "d": {"value": 7, "tol": 0}, "e": {"value": 1.0}},
        "x": {"a": {"value": 0.5 + 1e-12, "tol": 1e-9}, "b": {"value": [1.0, 2.0 - 3e-10], "n": 3},
              "c": {"value": "NOT HELD"}, "d": {"value": 7}, "e": {"value": 1.0}},
        "y": {"a": {"value": 0.5 - 1e-12}, "b": {"value": [1.0, 2.0], "n": 4}, "c": {"value": "HELD"},
              "d": {"value": 7}},
    }
    s = results.measure_spread(runs)
    assert s["a"]["spread"] == pytest.approx(2e-12) and s["a"]["moved_in"] == ["x", "y"]
    assert s["a"]["discrete_in"] == []
    assert s["b"]["spread"] == pytest.approx(1.0)  # the count n moved by one: a discrete change too
    assert s["b"]["discrete_in"] == ["y"] and s["b"]["moved_in"] == ["x", "y"]
    assert s["c"]["discrete_in"] == ["x"] and s["c"]["spread"] == 0.0
    assert s["d"] == {"spread": 0.0, "moved_in": [], "discrete_in": []}
    assert s["e"]["discrete_in"] == ["y"]  # missing in one run


def test_policy_tolerances():
    exp = {"value": 0.25, "tol": 1e-6}
    assert results.kind_of(exp) == "experimental"
    assert results.kind_of({"value": [1, 2]}) == "exact"
    assert results.kind_of({"value": 0.25, "kind": "exact"}) == "exact"
    # an experimental number: margin x spread above the recorded tol and the floor
    tol, basis = results.policy_tol(exp, {"spread": 1e-5}, 5)
    assert tol == pytest.approx(results.TOL_MARGIN * 1e-5) and "spread 1e-05 over 5" in basis
    assert results.policy_tol(exp, {"spread": 1e-9}, 5)[0] == 1e-6  # below the recorded tol
    assert results.policy_tol({"value": 0.25, "tol": 0.0}, {"spread": 0.0}, 5)[0] == results.TOL_FLOOR
    tol, basis = results.policy_tol(exp, None, 0)
    assert tol == 1e-6 and "not measured" in basis
    # an exact number keeps its tolerance; a spread above it is reported, never absorbed
    tol, basis = results.policy_tol({"value": 0.25, "kind": "exact", "tol": 1e-9}, {"spread": 1e-3}, 5)
    assert tol == 1e-9 and "EXCEEDS" in basis
    assert results.policy_tol({"value": "HELD", "tol": 0}, {"spread": 0.0}, 5) == \
        (0.0, "exact: recorded tol 0")


def test_record_kind(tmp_path, monkeypatch):
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    results.record("zz_test", "a", 0.5, kind="exact")
    results.record("zz_test", "b", 0.5)
    got = results.load("zz_test")
    assert got["a"]["kind"] == "exact" and "kind" not in got["b"]
    with pytest.raises(ValueError, match="kind"):
        results.record("zz_test", "c", 0.5, kind="approximate")


def test_golden_comparison_ignores_the_tolerance_basis():
    golden = {"a": {"value": 1.0, "tol": 1e-6, "tol_basis": "experimental: spread 1e-07 over 5 configs"}}
    assert results.compare_to_golden({"a": {"value": 1.0 + 5e-7, "tol": 1e-9}}, golden) == []
    assert results.compare_to_golden({"a": {"value": 1.0 + 5e-6, "tol": 1e-9}}, golden)


def test_checked_cell_texts_read_the_tag_and_the_comment(tmp_path):
    nb = {"cells": [
        {"cell_type": "code", "metadata": {"tags": ["nbval-check-output"]}, "source": ["print(1)"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["took 3.2 s\n"]}]},
        {"cell_type": "code", "metadata": {}, "source": "# NBVAL_CHECK_OUTPUT\nx",
         "outputs": [{"output_type": "execute_result", "data": {"text/plain": "0.123"}}]},
        {"cell_type": "code", "metadata": {}, "source": "y", "outputs": []},
        {"cell_type": "markdown", "metadata": {}, "source": "# NBVAL_CHECK_OUTPUT"}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    cfg = tmp_path / "s.cfg"
    cfg.write_text("[t]\nregex: \\d+(\\.\\d+)? s\\b\nreplace: TIME\n")
    assert results.checked_cell_texts(path, cfg) == {0: "took TIME\n", 1: "0.123"}


def test_collect_spread_writes_per_name_spread_and_differing_cells(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "spread_dir", lambda: tmp_path / "spread")
    for c, v, text in (("native", 0.5, "0.500\n"), ("x", 0.5 + 2e-7, "0.500\n"), ("y", 0.5, "0.501\n")):
        (tmp_path / c / "figures" / "results").mkdir(parents=True)
        (tmp_path / c / "figures" / "results" / "zz.json").write_text(json.dumps(
            {"_meta": {}, "m": {"value": v, "tol": 1e-6}, "k": {"value": 3, "tol": 0}}))
        (tmp_path / c / "notebooks").mkdir()
        (tmp_path / c / "notebooks" / "zz.ipynb").write_text(json.dumps({"cells": [
            {"cell_type": "code", "metadata": {"tags": ["nbval-check-output"]}, "source": "m",
             "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}]}))
    table = tmp_path / "t.md"
    rc = results.collect_spread(tmp_path, ["native", "x", "y"], ["zz"], allow_stale=True, table=table)
    assert rc == 0
    spread = json.loads((tmp_path / "spread" / "zz.json").read_text())
    assert spread["m"]["spread"] == pytest.approx(2e-7) and spread["m"]["moved_in"] == ["x"]
    assert spread["k"]["moved_in"] == []
    assert spread["_meta"]["checked_cells_differing"][0]["differs_in"] == ["y"]
    assert "| zz | m | 2e-07" in table.read_text()
    # runs written by other code are refused unless allowed
    assert results.collect_spread(tmp_path, ["native", "x"], ["zz"], write=False) == 1
    # a configuration without a run keeps its column: the cells stay under their headers (they shifted left)
    (tmp_path / "x" / "figures" / "results" / "zz.json").unlink()
    (tmp_path / "y" / "figures" / "results" / "zz.json").write_text(json.dumps(
        {"_meta": {}, "m": {"value": 0.5 + 3e-7, "tol": 1e-6}, "k": {"value": 3, "tol": 0}}))
    results.collect_spread(tmp_path, ["native", "x", "y"], ["zz"], allow_stale=True, table=table, write=False)
    header, _, *rows = table.read_text().splitlines()
    assert header == "| notebook | name | x | y |"
    assert all(r.count("|") == header.count("|") for r in rows) and rows
    assert rows == ["| zz | m | no run | 3e-07 (6.0e-07 rel) |"]


# ------------------------------------------------------------------------------ the test command
def test_pytest_counts():
    assert dev.pytest_counts("x\n3 failed, 2487 passed, 16 skipped, 3 warnings in 1836.77s (0:30:36)\n") == \
        {"failed": 3, "passed": 2487, "skipped": 16}
    assert dev.pytest_counts("1 error in 0.5s") == {"error": 1}
    assert dev.pytest_counts("no summary") == {}


def test_every_tier_runs_and_a_red_one_fails_the_command(monkeypatch, capsys):
    ran = []

    def fake_tier(args, env):
        ran.append((args[0] if args else "", env.get("NUMBA_CPU_NAME")))
        if "--nbval-lax" in args and env.get("NUMBA_CPU_NAME") is None and \
                not any("00_index" in a for a in args):
            return 1, {"failed": 2, "passed": 40}  # the native notebooks tier is red (before 00_index)
        return 0, {"passed": 5}

    monkeypatch.setattr(dev, "ensure_venv", lambda *a: None)
    monkeypatch.setattr(dev, "_run", lambda *a, **k: 0)
    monkeypatch.setattr(dev, "_git_status", lambda: "")
    monkeypatch.setattr(dev, "_pytest_tier", fake_tier)
    monkeypatch.setattr(dev, "_rehearsal_tier", lambda out, log=None: 0)
    monkeypatch.setattr(dev, "_x86_64", lambda: True)
    rc = dev.test(None, foreign=("generic",))
    out = capsys.readouterr().out
    assert rc == 1
    # every tier ran after the red one, then the foreign ones under the emulated CPU
    for name in ("unit", "kernel", "notebooks", "results", "browser", "rehearsal", "git", "unit@generic",
                 "notebooks@generic", "results@generic"):
        assert f"\n{name} " in out, name
    assert "notebooks                FAILED   2 failed, 45 passed" in out  # and 00_index's 5
    assert [e for _, e in ran].count("generic") == 4  # unit, notebooks (then 00_index), results
    assert "1 tier(s) failed: notebooks" in out
    monkeypatch.setattr(dev, "_pytest_tier", lambda args, env: (0, {"passed": 1}))
    assert dev.test(["unit"]) == 0


def test_the_rehearsal_runs_alongside_the_emulated_cpu_tiers(monkeypatch, capsys):
    import threading

    foreign_started = threading.Event()
    calls = []

    def fake_rehearsal(out, log=None):
        calls.append(log)
        # it only finishes when a foreign tier has started meanwhile: run one after the other, it fails
        ok = foreign_started.wait(timeout=10)
        if log is not None:
            log.write_text("rehearsal says hello\n")
        return 0 if ok else 3

    def fake_tier(args, env):
        if env.get("NUMBA_CPU_NAME") == "generic":
            foreign_started.set()
        return 0, {"passed": 1}

    monkeypatch.setattr(dev, "ensure_venv", lambda *a: None)
    monkeypatch.setattr(dev, "_run", lambda *a, **k: 0)
    monkeypatch.setattr(dev, "_git_status", lambda: "")
    monkeypatch.setattr(dev, "_pytest_tier", fake_tier)
    monkeypatch.setattr(dev, "_rehearsal_tier", fake_rehearsal)
    monkeypatch.setattr(dev, "_x86_64", lambda: True)
    monkeypatch.setenv("LRANK_TEST_OUTPUT", str(Path(__import__("tempfile").mkdtemp())))
    assert dev.test(["browser", "rehearsal", "git", "unit"], foreign=("generic",), ci_foreign=True) == 0
    out = capsys.readouterr().out
    assert calls and calls[0] is not None and "rehearsal says hello" in out
    rows = [ln.split()[0] for ln in out.split("=" * 100)[1].splitlines()[2:] if ln.strip()]
    assert rows == ["unit", "browser", "rehearsal", "unit@generic", "git", "total"]
    # without emulated-CPU tiers there is nothing to run alongside: it runs in its turn, output to stdout
    calls.clear()
    foreign_started.set()
    assert dev.test(["rehearsal"]) == 0 and calls == [None]
    # a red rehearsal alongside fails the command
    foreign_started.clear()
    monkeypatch.setattr(dev, "_pytest_tier", lambda args, env: (0, {"passed": 1}))
    assert dev.test(["rehearsal", "unit"], foreign=("generic",), ci_foreign=True) == 1
    assert "1 tier(s) failed: rehearsal" in capsys.readouterr().out


def test_tiers_run_on_workers_and_00_index_after_the_other_notebooks(monkeypatch):
    seen = []
    monkeypatch.setattr(dev, "ensure_venv", lambda *a: None)
    monkeypatch.setattr(dev, "_run", lambda *a, **k: 0)
    monkeypatch.setattr(dev, "_pytest_tier", lambda args, env: (seen.append(args), (0, {"passed": 1}))[1])
    monkeypatch.setenv("LRANK_TEST_WORKERS", "2")
    assert dev.test(["unit", "kernel", "notebooks"]) == 0
    unit, kernel, books, index = seen
    assert unit[:4] == kernel[:4] == ["-n", "2", "--dist", "worksteal"]
    assert books[:5] == ["-n", "2", "--dist", "loadfile", "--no-loadscope-reorder"]
    nbs = [a for a in books if a.endswith(".ipynb")]  # the longest handed out first, then file order
    longest = [b for b in dev.notebook_order() if Path(b).stem in dev.LONGEST_NOTEBOOKS]
    assert longest and nbs == [*longest, *(b for b in dev.notebook_order()[:-1] if b not in longest)]
    assert [a for a in index if a.endswith(".ipynb")] == ["notebooks/00_index.ipynb"] and "-n" not in index
    seen.clear()
    monkeypatch.setenv("LRANK_TEST_WORKERS", "1")
    assert dev.test(["unit", "notebooks"]) == 0
    assert not any("-n" in args for args in seen)
    monkeypatch.setenv("LRANK_TEST_WORKERS", "two")
    with pytest.raises(SystemExit, match="LRANK_TEST_WORKERS"):
        dev.test(["unit"])


def test_foreign_ci_subset_and_unknown_configs(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(dev, "ensure_venv", lambda *a: None)
    monkeypatch.setattr(dev, "_run", lambda *a, **k: 0)
    monkeypatch.setattr(dev, "_x86_64", lambda: True)
    def fake_tier(args, env):
        seen.append((args, env))
        return 0, {"passed": 1}

    monkeypatch.setattr(dev, "_pytest_tier", fake_tier)
    assert dev.test(["notebooks", "results"], foreign=("generic",), ci_foreign=True) == 0
    foreign = [a for a, e in seen if e.get("NUMBA_CPU_NAME") == "generic"]
    books = [a for a in foreign[0] if a.endswith(".ipynb")]
    assert [b.split("/")[-1][:-6] for b in books] == list(dev.CI_FOREIGN["notebooks"])
    assert foreign[1][-2:] == ["-k", " or ".join(dev.CI_FOREIGN["notebooks"])]
    with pytest.raises(SystemExit, match="unknown CPU configuration"):
        dev.test(["unit"], foreign=("pentium",))


def test_cpu_configurations_name_numpy_targets_that_exist():
    # the names NPY_DISABLE_CPU_FEATURES takes are numpy's dispatch targets of this numpy build
    from numpy._core._multiarray_umath import __cpu_dispatch__

    if not dev._x86_64():
        pytest.skip("x86-64 configurations")
    for name, (env, _) in dev.CPU_CONFIGS.items():
        for feat in env.get("NPY_DISABLE_CPU_FEATURES", "").split():
            assert feat in __cpu_dispatch__, (name, feat)


def _unemulated_env() -> dict:
    """This process's environment without the CPU emulation variables (the foreign tier sets them in the
    environment the tests inherit): a subprocess given it runs on the host's own CPU paths."""
    emulation = {k for env, _ in dev.CPU_CONFIGS.values() for k in env}
    return {k: v for k, v in os.environ.items() if k not in emulation}


@pytest.mark.parametrize("config", ["npy-sse", "haswell"])
def test_an_emulated_configuration_takes_effect(config):
    env, _ = dev.CPU_CONFIGS[config]
    code = ("import numpy, numba.core.config as c; "
            "from numpy._core._multiarray_umath import __cpu_features__ as f; "
            "print(f['X86_V4'], f['AVX512_ICL'], f['X86_V3'], c.CPU_NAME)")
    out = subprocess.run([sys.executable, "-c", code], env={**_unemulated_env(), **env}, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[:2] == ["False", "False"]  # no AVX-512 paths in numpy
    assert out[2] == ("False" if config == "npy-sse" else "True")
    assert out[3] == env.get("NUMBA_CPU_NAME", "None")


def test_results_record_the_emulated_cpu_they_were_written_on(tmp_path):
    """A results file says where it was computed: under the farthest emulation, numba's generic CPU and no
    numpy path above the baseline; here, the host's CPU name."""
    if not dev._x86_64():
        pytest.skip("x86-64 configurations")
    env, _ = dev.CPU_CONFIGS["generic"]
    base = _unemulated_env()
    code = ("import json; from lrank import results; results.reset('zz_where'); "
            "print(json.dumps(results.load_meta('zz_where')['written_on']))")
    base["LRANK_OUTPUT_DIR"] = str(tmp_path)

    def where(extra: dict) -> dict:
        return json.loads(subprocess.run([sys.executable, "-c", code], env={**base, **extra},
                                         capture_output=True, text=True, check=True).stdout)

    out, here = where(env), where({})
    assert out["numba_cpu"] == "generic" and out["numpy_simd"] == []
    assert here["numba_cpu"] not in ("generic", "", None) and here["numpy"] == out["numpy"]


def test_nbval_honours_the_check_output_tag(tmp_path):
    # nbval compares the outputs of cells tagged nbval-check-output (the form the notebooks move to) as it
    # compares cells marked with the # NBVAL_CHECK_OUTPUT comment; an untagged cell is not compared
    def book(tags):
        return {"cells": [{"cell_type": "code", "execution_count": 1, "id": "a", "metadata": {"tags": tags},
                           "source": "print(6 * 7)",
                           "outputs": [{"output_type": "stream", "name": "stdout", "text": "41\n"}]}],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                            "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}

    for tags, want in ((["nbval-check-output"], 1), ([], 0)):
        path = tmp_path / f"nb{len(tags)}.ipynb"
        path.write_text(json.dumps(book(tags)))
        rc = subprocess.call([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval-lax",
                              "--nbval-current-env", str(path)], cwd=tmp_path, stdout=subprocess.DEVNULL)
        assert rc == want, tags


def test_the_test_runner_is_not_part_of_the_results_hash():
    # editing the test command (CI subsets, tiers) leaves every recorded result fresh; the code that
    # computes or records numbers does not
    names = {p.name for p in results.hashed_sources()}
    assert "dev.py" not in names and "site.py" not in names and "conf.py" not in names  # runner, book
    assert {"results.py", "rankboost.py", "collaborative.py", "trees.py"} <= names


def test_the_developer_notebook_runs_start_kernels_without_the_plain_text_warning(tmp_path):
    """`spread` and `mutate` run each notebook through `dev._papermill`: its kernel starts as `reproduce`
    starts it (no warning that code crosses TCP in plain text), a notebook that runs gives exit code 0 and
    its output, and a failing cell gives exit code 1 with the cell's error."""
    import nbformat
    import zmq

    if not zmq.has("curve"):
        pytest.skip("pyzmq built without CurveZMQ: the kernel starts unencrypted, with its warning")
    spec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for name, src in (("ok", "print(6 * 7)"), ("bad", "raise ValueError('boom')")):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src)], metadata={"kernelspec": spec})
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
    ok = subprocess.run(dev._papermill(tmp_path / "ok.ipynb", tmp_path / "ok.out.ipynb", tmp_path),
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "without encryption" not in ok.stderr, ok.stderr
    ran = nbformat.read(tmp_path / "ok.out.ipynb", as_version=4)
    assert [o.get("text") for o in ran.cells[0].outputs] == ["42\n"]
    bad = subprocess.run(dev._papermill(tmp_path / "bad.ipynb", tmp_path / "bad.out.ipynb", tmp_path),
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "ValueError: boom" in bad.stderr
