"""lrank.data.chess: labels, features, the material-substitute generator path, the committed sets."""

import numpy as np
import pytest

from lrank.data.chess import FEATURE_NAMES, chess_path, label_from_gap, load_chess, save_chess


def test_labels_follow_sec_4_6():
    gaps = np.array([0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.45, 0.5, 3.0])
    assert label_from_gap(gaps).tolist() == [4, 4, 3, 3, 2, 1, 1, 0, 0]
    with pytest.raises(ValueError):
        label_from_gap([-1.0])


def test_feature_layout():
    chess = pytest.importorskip("chess")
    from lrank.data.chess import move_features

    b = chess.Board()
    f = move_features(b, chess.Move.from_uci("g1f3"))
    assert f.shape == (71,) and len(FEATURE_NAMES) == 71
    assert f[chess.E1] == 6 and f[chess.E8] == -6 and f[chess.A2] == 1
    assert f[64:].tolist() == [2, 6, 0, 5, 2, 0, 0]


def test_generator_material_substitute(tmp_path):
    pytest.importorskip("chess")
    from lrank.data.chess import generate

    a = generate("b84", n_positions=2, plies=(2, 3), evaluator="material", random_state=1)
    b = generate("b84", n_positions=2, plies=(2, 3), evaluator="material", random_state=1)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    assert a.n_features == 71 and a.n_queries == 2
    assert (a.y.max() == 4) and set(np.unique(a.y)) <= set(range(5))
    p = save_chess(a, tmp_path / "x.npz")
    c = load_chess("b84", p)
    assert np.array_equal(c.X, a.X) and np.array_equal(c.y, a.y)
    with pytest.raises(ValueError):
        generate("zzz", evaluator="material")


@pytest.mark.parametrize("name", ["b84", "e97"])
def test_committed_sets(name):
    if not chess_path(name).is_file():
        pytest.skip(f"{chess_path(name)} not generated")
    d = load_chess(name)
    assert d.n_features == 71 and d.n_queries >= 50
    assert d.provenance["evaluator"] == "stockfish"
    for a, b in zip(d.qptr[:-1], d.qptr[1:]):
        assert d.y[a:b].max() == 4                      # the best move of every position is labelled 4


def test_a_missing_set_says_where_the_committed_ones_are(tmp_path, monkeypatch):
    import pytest

    import lrank.paths
    from lrank.data.chess import load_chess

    with pytest.raises(FileNotFoundError, match=r"not found; generate it with .*stockfish"):
        load_chess("b84", path=tmp_path / "b84.npz")
    monkeypatch.setattr(lrank.paths, "REPO_DIR", tmp_path)  # an installed package: no checkout around it
    with pytest.raises(FileNotFoundError, match=r"data/chess/ of a source checkout; an installed"):
        load_chess("b84")
