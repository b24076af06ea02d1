"""The stored paper notebooks quote the benchmark page as it is now.

Notebooks 02, 03 and 04 read speed claims off ``figures/benchmarks.csv`` (nothing timed in a notebook), and
05 reads its Fig. 1 times off ``figures/rankboost_plus_fig1_times.csv``. Re-measuring those rows without
re-running the notebook leaves the stored claims and captions quoting the old rows (ratios and commit). These
tests rebuild each quoted claim from the stored page and compare it with the stored registry
(``figures/claims.csv``) and caption: a stale quote fails, naming the notebook to re-run.
"""

import re

import numpy as np
import pandas as pd
import pytest

from lrank import claims, paths
from lrank.papers import adarank_claims, boostingtree_claims, rankboost_plus, tree_fitting_claims
from lrank.plots import read_table

FIGURES = paths.repo_dir() / "figures"

#: notebook -> the function that registers its claims read off the benchmark page
QUOTING = {
    "02_adarank": adarank_claims.register_speed,
    "03_boostingtree": boostingtree_claims.speed_rows,
    "04_tree_fitting": tree_fitting_claims.speed_row,
}


def _quoted(notebook: str, page: pd.DataFrame) -> dict[str, claims.Claim]:
    reg = claims.Registry(notebook, "quote check")
    QUOTING[notebook](reg, page)
    return reg.claims


def _stale(notebook: str, page: pd.DataFrame, stored: pd.DataFrame) -> list[str]:
    """The claims of ``notebook`` whose stored value or reason differs from the one the page gives now."""
    rows = stored[stored["notebook"] == notebook].set_index("id")
    out = []
    for cid, c in _quoted(notebook, page).items():
        if cid not in rows.index:
            out.append(f"{cid}: not in the stored registry")
            continue
        r = rows.loc[cid]
        if not np.isclose(float(r["ours"]), float(c.ours), rtol=1e-8, atol=0.0) or r["reason"] != c.reason:
            out.append(f"{cid}: stored {r['ours']} ({r['reason'][:120]}...), the page now gives {c.ours} "
                       f"({c.reason[:120]}...)")
    return out


@pytest.mark.parametrize("notebook", sorted(QUOTING))
def test_stored_speed_claims_quote_the_current_page(notebook):
    page = read_table(FIGURES / "benchmarks.csv")
    stored = pd.read_csv(FIGURES / "claims.csv")
    stale = _stale(notebook, page, stored)
    assert not stale, (f"notebooks/{notebook}.ipynb quotes older benchmark rows than figures/benchmarks.csv "
                       f"holds: re-run it (python -m lrank reproduce --only {notebook[:2]}): "
                       + "; ".join(stale))


def test_a_re_measured_row_makes_the_stored_quote_stale():
    """The check can fail: a page whose OLE row was re-measured (another ratio, another commit) no longer
    matches notebook 04's stored claim."""
    page = read_table(FIGURES / "benchmarks.csv")
    stored = pd.read_csv(FIGURES / "claims.csv")
    row = page["benchmark"].astype(str).str.startswith(tree_fitting_claims.SPEED_ROW[1]) & \
        (page["module"] == tree_fitting_claims.SPEED_ROW[0])
    assert row.sum() == 1
    moved = page.copy()
    moved.loc[row, "ratio"] = float(page.loc[row, "ratio"].iloc[0]) * 1.01
    assert _stale("04_tree_fitting", moved, stored)
    moved = page.copy()
    moved.loc[row, "commit"] = "0000000"
    assert _stale("04_tree_fitting", moved, stored)


def test_the_fig1_caption_quotes_the_stored_times():
    times, times_file = rankboost_plus.fig1_stored_times(rankboost_plus.FIG1_SEED)
    assert times is not None, f"no stored Fig. 1 times ({times_file})"
    commits = set(times["commit"].astype(str))
    caption = (FIGURES / "rankboost_plus_fig1.caption.txt").read_text()
    quoted = set(re.findall(r"at commit ([0-9a-f]{7,40})", caption))
    assert quoted, "the Fig. 1 caption names no commit of its times"
    assert quoted == commits, (f"figures/rankboost_plus_fig1.caption.txt quotes times of commit {quoted}, "
                               f"{times_file} holds {commits}: re-run notebook 05")
