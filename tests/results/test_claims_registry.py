"""The claims registry this run's notebooks wrote (``<figures>/claims.csv``), across the five papers.

Every paper notebook that builds a registry has its rows there; no verdict contradicts its own numbers
(`lrank.claims.check_consistency`: the sign of the effect and the adjusted p against the verdict); every
tested claim states n and p; findings are never counted as paper claims; the stored seed-stability run
(``figures/seeds/seed-<k>/``, ``python -m lrank reproduce --seeds``) covers exactly the claims the
notebooks make now, so the index never shows the stability of a claim that has changed.
"""

import math

import pandas as pd
import pytest

from lrank import claims
from lrank.paths import notebooks_dir, repo_dir

PAPER_BOOKS = sorted(p.stem for p in notebooks_dir().glob("[0-9][0-9]*.ipynb")
                     if "claims.Registry(" in p.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reg(fresh_results):
    for nb in PAPER_BOOKS:
        fresh_results(nb)                    # fails when a notebook's results are absent or stale
    return claims.load()


def test_every_paper_notebook_wrote_its_rows_with_every_column(reg):
    assert list(reg.columns) == list(claims.COLUMNS)
    assert sorted(set(reg["notebook"])) == PAPER_BOOKS
    dup = reg.duplicated(["notebook", "id"])                  # ids are unique within a paper
    assert not dup.any(), reg.loc[dup, ["notebook", "id"]].values.tolist()
    paper = reg[reg["kind"] != "finding"]
    assert set(paper["verdict"]) <= set(claims.VERDICTS)         # a finding carries no verdict
    assert set(reg["kind"]) <= set(claims.KINDS)
    assert set(reg["data_kind"]) <= set(claims.DATA_KINDS)


def test_no_verdict_contradicts_its_own_numbers(reg):
    assert claims.check_consistency(reg) == []


def test_tested_claims_state_their_units_and_p(reg):
    tested = reg[reg["test"].notna() & (reg["kind"] != "finding")]
    assert len(tested) > 0
    for r in tested.to_dict("records"):
        assert isinstance(r["unit"], str) and r["unit"], r["id"]
        assert r["n"] >= 1 and math.isfinite(r["p"]) and math.isfinite(r["p_adj"]), r["id"]
        assert r["p_adj"] >= r["p"] - 1e-12, r["id"]              # Holm never lowers a p
        if isinstance(r["margin"], float) and math.isfinite(r["margin"]):
            assert isinstance(r["margin_rationale"], str) and r["margin_rationale"].strip(), r["id"]


def test_findings_are_never_counted_as_paper_claims(reg):
    counts = claims.summary(reg)
    assert int(counts.to_numpy().sum()) == int((reg["kind"] != "finding").sum())


def test_the_stored_seed_runs_cover_the_claims_made_now(reg):
    root = repo_dir() / "figures" / "seeds"
    stored = sorted(root.glob("seed-*/claims/*.csv"))
    if not stored:
        pytest.skip("no seed-stability run stored (python -m lrank reproduce --seeds 1-4)")
    stale = []
    for path in stored:
        ids = set(pd.read_csv(path, usecols=["id"])["id"])
        now = set(reg.loc[reg["notebook"] == path.stem, "id"])
        if ids != now:
            stale.append(f"{path.relative_to(root)}: {len(ids - now)} claim(s) no longer made, "
                         f"{len(now - ids)} new")
    assert not stale, "rerun python -m lrank reproduce --only NN --seeds 1-4 for: " + "; ".join(stale)
