"""Data layer: `RankingData`, readers, fetchers, generators, folds, critical pairs, binning.

Note: ``lrank.data.fetch`` is the function here; the module of the same name is reached with
``from lrank.data.fetch import ...`` or ``importlib.import_module("lrank.data.fetch")``.
"""

from lrank.data.binning import FeatureBins, bin_features
from lrank.data.container import (
    LABEL_BOUND,
    CriticalPairs,
    Fold,
    RankingData,
    RankingDataError,
    as_ranking_data,
)
from lrank.data.fetch import REGISTRY, ChecksumError, FetchError, LetorDataset, fetch, load_fold, status
from lrank.data.generators import (
    PairFeedback,
    make_bipartite,
    make_collaborative_filtering,
    make_letor_like,
    subset_lattice,
)
from lrank.data.letor import LetorFormatError, load_letor, save_letor
from lrank.data.movielens import MovieLensFormatError, MovieLensTasks, load_movielens, movielens_tasks

__all__ = [
    "LABEL_BOUND",
    "REGISTRY",
    "ChecksumError",
    "FetchError",
    "LetorDataset",
    "MovieLensFormatError",
    "MovieLensTasks",
    "PairFeedback",
    "load_fold",
    "status",
    "CriticalPairs",
    "FeatureBins",
    "Fold",
    "LetorFormatError",
    "RankingData",
    "RankingDataError",
    "as_ranking_data",
    "bin_features",
    "fetch",
    "load_letor",
    "load_movielens",
    "make_bipartite",
    "make_collaborative_filtering",
    "make_letor_like",
    "movielens_tasks",
    "save_letor",
    "subset_lattice",
]
