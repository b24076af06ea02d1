"""PyTerrier's learning-to-rank stage drives lrank rankers unchanged: ``pt.ltr.apply_learned_model(est,
form="ltr")`` fits with LightGBM's convention (``group=``, ``eval_set=[(X, y)]``, ``eval_group=``) and
transforms with ``predict``. No index and no JVM are needed for this stage."""

import numpy as np
import pandas as pd
import pytest

from lrank.data import make_letor_like
from lrank.models.gbrt import LambdaMART
from lrank.models.rankboost import RankBoost

pt = pytest.importorskip("pyterrier")


def _frames(data, prefix):
    """PyTerrier's result frame (qid, docno, features, score, rank) and qrels frame of a data set."""
    qid = np.repeat([f"{prefix}{q:02d}" for q in range(data.n_queries)], data.group)
    docno = [f"{q}-d{i}" for i, q in enumerate(qid)]
    res = pd.DataFrame({"qid": qid, "docno": docno, "query": "q", "score": 0.0,
                        "features": list(data.X.astype(np.float64))})
    res["rank"] = res.groupby("qid").cumcount()
    qrels = pd.DataFrame({"qid": qid, "docno": docno, "label": data.y.astype(int)})
    return res, qrels


def _lrank_order(res, qrels):
    """The rows as PyTerrier hands them to fit: merged with the qrels, sorted by qid."""
    df = res.merge(qrels, on=["qid", "docno"], how="left").fillna(0).sort_values("qid")
    return np.stack(df["features"].values), df["label"].values, df.groupby("qid", sort=False)["docno"].count()


@pytest.mark.parametrize("make", [
    lambda: LambdaMART(n_estimators=8, num_leaves=4, min_child_samples=2, learning_rate=0.2),
    lambda: RankBoost(n_estimators=15, random_state=0),
], ids=["LambdaMART", "RankBoost"])
def test_apply_learned_model_ltr_equals_lrank(make):
    train = make_letor_like(n_queries=12, docs_per_query=(6, 14), n_features=6, random_state=0)
    valid = make_letor_like(n_queries=4, docs_per_query=(6, 14), n_features=6, random_state=1)
    test = make_letor_like(n_queries=5, docs_per_query=(6, 14), n_features=6, random_state=2)
    tr_res, tr_qrels = _frames(train, "tr")
    va_res, va_qrels = _frames(valid, "va")
    te_res, _ = _frames(test, "te")

    stage = pt.ltr.apply_learned_model(make(), form="ltr")
    stage.fit(tr_res, tr_qrels, va_res, va_qrels)
    out = stage.transform(te_res)

    X, y, counts = _lrank_order(tr_res, tr_qrels)
    Xv, yv, counts_v = _lrank_order(va_res, va_qrels)
    ours = make().fit(X, y, group=counts.to_numpy(), eval_set=[(Xv, yv)], eval_group=[counts_v.to_numpy()])
    want = ours.predict(np.stack(te_res["features"].values))
    got = out.set_index("docno").loc[te_res["docno"], "score"].to_numpy()
    np.testing.assert_array_equal(got, want)
    assert ours.history_.filter(like="valid_").notna().all().all()  # the validation topics were scored
    # PyTerrier ranks by the scores within each query
    best = out.loc[out["rank"] == 0].set_index("qid")["score"]
    assert (best == out.groupby("qid")["score"].max()).all()
