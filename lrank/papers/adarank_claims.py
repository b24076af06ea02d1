"""Xu & Li (2007), AdaRank: every claim of the paper as a row of the claims registry (`lrank.claims`).

Notebook 02 builds ``reg = claims.Registry(NB, "AdaRank")`` and calls the functions here; each adds the
rows of one part of the paper with the paper's sentence, its location, the data used and the evidence:

* `register_protocol`: the experimental claims of Sec. 4.2 and 4.5 (Fig. 2, 6, 8-11) on the first data set
  of the run, and of Sec. 4.4 (Fig. 5) on TD2003 when the run has it. The printed algorithm (Fig. 1 with
  Sec. 4.1's stopping rule) decides the paper's claims; the continuing variant
  (`lrank.papers.adarank.CONTINUING`, a labelled deviation) is tested the same way and recorded as
  ``finding`` rows, Holm-adjusted within its own family, so both are reported and only the paper's
  algorithm is counted.
* `register_untestable`: the WSJ and AP claims (Fig. 3-4; TREC data that is not public) and, in a run
  without .Gov data, Fig. 5's.
* `register_speed`: the efficiency claim of Sec. 3.4, read from the stored benchmark page
  (``figures/benchmarks.csv``, rows of ``python -m lrank bench adarank`` and ``rankboost``).
* `register_scaling`: the scaling study (not in the paper): findings.
* `register_ties`: Fig. 2's claims with tied scores ordered worst first, best first and at random (the
  mean over `lrank.papers.adarank.TIE_DRAWS` shuffles), and whether the file order that breaks ties
  carries label information (not in the paper): findings.

Units: every protocol claim is tested once over the queries; with repeated cross-validation
(`lrank.papers.adarank.run_repeated`) a query's value is its mean over the repetitions.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from lrank import claims
from lrank.papers.adarank import (
    ADARANKS,
    BASELINES,
    FEW_PAIRS,
    METHODS,
    METRICS,
    TIE_ORDERS,
    ProtocolResult,
    ada_name,
    pair_group,
)
from lrank.papers.adarank_figures import bm25_phrase

METHODS_FIG2 = METHODS  # BM25, Ranking SVM, RankBoost, AdaRank.MAP, AdaRank.NDCG

SLUG = {"BM25": "bm25", "Ranking SVM": "ranksvm", "RankBoost": "rankboost", "AdaRank.MAP": "adarank-map",
        "AdaRank.NDCG": "adarank-ndcg"}

# --------------------------------------------------------------------------------- the paper's sentences
#: claim family -> (location, the paper's sentence)
SENTENCES: dict[str, tuple[str, str]] = {
    "fig2.ttest.map": ("Sec. 4.2, Fig. 2", "We conducted significant tests (t-test) on the improvements of "
                       "AdaRank.MAP over BM25, Ranking SVM, and RankBoost in terms of MAP. The results "
                       "indicate "
                       "that all the improvements are statistically significant (p-value < 0.05)."),
    "fig2.ttest.ndcg5": ("Sec. 4.2, Fig. 2", "We also conducted t-test on the improvements of AdaRank.NDCG "
                                             "over "
                         "BM25, Ranking SVM, and RankBoost in terms of NDCG@5. The improvements are also "
                         "statistically significant."),
    "fig2.all": ("Sec. 4.2, Fig. 2", "From Figure 2, we see that both AdaRank.MAP and AdaRank.NDCG "
                                     "outperform "
                 "BM25, Ranking SVM, and RankBoost in terms of all measures."),
    "fig3-4.all": ("Sec. 4.3, Fig. 3-4", "From Figure 3 and 4, we can see that AdaRank.MAP and AdaRank.NDCG "
                   "outperform BM25, Ranking SVM, and RankBoost in terms of all measures on both WSJ and "
                   "AP."),
    "fig3-4.ttest.map": ("Sec. 4.3, Fig. 3-4", "The results indicate that all the improvements in terms of "
                                               "MAP "
                         "are statistically significant (p-value < 0.05)."),
    "fig3-4.ttest.ndcg5": ("Sec. 4.3, Fig. 3-4", "However only some of the improvements in terms of NDCG@5 "
                                                 "are "
                           "statistically significant, although overall the improvements on NDCG scores are "
                           "quite high (1-2 points)."),
    "fig5.all": ("Sec. 4.4, Fig. 5", "From the results, we can see that AdaRank.MAP and AdaRank.NDCG "
                 "outperform all the baselines in terms of all measures."),
    "fig6": ("Sec. 4.5, Fig. 6", "From Figure 6, we can see that AdaRank.MAP and AdaRank.NDCG make fewer "
             "errors for 'd-n' and 'd-p', which are related to the tops of rankings and are important."),
    "fig8.avg": ("Sec. 4.5, Fig. 8", "We found that the average MAP of AdaRank.MAP over the groups is two "
                 "points higher than RankBoost."),
    "fig8.fewpairs.adarank-map": ("Sec. 4.5, Fig. 8", "Furthermore, it is interesting to see that "
                                                      "AdaRank.MAP "
                                  "performs particularly better than RankBoost for queries with small "
                                  "numbers "
                                  "of document pairs (e.g., '0-1k', '1k-2k', and '2k-3k')."),
    "fig8.fewpairs.adarank-ndcg": ("Sec. 4.5, Fig. 8", "For AdaRank.NDCG, similar results can be observed."),
    "fig9": ("Sec. 4.5, Fig. 9", "We can see that, AdaRank.MAP trained with MAP performs better in terms of "
             "MAP while AdaRank.NDCG trained with NDCG@5 performs better in terms of NDCG@5."),
    "fig10": ("Sec. 4.5, Fig. 10", "We can see that, AdaRank.MAP trained with MAP performs better in terms "
                                   "of "
              "MAP while AdaRank.NDCG trained with NDCG@5 performs better in terms of NDCG@5."),
    "fig11": ("Sec. 4.5, Fig. 11", "From the figure, we can see that the ranking accuracy of AdaRank.MAP "
              "steadily improves, as the training goes on, until it reaches to the peak. The result agrees "
              "well with Theorem 1."),
    "sec3.4.complexity": ("Sec. 3.4", "The time complexity of AdaRank is of order O((k+T)·m·n log n), where "
                                      "k "
                          "denotes the number of features, T the number of rounds, m the number of queries "
                          "in "
                          "training data, and n is the maximum number of documents for queries in training "
                          "data."),
    "sec3.4.efficiency": ("Sec. 3.4", "Second, the learning process of AdaRank is more efficient than those "
                          "of the existing learning algorithms. [...] The time complexity of RankBoost, for "
                          "example, is of order O(T·m·n^2)."),
}

NOT_PUBLIC = ("WSJ and AP are TREC ad-hoc collections (TREC topics 101-300) whose documents need a TREC "
              "licence and whose feature files (Table 2's seven features per query-document pair) were never "
              "published; nothing public stands in for them")


def data_of(res: ProtocolResult) -> tuple[str, str]:
    """The registry's data kind and description of a protocol run."""
    e = res.experiment
    note = e.note
    if "MSLR" in e.name:
        return "substitute", (f"{note}: {e.data.n_queries} queries of web search with five grades; the quick "
                              "profile's embedded data (OHSUMED's LETOR files are the paper profile's)")
    if "stand-in" in note:
        return "synthetic", f"{note} (the rehearsal's stand-in file)"
    return "paper", f"{note}: the paper's queries and judgments with LETOR 3.0's features"


