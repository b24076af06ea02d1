"""The RankLib-style command line: ``lrank train | rank | eval | compare`` (also ``python -m lrank ...``).

=============================================  =================================================
RankLib                                        lrank
=============================================  =================================================
``-train F -validate V -test T``               ``lrank train --train F --validate V --test T``
``-ranker 2 / 3 / 0 / 6``                      ``--ranker rankboost / adarank / mart / lambdamart``
``-metric2t NDCG@10``                          ``--metric NDCG@10``
``-tree 1000 -leaf 10 -shrinkage 0.1``         ``--n-estimators 1000 --num-leaves 10 --learning-rate 0.1``
``-estop 100``                                 ``--early-stopping-rounds 100`` (needs ``--validate``)
``-save model.txt``                            ``--save model.npz``
``-load model.txt -rank F -score out``         ``lrank rank --model model.npz --input F --run out.trec``
``-load M -test F -metric2T MAP -idv out``     ``lrank eval --model M --input F --metric MAP --idv out``
(trec_eval)                                    ``lrank eval --run out.trec --qrels Q``
(ranx / pt.Experiment)                         ``lrank compare a.trec b.trec --qrels Q --test fisher``
=============================================  =================================================

Every command exits with 0 on success, 1 when an input is wrong (the message names the file and line,
or the option) and 2 for a usage error (argparse's).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

#: ``--ranker`` name -> (module, class)
RANKERS = {
    "rankboost": ("lrank.models.rankboost", "RankBoost"),
    "rankboost-plus": ("lrank.models.rankboost_plus", "RankBoostPlus"),
    "adarank": ("lrank.models.adarank", "AdaRank"),
    "mart": ("lrank.models.gbrt", "MART"),
    "lambdamart": ("lrank.models.gbrt", "LambdaMART"),
    "mcrank": ("lrank.models.gbrt", "McRank"),
    "ndcgboost": ("lrank.models.ndcgboost", "NDCGBoost"),
}
#: option -> estimator parameter
_OPTIONS = {"n_estimators": "n_estimators", "num_leaves": "num_leaves", "learning_rate": "learning_rate",
            "min_child_samples": "min_child_samples", "early_stopping_rounds": "early_stopping_rounds",
            "random_state": "random_state"}


class CommandError(Exception):
    """A wrong input or option: printed as ``lrank <command>: error: <message>``, exit code 1."""


def metric_name(text: str) -> str:
    """RankLib's metric spelling (``NDCG@10``, ``MAP``, ``ERR@10``, ``P@5``) as an lrank metric name."""
    from lrank.metrics import parse_metric

    name = text.strip().lower()
    try:
        parse_metric(name)
    except (ValueError, KeyError) as exc:
        raise CommandError(f"--metric {text!r} is not a metric lrank knows: {exc}") from None
    return name


def _load(path: str, what: str, n_features: int | None = None):
    """A LETOR file, with ``n_features`` columns when given (a feature absent from every line of an SVMlight
    file, e.g. the last one, is 0, so a file may list fewer columns than the model has)."""
    from lrank.data.letor import load_letor

    if not Path(path).is_file():
        raise CommandError(f"{what} {path}: no such file")
    return load_letor(path, n_features=n_features)


def _load_together(files: dict[str, str | None]) -> dict[str, Any]:
    """The given files (option -> path) with one number of columns, the largest any of them uses."""
    data = {opt: _load(path, opt) for opt, path in files.items() if path}
    width = max(d.n_features for d in data.values())
    return {opt: (d if d.n_features == width else _load(files[opt], opt, width)) for opt, d in data.items()}


def _output_folders(**paths: str | None) -> None:
    """Stop before any work when an output file's folder does not exist (a fit is not lost to a typo)."""
    for option, path in paths.items():
        if path and not Path(path).parent.is_dir():
            raise CommandError(f"--{option} {path}: there is no folder {Path(path).parent}")


