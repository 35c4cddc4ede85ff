"""Documents without the docs extra, images through Pillow (when installed), media refs."""

from __future__ import annotations

import base64
import importlib.util
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from akgentic.tool.errors import RetriableError

Make = Callable[..., Any]
HAS_PIL = importlib.util.find_spec("PIL") is not None
HAS_MARKITDOWN = importlib.util.find_spec("markitdown") is not None
ONE_PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest.mark.skipif(HAS_MARKITDOWN, reason="markitdown is installed: the hint path cannot show")
def test_reading_a_pdf_without_the_docs_extra_names_the_extra(make_agent: Make) -> None:
    a = make_agent()
    a.write("notes.txt", "plain\n")
    tree = Path(a.card._session.location.tree)
    (tree / "r.pdf").write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(RetriableError, match=r"akgentic-workspace\[docs\]"):
        a.read("r.pdf")
    assert "plain" in a.read("notes.txt")


def test_a_document_reader_switched_off_refuses_documents(make_agent: Make) -> None:
    from akgentic_workspace import WorkspaceRead

    a = make_agent(workspace_read=WorkspaceRead(document_reader=False))
    tree = Path(a.card._session.location.tree)
    (tree / "r.docx").write_bytes(b"PK")
    with pytest.raises(RetriableError, match="needs the docs extra"):
        a.read("r.docx")


def test_viewing_a_non_image_points_to_workspace_read(make_agent: Make) -> None:
    a = make_agent()
    a.write("a.txt", "x")
    with pytest.raises(RetriableError, match=r"Unsupported image format '\.txt'"):
        a.view("a.txt")


@pytest.mark.skipif(not HAS_PIL, reason="Pillow (the vision extra) is not installed")
def test_a_large_image_is_resized_from_a_content_keyed_cache(make_agent: Make) -> None:
    from PIL import Image

    a = make_agent()
    tree = Path(a.card._session.location.tree)

    def png(color: str) -> bytes:
        out = io.BytesIO()
        Image.new("RGB", (4000, 3000), color).save(out, format="PNG")
        return out.getvalue()

    (tree / "big.png").write_bytes(png("red"))
    before = sorted(p.name for p in tree.iterdir())
    first = a.view("big.png")
    assert first.media_type == "image/png"
    with Image.open(io.BytesIO(first.data)) as image:
        assert image.size == (1568, 1176)
        assert image.getpixel((0, 0)) == (255, 0, 0)
    assert sorted(p.name for p in tree.iterdir()) == before
    (tree / "big.png").write_bytes(png("blue"))
    with Image.open(io.BytesIO(a.view("big.png").data)) as image:
        assert image.getpixel((0, 0)) == (0, 0, 255)


def test_media_refs_expand_to_images_or_say_why_not(make_agent: Make) -> None:
    a = make_agent()
    tree = Path(a.card._session.location.tree)
    (tree / "pic.png").write_bytes(base64.b64decode(ONE_PIXEL_PNG))
    (tree / "bad.png").write_bytes(b"not an image")
    if HAS_PIL:
        with pytest.raises(RetriableError, match="cannot be decoded"):
            a.view("bad.png")
    expand = a.commands["expand_media_refs"]
    pieces = expand("look at !!pic.png and !!nothing* and !!../x")
    assert pieces[0] == "look at "
    assert getattr(pieces[1], "media_type", None) == "image/png"
    assert "[Error: no image found in the workspace]" in pieces[3]
    assert "[Error: Pattern '../x' escapes workspace root]" in pieces[-1]
