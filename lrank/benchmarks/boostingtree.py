"""Benchmark: BoostingTree and EXP3.P time per iteration against the standard variant, and the hull.

Issue 7's and 15.2's targets, as ratios measured in one process on the MSLR sample relabelled to three
grades (the quick substitute for MQ2007; a ``make_letor_like`` set of the same shape when the sample
is absent), stumps as weak learners, no validation set:

* time per iteration of the standard variant (unconstrained steps) over that of BoostingTree and of
  EXP3.P (constrained steps), for NDCGBoost and LambdaMART. The paper reports "approximately five to
  ten times faster per iteration" on MQ2007 with stumps (Sec. 4.4: 46 features, ~41 documents per
  query, "the number of documents for each query is in the same order as the dimension of the data",
  so the tree "does not dominate outright"); the pooled sample has 136 features and ~116 documents per
  query, the same proportion. What is compared is what the paper compares: the same base step
  ``A(M, C, D)`` on both sides (reweighting with the whole-list lambdas / NDCGBoost gammas, the weak
  learner, the hypothesis weight, the training measure ``f`` of the new model), unconstrained (all
  features searched) against constrained (one feature); the paper's standard variant grows the same
  stumps, so neither side is given a different tree;
* node selection (the hull, step (a)) per round against one boosting step: the paper (footnote 4)
  says selection takes "considerably less time" than the reweighting;
* the tree part alone: an unconstrained stump over a constrained one (histograms of one feature, plus
  feature 0 for the node totals), on the same lambdas;
* the share of node selection in BoostingTree's time (total selection over total boosting-step seconds,
  accumulated inside each fit) over notebook 03's quick Table 3 fits (``quick_table3_folds``,
  ``QUICK_TABLE3_ITERATIONS``, both bases, fitted by ``run_protocol`` as the notebook fits them): the
  number the notebook prints, read from this row (``SELECTION_SHARE_ROW``).

What caps the per-iteration ratio: with ``R`` the reweighting of one step (O(sum n_q^2), the same work
on both sides), ``o`` the training measure ``f`` of the new model (both sides), ``u`` / ``c`` the rest of an
unconstrained / one-feature step (weak learner, hypothesis weight, new model) and ``s`` the reweightings
per generated model (BoostingTree keeps a node's weights with its model, Sec. 3.3, so a node extended
several times is reweighted once: ``s`` = distinct extended nodes / models, about 0.7 here; EXP3.P cannot,
``s = 1``), the ratio is ``(R + o + u) / (s R + o + c)``: it stays below ``(R + u) / (s R)`` however
cheap ``c`` and ``o`` get, and, being monotone in ``R``, below ``max((u + o) / (c + o), 1 / s)`` however
cheap or dear the reweighting gets. Each row's notes give the measured parts and the three numbers.

Both sides run each base's step through the tree engine (`lrank.trees.grower.TreeGrower`, one per step
object): the unconstrained LambdaMART stump is LambdaMART's own tree (the growth kernel over every
feature's histograms, global bin indices); the one-feature stump reads two columns of the column-major
codes (the feature's and feature 0's histograms, the scan, the children's totals); NDCGBoost's classifier
tree likewise, with the classifier's split score.

The measured parts and the two caps of each row are in its notes (the page's ``commit`` column says
which code they timed). Session 4 (loaded host) measured LambdaMART ``R`` 1.7 ms, ``u`` 2.2, ``c``
0.24, ``o`` 0.28, ``s`` 0.68; the one-feature stump is now a kernel and ``c``, ``o`` are a fraction of
that, so the reweighting ``R`` (the whole-list lambdas, O(sum n_q^2) divisions) is what caps the ratio:
5x needs ``(R + u + o) / (s R + c + o) >= 5``, i.e. ``R <= (u - 4 o - 5 c) / (5 s - 1)`` (with ``s``
0.68, about a sixth of ``u`` once ``c, o`` are ~0.1 and ~0.05 ms).
"""

from __future__ import annotations

import time

import numpy as np

from lrank.benchmarks import _timing as T


