"""The figures of notebook 05 (RankBoost+, Connamacher et al. 2020) and the sentence after each one.

Every function draws one of the paper's figures from the notebook's results with one colour and marker per
algorithm (`lrank.plots.algo_style`), the legend outside the data and ``constrained_layout``, and returns the
figure with a sentence rendered from the plotted numbers: what to see, and whether it matches the paper.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lrank.plots import algo_style

ALGOS = ("Rb-d", "Rb-c", "Rb+")


def _style(name: str, **kw: Any) -> dict:
    st = algo_style(name)
    return {"color": st["color"], **kw}


def _order(values: Mapping[str, float], lower_is_better: bool) -> list[str]:
    return sorted(values, key=lambda a: values[a] if lower_is_better else -values[a])


def _says(ok: bool) -> str:
    return "as the paper says" if ok else "unlike the paper"


# --------------------------------------------------------------------------------------------------
# Fig. 1: time per round of optimal and efficient RankBoost+ (stored times), train E2 and R2 (computed)
# --------------------------------------------------------------------------------------------------
def fig1(runs: Mapping[str, pd.DataFrame], times: pd.DataFrame | None, prune_round: int | None,
         column: Any) -> plt.Figure:
    """Fig. 1: per-round wall time (left, when ``times`` is given; ``column(label)`` names its column), train
    E2 and train R2 of the four fits (``runs``: label -> ``history_``)."""
    n = 3 if times is not None else 2
    fig, axes = plt.subplots(1, n, figsize=(4.0 * n, 3.4), layout="constrained")
    *ax_t, ax_e2, ax_r2 = axes
    dashes = {"Optimal Rb+": (4, 2), "Efficient Rb+": (), "Rb-d": (), "Rb-c": ()}
    for label, h in runs.items():
        st = dict(_style(label), marker=algo_style(label)["marker"], markevery=10, ms=4,
                  dashes=dashes.get(label, ()))
        if times is not None:
            ax_t[0].plot(times["round"], 1e3 * times[column(label)], label=label, lw=1.2, **st)
        ax_e2.plot(h.index, h["train_E2"], label=label if times is None else None, **st)
        ax_r2.plot(h.index, h["train_R2"], **st)
    if times is not None:
        if prune_round is not None:
            ax_t[0].axvline(prune_round, color="grey", ls=":", lw=1, label="pruning round (Alg. 2)")
        ax_t[0].set_yscale("log")
        ax_t[0].set_ylabel("time per round (ms)")
        ax_t[0].set_title("stored benchmark times", fontsize=9)
    ax_e2.set_yscale("log")
    ax_e2.set_ylabel("train E2")
    ax_r2.set_ylabel("train R2")
    for ax in axes:
        ax.set_xlabel("round")
    src = axes[0] if times is not None else ax_e2
    fig.legend(*src.get_legend_handles_labels(),
               loc="outside right center", fontsize=8)
    return fig


def fig1_sentence(summary: Mapping[str, Any] | None, span: Mapping[str, Any], times_file: str) -> str:
    """What Fig. 1 shows, from the stored times' summary (`fig1_summary`) and optimal Rb+'s span
    (`fig1_span_summary`)."""
    if summary is None:
        return f"Fig. 1 is drawn without its time panel ({times_file}): no speed claim can be read from it."
    med, post = summary["median_s"], summary["after_pruning_s"]
    spike_is_prune = summary["slowest_round"] == summary["pruning_round"]
    text = (f"In the left panel, efficient Rb+'s one tall round is round {summary['slowest_round']} "
            f"({summary['slowest_s'] / med['Efficient Rb+']:.1f}x its median), "
            + ("its pruning round" if spike_is_prune else "not its pruning round "
                                                          f"({summary['pruning_round']})")
            + f"; after it, efficient Rb+ runs at {post['Efficient Rb+'] / post['Rb-d']:.2f}x Rb-d's and "
            f"{post['Efficient Rb+'] / post['Rb-c']:.2f}x Rb-c's time per round, while optimal Rb+ takes "
            f"{med['Optimal Rb+'] / med['Efficient Rb+']:.1f}x efficient Rb+'s: the paper's picture (one "
            "slow round, then the speed of Rb-d / Rb-c), with the pruning at the round our task's pair space "
            "fills, not round 30.")
    text += (f" Optimal Rb+ slows down once its independent set reaches {span['max_independent']} rankers "
             f"(round {span['full_rank_round']}): every candidate then lies in span(S) and needs a "
             "least-squares solve. In the middle and right panels the two Rb+ curves coincide (efficient Rb+ "
             "loses nothing in training loss here), Rb-d's E2 rises and Rb-c's turns up.")
    return text


# --------------------------------------------------------------------------------------------------
# Fig. 2: convergence on MovieLens
# --------------------------------------------------------------------------------------------------
def fig2(run: Mapping[str, Any]) -> tuple[plt.Figure, dict]:
    """Fig. 2 in four panels: test R1 (solid) and R2 (dashed), train E1, train ln E2 (mean over tasks, on a
    symlog axis: linear within [-1, 1], logarithmic beyond, so that Rb+'s curve just below 0 and Rb-d's in
    the hundreds are both readable; E2 itself overflows float64 for Rb-d) and test NDCG@5. Returns the figure
    and the numbers its sentence reads (`fig2_sentence`)."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.4), sharex=True, layout="constrained")
    (a_r, a_e1), (a_e2, a_n) = axes
    curves, train = run["curves"], run["train"]
    for a in ALGOS:
        cv, tr = curves[a], train[a]
        a_r.plot(cv.index, cv["r1"], label=a, **_style(a))
        a_r.plot(cv.index, cv["r2"], ls="--", **_style(a))
        a_e1.plot(tr.index, tr["E1_mean"], **_style(a))
        a_e2.plot(tr.index, tr["log_E2_mean"], ls="--", **_style(a))
        a_n.plot(cv.index, cv["ndcg@5"], **_style(a))
    a_e2.set_yscale("symlog", linthresh=1.0)
    a_e2.axhline(0.0, color="grey", lw=0.6)
    a_r.set_ylabel("test R1 (solid), R2 (dashed)")
    a_e1.set_ylabel("train E1 (mean over tasks)")
    a_e1.set_yscale("log")
    a_e2.set_ylabel("train ln E2 (mean; symlog)")
    a_n.set_ylabel("test NDCG@5")
    for ax in (a_e2, a_n):
        ax.set_xlabel("round")
    fig.legend(*a_r.get_legend_handles_labels(), loc="outside right center", fontsize=9)
    nums = {"r1": {a: float(curves[a]["r1"].iloc[-1]) for a in ALGOS},
            "r2": {a: float(curves[a]["r2"].iloc[-1]) for a in ALGOS},
            "e1": {a: float(train[a]["E1_mean"].iloc[-1]) for a in ALGOS},
            "log_e2": {a: float(train[a]["log_E2_mean"].iloc[-1]) for a in ALGOS},
            "rbc_turn": int(train["Rb-c"]["log_E2_mean"].idxmin()),
            "ndcg_peak": {a: (int(curves[a]["ndcg@5"].idxmax()), float(curves[a]["ndcg@5"].max()),
                              float(curves[a]["ndcg@5"].iloc[-1])) for a in ALGOS},
            "rounds": int(curves["Rb+"].index[-1])}
    return fig, nums


