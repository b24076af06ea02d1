"""Shared test set-up: quiet, single-threaded, deterministic."""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("LRANK_PROFILE", "quick")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
