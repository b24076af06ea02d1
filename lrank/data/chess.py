"""Chess move ordering (BoostingTree paper Sec. 4.6), regenerated with python-chess and Stockfish.

The paper's B84 and E97 sets (middle-game positions from games in those openings; every legal move;
71 features; labels 0-4 from each move's score gap to the best move, scored by CRAFTY at 1 s a move)
were never released.  This module rebuilds them the way Sec. 4.6 describes, with two substitutions,
both stated wherever the data are used:

* **Positions.** No game database is available offline, so games are *generated*: from the opening
  line (ECO B84, Classical Scheveningen: 1.e4 c5 2.Nf3 d6 3.d4 cxd4 4.Nxd4 Nf6 5.Nc3 e6 6.Be2 a6;
  ECO E97, Aronin-Taimanov: 1.d4 Nf6 2.c4 g6 3.Nc3 Bg7 4.e4 d6 5.Nf3 O-O 6.Be2 e5 7.O-O Nc6 8.d5
  Ne7), the engine plays both sides, choosing uniformly among its moves within ``tolerance_cp``
  centipawns of its best (a shallow multi-PV search), and one position per game is taken at a random
  ply ``plies`` after the line (a middle-game position; games that end earlier are discarded).
* **Scores.** Stockfish (Debian package ``stockfish``) in place of CRAFTY, every legal move scored in
  one multi-PV search of fixed ``depth`` (not 1 s of time; depth keeps the set reproducible).  The
  substitute evaluator ``"material"`` (a 1-ply material count, no engine) exists only so that the
  generator can be tested where Stockfish is absent; it is never used for the committed data.

Features (71, as Sec. 4.6): for each square a1..h8 the piece on it (0 empty, 1-6 white pawn, knight,
bishop, rook, queen, king, -1..-6 black), then the moving piece (1-6), from file, from rank, to
file, to rank (0-7), capture (0/1) and the captured piece (0-6).  Labels from the gap ``d`` (in
pawns) to the best move's score: ``d <= 0.1`` -> 4, ``d <= 0.2`` -> 3, ``d < 0.3`` -> 2,
``d < 0.5`` -> 1, else 0.  Mate scores count as +-100 pawns.

The committed quick-profile sets live in ``data/chess/{b84,e97}.npz`` (our own generated data);
``load_chess(name)`` reads them, ``generate(name, ...)`` makes new ones (needs python-chess and, for
``evaluator="stockfish"``, the engine).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

from lrank.data.container import RankingData

__all__ = ["OPENINGS", "FEATURE_NAMES", "label_from_gap", "move_features", "generate", "load_chess",
           "save_chess", "chess_path"]

OPENINGS: dict[str, list[str]] = {
    "b84": "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 e6 Be2 a6".split(),
    "e97": "d4 Nf6 c4 g6 Nc3 Bg7 e4 d6 Nf3 O-O Be2 e5 O-O Nc6 d5 Ne7".split(),
}

FEATURE_NAMES: list[str] = ([f"sq_{'abcdefgh'[s % 8]}{s // 8 + 1}" for s in range(64)]
                            + ["piece", "from_file", "from_rank", "to_file", "to_rank", "capture",
                               "captured"])

PIECE_VALUE_CP = {1: 100, 2: 320, 3: 330, 4: 500, 5: 900, 6: 0}


def label_from_gap(gap_pawns: np.ndarray) -> np.ndarray:
    """Sec. 4.6's relevance labels from the score gap to the best move, in pawns."""
    d = np.asarray(gap_pawns, dtype=np.float64)
    if (d < -1e-9).any():
        raise ValueError("a gap to the best move cannot be negative")
    return np.select([d <= 0.1 + 1e-9, d <= 0.2 + 1e-9, d < 0.3 - 1e-9, d < 0.5 - 1e-9],
                     [4, 3, 2, 1], 0).astype(np.int32)


def _chess():
    try:
        import chess  # noqa: F401
        import chess.engine  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("generating chess data needs python-chess: pip install chess") from e
    import chess

    return chess


