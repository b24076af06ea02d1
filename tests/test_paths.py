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