def _estimator(args: argparse.Namespace, metric: str):
    import importlib

    module, cls_name = RANKERS[args.ranker]
    cls = getattr(importlib.import_module(module), cls_name)
    accepted = cls().get_params()
    params: dict[str, Any] = {}
    for opt, param in _OPTIONS.items():
        value = getattr(args, opt)
        if value is None:
            continue
        if param not in accepted:
            raise CommandError(f"--{opt.replace('_', '-')} does not apply to --ranker {args.ranker} "
                               f"({cls_name} has no {param!r}; its parameters: "
                               f"{', '.join(sorted(accepted))})")
        params[param] = value
    if "eval_metric" in accepted:
        params["eval_metric"] = metric
    if args.ranker == "adarank":
        params["metric"] = metric  # AdaRank boosts the measure itself (RankLib's -metric2t)
    if args.ranker == "lambdamart" and metric.startswith("ndcg@"):
        params["ndcg_at"] = int(metric.split("@")[1])
    for item in args.param or []:
        key, sep, raw = item.partition("=")
        if not sep or key not in accepted:
            raise CommandError(f"--param {item!r}: expected NAME=VALUE with NAME one of "
                               f"{', '.join(sorted(accepted))}")
        params[key] = _literal(raw)
    if "verbose" in accepted:
        params["verbose"] = not args.quiet
    return cls(**params)


_WORDS = {"true": True, "false": False, "none": None, "null": None}  # as LightGBM's and RankLib's users write


def _literal(raw: str) -> Any:
    """A ``--param`` value: a Python literal (``30``, ``0.5``, ``'ole'``, ``None``), ``true`` / ``false`` /
    ``none`` / ``null`` in any case, else the text itself (``ole``)."""
    import ast

    if raw.strip().lower() in _WORDS:
        return _WORDS[raw.strip().lower()]
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw


def cmd_train(args: argparse.Namespace) -> int:
    """``lrank train``: fit a ranker on a LETOR file, report the metric, save the model."""
    from lrank.metrics import evaluate

    _output_folders(save=args.save)
    metric = metric_name(args.metric)
    files = _load_together({"--train": args.train, "--validate": args.validate, "--test": args.test})
    train, valid, test = (files.get(opt) for opt in ("--train", "--validate", "--test"))
    if args.early_stopping_rounds is not None and valid is None:
        raise CommandError("--early-stopping-rounds needs --validate (the data early stopping watches)")
    model = _estimator(args, metric)
    model.fit(train, **({"eval_set": valid} if valid is not None else {}))
    print(f"{type(model).__name__}: {model.n_iter_} rounds ({model.stop_reason_})")
    for name, data in (("training", train), ("validation", valid), ("test", test)):
        if data is not None:
            value = evaluate(data.y, model.predict(data.X), data.qptr, [metric])[metric]
            print(f"{metric} on {name} data: {value:.6f}")
    if args.save:
        print(f"model saved to {model.save_model(args.save)}")
    return 0


def cmd_rank(args: argparse.Namespace) -> int:
    """``lrank rank``: score a LETOR file with a saved model and write a TREC run file."""
    from lrank.io.trec import write_trec_qrels, write_trec_run
    from lrank.models._base import load_model

    _output_folders(run=args.run, qrels=args.qrels)
    model = load_model(args.model)
    data = _load(args.input, "--input", model.n_features_in_)
    scores = model.predict(data.X)
    print(f"run written to {write_trec_run(args.run, data, scores, tag=args.tag)}")
    if args.qrels:
        print(f"qrels written to {write_trec_qrels(args.qrels, data)}")
    return 0


