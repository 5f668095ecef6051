"""The configuration reference, rendered from the settings models themselves.

``docs/configuration.md`` embeds this output between markers and a test fails when the two
differ, so the documented keys, types and defaults cannot drift from the code. Regenerate
with ``python -m palimpsest.config_reference --write docs/configuration.md``.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from .config import Settings
from .files import replace_file

__all__ = ["BEGIN", "END", "render_reference", "update_file"]

BEGIN = "<!-- BEGIN GENERATED REFERENCE -->"
END = "<!-- END GENERATED REFERENCE -->"


def _type_name(annotation: Any) -> str:
    """``int | None``, ``"seed" | "refined"``, ... with pipes escaped for a Markdown table."""
    if isinstance(annotation, type) and not getattr(annotation, "__args__", None):
        text = annotation.__name__
    else:
        text = str(annotation).replace("typing.", "").replace("NoneType", "None")
        text = re.sub(
            r"Literal\[(.*?)\]", lambda m: m.group(1).replace("'", '"').replace(", ", " | "), text
        )
    return text.replace("|", "\\|")


def _md(text: str) -> str:
    return text.replace("``", "`").replace("\n", " ").replace("|", "\\|")


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        return "{}" if "dict" in str(field.annotation) else ""
    return json.dumps(field.default)


def _section(model: type[BaseModel], prefix: str, out: list[str]) -> None:
    nested: list[tuple[str, type[BaseModel]]] = []
    rows: list[str] = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            nested.append((f"{prefix}.{name}" if prefix else name, annotation))
            continue
        description = _md(field.description or "")
        rows.append(
            f"| `{name}` | {_type_name(annotation)} | `{_default(field)}` | {description} |"
        )
    if rows:
        doc = _md((model.__doc__ or "").strip().split("\n")[0])
        out.append(f"### `{prefix}`\n")
        if doc:
            out.append(doc + "\n")
        out.append("| key | type | default | meaning |\n|---|---|---|---|")
        out.extend(rows)
        out.append("")
    for name, sub in nested:
        _section(sub, name, out)


def render_reference() -> str:
    """Markdown tables of every settings section, in declaration order."""
    out: list[str] = []
    for name, field in Settings.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            _section(annotation, name, out)
    return "\n".join(out).rstrip() + "\n"


def update_file(path: Path) -> bool:
    """Replace the generated block in ``path``; returns whether anything changed."""
    text = path.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    new = text[:start] + "\n" + render_reference() + text[end:]
    if new != text:
        replace_file(path, new, temp_prefix=f".{path.name}.")  # atomic; a symlink written through
    return new != text


def main() -> None:
    parser = argparse.ArgumentParser(description="Print or write the configuration reference.")
    parser.add_argument("--write", type=Path, help="update the generated block in this file")
    args = parser.parse_args()
    if args.write:
        changed = update_file(args.write)
        print(f"{args.write}: {'updated' if changed else 'already up to date'}")
    else:
        print(render_reference(), end="")


if __name__ == "__main__":
    main()
