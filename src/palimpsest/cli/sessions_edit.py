"""``palimpsest sessions delete`` and ``sessions compress``: the two commands that change
stored conversations.

``delete`` is lineage-aware: a session linked to others (a compression parent, a
continuation, a sub-agent) is refused alone, with the linked ids named, because deleting
it would cut the chain the others are read through; ``--chain`` deletes the whole family
in one transaction. It lists what goes and asks first unless ``--yes``.

``compress`` compacts a stored session the way an agent does mid-conversation: the
configured compressor (the offline extractive summarizer unless ``--model`` or a
configured summary model) runs over its messages, and the result becomes a linked
continuation (:meth:`~palimpsest.storage.sessions.SessionStore.start_continuation`), so
the originals stay searchable and ``sessions tip`` / ``chat --session`` resume the
compact one. It prints the new id on stdout and the token figures on stderr.

Both register onto :data:`palimpsest.cli.sessions.sessions_app` through the import at the
end of :mod:`.sessions`.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.markup import escape

from ..storage.contract import Store
from ..storage.session_admin import Family, delete_sessions, family
from .common import (
    CONTEXT_LENGTH_HELP,
    RUN_ERROR_EXIT,
    context_length_of,
    err_console,
    fail,
    handle_errors,
)
from .sessions import DbOption, IdArgument, JsonOption, open_store, resolve_id, sessions_app
from .terminal_text import for_terminal

__all__ = ["compress_session_command", "delete_command"]


def _describe(store: Store, sid: str) -> str:
    row = store.require_session(sid)
    title = f" {row['title']!r}" if row.get("title") else ""
    return f"{sid}{title} ({store.message_count(sid):,} messages)"


def _linked_note(links: Family, end_reason: str | None) -> str:
    parts = []
    if links.parent is not None:
        parts.append(f"parent {links.parent}")
    if links.children:
        kind = "continued in" if end_reason == "compression" else "child sessions"
        parts.append(f"{kind} {', '.join(links.children)}")
    others = len(links.lineage) - 1
    return (
        f"session {links.session_id} is linked to {others} other session"
        f"{'s' if others != 1 else ''} ({'; '.join(parts) or 'same lineage'}); deleting it "
        f"alone would break their chain. Pass --chain to delete all {len(links.lineage)}, "
        "or look first with 'palimpsest sessions list --all'"
    )


@sessions_app.command("delete")
def delete_command(
    session_id: IdArgument,
    chain: Annotated[
        bool,
        typer.Option(
            "--chain",
            help="Also delete every session linked to it (parents, continuations, sub-agents).",
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    db: DbOption = None,
) -> None:
    """Delete a session and its messages (with --chain, its whole lineage)."""
    with handle_errors(), open_store(db) as store:
        sid = resolve_id(store, session_id)
        with store.connection_for_reads() as con:
            links = family(con, sid)
        if links.linked and not chain:
            fail(_linked_note(links, store.require_session(sid)["end_reason"]))
        doomed = links.lineage if chain else [sid]
        for each in doomed:
            err_console.print(f"  {escape(for_terminal(_describe(store, each)))}")
        if not yes:
            what = f"these {len(doomed)} sessions" if len(doomed) > 1 else "this session"
            try:
                confirmed = typer.confirm(f"Delete {what}?", default=False, err=True)
            except typer.Abort:  # no answer (end of input)
                err_console.print()
                confirmed = False
            if not confirmed:
                err_console.print("Nothing deleted (pass --yes to delete without asking).")
                raise typer.Exit(RUN_ERROR_EXIT)
        removed = store.database.write(lambda con: delete_sessions(con, doomed))
    count = len(doomed)
    typer.echo(f"deleted {count} session{'s' if count != 1 else ''} ({removed:,} messages)")


@sessions_app.command("compress")
def compress_session_command(
    session_id: IdArgument,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Summary model spec (openai:..., anthropic:..., openai-compatible:NAME, "
            "llamacpp:/path.gguf); default: the configured one, else the offline "
            "extractive summary.",
        ),
    ] = None,
    focus: Annotated[
        str | None, typer.Option("--focus", help="Topic the summary should keep in detail.")
    ] = None,
    context_length: Annotated[
        int | None, typer.Option("--context-length", min=1, help=CONTEXT_LENGTH_HELP)
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="Server of an openai-compatible --model (ending in /v1)."),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", "-f", help="Compress even when under the threshold."),
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Compact a stored session into a linked continuation and print the new id.

    Like ``compress``, a session under the compaction threshold is left alone unless
    ``--force``.
    """
    with handle_errors(), open_store(db) as store:
        sid = resolve_id(store, session_id)
        tip = store.get_compression_tip(sid)
        if tip != sid:
            fail(
                f"session {sid} was already compacted into {tip}; compress the latest one: "
                f"'palimpsest sessions compress {tip}'"
            )
        report = _compact(store, sid, model, base_url, focus, context_length, force)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    from ..compaction.decided import UNDER_THRESHOLD  # the compressor: only when compacting

    if report["reason"] == UNDER_THRESHOLD:
        err_console.print(
            f"No compression needed in {sid}: {report['tokens_before_shown']} tokens ({report['token_label']}) is "
            f"under the compaction threshold of {report['threshold_tokens']:,} (context "
            f"length {report['context_length']:,}); no continuation was made. Use --force "
            "to compress anyway.",
            highlight=False,
        )
        typer.echo(sid)
        return
    if report["continuation_id"] is None:
        err_console.print(
            f"Nothing to compress in {sid} ({report['reason']}); no continuation was made.",
            highlight=False,
        )
        typer.echo(sid)
        return
    err_console.print(
        f"compacted {sid}: {report['messages_before']:,} messages, "
        f"{report['tokens_before_shown']} tokens -> {report['messages_after']:,} messages, "
        f"{report['tokens_after_shown']} tokens ({report['token_label']}; "
        f"{report['savings_pct']:.0f}% smaller); "
        f"head {report['head_messages']} · middle {report['middle_messages']} (summarized)"
        f" · tail {report['tail_messages']}" + _fallback_note(report),
        highlight=False,
    )
    typer.echo(report["continuation_id"])


