"""The claims registry: every claim of every paper, its evidence and its verdict, as data.

Each paper notebook builds one :class:`Registry`, adds one row per claim of its paper (theorems,
lemmas, worked examples, table and figure statements, narrative sentences, speed claims) and, at the
end, calls :meth:`Registry.finalize`. That adjusts the p-values of the paper's tested claims for
multiplicity (Holm, within the paper), derives every verdict from its evidence, records each row with
:func:`lrank.results.record` (so the golden test pins it) and writes

* ``<figures>/claims/<notebook>.csv``: this notebook's rows, and
* ``<figures>/claims.csv``: the rows of every notebook that has run, in notebook order,

which the notebooks' summaries, ``00_index`` and the book render. Findings that are not claims of the
paper (a scaling study, a violation count) are rows of ``kind="finding"``: never counted as paper
claims and never part of the Holm family.

Verdicts
--------
HELD
    The evidence supports the paper's statement: an exact value matches the printed digits, a
    derivation's check passed, or a test is significant after Holm's adjustment with the effect in the
    paper's direction (for a claim with a margin: the test that the effect lies inside the margin is
    significant).
NOT HELD
    The evidence contradicts it: a printed value does not match, or a test is significant after
    adjustment with the effect against the paper (for a margin claim: the 95% interval lies wholly
    beyond the margin).
UNDECIDED
    A test that is not significant after adjustment. Not significant is never NOT HELD.
NOT COMPARABLE
    The claim was tested on substitute data or at a budget too different from the paper's to decide it
    as stated; ``reason`` says which. The evidence is still reported.
NOT TESTABLE HERE
    The paper's data is not public and no substitute can stand in.

The effect of a tested claim is oriented so that a positive value supports the paper's statement
(``effect_desc`` says what it is, e.g. "mean test NDCG@10 of AdaRank.MAP minus RankBoost"); its 95%
interval is reported with it. :func:`check_consistency` refuses a row whose verdict contradicts its own
numbers.

Seed stability
--------------
``python -m lrank reproduce --seeds 0-4`` reruns the notebooks with each seed into
``<figures>/seeds/seed-<k>/`` (:func:`combine` writes each seed's ``claims.csv``);
`lrank.papers.index.seed_verdicts` reads them back keyed by notebook and id, and
`lrank.papers.index.with_seeds` adds ``seeds_agree`` and ``fragile`` to the registry.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lrank import results
from lrank.paths import figures_dir

HELD, NOT_HELD, UNDECIDED = "HELD", "NOT HELD", "UNDECIDED"
NOT_COMPARABLE, NOT_TESTABLE = "NOT COMPARABLE", "NOT TESTABLE HERE"
VERDICTS = (HELD, NOT_HELD, UNDECIDED, NOT_COMPARABLE, NOT_TESTABLE)
KINDS = ("exact", "derivation", "protocol", "speed", "narrative", "finding")
DATA_KINDS = ("paper", "substitute", "synthetic", "none")
ALPHA = 0.05
VERDICT_LEGEND = {
    HELD: "the evidence supports the paper's statement (exact match, passed derivation, or a test "
          "significant after Holm's adjustment with the effect in the paper's direction)",
    NOT_HELD: "the evidence contradicts it (a mismatch, or a significant effect against the paper)",
    UNDECIDED: "a test not significant after Holm's adjustment (never counted as NOT HELD)",
    NOT_COMPARABLE: "tested on substitute data or at a budget too different from the paper's to decide "
                    "the claim as stated (the reason says which)",
    NOT_TESTABLE: "the paper's data is not public and nothing can stand in for it",
}
#: the order of the columns of ``claims.csv``
COLUMNS = ("paper", "notebook", "id", "anchor", "kind", "location", "sentence", "quantity",
           "data_kind", "data", "unit", "n", "test", "statistic", "p", "p_adj", "effect",
           "effect_desc", "ci_low", "ci_high", "margin", "margin_rationale", "ours", "paper_value",
           "verdict", "reason")
_ID = re.compile(r"^[a-z0-9][a-z0-9_.\-]*$")


@dataclass
class Evidence:
    """The outcome of one statistical test of a claim.

    Parameters
    ----------
    test : str
        The test by name, with its sidedness and pairing, e.g. "Wilcoxon signed-rank, paired,
        two-sided".
    n : int
        Independent units the test rests on (queries, users, tasks, positions): pooled first, tested
        once; never the same unit counted twice.
    unit : str
        What one unit is ("queries", "users", "tasks", ...).
    p : float
        The p-value that decides the claim (two-sided for a direction claim; for a claim with a margin,
        the p-value of the test that the effect lies inside the margin).
    effect : float
        The effect, oriented so that a positive value supports the paper's statement.
    effect_desc : str
        What ``effect`` is, in words.
    ci : tuple of float, optional
        95% interval of ``effect``; (NaN, NaN), the default, when not computed.
    statistic : float, optional
        The test statistic; NaN by default.
    margin : float or None, default None
        For non-inferiority / equivalence claims: the margin on the scale of ``effect``, >= 0 (the claim
        holds when ``effect > -margin``); needs ``margin_rationale``. None: a claim of direction.
    margin_rationale : str, default ""
        Why that margin: which difference the paper or the field treats as negligible.

    Raises
    ------
    ValueError
        When ``n`` is not a non-negative int, ``p`` lies outside [0, 1], ``margin`` is negative, or a
        margin comes without its rationale.
    """

    test: str
    n: int
    unit: str
    p: float
    effect: float
    effect_desc: str
    ci: tuple[float, float] = (math.nan, math.nan)
    statistic: float = math.nan
    margin: float | None = None
    margin_rationale: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.n, (int, np.integer)) or self.n < 0:
            raise ValueError(f"n must be a non-negative int (independent units), got {self.n!r}")
        self.n = int(self.n)
        if not (0.0 <= float(self.p) <= 1.0):
            raise ValueError(f"p must lie in [0, 1], got {self.p!r}")
        if self.margin is not None:
            if not (self.margin >= 0):
                raise ValueError(f"margin must be >= 0, got {self.margin!r}")
            if not self.margin_rationale.strip():
                raise ValueError("a margin needs its rationale (margin_rationale=...): why this difference "
                                 "is negligible for the claim")


@dataclass
class Claim:
    """One row of the registry (see the module docstring for the columns' meaning).

    Rows are made by the methods of :class:`Registry` (``exact``, ``tested``, ...), which check them.

    Parameters
    ----------
    paper : str
        Short name of the paper (``"RankBoost+"``).
    notebook : str
        The notebook's stem (``"05_rankboost_plus"``).
    id : str
        The claim's id, unique within the notebook: lowercase letters, digits, ``.``, ``_`` and ``-``,
        starting with a letter or digit (``"thm1.runs"``).
    kind : {"exact", "derivation", "protocol", "speed", "narrative", "finding"}
        What the row is; a ``"finding"`` is not a claim of the paper (never counted, never in the Holm
        family).
    location : str
        Where the paper states it (``"Sec. 3.3, Theorem 1"``); required.
    sentence : str
        The paper's statement; required.
    quantity : str, default ""
        What was measured or computed, in words.
    data_kind : {"paper", "substitute", "synthetic", "none"}, default "none"
        What the evidence rests on; ``"substitute"`` needs ``data``.
    data : str, default ""
        Which data set (for a substitute: which, and why).
    evidence : Evidence or None, default None
        The test that decides the claim; None for a row without a test.
    ours : Any, default None
        Our value: a number, string or array (written to ``claims.csv`` flattened, space-separated; None
        as an empty cell).
    paper_value : Any, default None
        The paper's printed value, written like ``ours``.
    verdict : str, default ""
        One of ``VERDICTS``, or empty for :meth:`Registry.finalize` to derive it from ``evidence`` or
        ``override`` (a finding's stays empty).
    reason : str, default ""
        Why the verdict, in one line; required with ``override``.
    override : {"NOT COMPARABLE", "NOT TESTABLE HERE"} or None, default None
        A verdict that replaces the one the evidence would give (the evidence is still reported).
    anchor : str, default ""
        The HTML anchor of the claim's deciding cell; empty: ``anchor_of(id)``.
    p_adj : float, optional
        The Holm-adjusted p-value, set by :meth:`Registry.finalize` (a finding's is its unadjusted ``p``); NaN
        by default and for rows without evidence.
    extra : dict, optional
        An empty dict by default; the registry neither reads nor writes it.
    """

    paper: str
    notebook: str
    id: str
    kind: str
    location: str
    sentence: str
    quantity: str = ""
    data_kind: str = "none"
    data: str = ""
    evidence: Evidence | None = None
    ours: Any = None
    paper_value: Any = None
    verdict: str = ""
    reason: str = ""
    override: str | None = None
    anchor: str = ""
    p_adj: float = math.nan
    extra: dict = field(default_factory=dict)

    def row(self) -> dict:
        """This claim as one row of ``claims.csv``.

        Returns
        -------
        dict
            Column name to value, for every column of ``COLUMNS`` (the evidence's fields NaN or empty
            without evidence; ``anchor`` ``anchor_of(id)`` when not set).
        """
        ev = self.evidence
        return {
            "paper": self.paper, "notebook": self.notebook, "id": self.id,
            "anchor": self.anchor or anchor_of(self.id), "kind": self.kind, "location": self.location,
            "sentence": self.sentence, "quantity": self.quantity, "data_kind": self.data_kind,
            "data": self.data, "unit": ev.unit if ev else "", "n": ev.n if ev else None,
            "test": ev.test if ev else "", "statistic": ev.statistic if ev else math.nan,
            "p": ev.p if ev else math.nan, "p_adj": self.p_adj,
            "effect": ev.effect if ev else math.nan, "effect_desc": ev.effect_desc if ev else "",
            "ci_low": ev.ci[0] if ev else math.nan, "ci_high": ev.ci[1] if ev else math.nan,
            "margin": ev.margin if ev and ev.margin is not None else math.nan,
            "margin_rationale": ev.margin_rationale if ev else "",
            "ours": _cell(self.ours), "paper_value": _cell(self.paper_value),
            "verdict": self.verdict, "reason": self.reason,
        }


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (np.generic,)):
        v = v.item()
    if isinstance(v, (list, tuple, np.ndarray)):
        flat = np.asarray(v).ravel().tolist()
        return " ".join(f"{x:.6g}" if isinstance(x, float) else str(x) for x in flat)
    if isinstance(v, float):
        return f"{v:.10g}"
    return str(v)


def anchor_of(claim_id: str) -> str:
    """The HTML anchor of a claim's deciding cell: ``claim-`` and the id with dots and underscores as dashes.

    Parameters
    ----------
    claim_id : str
        The claim's id (``"thm1.runs"`` gives ``"claim-thm1-runs"``).

    Returns
    -------
    str
        The anchor.
    """
    return "claim-" + claim_id.replace(".", "-").replace("_", "-")


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (``statsmodels.stats.multitest.multipletests``).

    Parameters
    ----------
    p : sequence of float
        The raw p-values of one family (one paper's tested claims).

    Returns
    -------
    numpy.ndarray
        The adjusted p-values (float64), in the order of ``p``; empty for an empty ``p``.
    """
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p, dtype=np.float64)
    if p.size == 0:
        return p
    return multipletests(p, alpha=ALPHA, method="holm")[1]


def decide(ev: Evidence, p_adj: float, alpha: float = ALPHA) -> tuple[str, str]:
    """Verdict and a one-line reason from evidence and its adjusted p-value (see the module docstring).

    Parameters
    ----------
    ev : Evidence
        The claim's test.
    p_adj : float
        ``ev.p`` after Holm's adjustment within the paper's family.
    alpha : float, default 0.05
        Level of the test after adjustment (the module's ``ALPHA``).

    Returns
    -------
    verdict : str
        HELD, NOT HELD or UNDECIDED. Without a margin: HELD or NOT HELD when ``p_adj < alpha`` and the
        effect is positive or negative, else UNDECIDED (also for a zero effect). With a margin: HELD when
        ``p_adj < alpha``, NOT HELD when the 95% interval lies wholly below ``-margin``, else UNDECIDED.
    reason : str
        The verdict's grounds in one line (adjusted p-value, n and unit; for a margin, its rationale).
    """
    lo, hi = ev.ci
    if ev.margin is None:
        if not p_adj < alpha:
            return UNDECIDED, (f"not significant after Holm (p_adj = {p_adj:.2g} >= {alpha}; n = {ev.n} "
                               f"{ev.unit})")
        if ev.effect > 0:
            return HELD, f"significant in the paper's direction (p_adj = {p_adj:.2g}, n = {ev.n} {ev.unit})"
        if ev.effect < 0:
            return NOT_HELD, (f"significant against the paper's direction (p_adj = {p_adj:.2g}, "
                              f"n = {ev.n} {ev.unit})")
        return UNDECIDED, "zero effect"
    if p_adj < alpha:
        return HELD, (f"inside the margin {ev.margin:g} (p_adj = {p_adj:.2g}, n = {ev.n} {ev.unit}; margin: "
                      f"{ev.margin_rationale})")
    if math.isfinite(hi) and hi < -ev.margin:
        return NOT_HELD, (f"95% interval [{lo:.3g}, {hi:.3g}] wholly beyond the margin -{ev.margin:g} "
                          f"(n = {ev.n} {ev.unit})")
    return UNDECIDED, (f"neither inside nor beyond the margin {ev.margin:g} after Holm "
                       f"(p_adj = {p_adj:.2g}, n = {ev.n} {ev.unit})")


class Registry:
    """The claims of one paper, built by its notebook.

    Parameters
    ----------
    notebook : str
        The notebook's stem (``"05_rankboost_plus"``); rows are recorded under its results and written
        to ``claims/<notebook>.csv``.
    paper : str
        Short name of the paper (``"RankBoost+"``), shown in the index.
    alpha : float, default 0.05
        Level of every test after Holm's adjustment (the module's ``ALPHA``).
    """

    def __init__(self, notebook: str, paper: str, alpha: float = ALPHA) -> None:
        self.notebook, self.paper, self.alpha = notebook, paper, alpha
        self.claims: dict[str, Claim] = {}
        self._final: pd.DataFrame | None = None

    # ----------------------------------------------------------------------------- adding rows
    def _add(self, claim: Claim) -> Claim:
        if not _ID.match(claim.id):
            raise ValueError(f"claim id {claim.id!r}: lowercase letters, digits, '.', '_' and '-' only")
        if claim.id in self.claims:
            raise ValueError(f"claim id {claim.id!r} added twice in {self.notebook}")
        if claim.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {claim.kind!r}")
        if claim.data_kind not in DATA_KINDS:
            raise ValueError(f"data_kind must be one of {DATA_KINDS}, got {claim.data_kind!r}")
        if claim.data_kind == "substitute" and not claim.data.strip():
            raise ValueError(f"{claim.id}: substitute data must be named, with why (data=...)")
        if not claim.sentence.strip() or not claim.location.strip():
            raise ValueError(f"{claim.id}: the paper's sentence and its location are required")
        if claim.override is not None and claim.override not in (NOT_COMPARABLE, NOT_TESTABLE):
            raise ValueError(f"override must be {NOT_COMPARABLE!r} or {NOT_TESTABLE!r}, "
                             f"got {claim.override!r}")
        if claim.override is not None and not claim.reason.strip():
            raise ValueError(f"{claim.id}: {claim.override} needs a reason saying why")
        self._final = None
        self.claims[claim.id] = claim
        return claim

    def exact(self, id: str, *, location: str, sentence: str, ours: Any, paper_value: Any,
              tol: float, quantity: str = "", data_kind: str = "none", data: str = "") -> Claim:
        """A printed value computed without the paper's data: HELD when every element of ``ours`` is
        within ``tol`` of ``paper_value`` (the printed digits' half unit, usually).

        Parameters
        ----------
        id : str
            The claim's id, unique within the notebook (lowercase letters, digits, ``.``, ``_``, ``-``).
        location : str
            Where the paper states it (``"Sec. 2, Eq. 3"``).
        sentence : str
            The paper's statement.
        ours : float or array-like of float
            Our value(s); the same shape as ``paper_value``.
        paper_value : float or array-like of float
            The printed value(s).
        tol : float
            Largest absolute difference, per element, that still counts as equal (inclusive).
        quantity : str, default ""
            What the value is, in words.
        data_kind : {"paper", "substitute", "synthetic", "none"}, default "none"
            What the value was computed on; ``"substitute"`` needs ``data``.
        data : str, default ""
            Which data set, if any.

        Returns
        -------
        Claim
            The row added, its verdict already set: HELD or NOT HELD (the largest gap in the reason).

        Raises
        ------
        ValueError
            When ``ours`` and ``paper_value`` differ in shape, or the row is invalid (its id, data,
            sentence or location).
        """
        a = np.asarray(ours, dtype=np.float64)
        b = np.asarray(paper_value, dtype=np.float64)
        if a.shape != b.shape:
            raise ValueError(f"{id}: ours has shape {a.shape}, the paper's value {b.shape}")
        gap = float(np.max(np.abs(a - b))) if a.size else 0.0
        ok = bool(gap <= tol)
        reason = (f"equals the printed value to {tol:g} (largest gap {gap:.2g})" if ok
                  else f"differs from the printed value by {gap:.3g} (> {tol:g})")
        return self._add(Claim(self.paper, self.notebook, id, "exact", location, sentence, quantity,
                               data_kind, data, None, ours, paper_value, HELD if ok else NOT_HELD, reason))

    def derivation(self, id: str, *, location: str, sentence: str, shown: str, passed: bool = True) -> Claim:
        """A derivation whose check raised if false (the notebook cell asserts before calling this):
        ``shown`` says in words what the check established.

        Parameters
        ----------
        id : str
            The claim's id, unique within the notebook.
        location : str
            Where the paper states it.
        sentence : str
            The paper's statement.
        shown : str
            What the check established, in words; becomes the row's reason. Must not be empty.
        passed : bool, default True
            Whether the check passed: HELD if so, else NOT HELD.

        Returns
        -------
        Claim
            The row added, with its verdict.
        """
        if not shown.strip():
            raise ValueError(f"{id}: say what the derivation shows (shown=...)")
        return self._add(Claim(self.paper, self.notebook, id, "derivation", location, sentence, "", "none",
                               "", None, None, None, HELD if passed else NOT_HELD, shown))

    def tested(self, id: str, *, kind: str = "protocol", location: str, sentence: str, quantity: str,
               data_kind: str, data: str, evidence: Evidence, not_comparable: str | None = None,
               not_testable: str | None = None, paper_value: Any = None, ours: Any = None) -> Claim:
        """A claim decided by a statistical test. Its p-value joins the paper's Holm family (unless
        ``kind == "finding"``). ``not_comparable="why"`` (substitute data or budget too different to
        decide the claim as stated) reports the evidence but sets NOT COMPARABLE.

        Parameters
        ----------
        id : str
            The claim's id, unique within the notebook.
        kind : {"protocol", "exact", "derivation", "speed", "narrative", "finding"}, default "protocol"
            What the claim is; ``"finding"`` keeps it out of the Holm family and the counts.
        location : str
            Where the paper states it.
        sentence : str
            The paper's statement.
        quantity : str
            What was measured, in words.
        data_kind : {"paper", "substitute", "synthetic", "none"}
            What the test ran on; ``"substitute"`` needs ``data``.
        data : str
            Which data set (for a substitute: which, and why).
        evidence : Evidence
            The test (e.g. from :func:`paired` or :func:`correlated`).
        not_comparable : str or None, default None
            Why the claim cannot be decided as stated here: sets NOT COMPARABLE, with the test's own
            verdict appended to this reason. None: the test decides.
        not_testable : str or None, default None
            Likewise for NOT TESTABLE HERE. Not with ``not_comparable`` (one verdict, one reason).
        paper_value : Any, default None
            The paper's printed value, if any, shown beside ours.
        ours : Any, default None
            Our value, if any, shown beside the paper's.

        Returns
        -------
        Claim
            The row added; its verdict is derived by :meth:`finalize`.
        """
        if kind == "finding" and (not_comparable is not None or not_testable is not None):
            raise ValueError(f"claim {id!r}: a finding is reported, not judged, so not_comparable / "
                             "not_testable do not apply (they were dropped before); use Registry.finding")
        if not_comparable is not None and not_testable is not None:
            raise ValueError(f"claim {id!r}: give not_comparable or not_testable, not both (one verdict "
                             "with one reason; the other reason would be dropped)")
        override, reason = None, ""
        if not_comparable is not None:
            override, reason = NOT_COMPARABLE, not_comparable
        if not_testable is not None:
            override, reason = NOT_TESTABLE, not_testable
        return self._add(Claim(self.paper, self.notebook, id, kind, location, sentence, quantity, data_kind,
                               data, evidence, ours, paper_value, "", reason, override))

    def untestable(self, id: str, *, location: str, sentence: str, kind: str = "protocol",
                   reason: str, data: str = "") -> Claim:
        """A claim on data that is not public (NOT TESTABLE HERE), with the reason.

        Parameters
        ----------
        id : str
            The claim's id, unique within the notebook.
        location : str
            Where the paper states it.
        sentence : str
            The paper's statement.
        kind : {"protocol", "exact", "derivation", "speed", "narrative", "finding"}, default "protocol"
            What the claim is.
        reason : str
            Why it cannot be tested here (which data is missing); required.
        data : str, default ""
            The paper's data set by name (``data_kind`` is ``"paper"``).

        Returns
        -------
        Claim
            The row added; :meth:`finalize` sets NOT TESTABLE HERE.
        """
        return self._add(Claim(self.paper, self.notebook, id, kind, location, sentence, "", "paper", data,
                               None, None, None, "", reason, NOT_TESTABLE))

    def not_comparable(self, id: str, *, location: str, sentence: str, reason: str, kind: str = "protocol",
                       quantity: str = "", data_kind: str = "none", data: str = "", ours: Any = None,
                       paper_value: Any = None) -> Claim:
        """A claim this run cannot decide as stated, without a test (NOT COMPARABLE): the data or the
        budget is too different from the paper's; ``reason`` says which. ``ours`` / ``paper_value`` may
        carry what was measured beside the printed value. (A tested claim on unsuitable data goes through
        `tested` with ``not_comparable=`` instead, so that its test is still reported.)

        Parameters
        ----------
        id : str
            The claim's id, unique within the notebook.
        location : str
            Where the paper states it.
        sentence : str
            The paper's statement.
        reason : str
            Which data or budget differs, and why that keeps the claim undecided; must not be empty.
        kind : {"protocol", "exact", "derivation", "speed", "narrative", "finding"}, default "protocol"
            What the claim is.
        quantity : str, default ""
            What was measured, in words.
        data_kind : {"paper", "substitute", "synthetic", "none"}, default "none"
            What was used; ``"substitute"`` needs ``data``.
        data : str, default ""
            Which data set.
        ours : Any, default None
            What was measured, if anything.
        paper_value : Any, default None
            The paper's printed value, if any.

        Returns
        -------
        Claim
            The row added; :meth:`finalize` sets NOT COMPARABLE.
        """
        if not reason.strip():
            raise ValueError(f"{id}: a NOT COMPARABLE row needs its reason (which data or budget, and why)")
        return self._add(Claim(self.paper, self.notebook, id, kind, location, sentence, quantity, data_kind,
                               data, None, ours, paper_value, "", reason, NOT_COMPARABLE))

    def speed(self, id: str, *, location: str, sentence: str, quantity: str, ours: float,
              paper_value: Any, verdict: str, reason: str, data_kind: str, data: str) -> Claim:
        """A speed claim: the measured ratio (from the benchmark page) beside the paper's, with the
        verdict and why (e.g. NOT COMPARABLE when the paper's ratio is relative to its own, slower,
        implementation).

        Parameters
        ----------
        id : str
            The claim's id, unique within the notebook.
        location : str
            Where the paper states it.
        sentence : str
            The paper's statement.
        quantity : str
            What the ratio is, in words.
        ours : float
            The measured ratio.
        paper_value : Any
            The paper's printed ratio (or value).
        verdict : str
            One of ``VERDICTS``, given here (no test decides it).
        reason : str
            Why that verdict; must not be empty.
        data_kind : {"paper", "substitute", "synthetic", "none"}
            What was timed; ``"substitute"`` needs ``data``.
        data : str
            Which data set.

        Returns
        -------
        Claim
            The row added, with its verdict.
        """
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
        if not reason.strip():
            raise ValueError(f"{id}: a speed verdict needs its reason")
        c = Claim(self.paper, self.notebook, id, "speed", location, sentence, quantity, data_kind, data, None,
                  ours, paper_value, verdict, reason)
        return self._add(c)

    def finding(self, id: str, *, location: str, sentence: str, quantity: str, ours: Any,
                data_kind: str, data: str, evidence: Evidence | None = None, reason: str = "") -> Claim:
        """A result that is not a claim of the paper (kind ``finding``): reported, never counted.

        Parameters
        ----------
        id : str
            The finding's id, unique within the notebook.
        location : str
            The part of the paper it concerns.
        sentence : str
            The finding, in one sentence.
        quantity : str
            What was measured, in words.
        ours : Any
            The measured value.
        data_kind : {"paper", "substitute", "synthetic", "none"}
            What it was measured on; ``"substitute"`` needs ``data``.
        data : str
            Which data set.
        evidence : Evidence or None, default None
            A test, if any: reported with its unadjusted p-value, outside the Holm family; no verdict.
        reason : str, default ""
            A note shown in the reason column.

        Returns
        -------
        Claim
            The row added (its verdict stays empty).
        """
        return self._add(Claim(self.paper, self.notebook, id, "finding", location, sentence, quantity,
                               data_kind, data, evidence, ours, None, "", reason))

    # ----------------------------------------------------------------------------- finishing
    def finalize(self, record: bool = True, write: bool = True) -> pd.DataFrame:
        """Holm-adjust the tested claims, derive the verdicts, record and write; returns the table.

        Parameters
        ----------
        record : bool, default True
            Record each row with :func:`lrank.results.record` under ``claim:<id>`` (the verdict, or
            ``"reported"`` for a finding, with ``claim_kind`` and, for a tested row, ``n``, ``p_value``,
            ``p_adj`` and ``effect``).
        write : bool, default True
            Write the rows with :func:`write_claims` (to the active profile's figures folder) and rebuild
            ``claims.csv``.

        Returns
        -------
        pandas.DataFrame
            The registry with the columns of ``claims.csv`` (:meth:`table`), one row per claim in the
            order added.

        Raises
        ------
        AssertionError
            When a verdict contradicts its own numbers (:func:`check_consistency`).
        """
        family = [c for c in self.claims.values() if c.evidence is not None and c.kind != "finding"]
        adj = holm([c.evidence.p for c in family])
        for c, pa in zip(family, adj):
            c.p_adj = float(pa)
        for c in self.claims.values():
            if c.evidence is None:
                if c.override is not None:
                    c.verdict = c.override
                continue
            if c.kind == "finding":
                c.p_adj = c.evidence.p  # not adjusted: not part of the paper's family
                if not c.verdict:
                    c.verdict = ""
                continue
            v, why = decide(c.evidence, c.p_adj, self.alpha)
            if c.override is not None:
                c.verdict, c.reason = c.override, f"{c.reason} (the test alone: {v}, {why})"
            else:
                c.verdict, c.reason = v, why
        df = self.table()
        problems = check_consistency(df, self.alpha)
        if problems:
            raise AssertionError("verdicts contradict their numbers:\n" + "\n".join(problems))
        if record:
            for c in self.claims.values():
                ev = c.evidence
                # the claim's kind under its own name: ``kind=`` of `results.record` is the precision class
                extra: dict[str, Any] = {"claim_kind": c.kind}
                if ev is not None:
                    extra.update(n=ev.n, p_value=ev.p, p_adj=c.p_adj, effect=ev.effect)
                # n, p and effect come out of floating point: pinned by the precision policy's experimental
                # tolerance (the verdict word itself is compared exactly)
                results.record(self.notebook, f"claim:{c.id}", c.verdict or "reported", tol=None,
                               kind="experimental" if ev is not None else None, **extra)
        if write:
            write_claims(self.notebook, df)
        self._final = df
        return df

    def table(self) -> pd.DataFrame:
        """The registry as a DataFrame with the columns of ``claims.csv``.

        Returns
        -------
        pandas.DataFrame
            One row per claim (:meth:`Claim.row`), in the order added; the verdicts :meth:`finalize`
            derives are empty, and ``p_adj`` NaN, until it runs.
        """
        rows = [c.row() for c in self.claims.values()]
        return pd.DataFrame(rows, columns=list(COLUMNS))

    def counts(self) -> dict[str, int]:
        """How many paper claims (findings excluded) have each verdict.

        Returns
        -------
        dict of str to int
            Verdict to count, for each of the five verdicts (0 when none); taken from the finalized table
            if :meth:`finalize` has run since the last row was added.
        """
        df = self._final if self._final is not None else self.table()
        df = df[df["kind"] != "finding"]
        return {v: int((df["verdict"] == v).sum()) for v in VERDICTS}


def check_consistency(df: pd.DataFrame, alpha: float = ALPHA) -> list[str]:
    """Rows whose verdict contradicts their own numbers (empty when none).

    HELD needs, for a tested claim, ``p_adj < alpha`` and a positive effect (or, with a margin, an effect
    above ``-margin``); NOT HELD needs ``p_adj < alpha`` and a negative effect, or a 95% interval wholly
    beyond the margin; UNDECIDED needs ``p_adj >= alpha`` (or a zero effect). Findings, NOT COMPARABLE
    and NOT TESTABLE HERE rows and rows without a finite ``p_adj`` are not checked.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows with the columns of ``claims.csv`` (:meth:`Registry.table`, :func:`load`); uses ``id``, ``kind``,
        ``verdict``, ``p_adj``, ``effect``, ``margin`` and ``ci_high``.
    alpha : float, default 0.05
        Level of the tests after adjustment.

    Returns
    -------
    list of str
        One line per contradicting row: its id, verdict, adjusted p-value and effect.
    """
    out = []
    for r in df.to_dict("records"):
        v, p, e = r["verdict"], r["p_adj"], r["effect"]
        if r["kind"] == "finding" or v in (NOT_COMPARABLE, NOT_TESTABLE) or not _is_num(p):
            continue
        m = r["margin"]
        margin = _is_num(m)
        if v == HELD and not (p < alpha and (e > -m if margin else e > 0)):
            out.append(f"{r['id']}: HELD with p_adj {p:.3g}, effect {e:.3g}")
        elif v == NOT_HELD and not ((r["ci_high"] < -m) if margin else (p < alpha and e < 0)):
            out.append(f"{r['id']}: NOT HELD with p_adj {p:.3g}, effect {e:.3g}")
        elif v == UNDECIDED and p < alpha and (margin or e != 0):  # a margin claim with p < alpha is HELD
            out.append(f"{r['id']}: UNDECIDED with p_adj {p:.3g} < {alpha}")
    return out


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and math.isfinite(float(x))


# --------------------------------------------------------------------------------- files
def claims_dir(profile: str | None = None) -> Path:
    """``<figures>/claims``, where each notebook's rows are written (created when missing).

    Parameters
    ----------
    profile : str or None, default None
        One of ``"quick"``, ``"paper"``, ``"rehearsal"``; None: the active profile (``$LRANK_PROFILE``,
        else ``"quick"``).

    Returns
    -------
    pathlib.Path
        The folder.
    """
    d = figures_dir(profile) / "claims"
    d.mkdir(parents=True, exist_ok=True)
    return d


def write_claims(notebook: str, df: pd.DataFrame, profile: str | None = None) -> Path:
    """Write this notebook's rows and rebuild ``<figures>/claims.csv`` from every notebook's rows.

    Parameters
    ----------
    notebook : str
        The notebook's stem: the rows go to ``<figures>/claims/<notebook>.csv`` (floats to 6 significant
        digits). Only stems starting with two digits are combined into ``claims.csv``.
    df : pandas.DataFrame
        The rows (:meth:`Registry.finalize`'s table).
    profile : str or None, default None
        The profile whose figures folder is written; None: the active profile.

    Returns
    -------
    pathlib.Path
        The path of the rebuilt ``claims.csv``.
    """
    df.to_csv(claims_dir(profile) / f"{notebook}.csv", index=False, float_format="%.6g")
    return rebuild(profile)


def rebuild(profile: str | None = None) -> Path:
    """``<figures>/claims.csv``: the rows of every ``claims/<notebook>.csv``, in notebook order.

    Parameters
    ----------
    profile : str or None, default None
        The profile whose figures folder is rebuilt; None: the active profile.

    Returns
    -------
    pathlib.Path
        The path of ``claims.csv``.
    """
    return combine(figures_dir(profile))


def combine(folder: str | Path) -> Path:
    """Write ``<folder>/claims.csv`` from every ``<folder>/claims/<notebook>.csv``, in notebook order.

    Used for the registry of a run (`rebuild`) and for each seed's registry under
    ``<figures>/seeds/seed-<k>/`` (``python -m lrank reproduce --seeds``).

    Parameters
    ----------
    folder : str or pathlib.Path
        A figures folder holding ``claims/``; only the ``claims/<notebook>.csv`` whose names start with
        two digits are read, sorted by name (notebook order).

    Returns
    -------
    pathlib.Path
        The path of ``<folder>/claims.csv`` (with just the header when no notebook has written rows).
    """
    folder = Path(folder)
    parts = sorted((folder / "claims").glob("[0-9][0-9]*.csv"))
    frames = [pd.read_csv(p, dtype={"ours": str, "paper_value": str}, keep_default_na=False,
                          na_values=[""]) for p in parts]
    full = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMNS))
    path = folder / "claims.csv"
    full.to_csv(path, index=False, float_format="%.6g")
    return path