def _per_query(args: argparse.Namespace, metrics: list[str]):
    """Per-query values (DataFrame indexed by query id) from ``--run/--qrels`` or ``--model/--input``: in the
    order the evaluation uses, then with tied scores ordered worst first and best first (the bounds over
    every order of the ties), and the name of that order."""
    import warnings

    import pandas as pd

    from lrank.io.trec import evaluate_run, read_trec_qrels, read_trec_run
    from lrank.metrics import evaluate
    from lrank.models._base import load_model

    if args.run and args.model:
        raise CommandError("give --run and --qrels, or --model and --input, not both")
    if args.run:
        if not args.qrels:
            raise CommandError("--run needs --qrels")
        run, qrels = read_trec_run(args.run), read_trec_qrels(args.qrels)

        def table(ties: str) -> pd.DataFrame:
            return evaluate_run(run, qrels, metrics, gain=args.gain, ties=ties)

        order = "trec_eval's order (tied documents by id, descending)"
    else:
        if not (args.model and args.input):
            raise CommandError("give --run and --qrels, or --model and --input")
        model = load_model(args.model)
        data = _load(args.input, "--input", model.n_features_in_)
        scores = model.predict(data.X)
        index = pd.Index([str(q) for q in data.qid], name="query")

        def table(ties: str) -> pd.DataFrame:
            return pd.DataFrame(evaluate(data.y, scores, data.qptr, metrics, per_query=True, gain=args.gain,
                                         ties=ties), index=index)

        order = "the file's order (tied documents as they come, as LightGBM)"
    main = table("stable")
    with warnings.catch_warnings():  # said once, by the first table
        warnings.simplefilter("ignore")
        return main, table("pessimistic"), table("optimistic"), order


