"""``palimpsest sessions search QUERY``: full-text search over every stored message.

Registered onto :data:`palimpsest.cli.sessions.sessions_app` when imported (``cli/app.py``
imports it). A thin layer over :func:`palimpsest.storage.fts_query.build_search`: the
query is sanitized and routed exactly as the library does it, and ``--sql`` prints the
statement that would run.

Snippets are not FTS5's: ``snippet()`` cuts and marks the raw text inside SQLite, and a
``>>>match<<<`` marker inside ``password=...`` hides the secret from redaction. Each hit's
snippet is rebuilt from its stored text with
:func:`palimpsest.storage.search_text.hit_snippets`: redacted, then cut, then marked.
"""

from __future__ import annotations

import enum
import json
import sys
from typing import Annotated, Any

import apsw
import typer
from rich.table import Table
from rich.text import Text

from ..messages import VALID_ROLES
from ..safety.redact import redact
from ..storage.fts_query import SearchPlan, build_search, clean_query, run_search
from ..storage.schema import fts_support
from ..storage.search_text import Snippet, hit_snippets
from .common import err_console, fail, handle_errors
from .sessions import DbOption, JsonOption, console, open_store, sessions_app

__all__ = ["search_command"]


def _highlight(snippet: Snippet) -> Text:
    """The snippet with its matches in bold (from its spans, not from marker text)."""
    text = Text(snippet.text)
    for start, end in snippet.spans:
        text.stylize("bold yellow", start, end)
    return text


def _print_sql(plan: SearchPlan) -> None:
    sys.stdout.write(plan.sql + ";\n")
    sys.stdout.write(f"-- params: {json.dumps(list(plan.params), ensure_ascii=False)}\n")
    sys.stdout.write(f"-- route: {plan.route}\n")
    if plan.match:
        sys.stdout.write(f"-- match: {plan.match}\n")
    if plan.mode:
        mode = "auto (all, then any when all finds too few)" if plan.widen else plan.mode
        sys.stdout.write(f"-- mode: {mode}\n")


def _when(epoch: Any) -> str:
    from datetime import datetime

    try:
        return datetime.fromtimestamp(float(epoch)).strftime("%Y-%m-%d")
    except (TypeError, ValueError, OverflowError, OSError):
        return ""


class MatchMode(enum.StrEnum):
    """How the words of a query combine (docs/search.md)."""

    auto = "auto"
    all = "all"
    any = "any"


@sessions_app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help='Words, "a phrase", AND/OR/NOT, prefix*.')],
    role: Annotated[
        list[str] | None,
        typer.Option(
            "--role",
            "-r",
            metavar="ROLE",
            help=f"Only messages with this role: {', '.join(VALID_ROLES)} (repeat, or a,b).",
        ),
    ] = None,
    source: Annotated[
        str | None, typer.Option(help="Only sessions from this platform (cli, cron, ...).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Hits to show.")] = 20,
    offset: Annotated[int, typer.Option(min=0, help="Hits to skip.")] = 0,
    match: Annotated[
        MatchMode,
        typer.Option(
            "--match",
            help="all: every word; any: BM25 over any word; auto: all for a short keyword "
            "query when that finds enough, else any.",
        ),
    ] = MatchMode.auto,
    match_any: Annotated[bool, typer.Option("--any", help="Same as --match any.")] = False,
    as_json: JsonOption = False,
    sql: Annotated[
        bool, typer.Option("--sql", help="Print the SQL that would run, and exit.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Search every stored message (BM25 ranking; CJK text through the trigram index)."""
    if not clean_query(query):
        fail("the query is empty; give some words to search for")
    roles = [r.strip() for item in role or [] for r in item.split(",") if r.strip()]
    unknown = [r for r in roles if r not in VALID_ROLES]
    if unknown:
        fail(f"unknown --role {unknown[0]!r}; roles are: {', '.join(VALID_ROLES)}")
    options: dict[str, Any] = {
        "role_filter": roles or None,
        "source": source,
        "limit": limit,
        "offset": offset,
        "match": "any" if match_any else match.value,
    }
    if sql:
        has_fts, has_trigram = fts_support(apsw.Connection(":memory:"))
        _print_sql(build_search(query, has_fts=has_fts, has_trigram=has_trigram, **options))
        return
    with handle_errors(), open_store(db) as store:
        plan = build_search(
            query,
            has_fts=store.has_fts5,
            has_trigram=store.has_trigram,
            snippets=False,  # made below from redacted text
            **options,
        )
        with store.connection_for_reads() as con:
            hits = run_search(con, plan)
            snippets = hit_snippets(con, hits, query)
    for hit, snippet in zip(hits, snippets, strict=True):
        hit["snippet"] = snippet.marked()
        if hit.get("session_title"):
            hit["session_title"] = redact(str(hit["session_title"]))
    if as_json:
        sys.stdout.write(json.dumps(hits, indent=2, ensure_ascii=False, default=str) + "\n")
        return
    if not hits:
        err_console.print(f"No messages match {query!r}.")
        return
    table = Table("session", "role", "when")
    table.add_column("snippet", overflow="fold", ratio=1)
    for hit, snippet in zip(hits, snippets, strict=True):
        session = Text(str(hit["session_id"]), no_wrap=True)
        if hit.get("session_title"):
            session.append("\n" + str(hit["session_title"])[:22], style="dim")
        table.add_row(session, str(hit["role"]), _when(hit["timestamp"]), _highlight(snippet))
    console.print(table)
    err_console.print(f"{len(hits)} hits ({plan.route})")
