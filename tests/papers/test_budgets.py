"""Profiles and budgets: one place for every notebook's budget, the rehearsal scaled down from the paper's,
the notebooks reading them, the paper-profile data selection run on stand-ins."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from lrank import paths
from lrank.data import standins
from lrank.papers import adarank, boostingtree, budgets, rankboost_plus, tree_fitting

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
PAPERS = {"01_rankboost": "paper", "02_adarank": "paper", "03_boostingtree": "paper", "04_tree_fitting": "tf",
          "05_rankboost_plus": "rbp"}


def _code(nb: str) -> str:
    cells = json.loads((NOTEBOOKS / f"{nb}.ipynb").read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def _not_larger(small, big) -> bool:
    if small is None or big is None:  # None: "all" (pairs, queries) or "the committed sets"
        return big is None or small is None
    if isinstance(big, dict):
        return small.keys() <= big.keys() and all(_not_larger(small[k], big[k]) for k in small)
    if isinstance(big, tuple):
        return len(small) <= len(big) and all(_not_larger(a, b) for a, b in zip(sorted(small), sorted(big)))
    return small <= big


@pytest.mark.parametrize("key", list(budgets.BUDGETS))
def test_every_budget_names_the_same_values_and_the_rehearsal_is_scaled_down(key):
    b = budgets.BUDGETS[key]
    assert list(b.paper) == list(b.quick) == list(b.rehearsal), key
    for name in b.paper:
        assert _not_larger(b.rehearsal[name], b.paper[name]), (key, name)
    assert b.title and b.source


def test_budget_returns_named_values_and_refuses_unknown_names():
    rounds, at, shown, repeats = budgets.budget("01_rankboost", "fig4", "paper")
    assert (rounds, at, shown) == (1000, (50, 200), 200)
    assert budgets.budget("01_rankboost", "fig4", "rehearsal").rounds == 40
    assert boostingtree.QUICK_TABLE3_ITERATIONS == tuple(budgets.budget("03_boostingtree", "table3", "quick"))
    with pytest.raises(KeyError, match="known: 01_rankboost/fig8_simulation"):
        budgets.budget("01_rankboost", "fig44", "paper")
    with pytest.raises(ValueError, match="profile must be one of 'quick', 'paper', 'rehearsal'"):
        budgets.budget("01_rankboost", "fig4", "full")


@pytest.mark.parametrize("nb, module", list(PAPERS.items()))
def test_notebooks_read_their_budgets_here_and_branch_on_no_profile(nb, module):
    code = _code(nb)
    used = set(re.findall(rf"\b{module}\.budget\(\"(\w+)\", PROFILE\)", code))
    assert used == {e for n, e in budgets.BUDGETS if n == nb}  # every budget of the notebook is read
    assert not re.search(r"PROFILE\s*[!=]=|QUICK\b", code)  # the branches live in lrank.papers


def test_profiles_and_their_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    assert paths.PROFILES == ("quick", "paper", "rehearsal")
    assert paths.figures_dir("rehearsal") == tmp_path / "figures" / "rehearsal"
    assert paths.figures_dir("quick") == tmp_path / "figures"
    with pytest.raises(ValueError, match="one of 'quick', 'paper', 'rehearsal'"):
        paths.figures_dir("papers")
    monkeypatch.setenv("LRANK_PROFILE", "full")
    with pytest.raises(ValueError, match="LRANK_PROFILE must be one of"):
        paths.profile()


def test_the_rehearsal_refuses_to_skip():
    budgets.require_nothing_skipped("paper", [{"experiment data": "mq2007"}], "03_boostingtree")
    budgets.require_nothing_skipped("rehearsal", [], "03_boostingtree")
    with pytest.raises(RuntimeError, match="03_boostingtree: the rehearsal skipped 0: .*mq2007"):
        budgets.require_nothing_skipped("rehearsal", [{"experiment data": "mq2007"}], "03_boostingtree")


def test_paper_path_data_on_standins_say_stand_in(rehearsal):
    exps, skipped = adarank.experiments("rehearsal")
    assert [e.name for e in exps] == ["OHSUMED", "TD2003"] and not skipped
    assert all(e.note.startswith("stand-in LETOR 3.0") for e in exps)
    folds, what = boostingtree.table3_data("rehearsal", 0, skipped := [])
    assert len(folds) == 5 and what == "MQ2007 (LETOR 4.0, stand-in), 5 official folds" and not skipped
    yfold, ydata = boostingtree.yahoo_data("rehearsal", 0, [])
    assert ydata == "Yahoo! LTR set 1 (stand-in)" and yfold[0].valid is not None
    mq, source = rankboost_plus.mq_data("rehearsal", None, None, 0, {})
    assert sorted(mq) == ["mq2007", "mq2008"] and "(stand-in)" in source


def test_yahoo_in_the_tree_fitting_paper_is_set_1_in_three_splits(rehearsal):
    ya = tree_fitting.paper_folds("yahoo-ltr", random_state=0)
    from lrank.data import fetch
    from lrank.data.fetch import as_fold

    tr, va, te = fetch("yahoo-ltr").fold(1)
    every = set(tr.qid) | set(va.qid) | set(te.qid)
    assert len(ya) == 3 and all(f.valid is None for f in ya)
    assert np.array_equal(ya[0].train.qid, tr.qid) and np.array_equal(ya[0].test.qid, te.qid)  # the official
    for f in ya[1:]:  # two more splits of set 1's queries, with the official sizes, disjoint
        assert (f.train.n_queries, f.test.n_queries) == (tr.n_queries, te.n_queries)
        assert set(f.train.qid) <= every and set(f.test.qid) <= every
        assert not set(f.train.qid) & set(f.test.qid)
    assert not np.array_equal(ya[1].test.qid, ya[2].test.qid)
    datasets, what, label, skipped = tree_fitting.profile_data("rehearsal", 0)
    assert label == {"MSLR": "MSLR (stand-in)", "Yahoo": "Yahoo (stand-in)"} and not skipped
    assert len(datasets["MSLR"]) == 5 and all(as_fold(f).valid is None for f in datasets["MSLR"])


def test_a_missing_download_fails_the_rehearsal_and_is_skipped_in_the_paper_profile(tmp_path, monkeypatch):
    standins.write_standin("mq2007", tmp_path)  # MQ2008 absent
    monkeypatch.setenv("LRANK_DATA", str(tmp_path))
    with pytest.raises(RuntimeError, match="the rehearsal skipped mq2008"):
        rankboost_plus.mq_data("rehearsal", None, None, 0, {})
    with pytest.raises(RuntimeError, match="rehearsal skipped"):
        tree_fitting.profile_data("rehearsal", 0)
    monkeypatch.setenv("LRANK_PROFILE", "paper")
    skipped = {}
    (tmp_path / "downloads/mq2007/STANDIN.txt").unlink()  # as if real: the paper profile reads it
    mq, _ = rankboost_plus.mq_data("paper", None, None, 0, skipped)
    assert list(mq) == ["mq2007"] and "python -m lrank fetch mq2008" in skipped["mq2008"]


def test_fold_seeds_refuse_fewer_than_one_repeat():  # the seeds themselves: tests/papers/test_papers_*.py
    for r in (0, -1):
        with pytest.raises(ValueError, match=r"repeats\['quick'\] must be >= 1"):
            budgets.fold_seeds({"quick": r}, "quick", 0)
