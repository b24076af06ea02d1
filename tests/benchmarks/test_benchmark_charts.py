"""The benchmark page's plumbing: each row classified by kind, each kind on its own chart, the table whole."""

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from lrank import plots
from lrank.papers import benchmarks as charts


def _run(tmp_path, n_time: int = 30):
    rows = [{"module": "gbrt", "benchmark": f"MART time per tree {i}", "ratio": 1.0 + i, "ratio_kind": "",
             "target": ">= 1.0 (issue 15.1)", "status": "met"} for i in range(n_time)]
    more = [  # module, benchmark, ratio, ratio_kind, target, status: one row of each other kind
        ("scale", "peak RSS", 0.96, "ours / reference (MB; lower is better)", "ours <= LightGBM's", "met"),
        ("gbrt", "OLE vs SE", 4.5, "ours_s / reference_s (slowdown; lower is better)", "<= 1.5", "missed"),
        ("startup", "cold fit", 7.4, "cold seconds (ours_s)", "cold <= 5 s", "missed"),
        ("gbrt", "NDCG vs LightGBM", -0.0098, "ours - reference (mean NDCG@10 difference over queries)",
         "|mean difference| <= 0.01", "met"),
    ]
    keys = ("module", "benchmark", "ratio", "ratio_kind", "target", "status")
    rows += [dict(zip(keys, r)) for r in more]
    path = tmp_path / "benchmarks.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return charts.read_run(path)


def test_rows_are_classified_by_kind_and_direction(tmp_path):
    df = _run(tmp_path).set_index("benchmark")
    assert df.loc["peak RSS", "kind"] == "memory ratio" and df.loc["peak RSS", "lower_is_better"]
    assert df.loc["OLE vs SE", "kind"] == "time ratio" and df.loc["OLE vs SE", "lower_is_better"]
    assert df.loc["cold fit", "kind"] == "seconds"
    assert df.loc["NDCG vs LightGBM", "kind"] == "NDCG difference"
    assert df.loc["MART time per tree 3", "kind"] == "time ratio"
    assert not df.loc["MART time per tree 3", "lower_is_better"]
    assert charts.target_value("5-10x") == (">=", 5.0) and charts.target_value("(report)")[0] is None


@pytest.mark.parametrize("kind", charts.KINDS)
def test_each_kind_has_its_own_chart_that_reads_cleanly(tmp_path, kind):
    df = _run(tmp_path)
    fig = charts.chart(df, kind)
    n_bars = sum(len(c) for ax in fig.axes for c in ax.containers)
    assert n_bars == int((df["kind"] == kind).sum())  # only this kind's rows, every one of them
    assert plots.overlaps(fig) == []
    plt.close(fig)


def test_the_table_has_every_row_and_the_sentence_names_misses(tmp_path):
    df = _run(tmp_path, n_time=80)
    assert charts.table_html(df).count("<tr>") == len(df) + 1 == 85
    assert "OLE vs SE (4.5 against <= 1.5)" in charts.what_to_see(df, "time ratio")
    assert charts.chart(df[df["kind"] != "seconds"], "seconds") is None


def test_an_unknown_kind_is_named_and_the_caption_names_the_active_profile(tmp_path, monkeypatch):
    """what_to_see raised a bare KeyError for an unknown kind; save_chart's caption said "quick" whatever
    profile the figure was saved under."""
    df = _run(tmp_path)
    with pytest.raises(ValueError, match="kind must be one of .* got 'ratio'"):
        charts.what_to_see(df, "ratio")
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("LRANK_PROFILE", "paper")
    png = charts.save_chart(df, "time ratio")
    caption = png.with_suffix(".caption.txt").read_text()
    assert "paper" in str(png) and "profile of this notebook: paper." in caption


def test_undecided_rows_are_counted_and_named_apart_from_misses(tmp_path):
    df = _run(tmp_path, n_time=3)
    df.loc[df["benchmark"] == "MART time per tree 1", "status"] = "undecided"
    sentence = charts.what_to_see(df, "time ratio")
    assert "2 met the target, 1 missed it, 1 undecided" in sentence
    assert "Undecided (the paired test cannot tell): gbrt: MART time per tree 1." in sentence
    assert "Missed: gbrt: OLE vs SE" in sentence
    assert "1 undecided" in charts.counts_markdown(df)
    assert "undecided" not in charts.counts_markdown(_run(tmp_path, n_time=3))  # only when there is one