# --------------------------------------------------------------------------------------- evidence
def _evidence(a: pd.Series, b: pd.Series, desc: str, test: str = "wilcoxon") -> claims.Evidence:
    a, b = a.align(b, join="inner")
    ok = a.notna() & b.notna()
    return claims.paired(a[ok].to_numpy(), b[ok].to_numpy(), unit="queries", effect_desc=desc, test=test)


def _all_measures(res: ProtocolResult, a: str, b: str, split: str = "test") -> pd.Series:
    """Per query: the mean over MAP and NDCG@1..10 of the test measure of ``a`` minus ``b``."""
    return pd.concat([res.values(a, m, split) - res.values(b, m, split) for m in METRICS],
                     axis=1).mean(axis=1)


def _error_rates(res: ProtocolResult) -> pd.Series:
    pe = res.pair_errors[res.pair_errors["total"] > 0]
    g = pe.groupby(["method", "kind", "query"])[["wrong", "total"]].sum()  # pooled over repetitions
    return (g["wrong"] / g["total"]).sort_index()


def protocol_rows(res: ProtocolResult, variant: str = "printed", prefix: str = "fig2",
                  full: bool = True) -> list[dict]:
    """The experimental claims on one data set, each with its evidence (``variant`` of AdaRank).

    ``prefix`` "fig2" (OHSUMED's figure) with ``full=True`` gives every claim of Sec. 4.2 and 4.5;
    "fig5" (TD2003) with ``full=False`` only "outperform all the baselines in terms of all measures".
    """
    name = {k: ada_name(k, variant) for k in ADARANKS}
    rows: list[dict] = []

    def add(cid: str, family: str, quantity: str, ev: claims.Evidence, **kw: Any) -> None:
        loc, sentence = SENTENCES[family]
        if prefix == "fig5":
            loc = loc.replace("Sec. 4.2, Fig. 2", "Sec. 4.4, Fig. 5")
        rows.append(dict(id=cid, location=loc, sentence=sentence, quantity=quantity, evidence=ev, **kw))

    fam_all = "fig2.all" if prefix == "fig2" else "fig5.all"
    for b in BASELINES:
        if full:
            a = name["AdaRank.MAP"]
            add(f"{prefix}.ttest.adarank-map.{SLUG[b]}", "fig2.ttest.map", f"test MAP, {a} minus {b}",
                _evidence(res.values(a, "map"), res.values(b, "map"), f"mean test MAP of {a} minus {b}", "t"))
            a = name["AdaRank.NDCG"]
            add(f"{prefix}.ttest.adarank-ndcg.{SLUG[b]}", "fig2.ttest.ndcg5", f"test NDCG@5, {a} minus {b}",
                _evidence(res.values(a, "ndcg@5"), res.values(b, "ndcg@5"),
                          f"mean test NDCG@5 of {a} minus {b}", "t"))
        for label in ADARANKS:
            a = name[label]
            d = _all_measures(res, a, b)
            add(f"{prefix}.all.{SLUG[label]}.{SLUG[b]}", fam_all,
                f"test MAP and NDCG@1..10 of {a} minus {b}, averaged over the 11 measures per query",
                _evidence(d, 0 * d, f"mean over queries of the 11-measure mean of {a} minus {b}"))
    if not full:
        return rows
    rate = _error_rates(res)
    for label in ADARANKS:
        a = name[label]
        for b in ("Ranking SVM", "RankBoost"):
            for kind in ("d-n", "d-p"):
                add(f"fig6.{SLUG[label]}.{SLUG[b]}.{kind}", "fig6", f"test error rate on {kind} pairs, {b} "
                                                                    f"minus {a}",
                    _evidence(rate.loc[b, kind], rate.loc[a, kind],
                              f"mean per-query {kind} error rate of {b} minus {a}"))
    a, b = name["AdaRank.MAP"], "RankBoost"
    diff = res.values(a, "map") - res.values(b, "map")
    group_means = diff.groupby(pair_group(res.n_pairs[diff.index.to_numpy()]), observed=True).mean()
    add("fig8.avg", "fig8.avg", f"test MAP, {a} minus {b} (ours: the mean of the group means)",
        _evidence(res.values(a, "map"), res.values(b, "map"), f"mean test MAP of {a} minus {b} over queries"),
        ours=float(group_means.mean()), paper_value=0.02)
    for label in ADARANKS:
        a = name[label]
        va, vb = res.values(a, "map"), res.values(b, "map")
        few = va.index[res.n_pairs[va.index.to_numpy()] < FEW_PAIRS]
        add(f"fig8.fewpairs.{SLUG[label]}", f"fig8.fewpairs.{SLUG[label]}",
            f"test MAP, {a} minus {b}, queries with fewer than {FEW_PAIRS} document pairs",
            _evidence(va.loc[few], vb.loc[few], f"mean test MAP of {a} minus {b} on those queries"))
    m, n = name["AdaRank.MAP"], name["AdaRank.NDCG"]
    add("fig9.train-map", "fig9", f"training MAP, {m} minus {n} (per query, mean over the folds training on "
                                  "it)",
        _evidence(res.values(m, "map", "train"), res.values(n, "map", "train"), f"mean training MAP of {m} "
                                                                                f"minus {n}"))
    add("fig10.train-ndcg5", "fig10", f"training NDCG@5, {n} minus {m} (per query, mean over its training "
                                      "folds)",
        _evidence(res.values(n, "ndcg@5", "train"), res.values(m, "ndcg@5", "train"),
                  f"mean training NDCG@5 of {n} minus {m}"))
    if res.curves is not None and len(res.curves):
        c = res.curves[res.curves["variant"] == variant].groupby("query")[["map_peak", "map_round1"]].mean()
        add("fig11.peak-beats-round1", "fig11",
            f"{m}'s learning curve: test MAP at the peak round chosen on the validation queries minus "
            "round 1",
            _evidence(c["map_peak"], c["map_round1"],
                      "mean test MAP at the validation-chosen peak round minus after round 1"))
    return rows


