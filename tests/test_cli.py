"""The RankLib-style command line end to end on the MSLR sample: lrank train / rank / eval / compare, as
the console script and in-process; errors name the file and line or the option, exit codes non-zero."""

import shutil
import subprocess
import sys

import numpy as np
import pytest

from lrank import stats
from lrank.__main__ import main
from lrank.io import trec
from lrank.metrics import evaluate
from lrank.models._base import load_model


@pytest.fixture(scope="module")
def mslr():
    import lrank.data

    train, test = lrank.data.fetch("mslr-sample")
    return train.provenance["path"], test.provenance["path"], train, test


def test_train_rank_eval_compare_end_to_end(mslr, tmp_path, capsys):
    train_f, test_f, _, test = mslr
    m1, m2 = tmp_path / "lm.npz", tmp_path / "rb.npz"
    assert main(["train", "--ranker", "lambdamart", "--train", train_f, "--validate", test_f,
                 "--test", test_f, "--metric", "NDCG@10", "--n-estimators", "6", "--num-leaves", "8",
                 "--learning-rate", "0.2", "--random-state", "0", "--save", str(m1), "--quiet"]) == 0
    out = capsys.readouterr().out
    model = load_model(m1)
    assert model.n_iter_ == 6 and model.num_leaves == 8 and model.learning_rate == 0.2 and model.ndcg_at == 10
    want = evaluate(test.y, model.predict(test.X), test.qptr, ["ndcg@10"])["ndcg@10"]
    assert f"ndcg@10 on test data: {want:.6f}" in out
    assert "valid_ndcg@10" in model.history_.columns

    assert main(["rank", "--model", str(m1), "--input", test_f, "--run", str(tmp_path / "lm.trec"),
                 "--qrels", str(tmp_path / "q.txt"), "--tag", "lm"]) == 0
    run = trec.read_trec_run(tmp_path / "lm.trec")
    assert len(run) == test.n_docs and set(run["tag"]) == {"lm"}
    np.testing.assert_array_equal(run.groupby("query", sort=False).size().to_numpy(), test.group)

    # eval from the model: lrank's own per-query values, written RankLib -idv style
    assert main(["eval", "--model", str(m1), "--input", test_f, "--metric", "NDCG@10", "--idv",
                 str(tmp_path / "idv.txt")]) == 0
    per_q = evaluate(test.y, model.predict(test.X), test.qptr, ["ndcg@10"], per_query=True)["ndcg@10"]
    lines = (tmp_path / "idv.txt").read_text().splitlines()
    assert len(lines) == test.n_queries + 1 and lines[-1] == f"ndcg@10\tall\t{per_q.mean():.6f}"
    assert lines[0] == f"ndcg@10\t{test.qid[0]}\t{per_q[0]:.6f}"
    # eval from the run file against the qrels: trec_eval's tie order (see lrank.io.trec)
    capsys.readouterr()
    assert main(["eval", "--run", str(tmp_path / "lm.trec"), "--qrels", str(tmp_path / "q.txt"),
                 "--metric", "NDCG@10", "--metric", "MAP"]) == 0
    table = trec.evaluate_run(tmp_path / "lm.trec", tmp_path / "q.txt", ["ndcg@10", "map"])
    assert capsys.readouterr().out.splitlines() == [f"ndcg@10\tall\t{table['ndcg@10'].mean():.6f}",
                                                    f"map\tall\t{table['map'].mean():.6f}"]

    assert main(["train", "--ranker", "rankboost", "--train", train_f, "--n-estimators", "10",
                 "--save", str(m2), "--quiet"]) == 0
    assert main(["rank", "--model", str(m2), "--input", test_f, "--run", str(tmp_path / "rb.trec")]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "lm.trec"), str(tmp_path / "rb.trec"), "--qrels",
                 str(tmp_path / "q.txt"), "--metric", "NDCG@10", "--test", "t", "--correction", "holm"]) == 0
    out = capsys.readouterr().out
    rb = trec.evaluate_run(tmp_path / "rb.trec", tmp_path / "q.txt", ["ndcg@10"])
    p = stats.paired_ttest(rb["ndcg@10"].loc[table.index], table["ndcg@10"])[1]
    assert f"{p:.4g}" in out and "t test over 43 queries, holm correction over 1 comparisons" in out


