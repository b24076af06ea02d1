"""`lrank.plots.overlaps` finds overprinted text, and `save_figure` records what it found."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from lrank import plots, results


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _clean() -> plt.Figure:
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name in ("Rb+", "Rb-c"):
        ax.plot([1, 2, 3], np.arange(3) + len(name), label=name, **plots.algo_style(name))
    ax.set_xlabel("rounds")
    ax.set_ylabel("test NDCG@10")
    ax.set_title("a figure that reads cleanly")
    plots.legend_outside(ax)
    return fig


def test_a_clean_figure_has_no_overlap():
    assert plots.overlaps(_clean()) == []
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([0, 1])
    fig.suptitle("a title over the figure")
    fig.supxlabel("a label under it")
    fig.text(0.01, 0.5, "a note")
    assert plots.overlaps(fig) == []  # each figure-level text counted once, not against itself


def test_crowded_tick_labels_overlap():
    # the defect of the audit: long category labels on a narrow axis print into each other
    fig, ax = plt.subplots(figsize=(2.0, 2.0))
    names = ["(2.7) Rb-d long label", "Rb+ (1.3) long label", "Rb-c (2.0) long label"]
    ax.bar(names, [1, 2, 3])
    found = plots.overlaps(fig)
    assert found, "three long tick labels on a 2-inch axis must overlap"
    assert any("x tick label '(2.7) Rb-d long label' overlaps axes 0 x tick label 'Rb+ (1.3) long label'" in f
               for f in found), found


def test_a_legend_over_the_next_panel_overlaps_its_tick_labels():
    fig, (a, b) = plt.subplots(1, 2, figsize=(6.4, 3.0))
    a.plot([0, 1], label="a very long legend entry that runs into the next panel")
    b.plot([0, 1])
    plots.legend_outside(a)
    found = plots.overlaps(fig)
    assert any("axes 0 legend overlaps axes 1" in f for f in found), found


def test_a_legend_on_the_title_overlaps_and_crowded_panels_overlap():
    fig, ax = plt.subplots(figsize=(4.0, 3.0))
    ax.plot([0, 1], label="Rb+")
    ax.set_title("a title under the legend")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 0.99))
    found = plots.overlaps(fig)
    assert any("title 'a title under the legend' overlaps axes 0 ('a title under the legend') legend" in f
               for f in found), found
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(4.0, 2.0))  # no layout engine: panels crowd
    bottom.set_title("bottom")
    found = plots.overlaps(fig)
    assert any("axes 0 x tick label" in f and "axes 1 ('bottom')" in f for f in found), found


def test_labels_of_a_critical_difference_diagram_that_print_into_each_other_overlap():
    # 05 Fig. 3 as the audit read it: "(2.7) Rb-d" written over "Rb+ (1.3)" of the next panel
    fig, (a, b) = plt.subplots(1, 2, figsize=(6.0, 2.0))
    for ax in (a, b):
        ax.set_axis_off()  # a CD diagram draws no axes, only its labels
    a.text(0.95, 0.5, "(2.7) Rb-d", transform=a.transAxes)
    b.text(-0.05, 0.5, "Rb+ (1.3)", transform=b.transAxes, ha="right")
    found = plots.overlaps(fig)
    assert found == ["axes 0 text '(2.7) Rb-d' overlaps axes 1 text 'Rb+ (1.3)'"], found


def test_an_arrow_crossing_a_label_is_not_overprinted_text():
    fig, ax = plt.subplots(figsize=(3.0, 3.0))
    ax.set_axis_off()
    ax.text(0.5, 0.5, "a5")
    ax.annotate("h1", xy=(0.52, 0.52), xytext=(0.1, 0.1), arrowprops={"arrowstyle": "->"})
    assert plots.overlaps(fig) == []


def test_hidden_and_empty_text_and_ticks_outside_the_view_are_ignored():
    fig, ax = plt.subplots(figsize=(3.0, 3.0))
    ax.plot([0, 1], [0, 1])
    ax.set_xticks([0, 0.01, 5], ["", "hidden", "outside"])  # 5 lies outside the view
    ax.get_xticklabels()[1].set_visible(False)
    ax.set_xlim(0, 1)
    assert plots.overlaps(fig) == []


def test_tol_must_be_non_negative():
    with pytest.raises(ValueError, match="tol"):
        plots.overlaps(_clean(), tol=-1)


def test_save_figure_records_the_overlaps_of_each_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("LRANK_OUTPUT_DIR", str(tmp_path))
    results.reset("zz_overlaps")
    plots.save_figure(_clean(), "zz_clean", "test figure (synthetic)")
    fig, ax = plt.subplots(figsize=(2.0, 2.0))
    ax.bar(["a long first label", "a long second label"], [1, 2])
    plots.save_figure(fig, "zz_crowded", "test figure (synthetic)")
    rec = results.load_meta("zz_overlaps")["overlaps"]
    assert rec["zz_clean"] == []
    assert rec["zz_crowded"] and "overlaps" in rec["zz_crowded"][0]
