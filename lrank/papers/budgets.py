"""The budgets of the paper experiments, per notebook and experiment, in one place.

Each `Budget` holds three sets of values with the same names:

* ``paper``: what the paper ran (rounds, trees, targets, splits, positions; the source says where the paper
  states it). The paper profile (``LRANK_PROFILE=paper``) runs these on the real data.
* ``quick``: the quick profile's budgets on the substitutes (the stored results, CI scale).
* ``rehearsal``: the paper profile's code path on stand-in files (`lrank.data.standins`), every budget scaled
  down so that all notebooks finish in minutes on 2 cores; model shapes (leaves, thresholds, learning rates)
  stay the paper's.

The notebooks read their values with ``budget(experiment, PROFILE)`` of their papers module (e.g.
``lrank.papers.rankboost.budget("fig4", PROFILE).rounds``); `python -m lrank reproduce --plan` reads the
paper values to say what the real run will cost.
"""

from __future__ import annotations

import re
from collections import namedtuple
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lrank.paths import PROFILES


@dataclass(frozen=True)
class Budget:
    """The budget of one experiment of one notebook in every profile.

    Attributes
    ----------
    notebook, experiment : str
        ``"01_rankboost"``, ``"fig4"``.
    title : str
        What the experiment is, for ``--plan``.
    paper, quick, rehearsal : mapping
        The values of each profile; the same names in all three.
    source : str
        Where the paper states its budget (or why it has none).
    """

    notebook: str
    experiment: str
    title: str
    paper: Mapping[str, Any]
    quick: Mapping[str, Any]
    rehearsal: Mapping[str, Any]
    source: str = ""

    def values(self, profile: str) -> Mapping[str, Any]:
        """The values of ``profile`` (one of `lrank.paths.PROFILES`)."""
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {', '.join(map(repr, PROFILES))}, got {profile!r}")
        return getattr(self, profile)