def test_undecided_rows_are_named_under_the_reason_their_notes_give(tmp_path):
    """A time-to-accuracy row undecided by its paired test and one met on the timed fold split but below the
    peer on another split (rows made by `time_to_accuracy._rows`) are named under their own reason."""
    import numpy as np

    from lrank.benchmarks import time_to_accuracy as B

    rng = np.random.default_rng(0)
    ours = rng.uniform(0.3, 0.9, size=80)
    low = np.zeros_like(ours)
    peers = {"lightgbm": ours - 0.05,  # lrank reaches its best sooner: met on the timed split
             "xgboost": ours + 0.002 + rng.normal(0, 0.05, size=80)}  # never reached, not significantly
    cs = {"lrank": B._curve(np.array([1.0, 2.0, 3.0]), np.array([low, ours, low]))}
    cs |= {p: B._curve(np.array([2.0, 4.0, 6.0]), np.array([low, v, low])) for p, v in peers.items()}
    splits = [{"lrank": 0.40, "lightgbm": 0.41, "xgboost": 0.42}]  # lrank below both on the other split
    rows = B._rows("toy", 1, cs, {s: 3 for s in cs}, 3, 0.2, splits=splits, seeds=(1,))
    assert [r["status"] for r in rows] == ["undecided", "undecided"]
    path = tmp_path / "benchmarks.csv"
    pd.DataFrame(rows).assign(module="tta").to_csv(path, index=False)
    sentence = charts.what_to_see(charts.read_run(path), "time ratio")
    assert "0 missed it, 2 undecided and 0 report" in sentence
    assert ("Undecided (the paired test cannot tell): tta: test NDCG@10 reached per second vs xgboost, toy. "
            "Undecided (met on the timed fold split, lrank's best below the peer's on another fold split): "
            "tta: test NDCG@10 reached per second vs lightgbm, toy." in sentence)


def test_a_row_measured_on_two_thread_counts_is_named_once_per_count(tmp_path):
    """The page measures some rows on 1 and 2 threads under one name: the sentence tells them apart by the
    thread count, and leaves a name that no other row shares as it is."""
    df = _run(tmp_path, n_time=3)
    twin = df[df["benchmark"] == "MART time per tree 1"].assign(threads=2)
    df = pd.concat([df.assign(threads=1), twin], ignore_index=True)
    df.loc[df["benchmark"] == "MART time per tree 1", "status"] = "undecided"
    sentence = charts.what_to_see(df, "time ratio")
    assert "2 undecided" in sentence
    assert ("Undecided (the paired test cannot tell): gbrt: MART time per tree 1, 1 thread; "
            "gbrt: MART time per tree 1, 2 threads." in sentence)
    assert "Missed: gbrt: OLE vs SE (4.5" in sentence  # its name is not shared: no thread count


def test_rows_that_could_not_be_measured_are_counted_and_named_with_why(tmp_path):
    """A row with status ``error`` (no number: a peer library or data set missing) and an ``invalid`` one are
    counted in the line and in their chart's sentence, so that the counts add up to the rows, and named with
    the start of their notes; the chart draws the invalid row with its own legend entry."""
    df = _run(tmp_path, n_time=3)
    df["notes"] = "what was timed"  # an invalid row's notes describe the row, not why it is invalid
    lost = df["benchmark"] == "MART time per tree 1"
    df.loc[lost, ["status", "ratio", "notes"]] = ["error", float("nan"),
                                                  "not measured: its data could not be had"]
    df.loc[df["benchmark"] == "MART time per tree 2", "status"] = "invalid"
    sentence = charts.what_to_see(df, "time ratio")
    n = int((df["kind"] == "time ratio").sum())
    assert (f"Of the {n} time ratios: 1 met the target, 1 missed it, 1 invalid, 1 not measured (no number, "
            "not drawn) and 0 report without one" in sentence)
    assert "Not measured: gbrt: MART time per tree 1 (not measured: its data could not be had)." in sentence
    assert "Invalid (a per-iteration time lost in timer noise): gbrt: MART time per tree 2. " in sentence
    line = charts.counts_markdown(df)
    assert "3 met, 2 missed, 0 report, 1 invalid, 1 not measured;" in line
    fig = charts.chart(df, "time ratio")
    labels = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert "invalid" in labels
    plt.close(fig)


def test_one_benchmark_against_two_peers_is_named_with_each_peer(tmp_path):
    """Two rows of one benchmark and thread count against different references (the per-tree rows against
    LightGBM and XGBoost) are told apart by the reference in the sentence."""
    df = _run(tmp_path, n_time=3)
    df["reference"] = "LightGBM"
    twin = df[df["benchmark"] == "OLE vs SE"].assign(reference="XGBoost")
    df = pd.concat([df, twin], ignore_index=True)
    sentence = charts.what_to_see(df, "time ratio")
    assert ("Missed: gbrt: OLE vs SE (vs LightGBM) (4.5 against <= 1.5); "
            "gbrt: OLE vs SE (vs XGBoost) (4.5 against <= 1.5)" in sentence)
    undecided = charts.what_to_see(df.assign(status="undecided"), "time ratio")
    assert "gbrt: MART time per tree 1;" in undecided  # a name no other row shares is left as it is


@pytest.mark.parametrize(("met", "want"), [(1.0, "met"), (True, "met"), ("True", "met"), (0.0, "missed"),
                                           (float("nan"), "missed"), ("no", "missed")])
def test_met_cells_of_any_type_read_as_their_value(met, want):
    """A float ``met`` column (1.0 / 0.0, what a CSV with a blank cell gives) read 1.0 as missed."""
    row = pd.Series({"target": ">= 2", "met": met})
    assert charts.status_of(row) == want
