"""Data layer: `RankingData`, readers, fetchers, generators, folds, critical pairs, binning."""

from lrank.data.binning import FeatureBins, bin_features
from lrank.data.container import CriticalPairs, Fold, RankingData, RankingDataError, as_ranking_data
from lrank.data.letor import LetorFormatError, load_letor, save_letor

__all__ = [
    "CriticalPairs",
    "FeatureBins",
    "Fold",
    "LetorFormatError",
    "RankingData",
    "RankingDataError",
    "as_ranking_data",
    "bin_features",
    "load_letor",
    "save_letor",
]

# Optional parts written by other modules of this package are added below when they exist.
try:  # noqa: SIM105
    from lrank.data.fetch import REGISTRY, fetch  # noqa: F401

    __all__ += ["REGISTRY", "fetch"]
except ImportError:  # pragma: no cover - during development only
    pass
try:
    from lrank.data.movielens import load_movielens, movielens_tasks  # noqa: F401

    __all__ += ["load_movielens", "movielens_tasks"]
except ImportError:  # pragma: no cover
    pass
try:
    from lrank.data.generators import (  # noqa: F401
        make_bipartite,
        make_collaborative_filtering,
        make_letor_like,
        subset_lattice,
    )

    __all__ += ["make_bipartite", "make_collaborative_filtering", "make_letor_like", "subset_lattice"]
except ImportError:  # pragma: no cover
    pass