def _data():
    from lrank.papers.boostingtree import mslr_sample_pooled, three_grades

    try:
        d = mslr_sample_pooled()
        what = "real MSLR sample (86 queries, 136 features) relabelled to 3 grades"
    except Exception:  # noqa: BLE001 - no data: a generated set of the same shape
        from lrank.data.generators import make_letor_like

        d = make_letor_like(n_queries=86, docs_per_query=116, n_features=136, n_grades=5, random_state=0)
        what = "substitute: make_letor_like(86 x 116 docs, 136 features)"
    return three_grades(d), what


def run(profile: str = "quick") -> list[dict]:
    """Rows: standard / BoostingTree and standard / EXP3.P per-iteration ratios (two bases, the same number
    of iterations on both sides, alternated repeats), step / selection time per round, the tree alone."""
    from lrank.models.boostingtree import BoostingTree, Exp3P, LambdaMARTBase, Standard
    from lrank.models.ndcgboost import NDCGBoost

    data, what = _data()
    n, reps = (41, 5) if profile == "quick" else (201, 5)  # 5 repeats: a 2-ms iteration is noisy
    rows = []
    for bname, base in (("NDCGBoost", NDCGBoost()), ("LambdaMART", LambdaMARTBase())):
        def std(m, base=base):
            return T.fit(Standard(base, **T.kwargs_for(Standard, n_estimators=m)), data)

        last, full = {}, []  # the last BoostingTree fit; every fit of n sequences (the selection row)

        def bt(m, base=base, last=last, full=full):
            kw = T.kwargs_for(BoostingTree, n_estimators=m)
            last["bt"] = T.fit(BoostingTree(base, **kw, random_state=0), data)
            if m == n:
                full.append(last["bt"])
            return last["bt"]

        def ex(m, base=base):
            return T.fit(Exp3P(base, **T.kwargs_for(Exp3P, n_estimators=m), random_state=0), data)

        with T.threads(1):
            parts = _components(base, data)
        reweight_ms = parts["R"]
        with T.threads(1):
            for name, fn in (("BoostingTree", bt), ("EXP3.P", ex)):
                try:
                    t = T.per_iteration(fn, std, n, reps)
                except Exception as e:  # noqa: BLE001 - an estimator mid-conversion: say so in the table
                    rows.append(_error_row(f"{name}({bname}) time per iteration, stumps", e))
                    continue
                last[name] = t
                rows.append(T.row(
                    f"{name}({bname}) time per iteration, stumps", t.a,
                    f"standard {bname} (unconstrained stump steps)", t.b,
                    target=">= 5 (issue 15.2; paper: 5-10x, MQ2007, 46 features)", ok=t.ratio >= 5.0,
                    threads=1, repeats=reps, timing=T.WALL, load=t.load,
                    notes=f"{what}; ({n} - 1 iterations) / {n - 1} on both sides; includes the "
                          f"training-measure evaluation each iteration; CPU-time ratio {t.cpu_ratio:.2f}; "
                          f"the reweighting of one step (whole list, both sides) takes {reweight_ms:.2f} ms; "
                          + _floor_note(parts, _reweight_share(last.get("bt")) if name == "BoostingTree"
                                        else 1.0)))
        hs = [h for h in (getattr(m, "rounds_", None) for m in full)
              if h is not None and {"select_s", "step_s", "round_length"} <= set(h.columns)]
        # per fit: selection seconds per round, step seconds per step; medians over the fits
        if hs and "BoostingTree" in last:
            sel = float(np.median([h["select_s"].sum() / len(h) for h in hs]))
            step = float(np.median([h["step_s"].sum() / max(int(h["round_length"].sum()), 1) for h in hs]))
            rows.append(T.row(f"BoostingTree({bname}) node selection per round vs one step", sel,
                              "one constrained boosting step (incl. model recompute)", step,
                              ratio=step / sel if sel > 0 else float("inf"), ratio_kind="step_s / select_s",
                              target="selection cheaper than a step (paper, footnote 4)", ok=sel < step,
                              threads=1, repeats=len(hs),
                              timing="wall, accumulated inside each fit, median over the fits",
                              load=last["BoostingTree"].load,
                              notes=f"{what}; {n} sequences, {len(hs[-1])} rounds (the last fit)"))
    rows.append(_tree_rows(data, what, n, reps))
    rows.append(_selection_share_row(reps))
    return rows


