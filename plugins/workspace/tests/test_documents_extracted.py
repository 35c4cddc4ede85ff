"""Real document extraction through the docs extra (MarkItDown): a PDF and a DOCX made here.

Both files are built byte by byte by the test (a one-page PDF with a Helvetica text
object and a correct cross-reference table; a DOCX as the zip of its three XML parts),
so nothing but the extra itself is needed. Skipped with the reason when the extra is
not installed (``make install-heavy`` installs it).

The missing-extra hint is checked by hiding the installed MarkItDown through
``sys.modules`` (it cannot be uninstalled mid-suite): that verifies the message and
that nothing is cached, not the import behaviour of a machine that never had it.
"""

from __future__ import annotations

import importlib.util
import io
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from akgentic.tool.errors import RetriableError

Make = Callable[..., Any]
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("markitdown") is None,
    reason='the docs extra is not installed: pip install "akgentic-workspace[docs]"',
)


def make_pdf(text: str) -> bytes:
    """A valid one-page PDF showing ``text`` (ASCII, no parentheses) in Helvetica."""
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def make_docx(heading: str, paragraph: str) -> bytes:
    """A minimal valid DOCX: a Heading 1 and one paragraph."""
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    document = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f'<w:document xmlns:w="{w}"><w:body>'
        f'<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>{heading}</w:t></w:r></w:p>'
        f"<w:p><w:r><w:t>{paragraph}</w:t></w:r></w:p>"
        f"</w:body></w:document>"
    )
    types = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" '
        'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
        "</Types>"
    )
    rels = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", types)
        archive.writestr("_rels/.rels", rels)
        archive.writestr("word/document.xml", document)
    return out.getvalue()


def _tree(agent: Any) -> Path:
    return Path(agent.card._session.location.tree)


def test_a_pdf_reads_as_its_text_paginated_like_a_file(make_agent: Make) -> None:
    a = make_agent()
    (_tree(a) / "report.pdf").write_bytes(make_pdf("Quarterly revenue grew by 12 percent"))
    shown = a.read("report.pdf")
    assert "Quarterly revenue grew by 12 percent" in shown
    assert shown.lstrip().startswith("1")  # numbered like any text read


def test_a_docx_reads_as_markdown_with_its_heading(make_agent: Make) -> None:
    a = make_agent()
    (_tree(a) / "brief.docx").write_bytes(make_docx("Launch plan", "Ship the beta on Friday."))
    shown = a.read("brief.docx")
    assert "# Launch plan" in shown
    assert "Ship the beta on Friday." in shown


def test_extraction_is_cached_by_content_and_a_changed_source_misses(make_agent: Make) -> None:
    a = make_agent()
    tree = _tree(a)
    (tree / "r.pdf").write_bytes(make_pdf("first version of the text"))
    assert "first version" in a.read("r.pdf")
    records = Path(a.card._session.meta.path) / "cache" / "documents"
    assert len(list(records.glob("*.json"))) == 1
    (tree / "r.pdf").write_bytes(make_pdf("second version of the text"))
    shown = a.read("r.pdf")
    assert "second version" in shown and "first version" not in shown
    assert len(list(records.glob("*.json"))) == 2
    assert sorted(p.name for p in tree.iterdir()) == ["r.pdf"]  # nothing beside the source


def test_a_document_read_records_no_view_so_it_is_replaced_by_delete_then_write(
    make_agent: Make,
) -> None:
    a = make_agent()
    (_tree(a) / "r.docx").write_bytes(make_docx("Title", "Body text here."))
    a.read("r.docx")
    with pytest.raises(RetriableError, match="read it before overwriting"):
        a.write("r.docx", "plain text now")
    assert a.delete("r.docx") == "Deleted: r.docx"
    assert a.write("r.docx", "plain text now") == "Written: r.docx"


def test_a_pdf_without_text_says_so_instead_of_returning_nothing(make_agent: Make) -> None:
    a = make_agent()
    (_tree(a) / "scan.pdf").write_bytes(make_pdf(""))
    assert "<!-- markitdown: no text extracted -->" in a.read("scan.pdf")


def test_without_markitdown_the_hint_names_the_extra(
    make_agent: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "markitdown", None)  # import now fails as if absent
    a = make_agent()
    a.write("notes.txt", "plain\n")
    (_tree(a) / "r.pdf").write_bytes(make_pdf("never extracted"))
    with pytest.raises(RetriableError, match=r"akgentic-workspace\[docs\]"):
        a.read("r.pdf")
    assert "plain" in a.read("notes.txt")


_PROSE = b"Confidential draft: the merger closes on Friday and nobody may know yet. " * 4


@pytest.mark.parametrize(
    "name, data",
    [
        # A PDF header over plain prose: the format's converter rejects it, and a
        # fallback to plain text would have shown the prose as if extracted.
        ("prose.pdf", b"%PDF-1.7\n" + _PROSE),
        ("cut.pdf", make_pdf("Quarterly revenue grew by twelve percent overall")[:300]),
        ("noise.pdf", b"%PDF-1.4\n" + bytes(range(256)) * 40),
        ("prose.docx", _PROSE),
    ],
)
def test_a_corrupt_document_is_refused_not_shown_as_raw_text(
    make_agent: Make, name: str, data: bytes
) -> None:
    a = make_agent()
    (_tree(a) / name).write_bytes(data)
    with pytest.raises(RetriableError, match="not a readable") as refused:
        a.read(name)
    assert "Confidential draft" not in str(refused.value)
    cache = Path(a.card._session.meta.path) / "cache" / "documents"
    assert list(cache.glob("*.json")) == []  # a refusal is never cached as a result
    # The refusal is for that file only: a sound PDF beside it still reads.
    (_tree(a) / "sound.pdf").write_bytes(make_pdf("Sound text survives next to the broken one"))
    assert "Sound text survives" in a.read("sound.pdf")
    assert len(list(cache.glob("*.json"))) == 1


def test_an_image_type_no_converter_reads_points_to_workspace_view(make_agent: Make) -> None:
    a = make_agent()
    gif = (  # a valid 1x1 GIF
        b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00"
        b"\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
    )
    (_tree(a) / "dot.gif").write_bytes(gif)
    with pytest.raises(RetriableError, match=r"no installed reader .* show it with workspace_view"):
        a.read("dot.gif")
