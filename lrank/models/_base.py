"""The one estimator contract every lrank ranker follows (scikit-learn style, LightGBM's names).

Names, one per concept, in every estimator that has the concept:

=========================  ======================================================================
``n_estimators``           number of boosting rounds / trees / iterations (the papers' T)
``learning_rate``          shrinkage of each round's hypothesis
``num_leaves``             leaves per tree (LightGBM's name)
``min_child_samples``      fewest documents in a leaf (LightGBM's name)
``min_child_weight``       smallest hessian sum in a leaf (LightGBM's name)
``max_thresholds``         candidate thresholds per feature (bins - 1)
``early_stopping_rounds``  stop when ``eval_metric`` on the first ``eval_set`` did not improve
``eval_metric``            an `lrank.metrics` name, e.g. ``"ndcg@10"``
``random_state``           every random choice; the same seed gives the same bits
``n_jobs``                 threads for the kernels that have a parallel twin
``verbose``                a tqdm progress bar over the rounds
=========================  ======================================================================

Methods: ``fit(X, y, *, qid=None, group=None, sample_weight=None, eval_set=None, eval_group=None,
eval_qid=None, eval_names=None)`` (or ``fit(RankingData)``);
``predict(X, num_iteration=None)`` (``None``: ``best_iteration_`` when early stopping chose one, else
every round; ``k``: the first ``k`` rounds, so ``0`` is the empty model, where LightGBM reads ``0`` as
every tree); ``staged_predict(X)``; ``save_model(path)`` / ``load_model(path)``.

Fitted attributes end in ``_``: ``n_features_in_``, ``feature_names_in_`` (a DataFrame's columns, as in
scikit-learn: checked at ``predict``, saved with the model), ``n_iter_`` (rounds actually fitted),
``best_iteration_`` (``None`` without early stopping), ``stop_reason_`` (why training ended),
``history_`` (a DataFrame indexed by ``iteration`` = 1, 2, ...). The same quantity has the same
column name in every model's ``history_``:

``alpha`` (alpha_t), ``Z`` (Z_t), ``r`` (r_t), ``eps_plus`` / ``eps_minus`` / ``eps_zero``,
``feature``, ``threshold``, ``train_E1`` / ``train_E2`` / ``train_log_E2`` (RankBoost+ losses),
``bound`` (a theorem's bound after the round), ``train_<metric>`` / ``valid_<metric>``.

A model file (``save_model``) is data, never code: ``load_model`` reads it without pickles and resolves only
the lrank classes of `MODEL_CLASSES`; a failed save leaves the previous file as it was.

``fit`` without ``qid`` / ``group`` is an error unless the caller says the rows are one query:
``with lrank.config_context(one_query=True): est.fit(X, y)``.

LightGBM's ``fit`` conventions are accepted as they are, so PyTerrier's ``pt.ltr.apply_learned_model(est,
form="ltr")`` and LightGBM / XGBoost users' loops run unchanged: ``eval_set=[(Xv, yv), ...]`` with
``eval_group=[counts, ...]`` or ``eval_qid=[qid, ...]`` (besides ``(X, y, qid)`` tuples and `RankingData`),
``eval_names=["valid", ...]`` (``history_`` columns ``<name>_<metric>`` instead of ``valid_<metric>``,
``valid1_<metric>``, ...), and ``sample_weight`` where the algorithm has a natural weighting: per document
for the pointwise losses (MART, McRank), per query for the pair and list losses (RankBoost, RankBoost+,
AdaRank, LambdaMART; a per-document weight must then be constant within each query, as LightGBM's
lambdarank reads it). The other rankers refuse ``sample_weight`` with an error saying so.

Parameters are declared once per class in ``_parameter_constraints`` (scikit-learn's
``sklearn.utils._param_validation`` vocabulary) and validated at ``fit`` by `BaseRanker._validate`.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import secrets
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from lrank.data.container import RankingData, _cast, as_float32, as_ranking_data

MODEL_FORMAT = "lrank-model"
#: 2: the trees of every model are `lrank.trees.predictor.Tree` records and the binning parameter is
#: ``threshold_strategy``; version-1 files (NDCGBoost's ``FeatureTree``, BoostingTree's
#: ``lrank.weak.tree.RegressionTree``, ``bin_strategy``) are upgraded as they load (`_upgrade_v1`).
MODEL_FORMAT_VERSION = 2
#: early stopping: a validation score within this fraction of the best so far is no improvement (the
#: earlier round is kept), so the best round does not hang on the last bits of a metric's sums
VALID_TIE_RTOL = 1e-12


def improves(score: float, best: float) -> bool:
    """Whether a validation ``score`` improves on ``best`` by more than ``VALID_TIE_RTOL * |best|``
    (any number improves on ``-inf``; NaN never does)."""
    return bool(score > best and (best == -math.inf or score - best > VALID_TIE_RTOL * abs(best)))

#: Every class a model file may name (``module:qualname``): the estimators and the parts their fitted
#: models hold. `load_model` resolves nothing else and `save_model` writes nothing else: a model file is
#: data, so it can never name a function (``os.system``) or any other callable that a module happens to
#: import. A new class inside a fitted model is added here (saving it fails until it is).
MODEL_CLASSES: frozenset[str] = frozenset({
    # estimators
    "lrank.models.rankboost:RankBoost",
    "lrank.models.rankboost_plus:RankBoostPlus",
    "lrank.models.adarank:AdaRank",
    "lrank.models.adaboost:AdaBoostStumps",
    "lrank.models.gbrt:MART",
    "lrank.models.gbrt:LambdaMART",
    "lrank.models.gbrt:McRank",
    "lrank.models.ndcgboost:NDCGBoost",
    "lrank.models.boostingtree:BoostingTree",
    "lrank.models.boostingtree:Exp3P",
    "lrank.models.boostingtree:Standard",
    "lrank.models.boostingtree:LambdaMARTBase",
    "lrank.baselines.ranksvm:RankSVM",
    "lrank.baselines.collaborative:RegressionRanker",
    "lrank.baselines.collaborative:NearestNeighbourRanker",
    "lrank.baselines.collaborative:VSIM",
    # the parts of fitted models
    "lrank.models.adaboost:Stump",
    "lrank.models.boostingtree:_Tree",
    "lrank.weak.single_feature:SingleFeatureRanker",
    "lrank.weak.single_feature:SingleFeatureRankers",
    "lrank.trees.predictor:Tree",
    "lrank.trees.tree:RegressionTree",
})


class DegenerateDataWarning(UserWarning):
    """The training data holds nothing to rank: no query has two documents with different labels."""


class ModelFileError(ValueError):
    """A file `load_model` refuses: not an lrank model file, damaged, or naming a class that is not an
    lrank model class (`MODEL_CLASSES`). The message names the file."""


class BaseRanker(BaseEstimator):
    """Base class of every lrank ranker; see the module docstring for the contract."""

    _estimator_type = "ranker"
    #: scikit-learn parameter constraints, checked by ``_validate`` at ``fit``.
    _parameter_constraints: ClassVar[dict] = {}
    #: fitted attributes needed only while training (binned matrices, training scores): never pickled,
    #: never saved.
    _training_only: ClassVar[tuple[str, ...]] = ()

    # ------------------------------------------------------------------------------- fit inputs
    def _validate(self) -> None:
        """Check every parameter against ``_parameter_constraints`` (errors name the parameter).

        Booleans are refused where a number is expected (scikit-learn's ``Interval(Integral, ...)``
        accepts ``True`` as 1).
        """
        from sklearn.utils._param_validation import Interval

        self._validate_params()
        for name, constraints in self._parameter_constraints.items():
            value = getattr(self, name, None)
            if isinstance(value, (bool, np.bool_)) and constraints != "no_validation" and not any(
                    c in (bool, "boolean") for c in constraints) and any(
                    isinstance(c, Interval) for c in constraints):
                raise ValueError(f"The {name!r} parameter of {type(self).__name__} must be a number, "
                                 f"got {value!r}")

    def _ranking_data(self, X: Any, y: Any = None, qid: Any = None, group: Any = None) -> RankingData:
        """Turn the ``fit`` arguments into a validated `RankingData` (and set ``n_features_in_`` and, for a
        DataFrame, ``feature_names_in_``).

        Arrays go through scikit-learn's ``check_array`` first (numeric 2-d, dense, at least one row; NaN
        allowed: it marks a missing value), so malformed input gets scikit-learn's usual messages.
        """
        self._set_feature_names(X)
        if not isinstance(X, RankingData):
            X, y = _check_X_y(self, X, y)
        data = as_ranking_data(X, y, qid=qid, group=group)
        self.n_features_in_ = data.n_features
        return data

    def _set_feature_names(self, X: Any) -> None:
        """scikit-learn's reset at ``fit``: ``feature_names_in_`` = the columns of a DataFrame ``X``
        (string names), removed when ``X`` has none (arrays, `RankingData`). Every ``fit`` calls it."""
        from sklearn.utils.validation import _check_feature_names

        _check_feature_names(self, X.X if isinstance(X, RankingData) else X, reset=True)

    def _eval_sets(self, eval_set: Any, eval_group: Any = None, eval_qid: Any = None,
                   eval_names: Any = None, train: tuple[Any, Any] | None = None) -> list[RankingData]:
        """``eval_set`` as a list of `RankingData` (and ``eval_names`` kept for ``history_``'s columns).

        Accepted: a `RankingData`; a tuple ``(X, y, qid)``; a tuple ``(X, y)`` whose queries are the
        matching entry of ``eval_group`` (LightGBM's per-query counts) or ``eval_qid`` (per-row ids); or
        a list of these. A DataFrame ``X`` must have the training columns, in the training order
        (scikit-learn's check, as at ``predict``).

        ``train`` is the ``(X, y)`` given to ``fit``. Early stopping watches the first eval set; when that
        is the training data itself (the same objects, LightGBM's test), ``eval_set=[(X, y), (Xv, yv)]``
        as LightGBM users write it, where LightGBM skips the training set and XGBoost watches the last,
        it is an error rather than a model stopped on its training score.
        """
        from sklearn.utils.validation import _check_feature_names

        self._eval_names = None
        if eval_set is None:
            for name, v in (("eval_group", eval_group), ("eval_qid", eval_qid), ("eval_names", eval_names)):
                if v is not None:
                    raise ValueError(f"{name} was given without an eval_set")
            return []
        items = [eval_set] if isinstance(eval_set, (RankingData, tuple)) else list(eval_set)
        if train is not None and getattr(self, "early_stopping_rounds", None) is not None and items:
            first = items[0]
            if first is train[0] or (isinstance(first, tuple) and len(first) >= 2 and first[0] is train[0]
                                     and first[1] is train[1]):
                raise ValueError(
                    "eval_set[0] is the training data, and early stopping watches the first eval set: put "
                    "the validation set first, e.g. eval_set=[(X_valid, y_valid), (X, y)] (LightGBM skips "
                    "the training set for early stopping, XGBoost watches the last set)")
        if eval_group is not None and eval_qid is not None:
            raise TypeError("pass eval_group or eval_qid, not both")
        groups = _per_set(eval_group, "eval_group", len(items))
        qids = _per_set(eval_qid, "eval_qid", len(items))
        out = []
        for k, item in enumerate(items):
            if isinstance(item, RankingData):
                if groups[k] is not None or qids[k] is not None:
                    raise TypeError(f"eval_set[{k}] is a RankingData: it has its queries, do not pass "
                                    "eval_group / eval_qid for it")
                out.append(item)
            elif isinstance(item, tuple) and len(item) == 3:
                if groups[k] is not None or qids[k] is not None:
                    raise TypeError(f"eval_set[{k}] is a tuple (X, y, qid): do not pass eval_group / "
                                    "eval_qid for it as well")
                _check_feature_names(self, item[0], reset=False)
                out.append(as_ranking_data(item[0], item[1], qid=item[2]))
            elif isinstance(item, tuple) and len(item) == 2:
                _check_feature_names(self, item[0], reset=False)
                if groups[k] is None and qids[k] is None:
                    raise TypeError(f"eval_set[{k}] is a tuple (X, y): its queries need eval_group= "
                                    "(documents per query, one array per eval set) or eval_qid=")
                try:
                    out.append(as_ranking_data(item[0], item[1], qid=qids[k], group=groups[k]))
                except ValueError as exc:
                    raise ValueError(f"eval_set[{k}]: {exc}") from None
            else:
                raise TypeError(f"eval_set[{k}] must be a RankingData or a tuple (X, y, qid), or (X, y) with "
                                f"eval_group= / eval_qid=; got {type(item).__name__}"
                                + (f" of length {len(item)}" if isinstance(item, tuple) else ""))
            if out[-1].n_features != getattr(self, "n_features_in_", out[-1].n_features):
                raise ValueError(f"eval_set[{k}] has {out[-1].n_features} features, the training data "
                                 f"{self.n_features_in_}")
        if eval_names is not None:
            names = [eval_names] if isinstance(eval_names, str) else list(eval_names)
            if len(names) != len(out) or not all(isinstance(n, str) and n for n in names):
                raise ValueError(f"eval_names must be {len(out)} non-empty strings, one per eval set; got "
                                 f"{eval_names!r}")
            if len(set(names)) != len(names):
                raise ValueError(f"eval_names must be distinct, got {names}")
            self._eval_names = names
        return out

    def _sample_weight(self, sample_weight: Any, data: RankingData, per: str | None) -> np.ndarray | None:
        """``sample_weight`` checked and shaped for an algorithm whose natural weighting is ``per``.

        ``per="document"``: a float64 array of ``n_docs`` (a per-query array is repeated over each
        query's documents). ``per="query"``: a float64 array of ``n_queries``; a per-document array must
        be constant within each query (LightGBM's lambdarank reads the weight of a query's documents
        that way). ``per=None``: the algorithm has no natural weighting, and a weight is refused.
        Weights must be finite, non-negative and not all zero.
        """
        if sample_weight is None:
            return None
        name = type(self).__name__
        if per is None:
            raise ValueError(f"{name} has no natural weighting of documents or queries: sample_weight is "
                             "not supported (weighted: MART and McRank per document; RankBoost, "
                             "RankBoostPlus, AdaRank and LambdaMART per query)")
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.ndim != 1 or w.shape[0] not in (data.n_docs, data.n_queries):
            raise ValueError(f"sample_weight must hold one weight per document ({data.n_docs}) or per query "
                             f"({data.n_queries}), got shape {w.shape}")
        bad = ~np.isfinite(w) | (w < 0)
        if bad.any():
            raise ValueError(f"sample_weight[{int(np.flatnonzero(bad)[0])}] = {float(w[bad][0])!r}: weights "
                             "must be finite and non-negative")
        if not (w > 0).any():
            raise ValueError("sample_weight is zero everywhere")
        per_doc = w.shape[0] == data.n_docs
        if per == "document":
            return w if per_doc else np.repeat(w, data.group)
        if not per_doc:
            return w
        first = w[data.qptr[:-1]]
        differs = np.flatnonzero(w != np.repeat(first, data.group))
        if differs.size:
            q = int(np.searchsorted(data.qptr, differs[0], side="right") - 1)
            raise ValueError(f"{name} weights queries, not documents: sample_weight differs within query "
                             f"{data.qid[q]} (documents {data.qptr[q]}..{data.qptr[q + 1] - 1}); pass one "
                             "weight per query, or the same weight for every document of a query")
        return first

    def _features(self, X: Any, n_features: int | None = None, *, reset: bool = False) -> np.ndarray:
        """The feature matrix of ``X`` (array, DataFrame or `RankingData`) as C-contiguous float32.

        A DataFrame's columns are checked against ``feature_names_in_`` first (scikit-learn's check and
        messages: reordered, unseen or missing columns are an error); ``reset=True`` (in ``fit``) sets
        them instead.
        """
        if isinstance(X, RankingData):
            if reset:
                self._set_feature_names(X)
            X = X.X
        else:
            # a plain array has no feature names: scikit-learn's check could only warn that the model was
            # fitted with some, or forget them in fit (about 0.04 ms a call: one query scored)
            if reset or type(X) is not np.ndarray or hasattr(self, "feature_names_in_"):
                from sklearn.utils.validation import _check_feature_names

                _check_feature_names(self, X, reset=reset)
            X = _check_array(X)
        X = np.ascontiguousarray(X, dtype=np.float32)
        if n_features is None:
            n_features = getattr(self, "n_features_in_", None)
        if n_features is not None and X.shape[1] != n_features:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{n_features} features as input")
        return X

    def _warn_if_nothing_to_rank(self, data: RankingData) -> None:
        """A `DegenerateDataWarning` when no query of the training ``data`` has two documents with different
        labels (all-equal labels, or one document per query): there is no pair to order, so the fit
        learns nothing about ranking (LambdaMART's lambdas are all 0 and its trees predict 0)."""
        if data.n_docs and not data.n_critical_pairs().any():
            import warnings

            from lrank.data.container import _caller_level

            warnings.warn(
                f"{type(self).__name__}: no query has two documents with different labels ({data.n_queries} "
                f"queries, {data.n_docs} documents: all-equal labels within each query, or one document per "
                "query), so there is no pair to order and the fitted model ranks nothing",
                DegenerateDataWarning, stacklevel=_caller_level())

    def _check_fitted(self, attr: str = "n_iter_") -> None:
        if not hasattr(self, attr):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")

    def _num_iteration(self, num_iteration: int | None) -> int:
        """How many rounds ``predict`` uses: ``num_iteration``, else ``best_iteration_``, else all."""
        self._check_fitted()
        n = int(self.n_iter_)
        if num_iteration is None:
            best = getattr(self, "best_iteration_", None)
            return n if best is None else int(best)
        if isinstance(num_iteration, bool) or not isinstance(num_iteration, (int, np.integer)):
            raise TypeError(f"num_iteration must be an int or None, got {num_iteration!r}")
        if not 0 <= num_iteration <= n:
            raise ValueError(f"num_iteration must be in [0, n_iter_={n}], got {num_iteration}")
        return int(num_iteration)

    def _history(self, rows: list[dict] | dict | pd.DataFrame, columns: list[str] | None = None
                 ) -> pd.DataFrame:
        """The ``history_`` frame: one row per round, indexed by ``iteration`` = 1, 2, ...

        With ``eval_names`` given to ``fit``, the eval sets' columns ``valid_<m>``, ``valid1_<m>``, ... are
        named ``<eval_names[0]>_<m>``, ``<eval_names[1]>_<m>``, ...
        """
        df = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows, columns=columns)
        df.index = pd.RangeIndex(1, len(df) + 1, name="iteration")
        names = getattr(self, "_eval_names", None)
        if names:
            prefixes = ["valid_"] + [f"valid{j}_" for j in range(1, len(names))]
            df = df.rename(columns={c: n + "_" + c[len(p):] for c in df.columns if isinstance(c, str)
                                    for p, n in zip(prefixes, names) if c.startswith(p)})
        return df

    def _progress(self, n: int, desc: str | None = None):
        """``range(n)``, under a tqdm bar when ``verbose``."""
        it = range(int(n))
        if getattr(self, "verbose", False):
            from tqdm.auto import tqdm

            return tqdm(it, desc=desc or type(self).__name__, leave=False)
        return it

    def score(self, X: Any, y: Any = None, *, qid: Any = None, group: Any = None,
              sample_weight: Any = None) -> float:
        """Mean NDCG@10 of ``predict(X)`` over the queries (scikit-learn's ``score``; higher is better).

        scikit-learn's model selection (``GridSearchCV``, ``cross_val_score``) calls ``score`` without
        query ids unless metadata routing passes them: ``sklearn.set_config(enable_metadata_routing=True)``
        and ``est.set_fit_request(qid=True).set_score_request(qid=True)``; then each split's ``qid`` comes
        here. Without them ``score`` raises (scikit-learn would record NaN for every split and pick a
        "best" parameter from nothing).

        Parameters
        ----------
        X : RankingData or array-like of shape (n_docs, n_features)
            The documents to rank (a `RankingData` carries its labels and queries).
        y : array-like of shape (n_docs,) or None, default None
            Relevance labels; required with arrays.
        qid : array-like of shape (n_docs,) or None, default None
            Per-document query ids, each query's rows contiguous. Not with ``group``.
        group : array-like of shape (n_queries,) or None, default None
            Per-query document counts. Not with ``qid``.
        sample_weight : array-like of shape (n_queries,) or (n_docs,), or None, default None
            Query weights: the score is then the weighted mean of the queries' NDCG@10 (a per-document
            array must be constant within each query). scikit-learn's ``score(X, y, sample_weight=None)``
            name, which its routed ``Pipeline.score`` passes to the last step.

        Returns
        -------
        float
            Mean NDCG@10 over the queries (weighted by ``sample_weight``).
        """
        from lrank._config import get_config
        from lrank.metrics import evaluate

        if (qid is None and group is None and not isinstance(X, RankingData)
                and not get_config()["one_query"]):
            raise TypeError(
                f"{type(self).__name__}.score needs query ids: pass qid= or group=. Under GridSearchCV or "
                "cross_val_score, turn on scikit-learn's metadata routing so each split's qid reaches "
                "fit and score: sklearn.set_config(enable_metadata_routing=True) and "
                "est.set_fit_request(qid=True).set_score_request(qid=True), then pass qid=... to the "
                "search's fit (cross_val_score: params={'qid': qid, 'groups': qid})")
        data = as_ranking_data(X, y, qid=qid, group=group)
        w = self._sample_weight(sample_weight, data, "query")
        scores = self.predict(data.X if isinstance(X, RankingData) else X)  # a DataFrame's columns checked
        if w is None:
            return float(evaluate(data.y, scores, data.qptr, ["ndcg@10"])["ndcg@10"])
        per_query = evaluate(data.y, scores, data.qptr, ["ndcg@10"], per_query=True)["ndcg@10"]
        return float(np.average(per_query, weights=w))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN is a missing feature value (the RankBoost paper's "unranked")
        tags.target_tags.required = True
        return tags

    # -------------------------------------------------------------------------- saving the model
    def _fitted_attributes(self) -> list[str]:
        return sorted(k for k in vars(self) if k.endswith("_") and not k.startswith("_")
                      and k not in self._training_only)

    def save_model(self, path: str | Path) -> Path:
        """Save the fitted model (parameters and ensemble only, no training data) to ``path`` (.npz).

        The file is a NumPy ``.npz`` archive: arrays as entries, everything else as one JSON header
        (format name, format version, lrank version, class, parameters). A ``path`` not ending in ``.npz``
        gets it appended (``m.json`` -> ``m.json.npz``, as `numpy.save` appends ``.npy``); the path
        written is returned. Load with `load_model`, which accepts the same ``path``.
        """
        self._check_fitted()
        from lrank import __version__

        arrays: dict[str, np.ndarray] = {}
        header = {
            "format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION, "lrank": __version__,
            "class": _saved_name(type(self), "class"),
            "params": _encode(self.get_params(deep=False), arrays, "params"),
            "fitted": {k: _encode(getattr(self, k), arrays, k) for k in self._fitted_attributes()},
        }
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        if not path.parent.is_dir():
            raise FileNotFoundError(f"cannot save the model to {path}: there is no folder {path.parent}")
        # into a new file beside the target, then renamed over it: a write that fails midway (disk full,
        # killed) leaves the previous model as it was. open() honours the umask, as a plain write would.
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            with open(tmp, "xb") as fh:
                np.savez_compressed(fh, __header__=np.array(json.dumps(header)), **arrays)
            os.replace(tmp, path)
        except OSError as exc:  # named by the file asked for, not by the temporary one beside it
            tmp.unlink(missing_ok=True)
            raise type(exc)(exc.errno, f"cannot save the model to {path}: {exc.strerror or exc}") from exc
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def load_model(cls, path: str | Path) -> BaseRanker:
        """Load a model written by `save_model` (any lrank ranker when called on `BaseRanker`)."""
        model = load_model(path)
        if not isinstance(model, cls):
            raise TypeError(f"{path} holds a {type(model).__name__}, not a {cls.__name__}")
        return model

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        for k in self._training_only:
            state.pop(k, None)
        return state


class TreeEnsembleMixin:
    """Feature importances and LightGBM export of a tree or stump ensemble (mix in before `BaseRanker`).

    The model's trees come from its family's adapter in `lrank.io.trees` (neutral node arrays).
    """

    @property
    def feature_importances_(self) -> np.ndarray:
        """Number of splits on each feature (LightGBM's default ``importance_type="split"``); see
        `feature_importance` for the total gain."""
        from lrank.io.trees import feature_importance

        return feature_importance(self, "split")

    def feature_importance(self, importance_type: str = "split") -> np.ndarray:
        """Per-feature ``"split"`` counts or total ``"gain"`` of the splits, as LightGBM's
        ``Booster.feature_importance(importance_type=...)`` (float64, one per feature), over the rounds
        ``predict`` uses (the first ``best_iteration_`` after early stopping, else all)."""
        from lrank.io.trees import feature_importance

        return feature_importance(self, importance_type)

    def to_lightgbm(self, path: str | Path | None = None, data: Any = None) -> str:
        """The model as LightGBM's text model (`lrank.io.lightgbm.to_lightgbm`); written to ``path`` when
        given. It holds the rounds ``predict`` uses (after early stopping the first ``best_iteration_``,
        as LightGBM's ``save_model``). ``data`` (an array or `RankingData`) supplies the node counts
        (``leaf_count`` / ``internal_count``, TreeSHAP's weights) for the families that record none at
        fit."""
        from lrank.io.lightgbm import to_lightgbm

        return to_lightgbm(self, path, data=data)

    @property
    def booster_(self) -> Any:
        """The model as a ``lightgbm.Booster`` (needs LightGBM; node counts as `to_lightgbm` without
        ``data``).

        Where no Booster can be built (LightGBM not installed; a family that records no node counts at
        fit, such as RankBoost's stumps) the attribute is absent: ``AttributeError`` says why, and
        ``hasattr`` is False.
        """
        try:
            import lightgbm
        except ImportError as exc:
            raise AttributeError("booster_ needs LightGBM: pip install lightgbm (to_lightgbm() writes the "
                                 "model text without it)") from exc
        try:
            text = self.to_lightgbm()
        except ValueError as exc:
            raise AttributeError(f"booster_ is not available: {exc}; then lightgbm.Booster(model_str="
                                 "model.to_lightgbm(data=...))") from exc
        return lightgbm.Booster(model_str=text)

    def __dir__(self) -> list[str]:
        # scikit-learn's __dir__ lists the attributes hasattr finds, which would build a whole LightGBM
        # Booster for booster_ on every dir() (tab completion); listed unevaluated instead, when fitted
        lazy = {"booster_"}
        names = [a for a in object.__dir__(self) if a in lazy or hasattr(self, a)]
        if not hasattr(self, "n_features_in_"):
            names = [a for a in names if a not in lazy]
        return names


class SumOfEstimators:
    """``predict`` / ``staged_predict`` of a model that is the sum of its hypotheses ``estimators_`` (each
    with its weight folded into its own ``predict``); mix in before `BaseRanker`."""

    def predict(self, X: Any, num_iteration: int | None = None) -> np.ndarray:
        """Scores of the first ``num_iteration`` hypotheses (default: ``best_iteration_``, else all)."""
        k = self._num_iteration(num_iteration)
        X = self._features(X)
        out = np.zeros(X.shape[0])
        for h in self.estimators_[:k]:
            out += h.predict(X)
        return out

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """Scores after each hypothesis."""
        self._check_fitted()
        X = self._features(X)
        out = np.zeros(X.shape[0])
        for h in self.estimators_:
            out = out + h.predict(X)
            yield out


class MeasuredStep:
    """``score`` of a boosting-step object on ranking data (`lrank.models.boostingtree`'s protocol): the
    training measure ``metric`` with the options ``metric_kwargs`` of the labels ``y`` and offsets ``qptr``
    (attributes of the step); mix in to a step class that sets them and ``_measure = None``."""

    def score(self, model: np.ndarray) -> float:
        """The training measure of ``model``: ``evaluate(y, model, qptr, [metric], **metric_kwargs)[metric]``,
        bit for bit (`lrank.metrics.training_measure`, made on the first call: labels and queries fixed)."""
        if self._measure is None:
            from lrank.metrics import training_measure

            self._measure = training_measure(self.y, self.qptr, self.metric, **self.metric_kwargs)
        return self._measure(model)


def _per_set(values: Any, name: str, n_sets: int) -> list:
    """``eval_group`` / ``eval_qid``: one entry per eval set (None: none given)."""
    if values is None:
        return [None] * n_sets
    values = list(values)
    if len(values) != n_sets:
        raise ValueError(f"{name} must hold one array per eval set ({n_sets}), got {len(values)}")
    return values


def _check_X_y(est: Any, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Arrays of ``fit(X, y)`` through scikit-learn's ``check_array`` (its messages); ``y`` required and
    numeric."""
    X = _check_array(X)
    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.dtype.kind in "OUSV":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"Unknown label type: labels must be numbers, got values of dtype {y.dtype}"
                             ) from None
    return X, y


_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


def _check_array(X: Any) -> np.ndarray:
    """scikit-learn's ``check_array`` (its messages), then lrank's float32 cast with its checks
    (`lrank.data.container.as_float32`: an overflow is an error, merged or vanished values a warning)."""
    if type(X) is np.ndarray and X.dtype in _FLOATS and X.ndim == 2 and X.size:  # all check_array would do
        if X.dtype == np.float64:  # here (about 0.1 ms a call: one query scored) is to refuse infinities
            X32 = _cast(X, "X", infinite=False)  # the cast, its checks and the infinity test in one pass
            if X32 is not None:
                return X32
        elif not np.isinf(X).any():
            return as_float32(X)
    from sklearn.utils.validation import check_array

    try:
        X = check_array(X, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan", accept_sparse=False,
                        input_name="X")
    except ValueError as exc:
        if "infinity" not in str(exc):
            raise
        inf = np.isinf(np.asarray(X, dtype=np.float64))
        at = tuple(int(i) for i in np.argwhere(inf)[0])
        raise ValueError(f"{exc} The first is X[{', '.join(map(str, at))}] ({int(inf.sum())} infinite "
                         "values in all); lrank takes NaN as a missing value: replace infinities with NaN "
                         "or a finite value") from None
    return as_float32(X)


def load_model(path: str | Path) -> BaseRanker:
    """Load any model written by ``save_model``.

    A model file is data: it is read without pickles, and the only classes it may name are those of
    `MODEL_CLASSES` (anything else is refused before it is imported or called).

    ``path`` is the file, or the name given to ``save_model`` (which appends ``.npz`` to a name without it:
    ``load_model("m.json")`` reads ``m.json.npz`` when there is no file ``m.json``).

    Raises
    ------
    FileNotFoundError
        No file at ``path`` (nor at ``path`` + ``.npz``).
    lrank.models._base.ModelFileError
        (a ``ValueError``) The file is not an lrank model file, is damaged, is of a newer format version,
        or names a class that is not an lrank model class; the message names the file.
    """
    path = Path(path)
    if not path.is_file() and path.suffix != ".npz" and path.with_name(path.name + ".npz").is_file():
        path = path.with_name(path.name + ".npz")  # the file save_model(path) wrote
    if not path.is_file():
        raise FileNotFoundError(f"no model file at {path}")
    try:
        return _load(path)
    except ModelFileError:
        raise
    except (OSError, EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            zipfile.BadZipFile, zlib.error, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{path} is not an lrank model file: {_reason(exc)}") from None


#: why a model file is never unpickled, said wherever one holds pickled data (numpy's own message for it
#: suggests loading the file with ``allow_pickle=True``, which is what lrank refuses to do)
_NO_PICKLES = "lrank never writes pickles into a model file and never unpickles one (unpickling can run code)"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"missing entry {exc}"
    if isinstance(exc, json.JSONDecodeError):
        return f"its header is not JSON ({exc})"
    if isinstance(exc, ValueError) and "allow_pickle" in str(exc):  # numpy: an object array in an .npz
        return f"it holds pickled Python objects; {_NO_PICKLES}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _load(path: Path) -> BaseRanker:
    with path.open("rb") as fh:
        head = fh.read(6)
    if not head.startswith((b"PK\x03\x04", b"\x93NUMPY")):  # a zip (.npz) or a bare .npy: else say what it is
        raise ValueError(f"a Python pickle, not an .npz archive; {_NO_PICKLES}" if head[:1] == b"\x80"
                         else f"not an .npz archive (its first bytes are {head!r})")
    with np.load(path, allow_pickle=False) as npz:
        if not hasattr(npz, "files"):
            raise ValueError("a single array, not an .npz archive")
        if "__header__" not in npz.files:
            raise ValueError("no header")
        header = json.loads(str(npz["__header__"]))
        if not isinstance(header, dict):
            raise ValueError("its header is not a JSON object")
        if header.get("format") != MODEL_FORMAT:
            raise ValueError(f"format {header.get('format')!r}, expected {MODEL_FORMAT!r}")
        if int(header.get("format_version", 0)) > MODEL_FORMAT_VERSION:
            raise ModelFileError(f"{path}: model format version {header['format_version']} is newer than "
                                 f"this lrank reads ({MODEL_FORMAT_VERSION}); upgrade lrank")
        arrays = {k: npz[k] for k in npz.files if k != "__header__"}
    if int(header.get("format_version", 0)) < 2:
        header = _upgrade_v1(header, arrays)

    def resolve(name: Any, kind: type) -> type:
        cls = _resolve(name)
        if cls is None:
            raise ModelFileError(
                f"{path} names the class {name!r}, which is not an lrank model class: a model file is "
                "data and may name only the classes of lrank.models._base.MODEL_CLASSES; refusing to "
                "load it")
        if not issubclass(cls, kind):
            raise ValueError(f"{name!r} is not a {kind.__name__}")
        return cls

    cls = resolve(header["class"], BaseRanker)
    model = cls(**_decode(header["params"], arrays, resolve))
    for k, v in header["fitted"].items():
        v = _decode(v, arrays, resolve)
        if k == "feature_names_in_":  # scikit-learn's type: an object array of str
            v = np.asarray(v, dtype=object)
        setattr(model, k, v)
    return model


# ------------------------------------------------------------------------- files of format version 1
#: a version-1 tree class and the `Tree` field each of its attributes becomes
_V1_TREES: dict[str, dict[str, str]] = {
    "lrank.models.ndcgboost:FeatureTree": {
        "feature": "feature", "threshold": "threshold", "left": "left", "right": "right", "value": "value",
        "gain": "gain", "scale": "scale"},
    "lrank.weak.tree:RegressionTree": {
        "feature_": "feature", "bin_": "bin", "threshold_": "threshold", "children_left_": "left",
        "children_right_": "right", "value_": "value", "gain_": "gain", "n_node_samples_": "count",
        "sum_grad_": "sum_grad", "sum_hess_": "sum_hess"},
}


def _upgrade_v1(v: Any, arrays: dict) -> Any:
    """The header entry ``v`` of a version-1 file in version 2's terms (JSON in, JSON out; arrays a
    tree lacked are added to ``arrays``): ``bin_strategy`` is ``threshold_strategy``, and each tree
    object of `_V1_TREES` becomes the `Tree` record holding the same nodes (so it predicts the same
    bits). Nothing here imports or calls what the file names."""
    if isinstance(v, list):
        return [_upgrade_v1(x, arrays) for x in v]
    if not isinstance(v, dict):
        return v
    if v.get("__object__") in _V1_TREES:
        fields = _V1_TREES[v["__object__"]]
        old = {k: x for k, x in v["state"]["__dict__"]}
        new = {fields[k]: x for k, x in old.items() if k in fields and x is not None}
        n = int(np.asarray(arrays[new["value"]["__array__"]]).size)
        for name, fill, dtype in (("bin", -1, np.int64), ("gain", 0.0, np.float64), ("count", 0, np.int64),
                                  ("sum_grad", 0.0, np.float64), ("sum_hess", 0.0, np.float64)):
            if name not in new:
                key = f"v1_{len(arrays)}"
                arrays[key] = np.full(n, fill, dtype=dtype)
                new[name] = {"__array__": key}
        new.setdefault("scale", 1.0)
        for name, dtype in (("feature", np.int64), ("bin", np.int64), ("left", np.int64),
                            ("right", np.int64), ("count", np.int64)):
            key = new[name]["__array__"]
            arrays[key] = np.asarray(arrays[key], dtype=dtype)
        return {"__object__": "lrank.trees.predictor:Tree",
                "state": {"__dict__": [[k, x] for k, x in new.items()]}}
    out = {k: _upgrade_v1(x, arrays) for k, x in v.items()}
    if "__dict__" in out and isinstance(out["__dict__"], list):  # a parameter dict: the renamed parameter
        out["__dict__"] = [["threshold_strategy" if p == "bin_strategy" else p, x]
                           for p, x in out["__dict__"]]
    return out


# ------------------------------------------------------------------------------ model file encoding
def _qualname(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _resolve(name: Any) -> type | None:
    """The class ``name`` (``module:qualname``) when it is on the allow-list `MODEL_CLASSES`, else None;
    nothing is imported for a name off the list."""
    if not isinstance(name, str) or name not in MODEL_CLASSES:
        return None
    mod, _, qual = name.partition(":")
    return getattr(importlib.import_module(mod), qual)


def _saved_name(cls: type, key: str) -> str:
    name = _qualname(cls)
    if name not in MODEL_CLASSES:
        raise TypeError(f"cannot save {key!r}: the class {name} is not an lrank model class; a class that a "
                        "fitted model holds must be listed in lrank.models._base.MODEL_CLASSES")
    return name


def _encode(v: Any, arrays: dict, key: str) -> Any:
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "O":
            return {"__list__": [_encode(x, arrays, f"{key}.{i}") for i, x in enumerate(v.tolist())]}
        name = f"a{len(arrays)}"
        arrays[name] = v
        return {"__array__": name}
    if isinstance(v, pd.DataFrame):
        return {"__dataframe__": {
            "columns": [str(c) for c in v.columns],
            "data": [_encode(v[c].to_numpy(), arrays, f"{key}.{c}") for c in v.columns],
            "index": _encode(v.index.to_numpy(), arrays, f"{key}.index"), "index_name": v.index.name}}
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return {"__namedtuple__": _saved_name(type(v), key),
                "fields": {f: _encode(getattr(v, f), arrays, f"{key}.{f}") for f in v._fields}}
    if isinstance(v, (list, tuple)):
        tag = "__list__" if isinstance(v, list) else "__tuple__"
        return {tag: [_encode(x, arrays, f"{key}.{i}") for i, x in enumerate(v)]}
    if isinstance(v, (set, frozenset)):
        return {"__set__": [_encode(x, arrays, key) for x in sorted(v, key=repr)]}
    if isinstance(v, dict):
        return {"__dict__": [[_encode(k, arrays, key), _encode(x, arrays, f"{key}.{k}")]
                             for k, x in v.items()]}
    cls = type(v)
    if cls.__module__.startswith("lrank"):
        if isinstance(v, BaseEstimator):
            return {"__estimator__": _saved_name(cls, key),
                    "params": _encode(v.get_params(deep=False), arrays, key),
                    "state": _encode({k: x for k, x in vars(v).items() if k.endswith("_")}, arrays, key)}
        state = v.__getstate__() if hasattr(v, "__getstate__") else vars(v)
        if state is None:
            state = {}
        return {"__object__": _saved_name(cls, key), "state": _encode(dict(state), arrays, key)}
    raise TypeError(f"cannot save {key!r}: values of type {cls.__module__}.{cls.__qualname__} have no "
                    "file representation (only numbers, strings, arrays, DataFrames and lrank objects)")


def _decode(v: Any, arrays: dict, resolve: Callable[[Any, type], type]) -> Any:
    """The value an `_encode` entry stands for; ``resolve(name, kind)`` turns a class name into an
    allowed class of that kind (or raises)."""
    if not isinstance(v, (dict, list)):
        return v
    if isinstance(v, list):
        return [_decode(x, arrays, resolve) for x in v]

    def dec(x: Any) -> Any:
        return _decode(x, arrays, resolve)

    if "__array__" in v:
        return arrays[v["__array__"]]
    if "__float__" in v:
        return float(v["__float__"])
    if "__list__" in v:
        return [dec(x) for x in v["__list__"]]
    if "__tuple__" in v:
        return tuple(dec(x) for x in v["__tuple__"])
    if "__set__" in v:
        return {dec(x) for x in v["__set__"]}
    if "__dict__" in v:
        return {dec(k): dec(x) for k, x in v["__dict__"]}
    if "__dataframe__" in v:
        d = v["__dataframe__"]
        df = pd.DataFrame({c: dec(x) for c, x in zip(d["columns"], d["data"])})
        df.index = pd.Index(dec(d["index"]), name=d["index_name"])
        return df
    if "__namedtuple__" in v:
        return resolve(v["__namedtuple__"], tuple)(**{k: dec(x) for k, x in v["fields"].items()})
    if "__estimator__" in v:
        est = resolve(v["__estimator__"], BaseEstimator)(**dec(v["params"]))
        for k, x in dec(v["state"]).items():
            setattr(est, k, x)
        return est
    if "__object__" in v:
        cls = resolve(v["__object__"], object)
        obj = cls.__new__(cls)
        state = dec(v["state"])
        if hasattr(obj, "__setstate__"):
            obj.__setstate__(state)
        else:
            obj.__dict__.update(state)
        return obj
    raise ValueError(f"unknown entry in model file: {sorted(v)}")