def test_console_script_and_module_run(mslr, tmp_path):
    train_f, _, _, _ = mslr
    exe = shutil.which("lrank", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert exe, "the console script 'lrank' is installed beside the interpreter"
    r = subprocess.run([exe, "train", "--ranker", "mart", "--train", train_f, "--n-estimators", "2",
                        "--save", str(tmp_path / "m.npz")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "MART: 2 rounds" in r.stdout and "%" in r.stderr  # the tqdm progress bar
    r = subprocess.run([sys.executable, "-m", "lrank", "compare", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--correction" in r.stdout


@pytest.mark.parametrize("ranker, cls", [("adarank", "AdaRank"), ("rankboost-plus", "RankBoostPlus"),
                                         ("ndcgboost", "NDCGBoost"), ("mcrank", "McRank")])
def test_every_ranker_trains_from_the_command_line(mslr, tmp_path, capsys, ranker, cls):
    train_f, test_f, _, test = mslr
    assert main(["train", "--ranker", ranker, "--train", train_f, "--validate", test_f, "--metric", "MAP",
                 "--n-estimators", "2", "--save", str(tmp_path / "m.npz"), "--quiet"]) == 0
    model = load_model(tmp_path / "m.npz")
    assert type(model).__name__ == cls
    want = evaluate(test.y, model.predict(test.X), test.qptr, ["map"])["map"]
    assert f"map on validation data: {want:.6f}" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["train", "--ranker", "rankboost", "--train", "TRAIN", "--num-leaves", "4"],
     "--num-leaves does not apply to --ranker rankboost"),
    (["train", "--ranker", "mart", "--train", "TRAIN", "--metric", "NDGC@10"],
     "--metric 'NDGC@10' is not a metric"),
    (["train", "--ranker", "mart", "--train", "absent.txt"], "--train absent.txt: no such file"),
    (["train", "--ranker", "mart", "--train", "TRAIN", "--early-stopping-rounds", "3"],
     "--early-stopping-rounds needs --validate"),
    (["train", "--ranker", "mart", "--train", "BAD"], "bad.txt:2: "),
    (["eval", "--run", "RUN"], "--run needs --qrels"),
    (["eval", "--run", "BADRUN", "--qrels", "RUN"], "badrun.trec:1: a run line has 6 fields"),
    (["train", "--ranker", "mart", "--train", "TRAIN", "--save", "NOFOLDER"],
     "--save absent/m.npz: there is no folder absent"),
    (["rank", "--model", "m.npz", "--input", "TRAIN", "--run", "NOFOLDER"], "--run absent/m.npz: there is"),
    (["eval", "--run", "RUN", "--qrels", "RUN", "--idv", "NOFOLDER"], "--idv absent/m.npz: there is no"),
])
def test_errors_name_the_option_or_the_line_and_exit_1(mslr, tmp_path, capsys, monkeypatch, argv, message):
    (tmp_path / "bad.txt").write_text("1 qid:1 1:0.5\n0 qid:1 1:x\n")
    (tmp_path / "badrun.trec").write_text("1 Q0 d0 1 0.5\n")
    (tmp_path / "run.trec").write_text("1 Q0 d0 1 0.5 t\n")
    subst = {"TRAIN": mslr[0], "BAD": str(tmp_path / "bad.txt"), "RUN": str(tmp_path / "run.trec"),
             "BADRUN": str(tmp_path / "badrun.trec"), "NOFOLDER": "absent/m.npz"}
    monkeypatch.chdir(tmp_path)
    assert main([subst.get(a, a) for a in argv]) == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"lrank {argv[0]}: error: ") and message in err, err
    if "NOFOLDER" in argv:
        assert out == "", "an output folder that does not exist stops the command before its work"


def test_usage_errors_exit_2():
    with pytest.raises(SystemExit) as exc:
        main(["train", "--ranker", "ranknet", "--train", "x"])
    assert exc.value.code == 2


@pytest.mark.slow
def test_readme_ir_examples_run(mslr, tmp_path):
    """The README's Python and shell examples of the IR section run (in a scratch folder)."""
    import re
    from pathlib import Path

    from lrank.paths import REPO_DIR

    text = (Path(REPO_DIR) / "README.md").read_text()
    section = text.split("## Where IR researchers work", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "p_adjusted" in out.stdout and (tmp_path / "lm.trec").is_file()
    (shell,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    folder = str(Path(mslr[0]).parent)
    shell = re.sub(r"^D=\S+", f"D={folder}", shell, flags=re.M)
    import os

    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    out = subprocess.run(["bash", "-e", "-c", shell], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ndcg@10\tall\t" in out.stdout and "fisher test over" in out.stdout


def _subparsers(parser):
    import argparse

    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices


def _examples(parser):
    """The command lines under "examples:" in ``parser``'s epilog, continuation lines joined, comments
    dropped, as argv lists without the program name."""
    import shlex

    text = (parser.epilog or "").split("examples:\n", 1)[-1] if parser.epilog else ""
    lines, out = text.replace("\\\n", " ").splitlines(), []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        for prog in ("python -m lrank ", "lrank "):
            if line.startswith(prog):
                out.append(shlex.split(line[len(prog):]))
                break
    return out


def test_every_command_and_option_is_described():
    """``--help`` of every command has a description, and every option and argument a help text."""
    from lrank.__main__ import build_parser

    parser = build_parser()
    assert "``" not in parser.description and parser.epilog
    for name, p in _subparsers(parser).items():
        assert p.description, f"{name} has no description"
        missing = [a.dest for a in p._actions if a.dest != "help" and not a.help]
        assert not missing, f"{name}: no help for {missing}"


def test_help_examples_run_as_printed(mslr, tmp_path, monkeypatch, capsys):
    """Every example printed by ``--help`` parses; those of train / rank / eval / compare (and the
    top-level ones among them) run on the MSLR sample, in that order, in one folder."""
    from lrank.__main__ import build_parser

    train_f, test_f, _, _ = mslr
    for name, src in (("train.txt", train_f), ("vali.txt", test_f), ("test.txt", test_f)):
        shutil.copy(src, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    parser = build_parser()
    commands = _subparsers(parser)
    examples = [e for name in commands for e in _examples(commands[name])] + _examples(parser)
    assert len(examples) >= 15
    for argv in examples:
        parser.parse_args(argv)  # a usage error exits 2
    runnable = {"train": 0, "rank": 1, "eval": 2, "compare": 3}
    ordered = sorted((e for e in examples if e[0] in runnable), key=lambda e: runnable[e[0]])
    assert len(ordered) >= 10
    for argv in ordered:
        assert main(argv + (["--quiet"] if argv[0] == "train" else [])) == 0, (argv, capsys.readouterr())
    out = capsys.readouterr().out
    assert (tmp_path / "lm.trec").is_file() and (tmp_path / "per_query.txt").is_file()
    assert "p_adjusted" in out or "p_adj" in out


def test_eval_gain_linear_gives_trec_evals_ndcg(mslr, tmp_path, capsys):
    """lrank's NDCG gain is 2^rel - 1; trec_eval's ndcg_cut (and ir-measures' nDCG) use rel. The two differ
    on graded labels, and --gain linear gives trec_eval's value, checked against ir-measures."""
    ir_measures = pytest.importorskip("ir_measures")
    _, test_f, _, test = mslr
    from lrank.data import load_letor

    data = load_letor(test_f)
    scores = np.round(data.X[:, 109])            # BM25, rounded: many ties, ordered as trec_eval orders
    run = trec.write_trec_run(tmp_path / "bm25.trec", data, scores)
    qrels = trec.write_trec_qrels(tmp_path / "q.txt", data)
    theirs = ir_measures.calc_aggregate([ir_measures.nDCG @ 10], ir_measures.read_trec_qrels(str(qrels)),
                                        ir_measures.read_trec_run(str(run)))[ir_measures.nDCG @ 10]
    values = {}
    for gain in ("exp", "linear"):
        capsys.readouterr()
        assert main(["eval", "--run", str(run), "--qrels", str(qrels), "--gain", gain]) == 0
        values[gain] = float(capsys.readouterr().out.split()[-1])
    assert values["linear"] == pytest.approx(theirs, abs=1e-6)
    assert abs(values["exp"] - theirs) > 0.01       # the default is not trec_eval's: the check can fail
    capsys.readouterr()
    run2 = trec.write_trec_run(tmp_path / "bm25_raw.trec", data, data.X[:, 109])
    assert main(["compare", str(run), str(run2), "--qrels", str(qrels), "--gain", "linear"]) == 0


def test_eval_says_when_tied_scores_decide_a_metric(mslr, tmp_path, capsys):
    """Stump and feature rankers tie often: eval then gives the metric's range over every order of the
    ties (worst and best first), on standard error, for a run and for a model alike; no note without ties."""
    _, test_f, _, test = mslr
    from lrank.data import load_letor

    data = load_letor(test_f)
    scores = np.round(data.X[:, 109] / 10)      # BM25 in steps of 10: ties in most queries
    run = trec.write_trec_run(tmp_path / "tied.trec", data, scores)
    qrels = trec.write_trec_qrels(tmp_path / "q.txt", data)
    capsys.readouterr()
    assert main(["eval", "--run", str(run), "--qrels", str(qrels), "--metric", "NDCG@10"]) == 0
    out, err = capsys.readouterr()
    table = trec.evaluate_run(run, qrels, ["ndcg@10"])
    lo = trec.evaluate_run(run, qrels, ["ndcg@10"], ties="pessimistic")["ndcg@10"]
    hi = trec.evaluate_run(run, qrels, ["ndcg@10"], ties="optimistic")["ndcg@10"]
    moved = int((hi != lo).sum())
    assert 0 < moved <= test.n_queries and lo.mean() < table["ndcg@10"].mean() < hi.mean()
    assert out.strip() == f"ndcg@10\tall\t{table['ndcg@10'].mean():.6f}"   # stdout as before
    assert (f"note: tied scores decide ndcg@10 in {moved} of {test.n_queries} queries: over every order of "
            f"the ties its mean lies in [{lo.mean():.6f}, {hi.mean():.6f}]") in err
    assert "trec_eval's order" in err
    distinct = data.X[:, 109] + 1e-9 * np.arange(data.n_docs)
    untied = trec.write_trec_run(tmp_path / "untied.trec", data, distinct)
    assert main(["eval", "--run", str(untied), "--qrels", str(qrels)]) == 0
    assert "note" not in capsys.readouterr().err


def test_train_param_reads_literals_and_lightgbm_style_words(mslr, tmp_path):
    """--param NAME=VALUE: Python literals, the words true / false / none / null in any case (as LightGBM's
    configuration files write them), else the text; each reaches the estimator with its type."""
    train_f = mslr[0]
    model = tmp_path / "m.npz"
    assert main(["train", "--ranker", "lambdamart", "--train", train_f, "--n-estimators", "2", "--quiet",
                 "--param", "lambdarank_norm=false", "--param", "ndcg_at=None", "--param", "criterion=se",
                 "--param", "lambdarank_truncation_level=NULL", "--param", "subsample=0.5",
                 "--param", "random_state=3", "--save", str(model)]) == 0
    p = load_model(model).get_params()
    assert p["lambdarank_norm"] is False and p["ndcg_at"] is None and p["criterion"] == "se"
    assert p["lambdarank_truncation_level"] is None and p["subsample"] == 0.5 and p["random_state"] == 3


def test_a_file_that_omits_the_last_features_is_read_at_the_models_width(mslr, tmp_path, capsys):
    """SVMlight lists only the features a line has: a file whose last feature is absent (0) on every line
    has fewer columns than the model. rank / eval read it at the model's width, train reads --train,
    --validate and --test at the widest; a file wider than the model is an error naming file and line."""
    import re

    train_f, test_f, _, _ = mslr
    text = open(test_f).read()
    zero = tmp_path / "zero.txt"   # feature 136 written as 0 on every line
    zero.write_text(re.sub(r" 136:\S+", " 136:0", text))
    omitted = tmp_path / "omitted.txt"   # the same data, feature 136 left out
    omitted.write_text(re.sub(r" 136:\S+", "", text))
    model = tmp_path / "m.npz"
    assert main(["train", "--ranker", "lambdamart", "--train", train_f, "--validate", str(omitted), "--test",
                 str(omitted), "--n-estimators", "3", "--quiet", "--save", str(model)]) == 0
    runs = {}
    for name, f in (("zero", zero), ("omitted", omitted)):
        run = tmp_path / f"{name}.trec"
        assert main(["rank", "--model", str(model), "--input", str(f), "--run", str(run)]) == 0
        runs[name] = run.read_text()
    assert runs["zero"] == runs["omitted"]
    capsys.readouterr()
    assert main(["eval", "--model", str(model), "--input", str(omitted)]) == 0
    assert capsys.readouterr().out.startswith("ndcg@10\tall\t")
    narrow = tmp_path / "narrow.npz"
    assert main(["train", "--ranker", "lambdamart", "--train", str(omitted), "--n-estimators", "2", "--quiet",
                 "--save", str(narrow)]) == 0
    assert main(["rank", "--model", str(narrow), "--input", test_f, "--run", str(tmp_path / "x.trec")]) != 0
    assert f"{test_f}:1: feature index 136 exceeds n_features=135" in capsys.readouterr().err
