"""Where lrank reads and writes (lrank.paths): the profile, checked in one place."""

import subprocess
import sys

import pytest

import lrank.paths as P


def test_profiles_are_one_constant():
    assert P.PROFILES == ("quick", "paper", "rehearsal")
    for p in P.PROFILES:
        assert P.check_profile(p) == p


@pytest.mark.parametrize("bad", ["bogus", "", "Quick"])
def test_a_bad_profile_is_one_clear_error(monkeypatch, bad):
    monkeypatch.setenv("LRANK_PROFILE", bad)
    allowed = "'quick', 'paper', 'rehearsal'"
    with pytest.raises(P.ProfileError, match=rf"LRANK_PROFILE must be one of {allowed}, got {bad!r}"):
        P.profile()
    with pytest.raises(P.ProfileError, match="profile must be one of"):
        P.figures_dir(bad or "x y")


def test_a_bad_profile_is_one_line_not_a_traceback(tmp_path):
    """``LRANK_PROFILE=bogus python -m lrank info`` printed a traceback: now one line and exit code 2."""
    import os

    env = {**os.environ, "LRANK_PROFILE": "bogus", "LRANK_OUTPUT_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "lrank", "info"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1] == (
        "python -m lrank info: LRANK_PROFILE must be one of 'quick', 'paper', 'rehearsal', got 'bogus'")


def test_an_installed_package_never_writes_into_site_packages(tmp_path, monkeypatch):
    """A wheel installs lrank into site-packages, beside other packages and without pyproject.toml or
    notebooks/: data go to ~/lrank_data and outputs to the working directory, as scikit-learn's data home."""
    import lrank.paths as paths

    site = tmp_path / "site-packages"
    (site / "lrank").mkdir(parents=True)
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setattr(paths, "REPO_DIR", site)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("LRANK_DATA", raising=False)
    monkeypatch.delenv("LRANK_OUTPUT_DIR", raising=False)
    monkeypatch.setenv("LRANK_PROFILE", "quick")
    monkeypatch.chdir(work)
    assert not paths.in_checkout()
    assert paths.data_dir() == home / "lrank_data"
    assert paths.figures_dir(create=False) == work / "figures" and not (work / "figures").exists()
    assert paths.figures_dir() == work / "figures" and (work / "figures").is_dir()
    assert not any(p.name != "lrank" for p in site.iterdir())
    # a checkout: the repository's own folders, as before
    (site / "pyproject.toml").write_text("")
    (site / "notebooks").mkdir()
    assert paths.in_checkout() and paths.data_dir() == site / "data" and paths.output_root() == site
    # the variables win either way
    monkeypatch.setenv("LRANK_DATA", str(tmp_path / "d"))
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path / "o"))
    assert paths.data_dir() == tmp_path / "d" and paths.output_root() == tmp_path / "o"