def _fallback_note(report: dict[str, Any]) -> str:
    """ "; fallback summary used (why)" when the deterministic summary replaced a model's."""
    if not report["fallback_used"]:
        return ""
    why = report["summary_error"] or "; ".join(report["summary_rejections"])
    if why:
        return f"; fallback summary used ({escape(why)})"
    return "; fallback summary used (the summary model gave no usable summary)"


def _compact(
    store: Store,
    sid: str,
    model: str | None,
    base_url: str | None,
    focus: str | None,
    context_length: int | None,
    force: bool,
) -> dict[str, Any]:
    # The compressor, summarizers and settings load here, not when `sessions --help` or any
    # other sessions command imports this module.
    from ..compaction.compressor import ContextCompressor
    from ..compaction.decided import compact_decided
    from ..config import load_settings
    from ..summarizers.configured import summarizer_from_settings

    settings = load_settings()
    session = store.require_session(sid)
    messages = store.get_messages(sid)
    window = context_length_of(context_length, settings.model.context_length)
    compressor = ContextCompressor.from_settings(
        settings,
        context_length=window,
        summarizer=summarizer_from_settings(settings, model=model, base_url=base_url),
        quiet_mode=True,
    )
    run = compact_decided(compressor, messages, force=force, focus=focus)
    result, stats = run.result, run.stats
    report: dict[str, Any] = {
        "session_id": sid,
        "continuation_id": None,
        "reason": stats.reason,
        "context_length": window,
        "threshold_tokens": compressor.threshold_tokens,
        "tail_token_budget": compressor.tail_token_budget,
        "messages_before": len(messages),
        "messages_after": len(result),
        "head_messages": stats.head_messages,
        "middle_messages": stats.middle_messages,
        "tail_messages": stats.tail_messages,
        "token_count": run.after.method,
        "token_label": run.after.label,
        "tokens_before": run.before.tokens,
        "tokens_after": run.after.tokens,
        "tokens_before_shown": run.before.shown(),
        "tokens_after_shown": run.after.shown(),
        "savings_pct": round(stats.savings_pct, 2),
        "fits": stats.fits,
        "fallback_used": stats.fallback_used,
        "summary_error": compressor.last_summary_error,
        "summary_rejections": list(stats.summary_rejections),
    }
    if not stats.compressed:
        return report
    if session["ended_at"] is not None and session["end_reason"] != "compression":
        # An ended conversation is continued the way gateway hygiene does it: reopened,
        # then ended again by this compaction.
        store.reopen_session(sid)
    report["continuation_id"] = store.start_continuation(
        sid,
        messages=result,
        model=session.get("model"),
        system_prompt=session.get("system_prompt"),
    )
    return report