def _selection_share_row(reps: int) -> dict:
    """Time in node selection over time in boosting steps, summed over notebook 03's quick Table 3
    BoostingTree fits (both bases, every fold), per repeat; medians over repeats (report row)."""
    from lrank.models.boostingtree import BoostingTree, LambdaMARTBase
    from lrank.models.ndcgboost import NDCGBoost
    from lrank.papers import boostingtree as paper

    folds = paper.quick_table3_folds(0)
    n_bt = paper.QUICK_TABLE3_ITERATIONS[1]
    algos = {"LambdaMART": BoostingTree(LambdaMARTBase(), n_estimators=n_bt, random_state=0),
             "NDCGBoost": BoostingTree(NDCGBoost(), n_estimators=n_bt, random_state=0)}
    totals = []  # per repeat: {base: [selection s, step s, rounds, steps]}
    with T.threads(1):
        ld = T.settle()
        paper.run_protocol(algos, folds[:1], metric="mean_ndcg")  # compile every kernel the fits call
        for _ in range(max(3, int(reps))):
            kept: list = []
            paper.run_protocol(algos, folds, metric="mean_ndcg", keep=kept)  # folds outer: bases alternate
            tot = {b: [0.0, 0.0, 0, 0] for b in algos}
            for _, b, est in kept:
                h = est.rounds_
                tot[b][0] += float(h["select_s"].sum())
                tot[b][1] += float(h["step_s"].sum())
                tot[b][2] += len(h)
                tot[b][3] += int(h["round_length"].sum())
            totals.append(tot)
    sel = np.array([sum(t[b][0] for b in algos) for t in totals])
    step = np.array([sum(t[b][1] for b in algos) for t in totals])
    per_base = ", ".join(f"BoostingTree({b}) {np.median([t[b][0] / t[b][1] for t in totals]):.3f}"
                         for b in algos)
    sizes = ", ".join(f"{b}: {totals[-1][b][2]} rounds, {totals[-1][b][3]} steps" for b in algos)
    notes = (f"real MSLR sample (86 queries, 136 features) relabelled to 3 grades, {len(folds)} query "
             f"folds 3/1/1 (seed 0); BoostingTree(LambdaMART) and BoostingTree(NDCGBoost), stumps, {n_bt} "
             "sequences on each fold, fitted by run_protocol as notebook 03 fits them (eval_set the fold's "
             f"validation part, MeanNDCG); seconds summed over the {len(folds) * len(algos)} fits of a "
             f"repeat ({sizes}); share per base: {per_base}; notebook 03's chess runs are not included")
    return T.row(paper.SELECTION_SHARE_ROW, float(np.median(sel)),
                 "boosting steps of the same fits (incl. model recompute)", float(np.median(step)),
                 ratio=float(np.median(sel / step)),
                 ratio_kind="ours_s / reference_s (share of the step time spent selecting nodes; lower is "
                            "cheaper)",
                 target="(report; notebook 03 prints it)", ok=None, threads=1, repeats=len(totals),
                 timing="wall, accumulated inside each fit (rounds_ select_s / step_s), the two bases "
                        "alternated per fold, median of repeats",
                 load=ld, notes=notes)


def _median_ms(fn, repeats: int = 9) -> float:
    """Median wall milliseconds of ``repeats`` calls of ``fn`` after one untimed call."""
    return T.median_seconds(fn, repeats, warmup=True) * 1e3


