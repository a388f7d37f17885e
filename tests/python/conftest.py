"""pytest of the Python package without a GPU: the package from python/ of this checkout, the
library from SMLA_LIBRARY (the CTest sets both), and no SMLA_* switch of the caller's shell."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    for name in ("SMLA_CACHE", "SMLA_SYSTEM_CACHE", "SMLA_JIT", "SMLA_BATCH_VARIANT",
                 "SMLA_TUNING", "SMLA_TILE", "SMLA_LOG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # where a default cache file would go
