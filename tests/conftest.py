"""Shared test helpers: where fixtures and the optional large corpus are."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SHARED_CORPUS = Path(os.environ.get("IWH_SHARED_CORPUS", ROOT.parent / "shared" / "corpus"))


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden CSVs instead of comparing")


def corpus_path(*parts: str) -> Path:
    """A path inside ../shared/corpus, or skip the test when the corpus is absent."""
    p = SHARED_CORPUS.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"needs {p} (the shared corpus); absent on this machine")
    return p


def unpacked_corpus(archive: str, tmp_root: Path) -> Path:
    """Unpack one of the corpus archives once per session into tmp_root; skip when absent."""
    src = corpus_path(archive)
    dest = tmp_root / archive.replace(".tar.xz", "")
    if not dest.exists():
        dest.mkdir(parents=True)
        with tarfile.open(src) as tf:
            tf.extractall(dest, filter="data")
    return dest


@pytest.fixture(scope="session")
def corpus_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("corpus")


@pytest.fixture
def db(tmp_path) -> str:
    return str(tmp_path / "wh.duckdb")
