"""Documents as text for the index: MarkItDown (the ``docs`` extra), else pdfminer for PDFs.

The ``docs`` extra pulls ``pdfminer.six`` for PDFs; where MarkItDown itself is absent
but pdfminer is installed, PDFs are still extracted (page text, no layout). The result
is cached in the read path's ``<meta>/cache/documents`` under the same key.
"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

from akgentic_workspace.rag.errors import SourceError

__all__ = ["docs_available", "extract_text"]


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def docs_available(ext: str) -> bool:
    """Whether a document of type ``ext`` can be extracted here."""
    if _has("markitdown"):
        return True
    return ext == ".pdf" and _has("pdfminer")


def extract_text(cache_dir: Path, key: str, ext: str, data: bytes) -> str:
    """The document's text; SourceError (permanent) when it has none or cannot be read."""
    if _has("markitdown"):
        from akgentic.tool.errors import RetriableError
        from akgentic_workspace.documents import extract_document

        try:
            text = extract_document(cache_dir, key, ext, data, enabled=True, force=False)
        except RetriableError as error:
            raise SourceError(str(error), True) from None
        if text.startswith("<!-- markitdown: no text extracted -->"):
            raise SourceError("no text could be extracted", True)
        return text
    if ext == ".pdf" and _has("pdfminer"):
        from pdfminer.high_level import extract_text as pdf_text

        try:
            text = str(pdf_text(io.BytesIO(data)))
        except Exception as error:  # pdfminer raises many types for broken files
            raise SourceError(
                f"cannot extract text: {type(error).__name__}: {error}", True
            ) from None
        if not text.strip():
            raise SourceError("no text could be extracted", True)
        return text.replace("\x0c", "\n")
    raise SourceError('documents need the docs extra: pip install "akgentic-workspace[docs]"', True)
