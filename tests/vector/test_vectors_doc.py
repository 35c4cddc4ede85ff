"""docs/vectors.md: every Python block runs (their asserts are the documented results)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "vectors.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AKGENTIC_QDRANT_URL", "AKGENTIC_WEAVIATE_URL", "AKGENTIC_QDRANT_EDGE_PATH"):
        monkeypatch.delenv(name, raising=False)


def test_the_doc_has_its_examples() -> None:
    assert len(BLOCKS) == 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_python_block_runs(index: int) -> None:
    pytest.importorskip("akgentic_embed_local", reason="the examples embed with hashing")
    namespace: dict[str, object] = {"__name__": "vectors_doc"}
    exec(compile(BLOCKS[index], f"{DOC}:block{index}", "exec", dont_inherit=True), namespace)
    hook = namespace.get("akgentic_vector_backends")
    if callable(hook):
        [spec] = hook()
        assert spec.name == "mine" and spec.is_configured() is False