def register_protocol(reg: claims.Registry, res: ProtocolResult, only: tuple[str, ...], prefix: str = "fig2",
                      full: bool = True) -> pd.DataFrame:
    """Add the experimental claims of one data set whose ids start with one of ``only`` (e.g. ``("fig6.",)``):
    the printed algorithm as the paper's claims, the continuing variant as findings (Holm within its own
    comparisons of ``only``; the reason says what it would give). Returns `evidence_table` of the rows."""
    kind, data = data_of(res)
    ids = []
    for r in protocol_rows(res, "printed", prefix, full):
        if not r["id"].startswith(only):
            continue
        ids.append(r["id"])
        reg.tested(r["id"], location=r["location"], sentence=r["sentence"], quantity=r["quantity"],
                   data_kind=kind, data=data, evidence=r["evidence"], ours=r.get("ours"),
                   paper_value=r.get("paper_value"))
    rows = [r for r in protocol_rows(res, "continuing", prefix, full) if r["id"].startswith(only)]
    adj = claims.holm([r["evidence"].p for r in rows])
    for r, pa in zip(rows, adj):
        verdict, why = claims.decide(r["evidence"], float(pa))
        reg.finding(f"{r['id']}.continuing", location=r["location"], sentence=r["sentence"],
                    quantity=r["quantity"] + " (continuing variant: a labelled deviation)",
                    ours=r.get("ours"),
                    data_kind=kind, data=data, evidence=r["evidence"],
                    reason=f"continuing variant, {verdict} with Holm over its {len(rows)} comparisons: {why}")
    return evidence_table(reg, ids)