def move_features(board: Any, move: Any) -> np.ndarray:
    """The 71 features of a position-move pair (module docstring)."""
    chess = _chess()
    out = np.zeros(71, dtype=np.int8)
    for sq, p in board.piece_map().items():
        out[sq] = p.piece_type if p.color == chess.WHITE else -p.piece_type
    piece = board.piece_at(move.from_square)
    out[64] = piece.piece_type if piece is not None else 0
    out[65], out[66] = chess.square_file(move.from_square), chess.square_rank(move.from_square)
    out[67], out[68] = chess.square_file(move.to_square), chess.square_rank(move.to_square)
    cap = board.is_capture(move)
    out[69] = int(cap)
    if cap:
        victim = board.piece_at(move.to_square)
        out[70] = victim.piece_type if victim is not None else 1  # en passant takes a pawn
    return out


def _material_scores(board: Any) -> dict:
    """Substitute evaluator (tests only): material balance after each move, from the mover's side."""
    chess = _chess()
    scores = {}
    for mv in board.legal_moves:
        b = board.copy(stack=False)
        b.push(mv)
        s = 0
        for p in b.piece_map().values():
            v = PIECE_VALUE_CP[p.piece_type]
            s += v if p.color == board.turn else -v
        if b.is_checkmate():
            s = 100000
        scores[mv] = s
    del chess
    return scores


def _engine_scores(engine: Any, board: Any, depth: int) -> dict:
    chess = _chess()
    n = board.legal_moves.count()
    infos = engine.analyse(board, chess.engine.Limit(depth=depth), multipv=n)
    scores = {}
    for info in infos:
        if "pv" not in info or not info["pv"]:
            continue
        scores[info["pv"][0]] = info["score"].pov(board.turn).score(mate_score=10000)
    for mv in board.legal_moves:  # a move the multi-PV search did not report: worst score
        scores.setdefault(mv, min(scores.values(), default=0) - 10000)
    return scores


