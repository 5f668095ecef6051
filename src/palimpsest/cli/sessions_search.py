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
from ..storage.fts_layout import fts_support
from ..storage.fts_query import SearchPlan, build_search, clean_query, run_search
from ..storage.search_text import Snippet, hit_snippets
from ..storage.session_admin import handle_of
from ..storage.session_secrets import session_secrets
from .common import err_console, fail, handle_errors
from .sessions import DbOption, JsonOption, console, open_store, sessions_app
from .terminal_text import for_terminal, json_for_terminal

__all__ = ["search_command"]


def _highlight(snippet: Snippet) -> Text:
    """The snippet with its matches in bold (from its spans, not from marker text), every
    piece escaped for the terminal (escaping changes lengths, so piece by piece)."""
    text = Text()
    done = 0
    for start, end in sorted(snippet.spans):
        if start < done:
            continue
        text.append(for_terminal(snippet.text[done:start]))
        text.append(for_terminal(snippet.text[start:end]), style="bold yellow")
        done = end
    text.append(for_terminal(snippet.text[done:]))
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


def _message_number(con: apsw.Connection, hit: dict[str, Any]) -> int | None:
    """The hit's index in its session, as ``sessions show`` numbers messages (from 0)."""
    if hit.get("id") is None:
        return None
    row = con.execute(
        "SELECT count(*) FROM messages WHERE session_id = ? AND id <= ?",
        (hit["session_id"], hit["id"]),
    ).fetchone()
    return int(row[0]) - 1 if row else None


def _distinct(
    hits: list[dict[str, Any]], snippets: list[Snippet]
) -> list[tuple[dict[str, Any], Snippet, list[dict[str, Any]]]]:
    """One row per distinct (role, snippet text): a continuation carries its parent's tail
    and an agent may print the same output twice, and identical rows say nothing twice.
    Each row keeps the other hits with that text, to be named on it."""
    rows: list[tuple[dict[str, Any], Snippet, list[dict[str, Any]]]] = []
    seen: dict[tuple[str, str], int] = {}
    for hit, snippet in zip(hits, snippets, strict=True):
        key = (str(hit["role"]), str(hit["snippet"]))
        if key in seen:
            rows[seen[key]][2].append(hit)
            continue
        seen[key] = len(rows)
        rows.append((hit, snippet, []))
    return rows


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
            # collected (and cached) for the snippets: the titles use the same values
            secrets = session_secrets(con, (str(h["session_id"]) for h in hits))
            for hit in hits:
                hit["message_number"] = _message_number(con, hit)
    for hit, snippet in zip(hits, snippets, strict=True):
        hit["snippet"] = snippet.marked()
        if hit.get("session_title"):
            known = secrets.get(str(hit["session_id"]), frozenset())
            hit["session_title"] = redact(str(hit["session_title"]), known)
    if as_json:
        text = json.dumps(hits, indent=2, ensure_ascii=False, default=str)
        sys.stdout.write(json_for_terminal(text) + "\n")
        return
    if not hits:
        err_console.print(f"No messages match {for_terminal(query, keep_lines=False)!r}.")
        return
    table = Table("session", "#", "role", "when")
    table.add_column("snippet", overflow="fold", ratio=1)
    for hit, snippet, same in _distinct(hits, snippets):
        session = Text(for_terminal(hit["session_id"], keep_lines=False), no_wrap=True)
        if hit.get("session_title"):
            title = for_terminal(str(hit["session_title"])[:22], keep_lines=False)
            session.append("\n" + title, style="dim")
        shown = _highlight(snippet)
        if same:
            where = ", ".join(
                f"{handle_of(str(h['session_id']))} #{h['message_number']}" for h in same[:5]
            )
            more = f" and {len(same) - 5} more" if len(same) > 5 else ""
            shown.append(
                f"\n(same text also in {for_terminal(where, keep_lines=False)}{more})", style="dim"
            )
        number = "?" if hit["message_number"] is None else str(hit["message_number"])
        shown_role = for_terminal(hit["role"], keep_lines=False)
        table.add_row(session, number, shown_role, _when(hit["timestamp"]), shown)
    console.print(table)
    err_console.print(f"{len(hits)} hits ({plan.route})")
