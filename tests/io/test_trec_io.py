"""TREC files: LETOR comments kept by load_letor, run and qrels files written by lrank.io and read back by
ir-measures (trec_eval through pytrec_eval) to lrank's own metrics, and lrank.io's readers."""

import numpy as np
import pytest

from lrank.data.container import RankingData
from lrank.data.generators import make_letor_like
from lrank.data.letor import load_letor, save_letor
from lrank.io import trec
from lrank.metrics import evaluate

ir_measures = pytest.importorskip("ir_measures")


@pytest.fixture(autouse=True)
def data_root(tmp_path, monkeypatch):
    root = tmp_path / "lrank_data"
    monkeypatch.setenv("LRANK_DATA", str(root))
    return root


def _letor4_text(seed=0, n_queries=6):
    """A LETOR 4.0-style file: every line ends in ``#docid = ... inc = ... prob = ...``."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(n_queries):
        for d in range(int(rng.integers(3, 9))):
            feats = " ".join(f"{j}:{rng.random():.6f}" for j in range(1, 6))
            lines.append(f"{rng.integers(0, 3)} qid:{100 + q} {feats} #docid = GX{q:03d}-{d:02d}-{seed} "
                         f"inc = 1 prob = {rng.random():.4f}")
    return "\n".join(lines) + "\n"


def test_load_letor_keeps_docids_and_comments(tmp_path, data_root):
    p = tmp_path / "l4.txt"
    p.write_text(_letor4_text())
    d = load_letor(p)
    assert d.docids is not None and d.docids.shape == (d.n_docs,)
    assert d.docids[0] == "GX000-00-0" and d.comments[0].startswith("docid = GX000-00-0 inc = 1 prob = ")
    # the comments are cached beside the arrays: a second load does not read the text for them
    again = load_letor(p)
    np.testing.assert_array_equal(again.docids, d.docids)
    np.testing.assert_array_equal(again.comments, d.comments)
    # selections carry them along
    sub = d.subset([2, 0])
    assert list(sub.docids[: sub.group[0]]) == [x for x in d.docids if x.startswith("GX002")]
    folds = d.kfold(3, random_state=0)
    assert sorted(np.concatenate([f.test.docids for f in folds]).tolist()) == sorted(d.docids.tolist())


def test_comments_without_docid_and_files_without_comments(tmp_path, data_root):
    p = tmp_path / "c.txt"
    p.write_text("2 qid:1 1:0.5 # a note\n0 qid:1 1:0.1\n# a comment line is not a document\n"
                 "1 qid:2 1:1.5 #x\n")
    d = load_letor(p, cache=False)
    assert d.docids is None and d.comments.tolist() == ["a note", "", "x"]
    q = tmp_path / "plain.txt"
    save_letor(make_letor_like(n_queries=2, docs_per_query=3, n_features=2, random_state=0), q)
    e = load_letor(q)
    assert e.docids is None and e.comments is None
    np.testing.assert_array_equal(trec.document_ids(e), ["d0", "d1", "d2"] * 2)


def test_damaged_comment_cache_is_rescanned(tmp_path, data_root):
    p = tmp_path / "l4.txt"
    p.write_text(_letor4_text(1))
    d = load_letor(p)
    (cfile,) = (data_root / "cache").glob("comments-v1-*.npz")
    cfile.write_bytes(b"not a zip")
    np.testing.assert_array_equal(load_letor(p).docids, d.docids)


def _ir_measures_per_query(measure, qrels_path, run_path):
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    return {m.query_id: m.value for m in ir_measures.pytrec_eval.iter_calc([measure], qrels, run)}


@pytest.mark.parametrize("with_docids", [True, False])
def test_run_and_qrels_read_back_by_ir_measures_give_lrank_metrics(tmp_path, data_root, with_docids):
    if with_docids:
        p = tmp_path / "l4.txt"
        p.write_text(_letor4_text(2, n_queries=12))
        data = load_letor(p)
    else:
        data = make_letor_like(n_queries=12, docs_per_query=15, n_features=4, random_state=3)
    scores = np.random.default_rng(0).normal(size=data.n_docs)  # continuous: no ties
    run = trec.write_trec_run(tmp_path / "run.trec", data, scores, tag="test")
    qrels = trec.write_trec_qrels(tmp_path / "qrels.txt", data)
    exp_gains = {g: 2**g - 1 for g in range(5)}
    checks = [("ndcg@10", ir_measures.nDCG(gains=exp_gains) @ 10, {}),
              ("ndcg@5", ir_measures.nDCG @ 5, {"gain": "linear"}),
              ("map", ir_measures.AP, {}), ("p@5", ir_measures.P @ 5, {}), ("mrr", ir_measures.RR, {})]
    qids = [str(q) for q in data.qid]
    for name, measure, kw in checks:
        ours = evaluate(data.y, scores, data.qptr, [name], per_query=True, **kw)[name]
        theirs = _ir_measures_per_query(measure, qrels, run)
        np.testing.assert_allclose(ours, [theirs[q] for q in qids], rtol=0, atol=1e-9, err_msg=name)
        # and lrank's reader of the same files, ordered as trec_eval orders them
        back = trec.evaluate_run(run, qrels, [name], **kw)
        np.testing.assert_allclose(back[name].to_numpy(), ours, rtol=0, atol=1e-12, err_msg=name)
    lines = run.read_text().splitlines()
    assert lines[0].split()[1] == "Q0" and lines[0].split()[3] == "1" and lines[0].endswith(" test")


def test_run_file_keeps_float64_scores_and_stable_ties(tmp_path):
    d = RankingData.from_group(np.zeros((4, 1)), [0, 1, 2, 0], [4], docids=["a", "b", "c", "d"])
    s = np.array([0.1 + 0.2, 0.5, 0.5, 1 / 3])
    run = trec.read_trec_run(trec.write_trec_run(tmp_path / "r", d, s))
    assert run["docid"].tolist() == ["b", "c", "d", "a"] and run["rank"].tolist() == [1, 2, 3, 4]
    assert run["score"].tolist() == [0.5, 0.5, 1 / 3, 0.1 + 0.2]  # exact float64 round trip


def test_writers_and_readers_refuse_bad_input(tmp_path):
    d = RankingData.from_group(np.zeros((2, 1)), [0, 1], [2], docids=["a b", "c"])
    with pytest.raises(ValueError, match="holds whitespace"):
        trec.write_trec_run(tmp_path / "r", d, [0.0, 1.0])
    ok = RankingData.from_group(np.zeros((2, 1)), [0, 1], [2])
    with pytest.raises(ValueError, match=r"scores\[1\] is not finite"):
        trec.write_trec_run(tmp_path / "r", ok, [0.0, np.nan])
    with pytest.raises(ValueError, match="one value per document"):
        trec.write_trec_run(tmp_path / "r", ok, [0.0])
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d0 1 0.5 t\n1 Q0 d1 2 high t\n")
    with pytest.raises(trec.TrecFormatError, match=r"bad.run:2: score 'high' is not a number"):
        trec.read_trec_run(bad)
    bad.write_text("1 Q0 d0 1 0.5 t\n1 Q0 d1 2.0 0.4 t\n")
    with pytest.raises(trec.TrecFormatError, match=r"bad.run:2: rank '2.0' is not an integer"):
        trec.read_trec_run(bad)
    bad.write_text("1 Q0 d0 1 0.5 t\n\n1 Q0 d1 2 t\n")
    with pytest.raises(trec.TrecFormatError, match=r"bad.run:3: a run line has 6 fields, this one has 5"):
        trec.read_trec_run(bad)
    bad.write_text("1 Q0 d0 1 0.5 t\n1 Q0 d0 2 0.4 t\n")
    with pytest.raises(trec.TrecFormatError, match=r"bad.run:2: document 'd0' appears twice"):
        trec.read_trec_run(bad)
    q = tmp_path / "q.txt"
    q.write_text("1 0 d0 1\n1 0 d1 x\n")
    with pytest.raises(trec.TrecFormatError, match=r"q.txt:2: relevance 'x' is not an integer"):
        trec.read_trec_qrels(q)
    with pytest.raises(FileNotFoundError, match="no run file"):
        trec.read_trec_run(tmp_path / "absent")


def test_evaluate_run_warns_about_unretrieved_relevant_documents(tmp_path):
    run = tmp_path / "r"
    run.write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n2 Q0 z 1 1.0 t\n")
    qrels = tmp_path / "q"
    qrels.write_text("1 0 a 0\n1 0 b 1\n1 0 c 2\n3 0 y 1\n")
    with pytest.warns(UserWarning, match="1 relevant documents of 1 queries are not in the run"):
        out = trec.evaluate_run(run, qrels, ["p@2"])
    assert out.index.tolist() == ["1"] and out["p@2"].tolist() == [0.5]  # query 2 unjudged, 3 not run


def test_evaluate_run_breaks_ties_as_trec_eval(tmp_path):
    data = make_letor_like(n_queries=10, docs_per_query=12, n_features=3, random_state=4)
    scores = np.random.default_rng(1).integers(0, 3, data.n_docs).astype(float)  # many ties
    run = trec.write_trec_run(tmp_path / "run", data, scores)
    qrels = trec.write_trec_qrels(tmp_path / "qrels", data)
    theirs = _ir_measures_per_query(ir_measures.P @ 3, qrels, run)
    ours = trec.evaluate_run(run, qrels, ["p@3"])["p@3"]
    np.testing.assert_allclose(ours.to_numpy(), [theirs[q] for q in ours.index], rtol=0, atol=1e-12)
    # lrank's own stable tie rule differs on this run: the check above is not vacuous
    stable = evaluate(data.y, scores, data.qptr, ["p@3"], per_query=True)["p@3"]
    assert not np.allclose(stable, ours.to_numpy())


def test_compressed_letor_files_keep_their_comments(tmp_path):
    import bz2
    import gzip

    text = _letor4_text(5)
    plain = tmp_path / "l4.txt"
    plain.write_text(text)
    want = load_letor(plain, cache=False).docids
    for opener, suffix in ((gzip.open, ".gz"), (bz2.open, ".bz2")):
        p = tmp_path / f"l4.txt{suffix}"
        with opener(p, "wt") as fh:
            fh.write(text)
        np.testing.assert_array_equal(load_letor(p, cache=False).docids, want)