def fig2_sentence(nums: Mapping[str, Any]) -> str:
    """What Fig. 2 shows and whether it is the paper's picture (the tests are in the registry rows after
    it)."""
    T = nums["rounds"]
    r2 = _order(nums["r2"], True)
    e1 = _order(nums["e1"], True)
    le2 = nums["log_e2"]
    drop = {a: p[1] - p[2] for a, p in nums["ndcg_peak"].items()}
    least = min(drop, key=drop.get)
    return (f"Top left: at round {T} the test R2 order is {' < '.join(r2)} "
            f"({_says(r2 == ['Rb+', 'Rb-c', 'Rb-d'])}: Rb+ lowest, Rb-d highest). "
            f"Top right: train E1 ends lowest for {e1[0]} and highest for {e1[-1]} "
            f"({_says(e1[-1] == 'Rb+')}: Rb-d and Rb-c minimise E1 better than Rb+). "
            f"Bottom left: ln E2 ends at {le2['Rb+']:.2f} for Rb+, {le2['Rb-c']:.2f} for Rb-c (lowest at "
            f"round {nums['rbc_turn']}, then rising) and {le2['Rb-d']:.0f} for Rb-d "
            f"({_says(le2['Rb+'] < le2['Rb-c'] < le2['Rb-d'] and le2['Rb-d'] > 0)}: Rb+ lowers E2, Rb-c "
            f"turns up, Rb-d raises it). Bottom right: NDCG@5 falls from its peak by {drop['Rb+']:.3f} for "
            f"Rb+, {drop['Rb-c']:.3f} for Rb-c and {drop['Rb-d']:.3f} for Rb-d ({_says(least == 'Rb+')}: Rb+ "
            "overfits least).")


