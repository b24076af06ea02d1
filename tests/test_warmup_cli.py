"""``python -m lrank warmup``: compiles the kernel modules into numba's cache once, says where and how long,
and refuses an unknown module by name."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lrank._warmup import kernel_modules, run


def _cli(*args: str, cache) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "lrank", "warmup", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_warmup_only_fills_the_cache_and_reports(tmp_path):
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        pytest.skip("NUMBA_DISABLE_JIT")
    out = _cli("--only", "pairs", "binning", cache=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"numba kernel cache {tmp_path} (set by NUMBA_CACHE_DIR)" in out.stdout
    lines = out.stdout.splitlines()
    assert any(line.split()[:1] == ["pairs"] for line in lines), out.stdout
    assert any(line.split()[:1] == ["binning"] for line in lines), out.stdout
    assert "2 kernel modules" in out.stdout
    assert list(tmp_path.rglob("*.nbi")), "nothing was cached"


def test_warmup_refuses_an_unknown_module(tmp_path):
    out = _cli("--only", "pairs", "no_such_module", cache=tmp_path)
    assert out.returncode == 2
    assert "only" in out.stderr and "'no_such_module'" in out.stderr and "pairs" in out.stderr


def test_run_only_the_named_modules():
    seconds = run(["pairs"])
    assert list(seconds) == ["pairs"] and seconds["pairs"] >= 0.0
    with pytest.raises(ValueError, match="only: no kernel module 'nope'"):
        run(["nope"])
    assert set(run()) <= set(kernel_modules())