def generate(name: str, n_positions: int = 60, plies: tuple[int, int] = (8, 24), depth: int = 8,
             play_depth: int = 5, tolerance_cp: int = 40, evaluator: str = "stockfish",
             engine_path: str | None = None, random_state: int = 0, verbose: bool = False) -> RankingData:
    """Generate a move-ordering set for opening ``name`` (``"b84"`` or ``"e97"``); see module docstring.

    Parameters
    ----------
    n_positions : int
        Positions (queries); the paper's B84 has 2,000 and E97 3,000.
    plies : (int, int)
        The position is taken after a uniformly random number of plies in this range past the line.
    depth : int
        Stockfish search depth for scoring every legal move (multi-PV).
    play_depth, tolerance_cp : int
        Self-play: depth of the engine's move choice and the centipawn window it draws from.
    evaluator : {"stockfish", "material"}
        ``"material"`` is a test-only substitute (no engine; the labels are not the paper's).
    engine_path : str or None
        Path of the engine binary (default: ``stockfish`` on PATH or ``/usr/games/stockfish``).
    random_state : int
    verbose : bool
        A tqdm progress bar.
    """
    chess = _chess()
    name = name.lower()
    if name not in OPENINGS:
        raise ValueError(f"unknown opening {name!r}; choose from {sorted(OPENINGS)}")
    if evaluator not in ("stockfish", "material"):
        raise ValueError(f"evaluator must be 'stockfish' or 'material', got {evaluator!r}")
    rng = np.random.default_rng(random_state)
    engine = None
    if evaluator == "stockfish":
        import chess.engine

        path = engine_path or shutil.which("stockfish") or "/usr/games/stockfish"
        if not Path(path).exists() and shutil.which(path) is None:
            raise FileNotFoundError(f"Stockfish not found at {path!r} (Debian: apt-get install stockfish)")
        engine = chess.engine.SimpleEngine.popen_uci(path)
        engine.configure({"Threads": 1, "Hash": 16})
    Xs, ys, qids = [], [], []
    fens = []
    bar = None
    if verbose:
        from tqdm.auto import tqdm

        bar = tqdm(total=int(n_positions), desc=f"chess {name}", leave=False)
    try:
        q = 0
        attempts = 0
        while q < n_positions and attempts < 20 * n_positions:
            attempts += 1
            board = chess.Board()
            for san in OPENINGS[name]:
                board.push_san(san)
            target = int(rng.integers(plies[0], plies[1] + 1))
            ok = True
            for _ in range(target):
                if board.is_game_over():
                    ok = False
                    break
                if engine is not None:
                    infos = engine.analyse(board, chess.engine.Limit(depth=play_depth), multipv=4)
                    cand = [(i["score"].pov(board.turn).score(mate_score=10000), i["pv"][0])
                            for i in infos if i.get("pv")]
                else:
                    sc = _material_scores(board)
                    cand = [(v, m) for m, v in sc.items()]
                best = max(v for v, _ in cand)
                near = sorted([m for v, m in cand if v >= best - tolerance_cp], key=lambda m: m.uci())
                board.push(near[int(rng.integers(len(near)))])
            if not ok or board.is_game_over():
                continue
            scores = _engine_scores(engine, board, depth) if engine is not None else _material_scores(board)
            moves = sorted(board.legal_moves, key=lambda m: m.uci())
            s = np.array([scores[m] for m in moves], dtype=np.float64)
            gap = (s.max() - s) / 100.0
            ys.append(label_from_gap(gap))
            Xs.append(np.stack([move_features(board, m) for m in moves]))
            qids.append(np.full(len(moves), q, dtype=np.int64))
            fens.append(board.fen())
            q += 1
            if bar is not None:
                bar.update(1)
    finally:
        if engine is not None:
            engine.quit()
        if bar is not None:
            bar.close()
    X = np.concatenate(Xs).astype(np.float32)
    data = RankingData.from_qid(X, np.concatenate(ys), np.concatenate(qids), feature_names=FEATURE_NAMES,
                                provenance={"generator": "lrank.data.chess.generate", "opening": name,
                                            "evaluator": evaluator, "depth": depth, "play_depth": play_depth,
                                            "tolerance_cp": tolerance_cp, "plies": list(plies),
                                            "random_state": random_state, "n_positions": n_positions})
    data.provenance["fens"] = fens
    return data


def chess_path(name: str) -> Path:
    """``data/chess/<name>.npz`` in the repository (the committed quick-profile sets)."""
    from lrank.paths import repo_dir

    return repo_dir() / "data" / "chess" / f"{name.lower()}.npz"


def save_chess(data: RankingData, path: str | Path) -> Path:
    """Write a generated set as compressed npz (int8 features, labels, query ids, provenance)."""
    import json

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    prov = dict(data.provenance)
    np.savez_compressed(path, X=data.X.astype(np.int8), y=data.y.astype(np.int8), qid=data.doc_qid(),
                        provenance=np.array(json.dumps(prov)))
    return path


def load_chess(name: str, path: str | Path | None = None) -> RankingData:
    """Load a committed (or saved) move-ordering set: ``load_chess("b84")``, ``load_chess("e97")``."""
    import json

    p = Path(path) if path is not None else chess_path(name)
    if not p.is_file():
        from lrank.paths import in_checkout

        where = "" if path is not None or in_checkout() else (
            " (the committed sets are in data/chess/ of a source checkout; an installed package has none: "
            "pass path= to a copy)")
        raise FileNotFoundError(f"{p} not found{where}; generate it with lrank.data.chess.generate({name!r}) "
                                "(needs the stockfish engine)")
    z = np.load(p, allow_pickle=False)
    prov = json.loads(str(z["provenance"]))
    prov["file"] = str(p)
    return RankingData.from_qid(z["X"].astype(np.float32), z["y"].astype(np.int32), z["qid"],
                                feature_names=FEATURE_NAMES, provenance=prov)