# --------------------------------------------------------------------------------------------------
# Fig. 3: critical difference diagrams
# --------------------------------------------------------------------------------------------------
def fig3(scores: Mapping[tuple[str, str], pd.DataFrame], alpha: float = 0.05) -> tuple[plt.Figure, dict]:
    """One critical difference diagram per (domain, metric) of ``scores`` (per-task test values, lower is
    better), stacked so that no label can meet another panel's; colours from `algo_style`. Returns the figure
    and, per panel, the average ranks and Nemenyi p-values its sentence reads."""
    import scikit_posthocs as sp

    from lrank import stats

    fig, axes = plt.subplots(len(scores), 1, figsize=(7.5, 1.55 * len(scores)), layout="constrained",
                             squeeze=False)
    palette = {a: algo_style(a)["color"] for a in ALGOS}
    info = {}
    for ax, ((dom, met), sc) in zip(axes[:, 0], scores.items()):
        ranks = stats.average_ranks(sc, lower_is_better=True)
        nem = stats.nemenyi(sc)
        sp.critical_difference_diagram(ranks, nem, alpha=alpha, ax=ax, color_palette=palette,
                                       label_fmt_left="{label} ({rank:.2f})", label_fmt_right="({rank:.2f}) "
                                                                                              "{label}",
                                       label_props={"fontsize": 8})
        ax.set_title(f"test {met.upper()}, {dom} ({sc.shape[0]} tasks)", fontsize=9, loc="left")
        info[(dom, met)] = {"ranks": ranks.to_dict(), "p": {o: float(nem.loc["Rb+", o]) for o in ("Rb-c",
                                                                                                  "Rb-d")},
                            "p_cd": float(nem.loc["Rb-c", "Rb-d"])}
    return fig, info


def fig3_sentence(info: Mapping[tuple[str, str], Mapping[str, Any]], alpha: float = 0.05) -> str:
    """Per panel: is Rb+ alone at the best end with no bar to either other algorithm (the paper's Fig. 3)?"""
    parts = []
    for (dom, met), d in info.items():
        sep = [o for o, p in d["p"].items() if p < alpha]
        best = min(d["ranks"], key=d["ranks"].get)
        if best == "Rb+" and len(sep) == 2:
            what = "Rb+ ranks best with no bar to Rb-c or Rb-d (the paper's picture)"
        elif best == "Rb+":
            joined = [o for o in d["p"] if o not in sep]
            what = (f"Rb+ ranks best but a bar joins it to {' and '.join(joined)} (Nemenyi p "
                    + ", ".join(f"{d['p'][o]:.2g}" for o in joined) + "): not significant, unlike the paper")
        else:
            what = f"{best} ranks best, unlike the paper"
        parts.append(f"{met.upper()} on {dom}: {what}")
    return (f"A bar joins algorithms whose average ranks Nemenyi's test does not separate at {alpha}. "
            + "; ".join(parts) + ".")


