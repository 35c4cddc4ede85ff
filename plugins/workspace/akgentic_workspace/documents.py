"""Binary documents (the ``docs`` extra, MarkItDown) and images (the ``vision`` extra, Pillow).

Both caches live in the tree's ``<meta>/cache`` sibling, keyed by the source's content,
so they are never stale and nothing is written into the tree. A missing extra gives an
install hint (documents) or raw bytes with one warning per process (images).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from akgentic.plugin_api import RetriableError

__all__ = [
    "DOCS_HINT",
    "IMAGE_TYPES",
    "MAX_IMAGE_BYTES",
    "extract_document",
    "resized_image",
]

log = logging.getLogger("akgentic_workspace.documents")

DOCS_HINT = 'pip install "akgentic-workspace[docs]"'
VISION_HINT = 'pip install "akgentic-workspace[vision]"'
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
}
MAX_IMAGE_BYTES = 20 * 1024 * 1024
EXTRACTOR_VERSION = "markitdown-2"
_CACHE_RECORDS = 32
_warned_vision = False
#: The MarkItDown converter that owns each document extension. Only that one may
#: answer: MarkItDown's own fallback passes a file its format's converter rejects to the
#: plain-text converter, which would show a corrupt document's raw bytes as its text.
_OWNERS = {
    ".pdf": "PdfConverter",
    ".docx": "DocxConverter",
    ".xlsx": "XlsxConverter",
    ".xls": "XlsConverter",
    ".pptx": "PptxConverter",
    ".msg": "OutlookMsgConverter",
    ".epub": "EpubConverter",
}
_IMAGE_OWNER = "ImageConverter"
_converters: dict[str, Any] = {}


def _replace_into(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, staging = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(staging, path)


def extract_document(
    cache_dir: Path, key: str, ext: str, data: bytes, *, enabled: bool, force: bool
) -> str:
    """The Markdown of a binary document, from the cache when the source is unchanged."""
    if not enabled:
        raise RetriableError(f"Reading {ext} files needs the docs extra: {DOCS_HINT}")
    try:
        from markitdown import MarkItDown, StreamInfo  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise RetriableError(f"Reading {ext} files needs the docs extra: {DOCS_HINT}") from None
    digest = hashlib.sha256(f"{key}\x00{EXTRACTOR_VERSION}\x00".encode() + data).hexdigest()
    record = cache_dir / "documents" / f"{digest}.json"
    if record.is_file() and not force:
        try:
            return str(json.loads(record.read_text(encoding="utf-8"))["markdown"])
        except (OSError, ValueError, KeyError):
            pass
    try:
        result = _owner(MarkItDown, ext).convert_stream(
            io.BytesIO(data), stream_info=StreamInfo(extension=ext)
        )
        text = result.text_content or ""
    except Exception as error:  # converters raise their own types for unreadable inputs
        raise RetriableError(_unreadable(key, ext, error)) from None
    if len("".join(text.split())) < 50 and not text.strip():
        text = "<!-- markitdown: no text extracted -->"
    _replace_into(record, json.dumps({"key": key, "markdown": text}).encode())
    _evict(record.parent)
    return text


def _owner(markitdown: Any, ext: str) -> Any:
    """A MarkItDown that holds only the converter of ``ext`` (built once per extension)."""
    converter = _converters.get(ext)
    if converter is None:
        from markitdown import converters  # type: ignore[import-not-found,unused-ignore]

        owner = getattr(converters, _OWNERS.get(ext, _IMAGE_OWNER))
        converter = markitdown(enable_builtins=False)
        converter.register_converter(owner())
        _converters[ext] = converter
    return converter


def _unreadable(key: str, ext: str, error: Exception) -> str:
    if type(error).__name__ == "UnsupportedFormatException":  # no converter took the file
        hint = "show it with workspace_view" if ext in IMAGE_TYPES else "inspect it otherwise"
        return (
            f"Cannot extract text from {key}: no installed reader extracts text from {ext} "
            f"files; {hint}."
        )
    # MarkItDown's messages repeat a header and may carry a traceback: keep the cause.
    lines = [line.strip(" -") for line in str(error).splitlines() if line.strip(" -")]
    cause = next((line for line in lines if "threw" in line), lines[-1] if lines else "")
    cause = cause[:300] or type(error).__name__
    return (
        f"Cannot extract text from {key}: it is not a readable {ext} document ({cause}). "
        "Nothing from it was shown. If the file is damaged, ask for a good copy; to see "
        "its raw bytes use workspace_grep or workspace_exec."
    )


def _evict(directory: Path) -> None:
    records = sorted(directory.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for stale in records[:-_CACHE_RECORDS]:
        stale.unlink(missing_ok=True)


def resized_image(cache_dir: Path, ext: str, data: bytes, max_dimension: int) -> bytes:
    """The image with its longest side at most ``max_dimension`` (cached by content)."""
    global _warned_vision
    if max_dimension == 0:
        return data
    try:
        from PIL import Image  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        if not _warned_vision:
            _warned_vision = True
            log.warning("workspace_view sends images unresized: %s", VISION_HINT)
        return data
    digest = hashlib.sha256(data).hexdigest()
    cached = cache_dir / "views" / f"{digest}-{max_dimension}{ext}"
    if cached.is_file():
        return cached.read_bytes()
    try:
        with Image.open(io.BytesIO(data)) as image:
            if max(image.size) <= max_dimension:
                return data
            fmt = image.format or "PNG"
            scale = max_dimension / max(image.size)
            size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
            resized = image.resize(size, Image.Resampling.LANCZOS)
            out = io.BytesIO()
            resized.save(out, format=fmt)
    except (OSError, ValueError) as error:  # Pillow's decode errors are OSError subclasses
        raise RetriableError(f"The image cannot be decoded ({error})") from None
    result = out.getvalue()
    _replace_into(cached, result)
    return result
