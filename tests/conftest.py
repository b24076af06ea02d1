"""Shared test set-up: quiet, single-threaded, deterministic."""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("LRANK_PROFILE", "quick")

import matplotlib  # noqa: E402

matplotlib.use("Agg")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def standin_root(tmp_path_factory):
    """A data root holding every stand-in file (`lrank.data.standins`), written once per test session."""
    from lrank.data import standins

    root = tmp_path_factory.mktemp("standins")
    standins.write_standins(root)
    return root


@pytest.fixture
def rehearsal(standin_root, monkeypatch):
    """The rehearsal profile reading the stand-ins: ``LRANK_DATA`` and ``LRANK_PROFILE`` set for one test."""
    monkeypatch.setenv("LRANK_DATA", str(standin_root))
    monkeypatch.setenv("LRANK_PROFILE", "rehearsal")
    return standin_root


@pytest.fixture
def symmetric_paths(monkeypatch):
    """The ``parallel`` flag of every `grow_symmetric` call made in the test, in order (a spy on the kernel
    wrapper): which path the symmetric trees took."""
    from lrank._kernels import grower as gk

    taken: list[bool] = []
    grow = gk.grow_symmetric

    def spy(*a, **kw):
        taken.append(kw["parallel"])
        return grow(*a, **kw)

    monkeypatch.setattr(gk, "grow_symmetric", spy)
    return taken
