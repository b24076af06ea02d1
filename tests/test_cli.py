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
