"""docs/configuration.md carries the reference generated from the settings models."""

from __future__ import annotations

from pathlib import Path

from palimpsest.config import Settings
from palimpsest.config_reference import BEGIN, END, render_reference

DOC = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


def test_configuration_doc_is_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    assert block.strip() == render_reference().strip(), (
        "docs/configuration.md is stale: run "
        "python -m palimpsest.config_reference --write docs/configuration.md"
    )


def test_every_section_is_documented() -> None:
    reference = render_reference()
    for name in Settings.model_fields:
        assert f"### `{name}" in reference