_BUDGETS = [
    # ------------------------------------------------------------------ 01 RankBoost (Freund et al. 2003)
    Budget("01_rankboost", "fig8_simulation", "Fig. 8: random guessing checked by simulation",
           paper={"n_sim": 40_000}, quick={"n_sim": 4_000}, rehearsal={"n_sim": 2_000},
           source="not in the paper (our check of Eq. 22's closed form)"),
    Budget("01_rankboost", "fig4", "Fig. 4: train / test loss of the four weak learners, 4 folds",
           paper={"rounds": 1000, "at": (50, 200), "shown": 200, "repeats": 3},
           quick={"rounds": 200, "at": (50, 200), "shown": 200, "repeats": 3},
           rehearsal={"rounds": 40, "at": (10, 40), "shown": 40, "repeats": 1},
           source="Sec. 6.1 / Fig. 4: 1000 rounds, the first 200 plotted; four-fold cross-validation, "
                  "repeated with 3 fold seeds here (per-query values pooled over the repeats)"),
    Budget("01_rankboost", "sign_of_alpha", "Sec. 3.2: max |r| vs signed r on the MSLR sample",
           paper={"rounds": 300}, quick={"rounds": 100}, rehearsal={"rounds": 30},
           source="not in the paper (our check against RankLib's choice)"),
    Budget("01_rankboost", "movielens", "Fig. 5-7: movie recommendation tasks on MovieLens-100K",
           paper={"sizes": (50, 100, 200, 400, 600), "n_targets": 300, "n_splits": 5, "n_per_bin": 150,
                  "n_fixed": 300, "n_feedback": 150},
           quick={"sizes": (50, 100, 200, 400), "n_targets": 100, "n_splits": 3, "n_per_bin": 100,
                  "n_fixed": 150, "n_feedback": 50},
           rehearsal={"sizes": (50, 100), "n_targets": 6, "n_splits": 2, "n_per_bin": 10, "n_fixed": 40,
                      "n_feedback": 5},  # bins need >= 10 feature users (Fig. 6), >= 5 targets (Fig. 7)
           source="Sec. 6.2: 100..2000 features x 2000 targets x 5 splits on EachMovie (MovieLens-100K has "
                  "943 users, so the sizes stop at 600 and the targets at 300)"),
    # ------------------------------------------------------------------ 02 AdaRank (Xu & Li 2007)
    Budget("02_adarank", "protocol", "Fig. 2-11: 5-fold CV of BM25, Ranking SVM, RankBoost, AdaRank",
           paper={"rankboost_rounds": 300, "ranksvm_pairs": None, "lc_rounds": 300, "repeats": 3},
           quick={"rankboost_rounds": 100, "ranksvm_pairs": 300, "lc_rounds": 100, "repeats": 8},
           rehearsal={"rankboost_rounds": 20, "ranksvm_pairs": None, "lc_rounds": 30, "repeats": 1},
           source="the paper states no RankBoost budget; Ranking SVM on all pairs; Fig. 11 shows 300 rounds; "
                  "the paper ran one 4-fold CV (repeats: ours, pooled per query so that verdicts survive a "
                  "change of fold seed)"),
    # ------------------------------------------------------------------ 03 BoostingTree (Kocsis et al. 2013)
    Budget("03_boostingtree", "table3", "Table 3, Fig. 8-9: MQ2007, 7 algorithms with stumps, 5 folds",
           paper={"n_std": 1000, "n_bt": 5000}, quick={"n_std": 40, "n_bt": 200},
           rehearsal={"n_std": 10, "n_bt": 40},
           source="Sec. 4.4: 1,000 iterations of the standard variants, 5,000 sequences of EXP3.P / "
                  "BoostingTree"),
    Budget("03_boostingtree", "fig10", "Fig. 10: Yahoo! set 1, LambdaMART-16 and NDCGBoost-16/32/64",
           paper={"n_std": 1000, "n_bt": 5000, "leaves": (16, 32, 64)},
           quick={"n_std": 10, "n_bt": 50, "leaves": (16,)},
           rehearsal={"n_std": 5, "n_bt": 20, "leaves": (16, 32, 64)},
           source="Sec. 4.5 / Fig. 10: BoostingTree run for 5,000 iterations"),
    Budget("03_boostingtree", "fig11", "Fig. 11: chess move ordering B84 / E97, 32-leaf trees, 5 folds",
           paper={"leaves": 32, "n_std": 1000, "n_bt": 25_000, "positions": {"b84": 2000, "e97": 3000}},
           quick={"leaves": 8, "n_std": 15, "n_bt": 75, "positions": None},
           rehearsal={"leaves": 32, "n_std": 5, "n_bt": 20, "positions": {"b84": 12, "e97": 12}},
           source="Sec. 4.6: 2,000 / 3,000 positions, up to 25,000 sequences (positions None: the committed "
                  "sets in data/chess)"),
    # ------------------------------------------------------------------ 04 Tree fitting (Xia et al.)
    Budget("04_tree_fitting", "tables23",
           "Tables 2-3, Fig. 2: SE vs OLE, McRank / LambdaMART, 12 configurations",
           paper={"n_trees": {"LambdaMART": 1000, "McRank": 2500}},
           quick={"n_trees": {"LambdaMART": 25, "McRank": 15}},
           rehearsal={"n_trees": {"LambdaMART": 4, "McRank": 3}},
           source="Sec. 6: 1,000 LambdaMART trees, 2,500 McRank iterations"),
    # ------------------------------------------------------------------ 05 RankBoost+ (Connamacher 2020)
    Budget("05_rankboost_plus", "tasks", "Tables 1, 3, Fig. 2: MovieLens users and WEB10K queries as tasks",
           paper={"n_rounds": 300, "max_thresholds": 255, "n_web": 300, "n_users": None, "n_optimal": 30},
           quick={"n_rounds": 300, "max_thresholds": 254, "n_web": None, "n_users": None, "n_optimal": 8},
           rehearsal={"n_rounds": 20, "max_thresholds": 255, "n_web": 300, "n_users": 12, "n_optimal": 2},
           source="Sec. 4: 300 rounds; the 300 WEB10K queries with the most critical pairs below 50,000 "
                  "(n_web None: every query of the sample); every MovieLens user with >= 100 ratings "
                  "(n_users None; the rehearsal: the first n_users of them); n_optimal: the MovieLens "
                  "tasks on which optimal RankBoost+ is compared with Algorithm 2 (Sec. 3.5's claim; the "
                  "paper runs none)"),
    Budget("05_rankboost_plus", "mq", "Tables 2, 4: MQ2007 / MQ2008, the five folds",
           paper={"n_queries": None, "max_thresholds": 255}, quick={"n_queries": 15, "max_thresholds": 32},
           rehearsal={"n_queries": None, "max_thresholds": 255},
           source="Sec. 4: LETOR 4.0's five folds (n_queries None: every query)"),
]