def _components(base, data) -> dict:
    """Median milliseconds of the parts of one step at the scores of a random model: ``R`` the
    reweighting (``step.reweight``), ``u`` / ``c`` the rest of an unconstrained / one-feature step on kept
    weights (weak learner, hypothesis weight, new model), ``o`` the training measure ``f`` of a model."""
    step = base.boosting_step(data.X, data.y, group=data.group)
    if not hasattr(step, "reweight"):
        return {"R": float("nan"), "u": float("nan"), "c": float("nan"), "o": float("nan")}
    rng = np.random.default_rng(0)
    model = rng.normal(scale=0.3, size=data.n_docs)
    w = step.reweight(model)
    feats = iter(rng.integers(step.n_features, size=1000))
    return {"R": _median_ms(lambda: step.reweight(model)),
            "u": _median_ms(lambda: step.step(model, None, weights=w), 5),
            "c": _median_ms(lambda: step.step(model, (int(next(feats)),), weights=w), 21),
            "o": _median_ms(lambda: step.score(model))}


def _reweight_share(bt) -> float:
    """Reweightings per generated model in a BoostingTree fit: a node's weights are computed once, however
    often it is extended (distinct extended nodes / models); 1 for EXP3.P and the standard variant."""
    tree = getattr(bt, "tree_", None)
    if tree is None or len(tree) < 2:
        return 1.0
    return sum(1 for u in tree.used if u) / (len(tree) - 1)


def _floor_note(p: dict, share: float) -> str:
    """The per-iteration model of the ratio and what caps it (the module docstring's ``R, o, u, c``)."""
    R, u, c, o = p["R"], p["u"], p["c"], p["o"]
    std, ours = R + u + o, share * R + c + o
    return (f"parts of a step (ms): R {R:.2f}, u {u:.2f}, c {c:.2f}, o {o:.2f}, reweightings per "
            f"model {share:.2f}; modelled ratio (R + u + o) / ({share:.2f} R + c + o) = {std / ours:.2f}; "
            f"with c = o = 0 it could reach at most (R + u) / ({share:.2f} R) = {(R + u) / (share * R):.2f}, "
            f"whatever the reweighting costs (any R >= 0) at most max((u + o) / (c + o), 1 / {share:.2f}) = "
            f"{max((u + o) / (c + o), 1.0 / share):.2f}")


def _error_row(benchmark: str, e: Exception) -> dict:
    """A row saying the benchmark could not run (status ``error``), never counted as met."""
    row = T.row(benchmark, float("nan"), "(not run)", float("nan"), target=">= 5 (issue 15.2)", ok=False,
                threads=1, repeats=0, timing="not timed", load=T.load(),
                notes=f"failed: {type(e).__name__}: {e}"[:300])
    row["status"] = "error"
    return row


def _tree_rows(data, what: str, n: int, reps: int) -> dict:
    """Unconstrained stump step over a one-feature one (the weak learner and the new model, no
    reweighting), on one set of whole-list lambdas: what BoostingTree's and the standard variant's
    LambdaMART steps run after the reweighting."""
    from lrank.models.boostingtree import LambdaMARTBase

    step = LambdaMARTBase().boosting_step(data.X, data.y, group=data.group)
    rng = np.random.default_rng(0)
    model = rng.normal(size=data.n_docs)
    step.reweight(model)  # compile / load
    t0 = time.perf_counter()
    w = step.reweight(model)
    lam_s = time.perf_counter() - t0

    def fits(constrained: bool) -> None:
        for _ in range(n):
            cons = (int(rng.integers(data.n_features)),) if constrained else None
            step.step(model, cons, weights=w)

    with T.threads(1):
        t = T.alternate(lambda: fits(True), lambda: fits(False), reps)
    return T.row("constrained stump tree vs unconstrained (tree only, LambdaMART lambdas given)", t.a / n,
                 "unconstrained stump tree (all features' histograms)", t.b / n,
                 target="(report; the per-iteration rows carry the target)", ok=None, threads=1,
                 repeats=reps, timing=T.WALL, load=t.load,
                 notes=f"{what}; {n} steps per repeat on kept lambdas (`LambdaMARTStep.step`: the "
                       f"one-feature stump over its binned column / LambdaMART's tree), new model included; "
                       f"whole-list "
                       f"lambdas of one step take {lam_s * 1e3:.1f} ms (not included; the same work on both "
                       f"sides)")