# --------------------------------------------------------------------------------------------------
# Fig. 4: Rb-d halts when eps- = 0
# --------------------------------------------------------------------------------------------------
def fig4(rbd: pd.DataFrame, rbc: pd.DataFrame, completed: Mapping[float, float]) -> plt.Figure:
    """Train E1 by round of the halted Rb-d and of Rb-c on the same training part, and (markers at the halting
    round) the E1 of Rb-d's ensemble with the halting ranker added at the weights of ``completed``."""
    fig, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
    T = int(rbd.index[-1])
    ax.plot(rbd.index, rbd["train_E1"], label=f"Rb-d (halts: round {T + 1} has eps- = 0)", **_style("Rb-d"))
    ax.plot(rbc.index, rbc["train_E1"], label="Rb-c", **_style("Rb-c"))
    ax.axhline(float(rbd["train_E1"].iloc[-1]), color="grey", ls=":", lw=1, label="Rb-d's returned ensemble")
    ws = sorted(completed)
    ax.scatter([T + 1] * len(ws), [completed[w] for w in ws], marker="_", s=120, color="black", zorder=3,
               label="that ensemble + the halting ranker at weight " + ", ".join(f"{w:g}" for w in ws))
    ax.set_xlabel("round")
    ax.set_ylabel("train E1")
    ax.set_yscale("log")
    fig.legend(loc="outside right center", fontsize=8)
    return fig


def fig4_sentence(rbd: pd.DataFrame, rbc: pd.DataFrame, completed: Mapping[float, float],
                  halted: pd.DataFrame,
                  domain: str) -> str:
    """What Fig. 4 shows on its fold, and how often the same holds on every halted fold of ``domain``."""
    e_d, e_c = float(rbd["train_E1"].iloc[-1]), float(rbc["train_E1"].min())
    lower = int((halted["rbc_E1_min"] < halted["rbd_E1"]).sum())
    w = max(completed)
    return (f"On this fold Rb-d halts after {len(rbd)} rounds at train E1 = {e_d:.3f}; Rb-c's lowest over "
            f"{len(rbc)} rounds is {e_c:.3f}, so here Rb-c goes {'lower' if e_c < e_d else 'no lower'} "
            f"({_says(e_c < e_d)}, whose plot shows Rb-c below the halted Rb-d). Over the {len(halted)} "
            f"{domain} folds where Rb-d halted after at least one round, Rb-c goes lower on {lower}. The "
            f"halted ensemble is still not at the minimum of E1: adding the halting ranker with weight {w:g} "
            f"lowers E1 to {completed[w]:.3f} (Observation 2: the infimum is at infinite weight).")


# --------------------------------------------------------------------------------------------------
# Fig. 5: the Lemma 1 construction
# --------------------------------------------------------------------------------------------------
def fig5(X: np.ndarray, n: int) -> plt.Figure:
    """Lemma 1's data for ``n``: a_1..a_{n+1} (circles) above b_1..b_{n+1} (stars); arrows mark the elements
    each weak ranker maps to 1 (columns of ``X``: h1, h2)."""
    fig, ax = plt.subplots(figsize=(7.2, 2.6), layout="constrained")
    xs = np.arange(n + 1)
    ax.scatter(xs, np.ones(n + 1), s=120, c="#D55E00", marker="o", label="a_i (ranked higher)")
    ax.scatter(xs, np.zeros(n + 1), s=160, c="#0072B2", marker="*", label="b_j")
    for i in range(n + 1):
        ax.annotate(f"a{i + 1}", (i + 0.12, 1.12), ha="left")
        ax.annotate(f"b{i + 1}", (i, -0.3), ha="center")
    colour = {0: "#CC79A7", 1: "#009E73"}
    for col in (0, 1):
        for k in np.flatnonzero(X[:, col] == 1):
            x, y = k % (n + 1), 1.0 if k <= n else 0.0
            up = 1 if (y or col == 1) else -1
            ax.annotate("", xy=(x + 0.05 * col, y + 0.08 * up), xytext=(x - 0.25 + 0.55 * col, y + 0.38 * up),
                        arrowprops=dict(arrowstyle="->", color=colour[col]))
        ax.plot([], [], color=colour[col], label=f"h{col + 1} = 1")
    ax.set_ylim(-0.6, 1.6)
    ax.set_xlim(-0.7, n + 0.7)
    ax.axis("off")
    fig.legend(loc="outside right center", fontsize=8)
    return fig


def finite(x: Any) -> bool:
    """True for a finite number."""
    return isinstance(x, (int, float, np.integer, np.floating)) and math.isfinite(float(x))