def evidence_table(reg: claims.Registry, ids: list[str]) -> pd.DataFrame:
    """The evidence of ``ids`` and of their continuing siblings (before Holm: the verdicts come in the
    summary): one row per claim, printed and continuing side by side."""
    rows = []
    for cid in ids:
        out = {"claim": cid}
        for tag, key in (("printed", cid), ("continuing", f"{cid}.continuing")):
            c = reg.claims.get(key)
            if c is None or c.evidence is None:
                continue
            ev = c.evidence
            out.update({"n": ev.n, f"effect ({tag})": ev.effect, f"95% CI ({tag})": f"[{ev.ci[0]:+.4f}, "
                                                                                    f"{ev.ci[1]:+.4f}]",
                        f"p ({tag})": f"{ev.p:.2g}"})  # 2 significant digits: a tiny p is not 0.0
        rows.append(out)
    return pd.DataFrame(rows).set_index("claim")


def register_other_data(reg: claims.Registry, res_by_name: dict[str, ProtocolResult]) -> pd.DataFrame | None:
    """WSJ and AP (Fig. 3-4): not public. Fig. 5 (.Gov): tested on TD2003 when the run has it, else a
    NOT TESTABLE HERE row saying which profile tests it."""
    register_untestable(reg, has_gov="TD2003" in res_by_name)
    if "TD2003" in res_by_name:
        return register_protocol(reg, res_by_name["TD2003"], ("fig5.",), prefix="fig5", full=False)
    return None


def register_untestable(reg: claims.Registry, has_gov: bool) -> None:
    """WSJ and AP (Fig. 3-4) are not public; Fig. 5 (.Gov) only when the run has no TD2003."""
    for fam in ("fig3-4.all", "fig3-4.ttest.map", "fig3-4.ttest.ndcg5"):
        loc, sentence = SENTENCES[fam]
        reg.untestable(fam, location=loc, sentence=sentence, reason=NOT_PUBLIC, data="TREC WSJ and AP")
    if not has_gov:
        loc, sentence = SENTENCES["fig5.all"]
        reg.untestable("fig5.all", location=loc, sentence=sentence, data=".Gov TD2003",
                       reason="not run in this profile: the paper profile tests it on LETOR 3.0 TD2003 "
                              "(python -m lrank fetch td2003), whose 64 features are not the paper's 14")


