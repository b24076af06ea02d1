"""Files other tools read: TREC run and qrels files (`lrank.io.trec`) and LightGBM's text model
(`lrank.io.lightgbm`).

TREC files are the common currency of IR evaluation (trec_eval, ir-measures, ranx, PyTerrier): a run
line is ``qid Q0 docid rank score tag``, a qrels line ``qid 0 docid relevance``.
"""

from __future__ import annotations

from lrank._lazy import lazy_getattr

_WHERE = {
    "write_trec_run": "trec",
    "write_trec_qrels": "trec",
    "read_trec_run": "trec",
    "read_trec_qrels": "trec",
    "document_ids": "trec",
    "evaluate_run": "trec",
    "TrecFormatError": "trec",
    "to_lightgbm": "lightgbm",
    "tree_ensemble": "trees",
}

__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(_WHERE)
