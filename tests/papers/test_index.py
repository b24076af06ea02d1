"""The index renders whatever the claims registry holds: counts per paper without findings, every row
linked to its deciding cell, papers not yet in the registry said so, and seed stability when stored."""

import re

import pandas as pd
import pytest

from lrank import claims
from lrank.papers import index


def _registry(tmp_path, monkeypatch, n_tested: int = 14) -> pd.DataFrame:
    """Two synthetic notebooks' registries (01 and 02; 03-05 absent), written like the notebooks do."""
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    reg = claims.Registry("01_rankboost", "RankBoost")
    reg.exact("thm.example", location="Example 1", sentence="the worked example gives 16/19",
              ours=16 / 19, paper_value=16 / 19, tol=1e-9)
    reg.derivation("thm1", location="Theorem 1", sentence="the loss is at most prod Z_t", shown="telescopes")
    for i in range(n_tested):  # strong effects: HELD; none: UNDECIDED; one against the paper: NOT HELD
        d = 1.0 if i % 3 == 0 else (0.0 if i % 3 == 1 else -1.0)
        a = [d + 0.01 * ((k % 5) - 2) for k in range(30)]
        reg.tested(f"fig.{i}", location=f"Fig. {i}", sentence=f"claim number {i} of the paper",
                   quantity="AP", data_kind="paper", data="EachMovie",
                   evidence=claims.paired(a, [0.0] * 30, unit="users", effect_desc="AP difference"))
    reg.finding("finding.sign", location="Sec. 3", sentence="not a claim of the paper", quantity="sign",
                ours=1, data_kind="synthetic", data="seeded")
    reg.finalize(record=False)
    reg2 = claims.Registry("02_adarank", "AdaRank")
    reg2.untestable("fig3", location="Fig. 3", sentence="outperforms on WSJ and AP",
                    reason="TREC data is licensed")
    reg2.finalize(record=False)
    return claims.load()


def test_counts_per_paper_exclude_findings_and_name_missing_papers(tmp_path, monkeypatch):
    df = _registry(tmp_path, monkeypatch)
    c = index.paper_counts(df).set_index("notebook")
    assert c.loc["01_rankboost", "claims"] == 2 + 14  # the finding is not a paper claim
    assert c.loc["01_rankboost", "findings"] == 1
    assert c.loc["01_rankboost", [*claims.VERDICTS]].sum() == c.loc["01_rankboost", "claims"]
    assert c.loc["01_rankboost", claims.NOT_HELD] >= 1 and c.loc["01_rankboost", claims.UNDECIDED] >= 1
    assert c.loc["02_adarank", claims.NOT_TESTABLE] == 1
    md = index.summary_markdown(df)
    for nb in ("03_boostingtree", "04_tree_fitting", "05_rankboost_plus"):
        assert c.loc[nb, "status"] == "not yet in the registry"
        assert re.search(rf"\({nb}\.ipynb\)\): not yet in the registry", md), md
    assert "16 claims:" in md and "1 finding besides" in md
    # one highlight per verdict present, linked to its deciding cell; protocol claims first
    assert re.search(r"\*\*HELD\*\* \(\d+\): \[Fig\. \d+\]\(01_rankboost\.ipynb#claim-fig-\d+\)", md), md


def test_the_claims_table_has_every_row_linked_never_truncated(tmp_path, monkeypatch):
    df = _registry(tmp_path, monkeypatch, n_tested=40)
    html = index.claims_table_html(df)
    n_claims = int((df["kind"] != "finding").sum())
    assert n_claims == 43 and html.count("<tr>") == n_claims + 1  # header + every claim
    for r in df[df["kind"] != "finding"].to_dict("records"):
        assert f'href="{r["notebook"]}.ipynb#{claims.anchor_of(r["id"])}"' in html
    assert "not a claim of the paper" not in html
    findings = index.claims_table_html(df, findings=True)
    assert findings.count("<tr>") == 2 and "not a claim of the paper" in findings


def test_the_legend_explains_every_verdict_word():
    md = index.legend_markdown()
    for v in (*claims.VERDICTS, index.FRAGILE):
        assert f"**{v}**" in md


def test_seed_stability_marks_a_flipped_decided_verdict_fragile(tmp_path, monkeypatch):
    df = _registry(tmp_path, monkeypatch)
    assert "No seed-stability run" in index.seed_summary(index.with_seeds(df, index.seed_verdicts()))
    held = df[df["verdict"] == claims.HELD]["id"].iloc[-1]
    for k in (1, 2):
        seed = df.copy()
        if k == 2:
            seed.loc[seed["id"] == held, "verdict"] = claims.UNDECIDED
        d = tmp_path / "figures" / "seeds" / f"seed-{k}"
        d.mkdir(parents=True)
        seed.to_csv(d / "claims.csv", index=False)
    out = index.with_seeds(df, index.seed_verdicts())
    row = out[out["id"] == held].iloc[0]
    assert row["seeds_agree"] == "2/3" and row["fragile"]  # the stored run counts as seed 0
    assert out["fragile"].sum() == 1
    assert set(out["seeds_agree"]) == {"3/3", "2/3", ""}  # "": the finding, which has no verdict
    assert (out[out["kind"] == "finding"]["seeds_agree"] == "").all()
    html = index.claims_table_html(out)
    assert html.count(index.FRAGILE) == 1
    assert re.search(r"1 of \d+ decided verdicts \(\d+%\) are FRAGILE", index.seed_summary(out))


def test_an_absent_registry_renders_as_empty(tmp_path):
    df = index.load_registry(tmp_path / "nothing.csv")
    assert df.empty
    assert index.summary_markdown(df).count("not yet in the registry") == 5
    assert index.claims_table_html(df).count("<tr>") == 1


@pytest.mark.parametrize("nb", [nb for nb, _ in index.READING_ORDER])
def test_the_reading_order_names_existing_notebooks(nb):
    from lrank.paths import notebooks_dir

    assert (notebooks_dir() / f"{nb}.ipynb").is_file()
