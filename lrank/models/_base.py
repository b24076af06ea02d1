"""What every lrank ranker shares: scikit-learn parameter handling and the fit input conventions."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from lrank.data.container import RankingData, as_ranking_data


class BaseRanker(BaseEstimator):
    """Base class of lrank's rankers (scikit-learn style).

    ``__init__`` stores parameters only; ``fit(X, y, *, qid=None, group=None)`` (or ``fit(data)``
    with a `RankingData`) learns; fitted attributes end in ``_``; ``predict(X)`` needs no qid;
    ``staged_predict(X)`` yields the scores after each round.
    """

    _estimator_type = "ranker"

    @staticmethod
    def _ranking_data(X: Any, y: Any = None, qid: Any = None, group: Any = None) -> RankingData:
        """Turn the ``fit`` arguments into a validated `RankingData`."""
        return as_ranking_data(X, y, qid=qid, group=group)

    @staticmethod
    def _features(X: Any, n_features: int | None = None) -> np.ndarray:
        """The feature matrix of ``X`` (array or `RankingData`) as C-contiguous float32."""
        if isinstance(X, RankingData):
            X = X.X
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-d, got shape {X.shape}")
        if n_features is not None and X.shape[1] != n_features:
            raise ValueError(f"X has {X.shape[1]} features, the model was fitted on {n_features}")
        return X

    def _check_fitted(self, attr: str = "n_iter_") -> None:
        if not hasattr(self, attr):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        return tags
