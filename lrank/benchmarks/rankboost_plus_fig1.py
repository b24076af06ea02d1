"""Benchmark: RankBoost+ Fig. 1, time per round of optimal and efficient Rb+, Rb-d and Rb-c (notebook 05).

Notebook 05 draws Fig. 1's left panel from the file this block writes and times nothing itself (the
project stores notebooks without run noise). The four fits are the notebook's, from one definition
(`lrank.papers.rankboost_plus.fig1_task`, `fig1_models`: the same synthetic task, parameters and seed
0). Each round is timed by the estimator (``history_["time_s"]``: wall seconds from the end of one round
to the end of the next, the first round from the end of the fit's set-up). After one untimed fit of each
variant (compilation), every repeat fits the four variants in turn (alternated: optimal, efficient, Rb-d,
Rb-c, optimal, ...), on one numba thread; the figure of each round is the median over the repeats.

The per-round medians go to the side file ``figures/rankboost_plus_fig1_times.csv`` (`side_files`;
``python -m lrank bench`` writes it beside the page and adds ``profile`` and ``commit``; ``task``,
``repeats``, ``threads`` and ``load`` say how it was measured). One report row summarises it: efficient
Rb+'s median time per round after Algorithm 2's pruning round against Rb-c's over the same rounds, with
Rb-d's, its slowest round and the pruning round in the notes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lrank.benchmarks import _timing as T

_SIDE: dict[str, pd.DataFrame] = {}


def side_files() -> dict[str, pd.DataFrame]:
    """The tables of the last `run`, by artifact name (``python -m lrank bench`` writes them as CSV)."""
    return dict(_SIDE)


def measure(repeats: int, seed: int = 0) -> tuple[pd.DataFrame, int | None, int, float]:
    """Per-round median seconds of Fig. 1's four fits over ``repeats`` alternated repeats.

    Returns the table (``round``, one column per variant, ``task``, ``repeats``, ``threads``, ``load``),
    efficient Rb+'s pruning round, the thread count and the load average before the block.
    """
    from lrank.papers import rankboost_plus as rbp

    repeats = max(3, int(repeats))
    task = rbp.fig1_task(seed)
    with T.threads(1) as n_threads:
        load = T.settle()
        for model in rbp.fig1_models(seed).values():  # compile every kernel the fits call
            model.fit(task)
        runs: dict[str, list[np.ndarray]] = {label: [] for label in rbp.FIG1_VARIANTS}
        pruning = None
        for _ in range(repeats):
            for label, model in rbp.fig1_models(seed).items():
                model.fit(task)
                runs[label].append(model.history_["time_s"].to_numpy(dtype=float))
                if label == "Efficient Rb+":
                    pruning = model.prune_iteration_
    n = max(len(r) for rs in runs.values() for r in rs)
    table = pd.DataFrame({"round": np.arange(1, n + 1)})
    for label, rs in runs.items():
        padded = np.full((len(rs), n), np.nan)
        for i, r in enumerate(rs):
            padded[i, :len(r)] = r
        table[rbp.fig1_column(label)] = np.median(padded, axis=0)  # a variant that halted: NaN after it
    table["task"] = rbp.fig1_task_text(seed)
    table["repeats"] = repeats
    table["threads"] = n_threads
    table["load"] = round(float(load), 2)
    return table, pruning, n_threads, load


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.3f} ms"


def run(profile: str = "quick") -> list[dict]:
    """The report row (keys as in ``lrank.benchmarks``); the per-round table goes to `side_files`."""
    from lrank.papers import rankboost_plus as rbp

    _SIDE.clear()
    repeats = 9 if profile == "quick" else 21
    table, pruning, n_threads, load = measure(repeats)
    _SIDE[rbp.FIG1_TIMES] = table
    s = rbp.fig1_summary(table, pruning)
    post = s["after_pruning_s"]
    eff, rbd, rbc = post["Efficient Rb+"], post["Rb-d"], post["Rb-c"]
    if pruning is not None:
        where = (f"after its pruning step (Algorithm 2 line 14, round {pruning}; "
                 f"{s['rounds_after_pruning']} rounds)")
    else:
        where = f"from round {rbp.FIG1_SKIP + 1} on (no pruning step within {rbp.FIG1_ROUNDS} rounds)"
    slowest = (f"its slowest round after the first is round {s['slowest_round']} ({_ms(s['slowest_s'])}, "
               f"{s['slowest_s'] / s['median_s']['Efficient Rb+']:.1f}x its median from round "
               f"{rbp.FIG1_SKIP + 1} on), "
               + ("the pruning round" if s["slowest_round"] == pruning
                  else f"not the pruning round {pruning}"))
    return [T.row(
        "RankBoost+ Fig. 1: efficient Rb+ per round after its pruning step vs Rb-c (notebook 05's synthetic "
        "task)", eff, "Rb-c (lrank, same kernels), the same rounds", rbc, ratio=eff / rbc,
        ratio_kind="ours_s / reference_s (lower is better)", target="(report)", ok=None, threads=n_threads,
        repeats=repeats, load=load,
        timing="wall per round (history_ time_s), the four variants alternated, median per round",
        notes=f"{rbp.fig1_task_text()}; per-round medians in figures/{rbp.FIG1_TIMES}.csv (notebook 05's "
              f"Fig. 1); efficient Rb+ {where}: {_ms(eff)} per round, {eff / rbd:.2f}x Rb-d ({_ms(rbd)}) "
              f"and {eff / rbc:.2f}x Rb-c; optimal Rb+ {_ms(post['Optimal Rb+'])} over the same rounds; "
              f"{slowest}")]


if __name__ == "__main__":  # pragma: no cover
    print(pd.DataFrame(run()).to_string())