#: Every budget by ``(notebook, experiment)``.
BUDGETS: dict[tuple[str, str], Budget] = {(b.notebook, b.experiment): b for b in _BUDGETS}


def budget(notebook: str, experiment: str, profile: str) -> Any:
    """The values of one experiment's budget in ``profile``, as a named tuple (attributes and unpacking).

    Parameters
    ----------
    notebook : str
        The notebook's name, e.g. ``"01_rankboost"``.
    experiment : str
        The experiment, e.g. ``"fig4"`` (`BUDGETS` lists them).
    profile : str
        One of `lrank.paths.PROFILES`.

    Returns
    -------
    namedtuple
        One field per budget value, in the order they are declared.

    Raises
    ------
    KeyError
        An unknown notebook or experiment (the message lists the known ones).
    ValueError
        An unknown profile.
    """
    try:
        b = BUDGETS[(notebook, experiment)]
    except KeyError:
        known = ", ".join(f"{n}/{e}" for n, e in BUDGETS)
        raise KeyError(f"no budget for notebook {notebook!r}, experiment {experiment!r}; known: "
                       f"{known}") from None
    values = b.values(profile)
    kind = namedtuple("Budget_" + re.sub(r"\W", "_", f"{notebook}_{experiment}"), list(values))
    return kind(**values)


def fold_seeds(repeats: Mapping[str, int], profile: str, seed: int) -> list[int]:
    """The fold seeds a notebook run with ``SEED = seed`` pools in ``profile``: ``seed * R + k`` for
    ``k < R``, ``R = repeats[profile]`` (1 when the profile is not listed).

    Repeated cross-validation: each query is a test query once per split and its values are averaged over
    the splits before a test, so it still counts once. No two notebook seeds share a split, and seed 0
    starts with split 0 (the split a single run would use).
    """
    r = int(repeats.get(profile, 1))
    if r < 1:
        raise ValueError(f"repeats[{profile!r}] must be >= 1, got {r}")
    return [int(seed) * r + k for k in range(r)]


def require_nothing_skipped(profile: str, skipped: Any, notebook: str) -> None:
    """The rehearsal skips nothing: raise when ``skipped`` (a list or dict of what a paper-profile data
    selection left out) is not empty in the rehearsal profile; in the paper profile a skip is reported by
    the notebook and the substitute runs instead."""
    if profile == "rehearsal" and skipped:
        items = skipped.items() if isinstance(skipped, Mapping) else enumerate(skipped)
        said = "; ".join(f"{k}: {v}" for k, v in items)
        raise RuntimeError(f"{notebook}: the rehearsal skipped {said}. The rehearsal must run every "
                           "experiment of the paper profile: write the stand-ins (python -m lrank standins "
                           "DIR) and point LRANK_DATA at DIR, or run python -m lrank reproduce --profile "
                           "rehearsal")


def data_kind(data: Any) -> str:
    """``"stand-in"`` for data loaded from stand-in files (`lrank.data.standins`), else ``"real"``: the
    captions' word for the data, so that a rehearsal's artifacts never call stand-in data real."""
    prov = getattr(data, "provenance", None) or {}
    return "stand-in" if prov.get("standin") else "real"
