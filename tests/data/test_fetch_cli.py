"""`python -m lrank fetch` / `reproduce` reliability: one message per failure, keep going, exit non-zero,
no orphaned child or temporary folder after SIGTERM, a clear error outside a checkout."""

import importlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import lrank.__main__ as cli
from lrank.paths import repo_dir

F = importlib.import_module("lrank.data.fetch")


@pytest.fixture
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("LRANK_DATA", str(tmp_path / "data"))

    def no_network(url, dest, timeout=60.0):
        raise OSError(f"network disabled in tests ({url})")

    def no_pip(spec, dest_dir, binary=False):
        raise OSError("pip disabled in tests")

    monkeypatch.setattr(F, "_download", no_network)
    monkeypatch.setattr(F, "_pip_download", no_pip)
    return tmp_path / "data"


def test_fetch_failures_one_message_each_and_keep_going(offline, monkeypatch, capsys):
    seen = []
    real = F.fetch

    def spy(name, force=False):
        seen.append(name)
        return real(name, force=force)

    monkeypatch.setattr(F, "fetch", spy)
    rc = cli.main(["fetch", "mq2007", "no-such-set", "movielens-100k"])
    out, err = capsys.readouterr()
    assert rc == 1
    assert seen == ["mq2007", "movielens-100k"]  # the unknown name did not stop the rest
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ": FAILED: " in ln]
    assert [ln.split(":")[0] for ln in lines] == ["mq2007", "no-such-set", "movielens-100k"]
    assert "LETOR4.0/Data/MQ2007.rar" in err and str(offline / "downloads" / "mq2007" / "MQ2007.rar") in err
    assert "either source" in err and "recbole==1.2.1" in err
    assert err.rstrip().splitlines()[-1] == "fetch failed for 3 of 3: mq2007, no-such-set, movielens-100k"


def test_fetch_success_is_one_line(offline, monkeypatch, capsys):
    import numpy as np

    monkeypatch.setattr(F, "fetch", lambda name, force=False: np.full((3, 4), np.nan))
    assert cli.main(["fetch", "movielens-100k"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("movielens-100k: ok: ratings matrix 3 x 4, 0 rated in ")
    assert len(out.splitlines()) == 1


def test_reproduce_outside_a_checkout_says_where_notebooks_are_expected(tmp_path, monkeypatch):
    import lrank.paths

    empty = tmp_path / "site-packages-parent" / "notebooks"
    monkeypatch.setattr(lrank.paths, "notebooks_dir", lambda: empty)
    with pytest.raises(SystemExit) as exc:
        cli.main(["reproduce", "--only", "01"])
    msg = str(exc.value.code)
    assert str(empty) in msg and "source checkout" in msg and "NN_*.ipynb" in msg


def test_reproduce_outside_a_checkout_in_a_fresh_process(tmp_path):
    """An installed copy of the package (no notebooks beside it) exits non-zero with the message."""
    import shutil

    site = tmp_path / "site"
    shutil.copytree(repo_dir() / "lrank", site / "lrank", ignore=shutil.ignore_patterns("__pycache__"))
    res = subprocess.run([sys.executable, "-m", "lrank", "reproduce"], cwd=tmp_path, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(site)}, timeout=300)
    assert res.returncode != 0
    assert f"no notebooks in {site / 'notebooks'}" in res.stderr and "Traceback" not in res.stderr


SLOW_PIP = textwrap.dedent("""
    import importlib, sys
    F = importlib.import_module("lrank.data.fetch")
    pidfile = sys.argv[1]
    # a stand-in for pip: a child that starts a grandchild and hangs, like pip building sdist metadata
    child = (
        "import subprocess, sys, time; "
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
        f"open({pidfile!r}, 'w').write(f'{{__import__(\\"os\\").getpid()}} {{g.pid}}'); "
        "time.sleep(120)"
    )
    F._pip_command = lambda spec, dest, binary=False: [sys.executable, "-c", child]
    import lrank.__main__
    sys.exit(lrank.__main__.main(["fetch", "mslr-sample"]))
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not running
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_sigterm_during_fetch_leaves_no_child_and_no_temporary_folder(tmp_path):
    data = tmp_path / "data"
    pidfile = tmp_path / "pids"
    script = tmp_path / "slow_fetch.py"
    script.write_text(SLOW_PIP)
    env = {**os.environ, "LRANK_DATA": str(data), "PYTHONPATH": str(repo_dir())}
    proc = subprocess.Popen([sys.executable, str(script), str(pidfile)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (pidfile.is_file() and len(pidfile.read_text().split()) == 2):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the fake pip never started"
            time.sleep(0.1)
        child, grandchild = map(int, pidfile.read_text().split())
        folder = data / "downloads" / "mslr-sample"
        assert [p.name for p in folder.iterdir() if p.name.startswith(".lrank-fetch-")]  # mid-download
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    deadline = time.monotonic() + 10
    while (_alive(child) or _alive(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child) and not _alive(grandchild)
    assert not [p for p in Path(folder).iterdir()], sorted(os.listdir(folder))


def test_reproduce_fixes_the_kernels_hash_seed(monkeypatch):
    """`reproduce` runs every notebook kernel with PYTHONHASHSEED set (set order, hence the bytes of the
    critical-difference figures, the same in every run); the kernel inherits the variable from here."""
    import papermill

    seen = []

    def fake_execute(src, dst, **kw):
        seen.append(os.environ.get("PYTHONHASHSEED"))
        raise RuntimeError("not run in this test")

    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    monkeypatch.setattr(papermill, "execute_notebook", fake_execute)
    assert cli.main(["reproduce", "--only", "06_benchmarks"]) == 1
    assert seen == [cli.NOTEBOOK_HASH_SEED]


def test_reproduce_starts_kernels_without_the_plain_text_warning(tmp_path, monkeypatch, capfd):
    """`reproduce` runs a notebook with the kernel's sockets encrypted (CurveZMQ, when pyzmq has it): the
    kernel's warning that code and outputs cross TCP in plain text is not printed, and the notebook runs."""
    import nbformat
    import zmq

    import lrank.paths

    if not zmq.has("curve"):
        pytest.skip("pyzmq built without CurveZMQ: the kernel starts unencrypted, with its warning")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(6 * 7)")]
    nbformat.write(nb, tmp_path / "01_toy.ipynb")
    monkeypatch.setattr(lrank.paths, "notebooks_dir", lambda: tmp_path)
    for var in ("LRANK_PROFILE", "PYTHONHASHSEED"):  # reproduce sets them for its kernels: restored after
        monkeypatch.setenv(var, os.environ.get(var, "0"))
    assert cli.main(["reproduce", "--only", "01_toy"]) == 0
    err = capfd.readouterr().err
    assert "without encryption" not in err, err
    ran = nbformat.read(tmp_path / "01_toy.ipynb", as_version=4)
    assert [o.get("text") for o in ran.cells[0].outputs] == ["42\n"]
