"""Where numba caches lrank's kernels (issue 14.10): NUMBA_CACHE_DIR honoured; a read-only package
falls back to a user cache folder, so a second start loads the kernels instead of compiling them."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lrank.paths import repo_dir

PROBE = """
import json, numpy as np
from lrank._kernels._jit import cache_dir
from lrank._kernels import metrics as k
assert k._labels_scores_ok(np.array([1, 0, 2]), np.zeros(3), np.empty(3), 31.0)
folder, reason = cache_dir()
print(json.dumps({"folder": str(folder), "reason": reason, "hits": k._labels_scores_ok.stats.cache_hits and
                  sum(k._labels_scores_ok.stats.cache_hits.values()),
                  "env": __import__("os").environ.get("NUMBA_CACHE_DIR")}))
"""


def _run(site: Path, env_extra: dict) -> dict:
    import json

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(site), NUMBA_NUM_THREADS="1", OMP_WAIT_POLICY="passive", **env_extra)
    res = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=600,
                         cwd=str(site))
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def _copy_package(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    shutil.copytree(repo_dir() / "lrank", site / "lrank", ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _make_read_only(root: Path) -> list[Path]:
    """chmod a-w every folder; as root (which ignores modes) also make them immutable (chattr +i)."""
    dirs = [root, *[p for p in root.rglob("*") if p.is_dir()]]
    for d in dirs:
        d.chmod(0o555)
    if os.geteuid() == 0:
        res = subprocess.run(["chattr", "+i", *map(str, dirs)], capture_output=True, text=True)
        if res.returncode != 0:
            for d in dirs:
                d.chmod(0o755)
            pytest.skip(f"cannot make a folder read-only for root here: {res.stderr.strip()}")
    return dirs


def _undo_read_only(dirs: list[Path]) -> None:
    if os.geteuid() == 0 and shutil.which("chattr"):
        subprocess.run(["chattr", "-i", *map(str, dirs)], capture_output=True)
    for d in dirs:
        d.chmod(0o755)


@pytest.mark.slow
def test_read_only_package_caches_in_the_user_cache_folder(tmp_path):
    site = _copy_package(tmp_path)
    xdg = tmp_path / "xdg"
    dirs = _make_read_only(site / "lrank")
    try:
        with pytest.raises(OSError):
            (site / "lrank" / "_kernels" / "__pycache__").mkdir()
        first = _run(site, {"XDG_CACHE_HOME": str(xdg)})
        second = _run(site, {"XDG_CACHE_HOME": str(xdg)})
    finally:
        _undo_read_only(dirs)
    expected = xdg / "lrank" / "numba"
    assert first["folder"] == str(expected) and first["reason"] == "user cache folder"
    assert first["env"] == str(expected)  # children (papermill kernels, joblib workers) inherit it
    assert list(expected.rglob("*.nbi")) and list(expected.rglob("*.nbc"))
    assert not (site / "lrank" / "_kernels" / "__pycache__").exists()
    assert not first["hits"] and second["hits"]  # the second start loads instead of compiling


@pytest.mark.slow
def test_numba_cache_dir_is_honoured(tmp_path):
    site = _copy_package(tmp_path)
    given = tmp_path / "given"
    out = _run(site, {"NUMBA_CACHE_DIR": str(given)})
    assert out["folder"] == str(given) and out["reason"] == "NUMBA_CACHE_DIR"
    assert list(given.rglob("*.nbi"))
    assert not list((site / "lrank" / "_kernels").glob("__pycache__/*.nbi"))


def test_writable_package_uses_numba_default(tmp_path):
    from lrank._kernels import _jit

    if os.environ.get("NUMBA_CACHE_DIR"):
        pytest.skip("NUMBA_CACHE_DIR is set in this environment")
    folder, reason = _jit.cache_dir()
    assert reason == "package folder" and folder == Path(_jit.__file__).resolve().parent / "__pycache__"
    assert _jit._can_write(tmp_path / "new") and not _jit._can_write(Path("/proc/lrank-cannot-write"))


STALE_PROBE = """
import json, sys
import numpy as np
from lrank._kernels import _jit
if sys.argv[1] == "changed":
    _jit.KERNELS_DIGEST = "another version of lrank/_kernels"  # as after an edit of any kernel module
from lrank._kernels import metrics as k
assert k._labels_scores_ok(np.array([1, 0, 2]), np.zeros(3), np.empty(3), 31.0)
print(json.dumps({"hits": sum(k._labels_scores_ok.stats.cache_hits.values()),
                  "misses": sum(k._labels_scores_ok.stats.cache_misses.values())}))
"""


def test_cached_kernels_go_stale_when_any_kernel_module_changes(tmp_path):
    """A kernel's cached code is keyed by the whole `lrank/_kernels` folder's digest, not only its own file:
    the same digest loads from the cache, another one compiles again (a callee in another module changed)."""
    import json

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_NUM_THREADS": "1",
           "OMP_WAIT_POLICY": "passive", "PYTHONPATH": str(repo_dir())}

    def probe(version: str) -> dict:
        res = subprocess.run([sys.executable, "-c", STALE_PROBE, version], env=env, capture_output=True,
                             text=True, timeout=600, cwd=str(tmp_path))
        assert res.returncode == 0, res.stderr[-3000:]
        return json.loads(res.stdout.strip().splitlines()[-1])

    assert probe("same")["misses"] >= 1  # an empty cache: compiled
    assert probe("same")["hits"] >= 1  # loaded
    stale = probe("changed")
    assert stale["hits"] == 0 and stale["misses"] >= 1


def test_kernels_digest_follows_every_module(tmp_path):
    from lrank._kernels._jit import _KERNELS, KERNELS_DIGEST, kernels_digest

    assert kernels_digest() == KERNELS_DIGEST
    copy = tmp_path / "k"
    shutil.copytree(_KERNELS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert kernels_digest(copy) == KERNELS_DIGEST
    callee = copy / "binning.py"
    callee.write_text(callee.read_text() + "\n# changed\n")
    assert kernels_digest(copy) != KERNELS_DIGEST