# ------------------------------------------------------------------------------------------ speed
def bench_rows(page: pd.DataFrame) -> dict[str, pd.Series]:
    """The benchmark page's rows this notebook reads: AdaRank per round, RankBoost.fit per round."""
    def one(module: str, start: str) -> pd.Series:
        sel = page[(page["module"] == module) & page["benchmark"].str.startswith(start)]
        if sel.empty:
            raise LookupError(f"figures/benchmarks.csv has no {module} row starting {start!r}: run "
                              f"python -m lrank bench {module} --store")
        return sel.iloc[0]

    return {"adarank": one("adarank", "AdaRank.MAP time per round"),
            "rankboost": one("rankboost", "RankBoost.fit per round")}


def register_speed(reg: claims.Registry, page: pd.DataFrame) -> dict[str, float]:
    """Sec. 3.4's efficiency claims from the stored benchmark page (nothing is timed here)."""
    r = bench_rows(page)
    ada, rb = r["adarank"], r["rankboost"]
    cross = float(rb["ours_s"]) / float(ada["ours_s"])
    loc, sentence = SENTENCES["sec3.4.complexity"]
    reg.speed("sec3.4.complexity", location=loc, sentence=sentence, data_kind="substitute",
              data="MSLR sample, train file (the benchmark page's data)",
              quantity="time of a naive round (every feature re-ranked on every query, O(k m n log n)) over "
                       "ours (a weighted sum over the feature x query matrix computed once)",
              ours=float(ada["ratio"]), paper_value="O((k+T) m n log n)", verdict=claims.HELD,
              reason=(f"a round after the one-time matrix is {float(ada['ratio']):.0f}x faster than a round "
                      f"that ranks every feature again ({ada['threads']} thread, {ada['timing']}, load "
                      f"{ada['load']}, commit {ada['commit']}): k enters once, not T times"))
    loc, sentence = SENTENCES["sec3.4.efficiency"]
    reg.speed("sec3.4.efficiency", location=loc, sentence=sentence, data_kind="substitute",
              data="MSLR sample, train file (the benchmark page's data)",
              quantity="RankBoost.fit time per round over AdaRank.MAP's (two rows of the page)",
              ours=cross, paper_value="O(T m n^2) vs O((k+T) m n log n)", verdict=claims.NOT_COMPARABLE,
              reason=(f"a RankBoost round takes {cross:.1f}x an AdaRank round on the same file, but the two "
                      f"rows were timed in separate runs (load {rb['load']} and {ada['load']}), not "
                      "alternated in one process; lrank's RankBoost searches binned thresholds in O(docs x "
                      "features) per round (WeakLearn.3), not the O(m n^2) the paper cites; and a whole fit "
                      "also depends on T (AdaRank stops after a few rounds here, RankBoost runs 100)"))
    return {"per_round_vs_naive": float(ada["ratio"]), "rankboost_over_adarank": cross}


# ------------------------------------------------------------------------------------- the scaling
def register_scaling(reg: claims.Registry, res: ProtocolResult) -> pd.DataFrame:
    """Findings (not in the paper): AdaRank under standardised and raw weak-ranker values against
    min-max, and how many of Fig. 2's claim rows change their verdict under each scaling."""
    kind, data = data_of(res)
    methods = set(res.per_query["method"])
    verdicts = {}
    for scaling in ("minmax", "standard", "none"):
        names = {k: ada_name(k, "printed", scaling) for k in ADARANKS}
        if not set(names.values()) <= methods:
            continue
        rows = [r for r in _rows_with_names(res, names)]
        adj = claims.holm([ev.p for _, ev in rows])
        verdicts[scaling] = {cid: claims.decide(ev, float(pa))[0] for (cid, ev), pa in zip(rows, adj)}
        if scaling == "minmax":
            continue
        for label, metric in ADARANKS.items():
            other = names[label]
            ev = _evidence(res.values(other, metric), res.values(label, metric),
                           f"mean test {metric.upper()} of {other} minus {label} (min-max)")
            reg.finding(f"scaling.{SLUG[label]}.{scaling}", location="not in the paper (Sec. 3.6's weak "
                                                                     "rankers)",
                        sentence="A single-feature weak ranker ranks the same under any increasing map of "
                                 "its "
                                 "feature, but f_t adds the values: does AdaRank depend on their scaling?",
                        quantity=f"test {metric.upper()}, {other} minus {label} (min-max)", ours=ev.effect,
                        data_kind=kind, data=data, evidence=ev,
                        reason=f"unadjusted p = {ev.p:.2g}, effect {ev.effect:+.4f} (n = {ev.n} queries)")
    tab = pd.DataFrame(verdicts)
    changed = int((tab.nunique(axis=1) > 1).sum()) if tab.shape[1] > 1 else 0
    reg.finding("scaling.fig2-verdicts-changed", location="not in the paper (Sec. 3.6's weak rankers)",
                sentence="How many of Fig. 2's claim verdicts change when the weak rankers' values are "
                         "standardised or raw instead of min-max scaled?",
                quantity=f"Fig. 2 claim rows (of {len(tab)}) whose verdict differs between the scalings",
                ours=changed, data_kind=kind, data=data,
                reason=f"{changed} of {len(tab)} (Holm within each scaling's {len(tab)} comparisons)")
    return tab