def cmd_eval(args: argparse.Namespace) -> int:
    """``lrank eval``: mean metrics, and per-query values with ``--idv`` (RankLib's -idv). When tied scores
    change a metric, a note on standard error gives its range over every order of the ties."""
    _output_folders(idv=args.idv)
    metrics = [metric_name(m) for m in args.metric]
    table, worst, best, order = _per_query(args, metrics)
    means = [f"{m}\tall\t{table[m].mean():.6f}" for m in metrics]
    print("\n".join(means))
    for m in metrics:
        moved = int((best[m] != worst[m]).sum())
        if moved:
            print(f"note: tied scores decide {m} in {moved} of {len(table)} queries: over every order of the "
                  f"ties its mean lies in [{worst[m].mean():.6f}, {best[m].mean():.6f}]; "
                  f"{table[m].mean():.6f} is {order}", file=sys.stderr)
    if args.idv:
        lines = [f"{m}\t{q}\t{v:.6f}" for m in metrics for q, v in table[m].items()]
        Path(args.idv).write_text("\n".join(lines + means) + "\n")
        print(f"per-query values written to {args.idv}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """``lrank compare``: paired tests of runs over queries, corrected across runs and metrics."""
    import pandas as pd

    from lrank import stats
    from lrank.io.trec import evaluate_run, read_trec_qrels, read_trec_run

    if len(args.runs) < 2:
        raise CommandError("compare needs at least two runs")
    metrics = [metric_name(m) for m in args.metric]
    qrels = read_trec_qrels(args.qrels)
    names = [Path(r).name for r in args.runs]
    if len(set(names)) != len(names):
        names = [str(r) for r in args.runs]
    tables = [evaluate_run(read_trec_run(r), qrels, metrics, gain=args.gain) for r in args.runs]
    common = sorted(set.intersection(*[set(t.index) for t in tables]))
    for r, t in zip(args.runs, tables):
        if len(t.index) != len(common):
            print(f"note: {r}: {len(t.index) - len(common)} queries that not every run has are left out",
                  file=sys.stderr)
    if len(common) < 2:
        raise CommandError(f"the runs share {len(common)} judged queries; a paired test needs two or more")
    if args.baseline is not None and args.baseline not in names:
        raise CommandError(f"--baseline {args.baseline!r} is not one of the runs {names}")
    scores = {m: pd.DataFrame({n: t.loc[common, m].to_numpy() for n, t in zip(names, tables)})
              for m in metrics}
    out = stats.compare(scores, baseline=args.baseline, test=args.test, correction=args.correction,
                        alpha=args.alpha, n_resamples=args.n_resamples, random_state=args.random_state)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(out.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"{args.test} test over {len(common)} queries, {args.correction} correction over {len(out)} "
          f"comparisons; significant: p_adjusted < {args.alpha}")
    return 0


def _gain_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gain", choices=("exp", "linear"), default="exp",
                   help="gain of a label in NDCG and DCG: exp is 2^rel-1 (RankLib, LightGBM, LETOR), linear "
                        "is rel (trec_eval's ndcg_cut, ir-measures' nDCG); default %(default)s")


def command_parser(sub: Any, name: str, summary: str,
                   examples: tuple[str, ...] = ()) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` to ``sub``: ``summary`` is its line in the top-level ``--help`` and the
    opening of its own, ``examples`` (command lines) are printed under it."""
    description = textwrap.fill(summary[0].upper() + summary[1:] + ".", width=79)
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples) if examples else None
    return sub.add_parser(name, help=summary, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def add_subcommands(sub: Any) -> None:
    """Register ``train``, ``rank``, ``eval`` and ``compare`` on an argparse subparsers object."""
    p = command_parser(sub, "train", "train a ranker on a LETOR file (RankLib's -train)", (
        "lrank train --ranker lambdamart --train train.txt --validate vali.txt \\",
        "            --test test.txt --n-estimators 500 --early-stopping-rounds 50 \\",
        "            --save lm.npz",
        "lrank train --ranker rankboost --train train.txt --n-estimators 300 \\",
        "            --metric MAP --save rb.npz",
        "lrank train --ranker lambdamart --train train.txt --param criterion=ole \\",
        "            --param ndcg_at=30"))
    p.add_argument("--ranker", required=True, choices=sorted(RANKERS), metavar="NAME",
                   help="the algorithm (RankLib's -ranker): one of %(choices)s")
    p.add_argument("--train", required=True, metavar="FILE", help="LETOR / SVMlight file with qid")
    p.add_argument("--validate", metavar="FILE", help="scored every round; early stopping watches it")
    p.add_argument("--test", metavar="FILE", help="scored once after training")
    p.add_argument("--metric", default="NDCG@10",
                   help="NDCG@k, MAP, ERR@k, P@k, ... for --validate and --test (default %(default)s)")
    p.add_argument("--n-estimators", dest="n_estimators", type=int,
                   help="rounds / trees (-tree, -round; default: the estimator's)")
    p.add_argument("--num-leaves", dest="num_leaves", type=int,
                   help="leaves per tree (-leaf; default: the estimator's)")
    p.add_argument("--learning-rate", dest="learning_rate", type=float,
                   help="shrinkage (-shrinkage; default: the estimator's)")
    p.add_argument("--min-child-samples", dest="min_child_samples", type=int,
                   help="fewest documents in a leaf (default: the estimator's)")
    p.add_argument("--early-stopping-rounds", dest="early_stopping_rounds", type=int,
                   help="stop when --validate's metric did not improve for this many rounds (-estop)")
    p.add_argument("--random-state", dest="random_state", type=int,
                   help="seed of the estimator's sampling (same seed, same model)")
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="any other parameter of the estimator (repeatable), e.g. criterion=ole, "
                        "lambdarank_norm=false, ndcg_at=none")
    p.add_argument("--save", metavar="FILE", help="save the model (.npz; load it with lrank.load_model)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_guarded(cmd_train, "train"))

    p = command_parser(sub, "rank", "score a LETOR file with a saved model into a TREC run file "
                                    "(RankLib's -rank)", (
        "lrank rank --model lm.npz --input test.txt --run lm.trec --qrels test.qrels \\",
        "           --tag lm",
        "lrank rank --model rb.npz --input test.txt --run rb.trec --tag rb"))
    p.add_argument("--model", required=True, metavar="FILE", help="a model saved by lrank train --save")
    p.add_argument("--input", required=True, metavar="FILE", help="LETOR / SVMlight file with qid to score")
    p.add_argument("--run", required=True, metavar="FILE", help="TREC run file to write")
    p.add_argument("--qrels", metavar="FILE", help="also write the input's labels as a TREC qrels file")
    p.add_argument("--tag", default="lrank", help="the run's name (last column; default %(default)s)")
    p.set_defaults(func=_guarded(cmd_rank, "rank"))

    p = command_parser(sub, "eval", "evaluate a run against qrels, or a model on a LETOR file "
                                    "(--idv: per query)", (
        "lrank eval --run lm.trec --qrels test.qrels --metric NDCG@10 --metric MAP",
        "lrank eval --model lm.npz --input test.txt --metric ERR@10 \\",
        "           --idv per_query.txt"))
    p.add_argument("--run", metavar="FILE", help="TREC run file to evaluate (with --qrels)")
    p.add_argument("--qrels", metavar="FILE", help="TREC qrels file with the run's labels")
    p.add_argument("--model", metavar="FILE", help="a saved model to evaluate on --input (instead of --run)")
    p.add_argument("--input", metavar="FILE", help="LETOR / SVMlight file with qid and labels (with --model)")
    p.add_argument("--metric", action="append", default=None,
                   help="NDCG@k, MAP, ERR@k, P@k, ...; repeatable (default NDCG@10)")
    _gain_option(p)
    p.add_argument("--idv", metavar="FILE", help="write per-query values (metric, query, value) to FILE")
    p.set_defaults(func=_guarded(cmd_eval, "eval"), metric_default="NDCG@10")

    p = command_parser(sub, "compare", "paired significance tests of TREC runs over queries", (
        "lrank compare lm.trec rb.trec --qrels test.qrels --test t \\",
        "              --correction holm --baseline rb.trec"))
    p.add_argument("runs", nargs="+", metavar="RUN", help="two or more TREC run files over the same queries")
    p.add_argument("--qrels", required=True, metavar="FILE", help="TREC qrels file with the runs' labels")
    p.add_argument("--metric", action="append", default=None,
                   help="NDCG@k, MAP, ERR@k, P@k, ...; repeatable (default NDCG@10)")
    _gain_option(p)
    p.add_argument("--test", choices=("fisher", "t"), default="fisher",
                   help="paired randomisation (Fisher) or paired t-test (default %(default)s)")
    p.add_argument("--correction", choices=("holm", "bonferroni", "bh", "none"), default="holm",
                   help="multiple-comparison correction over all comparisons (default %(default)s)")
    p.add_argument("--baseline", metavar="RUN",
                   help="compare every run with this one (its file name); default every pair")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="significance level of the adjusted p-values (default %(default)s)")
    p.add_argument("--n-resamples", dest="n_resamples", type=int, default=10000,
                   help="random sign flips of the Fisher test (default %(default)s)")
    p.add_argument("--random-state", dest="random_state", type=int, default=0,
                   help="seed of the sign flips (default %(default)s)")
    p.set_defaults(func=_guarded(cmd_compare, "compare"), metric_default="NDCG@10")


def _guarded(fn: Any, name: str) -> Any:
    """``fn`` with its input errors printed as one line (no traceback) and exit code 1."""

    def run(args: argparse.Namespace) -> int:
        from lrank.data.container import RankingDataError
        from lrank.io.trec import TrecFormatError

        if getattr(args, "metric", "") is None:
            args.metric = [args.metric_default]
        try:
            return fn(args)
        except (CommandError, RankingDataError, TrecFormatError, FileNotFoundError, ValueError,
                TypeError) as exc:
            print(f"lrank {name}: error: {exc}", file=sys.stderr)
            return 1

    return run
