"""Parameter constraints shared by the BoostingTree family (scikit-learn's `_param_validation`)."""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval

#: Largest ``sigma`` of LambdaMART's pairwise logistic loss: its second derivatives grow as sigma**2 and
#: their sums over a leaf overflow float64 from about 1e152 (measured: 1e152 fits, 1e155 does not); 1e100
#: leaves room for a leaf of 10**50 documents.
SIGMA_MAX = 1e100
#: The declared constraint of ``sigma``: a float in (0, SIGMA_MAX].
SIGMA = Interval(Real, 0, SIGMA_MAX, closed="right")


class Count(Interval):
    """``Interval(Integral, left, right)`` (bounds included), refusing ``bool``: ``True`` is not 1 round."""

    def __init__(self, left: int | None = 0, right: int | None = None) -> None:
        closed = {(False, False): "both", (True, False): "right", (False, True): "left"}.get(
            (left is None, right is None), "neither")
        super().__init__(Integral, left, right, closed=closed)

    def is_satisfied_by(self, val: object) -> bool:
        return not isinstance(val, bool) and super().is_satisfied_by(val)

    def __str__(self) -> str:
        return super().__str__().replace("an int", "an int (not a bool)", 1)