def _rows_with_names(res: ProtocolResult, names: dict[str, str],
                     split: str = "test") -> list[tuple[str, claims.Evidence]]:
    """Fig. 2's claim rows with the AdaRank runs ``names`` (label -> method), on the test measures of
    ``split`` (``"test"``: ties in file order; ``"test-pessimistic"``, ``"test-optimistic"`` or
    ``"test-random"``: worst first, best first, the mean over random orders)."""
    out = []
    v = res.values
    for b in BASELINES:
        out.append((f"ttest.adarank-map.{SLUG[b]}", _evidence(v(names["AdaRank.MAP"], "map", split),
                                                               v(b, "map", split), "MAP", "t")))
        out.append((f"ttest.adarank-ndcg.{SLUG[b]}", _evidence(v(names["AdaRank.NDCG"], "ndcg@5", split),
                                                                v(b, "ndcg@5", split), "NDCG@5", "t")))
        for label in ADARANKS:
            d = _all_measures(res, names[label], b, split)
            out.append((f"all.{SLUG[label]}.{SLUG[b]}", _evidence(d, 0 * d, "11 measures")))
    return out


TIES_LOCATION = "not in the paper (how every measure orders tied scores)"


def tie_ranges(res: ProtocolResult, metrics: tuple[str, ...] = ("map", "ndcg@5", "ndcg@10")) -> pd.DataFrame:
    """Mean test measure of each Fig. 2 method with tied scores in file order, in random order (the mean over
    `lrank.papers.adarank.TIE_DRAWS` shuffles), worst first and best first (each query's value averaged
    over the repetitions first), and the share of test queries whose value the order of the ties changes."""
    rows = {}
    for method in METHODS_FIG2:
        row = {}
        for m in metrics:
            row[(m, "file order")] = float(res.values(method, m).mean())
            for order, label in (("random", "random"), ("pessimistic", "worst"), ("optimistic", "best")):
                row[(m, label)] = float(res.values(method, m, f"test-{order}").mean())
        d = [res.values(method, m, "test-optimistic") - res.values(method, m, "test-pessimistic")
             for m in metrics]
        row[("queries", "ties decide")] = float((pd.concat(d, axis=1).abs().max(axis=1) > 0).mean())
        rows[method] = row
    tab = pd.DataFrame(rows).T
    tab.columns = pd.MultiIndex.from_tuples(tab.columns)
    return tab


def record_ties(ranges: pd.DataFrame) -> None:
    """Record `tie_ranges`' table (experimental numbers, pinned by the golden test)."""
    from lrank import results
    from lrank.papers.adarank import NB
    from lrank.papers.adarank_figures import EXPERIMENTAL

    for method, row in ranges.iterrows():
        results.record(NB, f"ties_{method}", {f"{a} {b}": float(v) for (a, b), v in row.items()},
                       tol=EXPERIMENTAL, kind="experimental")


