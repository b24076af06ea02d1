"""The map of the collection: paper -> notebook -> lrank modules (rendered by ``00_index``)."""

from __future__ import annotations

PAPERS: list[dict] = [
    {
        "paper": "Freund, Iyer, Schapire, Singer. An Efficient Boosting Algorithm for Combining "
                 "Preferences. JMLR 4 (2003)",
        "short": "RankBoost",
        "text": "rankboost_freund2003.txt",
        "notebook": "01_rankboost",
        "modules": ["lrank.papers.rankboost", "lrank.models.rankboost", "lrank.weak.stumps",
                    "lrank.baselines.collaborative", "lrank.metrics"],
    },
    {
        "paper": "Xu, Li. AdaRank: A Boosting Algorithm for Information Retrieval. SIGIR 2007",
        "short": "AdaRank",
        "text": "adarank_xu2007.txt",
        "notebook": "02_adarank",
        "modules": ["lrank.papers.adarank", "lrank.models.adarank", "lrank.weak.single_feature",
                    "lrank.baselines.ranksvm"],
    },
    {
        "paper": "Kocsis, György, Bán. BoostingTree: Parallel Selection of Weak Learners in Boosting, "
                 "with Application to Ranking. Machine Learning 93 (2013)",
        "short": "BoostingTree",
        "text": "boostingtree_kocsis2013.txt",
        "notebook": "03_boostingtree",
        "modules": ["lrank.papers.boostingtree", "lrank.models.boostingtree", "lrank.metamax",
                    "lrank.models.adaboost", "lrank.models.ndcgboost", "lrank.data.chess"],
    },
    {
        "paper": ("Xia, Zhai, Wang. Analysis of Regression Tree Fitting Algorithms in Learning to Rank "
                  "(arXiv)"),
        "short": "Tree fitting (MART, McRank, LambdaMART)",
        "text": "tree_fitting_xia.txt",
        "notebook": "04_tree_fitting",
        "modules": ["lrank.papers.tree_fitting", "lrank.trees", "lrank.models.gbrt"],
    },
    {
        "paper": "Connamacher, Pancha, Liu, Ray. Rankboost+: an improvement to Rankboost. "
                 "Machine Learning 109 (2020)",
        "short": "RankBoost+",
        "text": "rankboost_plus_connamacher2020.txt",
        "notebook": "05_rankboost_plus",
        "modules": ["lrank.papers.rankboost_plus", "lrank.models.rankboost_plus", "lrank.stats"],
    },
]

FOUNDATION_MODULES = ["lrank.data", "lrank.metrics", "lrank.experiments", "lrank.plots", "lrank.results",
                      "lrank.paths"]