def load(path: str | Path | None = None, profile: str | None = None) -> pd.DataFrame:
    """The registry of every notebook (``<figures>/claims.csv`` unless ``path``).

    Parameters
    ----------
    path : str or pathlib.Path or None, default None
        A ``claims.csv`` to read; None: the one in the figures folder of ``profile``.
    profile : str or None, default None
        Used only without ``path``; None: the active profile.

    Returns
    -------
    pandas.DataFrame
        The rows, ``ours``, ``paper_value``, ``reason`` and ``margin_rationale`` read as text (an empty cell
        is NaN).

    Raises
    ------
    FileNotFoundError
        When there is no such file (no paper notebook has run).
    """
    path = Path(path) if path is not None else figures_dir(profile) / "claims.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no claims registry yet (run the paper notebooks)")
    return pd.read_csv(path, dtype={"ours": str, "paper_value": str, "reason": str, "margin_rationale": str},
                       keep_default_na=False, na_values=[""])


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Verdict counts per paper (paper claims only; findings excluded): one row per paper.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows with the columns of ``claims.csv`` (:func:`load`); uses ``paper``, ``kind`` and ``verdict``.

    Returns
    -------
    pandas.DataFrame
        Indexed by paper, in the order the papers first appear in ``df``; one column per verdict, in the
        order of ``VERDICTS`` (0 where none).
    """
    claims = df[df["kind"] != "finding"]
    tab = pd.crosstab(claims["paper"], claims["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    order = list(dict.fromkeys(claims["paper"]))
    return tab.reindex(order)


# --------------------------------------------------------------------------------- evidence
PAIRED_TESTS = ("wilcoxon", "t", "sign", "randomisation")


def paired(a: Any, b: Any, *, unit: str, effect_desc: str, test: str = "wilcoxon",
           margin: float | None = None, margin_rationale: str = "", n_resamples: int = 9999,
           random_state: int = 0) -> Evidence:
    """Evidence that ``a`` exceeds ``b``, paired by unit (one value per query, user or task each).

    ``effect`` is the mean of ``a - b`` (positive supports the claim "a > b": pass a lower-is-better
    quantity negated, or swap the sides); its 95% interval is a percentile bootstrap
    (``scipy.stats.bootstrap``, ``n_resamples``, seeded). The p-value:

    * without ``margin``: two-sided, of the named test: ``"wilcoxon"`` (signed-rank, zero differences
      dropped), ``"t"`` (paired t), ``"sign"`` (exact binomial on the signs, ties dropped) or
      ``"randomisation"`` (paired sign-flip permutation test, ``n_resamples`` flips);
    * with ``margin`` (non-inferiority "a is not worse than b by more than margin"): one-sided, of
      the same test on ``a - b + margin`` with the alternative "greater".

    Parameters
    ----------
    a, b : array-like of float
        Equally long 1-d samples, one value per unit, paired by position; finite.
    unit : str
        What one unit is ("queries", ...); ``n`` is the number of units (zero differences included).
    effect_desc : str
        What ``a - b`` is, in words (e.g. "mean test NDCG@10 of AdaRank.MAP minus RankBoost").
    test : {"wilcoxon", "t", "sign", "randomisation"}, default "wilcoxon"
        The paired test.
    margin : float or None, default None
        Non-inferiority margin, >= 0, on the scale of ``a - b``; None: the two-sided test of direction.
    margin_rationale : str, default ""
        Why that margin is negligible; required with ``margin``.
    n_resamples : int, default 9999
        Bootstrap resamples for the interval, and sign flips of the ``"randomisation"`` test.
    random_state : int, default 0
        Seed of the bootstrap and of the sign flips.

    Returns
    -------
    Evidence
        The test by name (with pairing and sidedness), its p-value (capped at 1) and statistic (the
        number of positive differences for the sign test), the effect and its interval, and the margin.
        With fewer than two units or no nonzero (shifted) difference: p 1, statistic NaN; with a constant
        difference the interval is that difference.

    Raises
    ------
    ValueError
        When ``test`` is unknown, the samples are not 1-d, differ in length or hold a non-finite value,
        or a margin is negative or comes without its rationale.
    """
    from scipy import stats

    if test not in PAIRED_TESTS:
        raise ValueError(f"test must be one of {PAIRED_TESTS}, got {test!r}")
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"need two equally long 1-d samples (one value per {unit}), "
                         f"got {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("paired samples must be finite")
    d = a - b
    n = int(d.size)
    shift = 0.0 if margin is None else float(margin)
    alt = "two-sided" if margin is None else "greater"
    x = d + shift
    if n < 2 or not np.any(x != 0):
        p, stat = 1.0, math.nan
    elif test == "wilcoxon":
        nz = x[x != 0]
        exact = nz.size <= 50 and np.unique(np.abs(nz)).size == nz.size
        r = stats.wilcoxon(x, zero_method="wilcox", alternative=alt, method="exact" if exact else "approx")
        p, stat = float(r.pvalue), float(r.statistic)
    elif test == "t":
        if np.ptp(x) == 0:  # a constant difference: t is infinite (p 0) unless it points the wrong way
            p = 0.0 if (x[0] > 0 or alt == "two-sided") else 1.0
            stat = math.copysign(math.inf, x[0])
        else:
            r = stats.ttest_1samp(x, 0.0, alternative=alt)
            p, stat = float(r.pvalue), float(r.statistic)
    elif test == "sign":
        k, m = int((x > 0).sum()), int((x != 0).sum())
        p, stat = float(stats.binomtest(k, m, 0.5, alternative=alt).pvalue), float(k)
    else:
        r = stats.permutation_test((x,), np.mean, permutation_type="samples", alternative=alt,
                                   n_resamples=n_resamples, rng=np.random.default_rng(random_state))
        p, stat = float(r.pvalue), float(r.statistic)
    if n >= 2 and np.ptp(d) > 0:
        ci = stats.bootstrap((d,), np.mean, confidence_level=0.95, n_resamples=n_resamples,
                             method="percentile", rng=np.random.default_rng(random_state)).confidence_interval
        lo, hi = float(ci.low), float(ci.high)
    else:
        lo = hi = float(d[0]) if n else math.nan
    name = {"wilcoxon": "Wilcoxon signed-rank", "t": "t-test", "sign": "sign test (exact binomial)",
            "randomisation": "randomisation (sign-flip) test"}[test]
    side = "two-sided" if margin is None else f"one-sided non-inferiority, margin {margin:g}"
    return Evidence(test=f"{name}, paired over {unit}, {side}", n=n, unit=unit, p=min(1.0, p),
                    effect=float(d.mean()) if n else math.nan, effect_desc=effect_desc, ci=(lo, hi),
                    statistic=stat, margin=margin, margin_rationale=margin_rationale)


def correlated(x: Any, y: Any, *, unit: str, effect_desc: str, given: Any = None, n_resamples: int = 9999,
               random_state: int = 0) -> Evidence:
    """Evidence that ``x`` and ``y`` rise together over units (one value of each per query, user or task).

    Parameters
    ----------
    x, y : array-like of float
        Equally long 1-d samples, paired by unit; finite.
    unit : str
        What one unit is ("queries", ...); ``n`` is the number of units.
    effect_desc : str
        What the two samples are, in words (the effect is their rank correlation).
    given : array-like of float, optional
        A third sample of the same units to hold fixed: the partial rank correlation of ``x`` and ``y``
        given ``given`` (the ranks of ``x`` and ``y`` less their least-squares fit on the ranks of
        ``given``, then correlated). Use it when ``x`` and ``y`` share a term (e.g. both are differences
        to the same baseline), whose noise alone would correlate them.
    n_resamples : int, default 9999
        Bootstrap resamples of the units for the interval.
    random_state : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Evidence
        ``effect`` is Spearman's rho (``scipy.stats.spearmanr``), or the partial rho with ``given``;
        positive supports "x correlates with y". ``p`` is two-sided (with ``given``: the t test of a
        partial correlation, n - 3 degrees of freedom), ``statistic`` rho again, ``ci`` the 95% percentile
        interval of rho over ``n_resamples`` seeded resamples of the units (resamples in which rho is
        undefined, a constant side, are left out). With fewer than three units (four with ``given``) or
        a constant side, rho is undefined: effect and interval NaN, p 1.

    Raises
    ------
    ValueError
        When the samples are not 1-d, differ in length or hold a non-finite value.
    """
    from scipy import stats

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    z = None if given is None else np.asarray(given, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or (z is not None and z.shape != x.shape):
        raise ValueError(f"need equally long 1-d samples (one value per {unit}), got {x.shape} and {y.shape}"
                         + ("" if z is None else f" given {z.shape}"))
    if not all(np.isfinite(v).all() for v in (x, y) + (() if z is None else (z,))):
        raise ValueError("correlated samples must be finite")
    n = int(x.size)
    test = (f"Spearman rank correlation over {unit}, two-sided" if z is None else
            f"partial Spearman rank correlation over {unit} (t test, n - 3 df), two-sided")

    def rho_rows(ix: np.ndarray) -> np.ndarray:
        rx, ry = stats.rankdata(x[ix], axis=-1), stats.rankdata(y[ix], axis=-1)
        rx, ry = rx - rx.mean(axis=-1, keepdims=True), ry - ry.mean(axis=-1, keepdims=True)
        if z is not None:
            rz = stats.rankdata(z[ix], axis=-1)
            rz -= rz.mean(axis=-1, keepdims=True)
            zz = (rz * rz).sum(axis=-1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                rx = rx - rz * np.where(zz > 0, (rx * rz).sum(axis=-1, keepdims=True) / zz, 0.0)
                ry = ry - rz * np.where(zz > 0, (ry * rz).sum(axis=-1, keepdims=True) / zz, 0.0)
        den = np.sqrt((rx * rx).sum(axis=-1) * (ry * ry).sum(axis=-1))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 1e-9 * n * n, (rx * ry).sum(axis=-1) / den, np.nan)

    rho = float(rho_rows(np.arange(n))) if n >= (3 if z is None else 4) else math.nan
    if not math.isfinite(rho):
        return Evidence(test=test, n=n, unit=unit, p=1.0, effect=math.nan, effect_desc=effect_desc)
    if z is None:
        p = float(stats.spearmanr(x, y).pvalue)
    else:
        t = rho * math.sqrt((n - 3) / max(1e-300, 1.0 - rho * rho))
        p = float(2.0 * stats.t.sf(abs(t), n - 3))
    boot = rho_rows(np.random.default_rng(random_state).integers(0, n, size=(n_resamples, n)))
    boot = boot[np.isfinite(boot)]
    lo, hi = (float(v) for v in np.percentile(boot, [2.5, 97.5])) if boot.size else (math.nan, math.nan)
    what = "Spearman's rho" if z is None else "partial Spearman's rho"
    return Evidence(test=test, n=n, unit=unit, p=min(1.0, max(0.0, p)), effect=rho,
                    effect_desc=f"{what} of {effect_desc}", ci=(lo, hi), statistic=rho)