def ties_markdown(ranges: pd.DataFrame, verdicts: pd.DataFrame, order_evidence: claims.Evidence) -> str:
    """What the tie study shows, in words, from its numbers (`tie_ranges`, `register_ties`)."""
    share = ranges[("queries", "ties decide")]
    most = share.idxmax()
    width = ranges[("ndcg@10", "best")] - ranges[("ndcg@10", "worst")]
    changed = int((verdicts.nunique(axis=1) > 1).sum())
    by_random = int((verdicts["random"] != verdicts["file order"]).sum())
    ev = order_evidence
    if ev.p < 0.05:
        side = "favours" if ev.effect > 0 else "works against"
    else:
        side = "neither helps nor hurts"
    others = ", ".join(f"{m} {share[m]:.0%}" for m in share.index if m != most)
    return (f"The order of tied scores changes a test measure of {share[most]:.0%} of the queries for "
            f"{most} (NDCG@10 spans {width[most]:.3f} between the worst and the best order); {others}. "
            f"Over the four orders (the same rule for every method), {changed} of Fig. 2's {len(verdicts)} "
            f"claim rows change their verdict; with ties in random order instead of file order, {by_random}. "
            "The file order, which every measure here uses (as LETOR's evaluation script), ranks at "
            f"{ev.effect:+.4f} NDCG@10 from random orders (p = {ev.p:.2g}, {ev.n} queries): it {side} the "
            "methods whose scores tie.")


def register_ties(reg: claims.Registry, res: ProtocolResult,
                  order: pd.DataFrame) -> tuple[pd.DataFrame, claims.Evidence]:
    """Findings (not in the paper): Fig. 2's claim rows with tied scores worst first, best first and in
    random order, against the file order every measure uses; and whether the file order itself carries
    label information (``order``: `lrank.papers.adarank.file_order` of the data, its measure by query).
    Returns the verdict table (claim row x order) and the file order's evidence."""
    kind, data = data_of(res)
    names = {k: k for k in ADARANKS}
    verdicts = {}
    for split in ("test", *(f"test-{t}" for t in TIE_ORDERS)):
        rows = _rows_with_names(res, names, split)
        adj = claims.holm([ev.p for _, ev in rows])
        label = "file order" if split == "test" else split.removeprefix("test-")
        verdicts[label] = {cid: claims.decide(ev, float(pa))[0] for (cid, ev), pa in zip(rows, adj)}
    tab = pd.DataFrame(verdicts)
    changed = int((tab.nunique(axis=1) > 1).sum())
    reg.finding("ties.fig2-verdicts-changed", location=TIES_LOCATION,
                sentence="How many of Fig. 2's claim verdicts change when tied scores are ordered at random, "
                         "worst first or best first (the same rule for every method) instead of in file "
                         "order?",
                quantity=f"Fig. 2 claim rows (of {len(tab)}) whose verdict differs between the four orders",
                ours=changed, data_kind=kind, data=data,
                reason=f"{changed} of {len(tab)} (Holm within each order's {len(tab)} comparisons)")
    by_random = int((tab["random"] != tab["file order"]).sum())
    reg.finding("ties.fig2-verdicts-random", location=TIES_LOCATION,
                sentence="How many of Fig. 2's claim verdicts change when tied scores are ordered at random "
                         "(mean over shuffles) instead of in file order?",
                quantity=f"Fig. 2 claim rows (of {len(tab)}) whose verdict differs, random against file "
                         "order",
                ours=by_random, data_kind=kind, data=data,
                reason=f"{by_random} of {len(tab)}: "
                       + (", ".join(f"{c} {tab.loc[c, 'file order']} -> {tab.loc[c, 'random']}"
                                    for c in tab.index[tab["random"] != tab["file order"]]) or "none"))
    metric = order.attrs.get("metric", "ndcg@10")
    ev = _evidence(order["file order"], order["random order"],
                   f"{metric.upper()} of the ranking by file position minus its mean over random orders")
    reg.finding("ties.file-order", location=TIES_LOCATION,
                sentence="Ties are broken by the documents' order in the file: does that order carry label "
                         "information that would favour the methods whose scores tie?",
                quantity=f"{metric.upper()} by file position minus the mean over random orders",
                ours=ev.effect,
                data_kind=kind, data=data, evidence=ev,
                reason=f"p = {ev.p:.2g}, effect {ev.effect:+.4f} (n = {ev.n} queries); positive would favour "
                       "tied methods")
    return tab, ev


def verdict_counts(df: pd.DataFrame) -> dict[str, int]:
    """Verdict counts of the paper's claims (findings excluded)."""
    c = df[df["kind"] != "finding"]["verdict"].value_counts()
    return {v: int(c.get(v, 0)) for v in claims.VERDICTS}


def summary_markdown(df: pd.DataFrame) -> str:
    """The registry as a Markdown table (the paper's sentence, data kind, n, p, Holm p, effect, verdict)."""
    paper = df[df["kind"] != "finding"]

    def num(x: Any, fmt: str) -> str:
        return "" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, fmt)

    lines = ["| claim | where | the paper says | data | n | p | p (Holm) | effect [95% CI] | verdict |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in paper.to_dict("records"):
        eff = "" if not np.isfinite(r["effect"]) else (
            f"{r['effect']:+.4f} [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]")
        sentence = r["sentence"] if len(r["sentence"]) <= 140 else r["sentence"][:137] + "..."
        no_n = r["n"] is None or (isinstance(r["n"], float) and not np.isfinite(r["n"]))
        n = "" if no_n else str(int(r["n"]))
        lines.append(f"| [{r['id']}](#{r['anchor']}) | {r['location']} | {sentence.replace('|', '/')} | "
                     f"{r['data_kind']} | {n} | {num(r['p'], '.2g')} | {num(r['p_adj'], '.2g')} | {eff} | "
                     f"**{r['verdict']}** |")
    return "\n".join(lines)


def _fmt_effect(r: dict) -> str:
    e = r["effect"]
    if not isinstance(e, float) or not np.isfinite(e):
        return ""
    return f"{e:+.4f} [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]"


def findings_markdown(df: pd.DataFrame) -> str:
    """The findings (not paper claims) as a Markdown table: id, what, ours or the effect, p, reason."""
    f = df[df["kind"] == "finding"]
    lines = ["| finding | quantity | ours | effect [95% CI] | p (unadjusted) | reason |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in f.to_dict("records"):
        p = r["p"]
        p = "" if not isinstance(p, float) or not np.isfinite(p) else f"{p:.2g}"
        lines.append(f"| [{r['id']}](#{r['anchor']}) | {r['quantity']} | {r['ours']} | {_fmt_effect(r)} | "
                     f"{p} | "
                     f"{str(r['reason']).replace('|', '/')} |")
    return "\n".join(lines)


PRINTED, CONTINUING_COL = "printed (the paper's claims)", "continuing variant (findings)"
_VARIANT_VERDICT = re.compile(r"continuing variant, (HELD|NOT HELD|UNDECIDED) with Holm")


def variant_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Verdicts of the experimental claims: the printed algorithm's (the paper's claims) beside the
    continuing variant's (its findings, Holm within each figure's comparisons)."""
    rows = df[(df["kind"] == "protocol") & (df["test"].fillna("") != "")]
    cont = df[df["id"].str.endswith(".continuing")]
    cv = cont["reason"].str.extract(_VARIANT_VERDICT)[0]
    out = pd.DataFrame({PRINTED: rows["verdict"].value_counts(), CONTINUING_COL: cv.value_counts()})
    out = out.fillna(0).astype(int)
    return out.reindex([v for v in (claims.HELD, claims.NOT_HELD, claims.UNDECIDED) if v in out.index])


def closing_markdown(df: pd.DataFrame, res: ProtocolResult, first: pd.DataFrame) -> str:
    """The closing summary, rendered from the registry and the run."""
    c = verdict_counts(df)
    v = variant_counts(df)
    exact = df[df["kind"].isin(["exact", "derivation"])]
    held = {k: int(v.loc[claims.HELD, k]) if claims.HELD in v.index else 0 for k in v.columns}
    lines = [
        f"- **Data:** {res.experiment.name}, {res.experiment.data.n_queries} queries, {res.repeats} "
        "repetitions of "
        f"5-fold CV (3 train / 1 validation / 1 test); {res.experiment.note}.",
        f"- **Exact items and derivations:** {int((exact['verdict'] == claims.HELD).sum())} of {len(exact)} "
        "HELD.",
        "- **The paper's claims:** " + ", ".join(f"{n} {k}" for k, n in c.items() if n) + ".",
        f"- **What the printed algorithm is:** {bm25_phrase(first, res)} (6.1).",
        f"- **Printed vs continuing:** HELD experimental claim rows: {held.get(PRINTED, 0)} with the printed "
        f"algorithm, {held.get(CONTINUING_COL, 0)} with the continuing variant (table below).",
    ]
    return "\n".join(lines) + "\n\n" + v.to_markdown()


__all__ = ["closing_markdown", "findings_markdown", "variant_counts", "SENTENCES", "data_of", "protocol_rows",
           "register_protocol", "register_scaling", "register_speed", "register_untestable",
           "register_other_data", "evidence_table", "summary_markdown", "verdict_counts"]
