"""Context pressure, pull-based (issue 9 item 7): what the UI and the model may ask for.

Nothing here is pushed into the prompt (CC-119): the model calls the ``context_status``
tool when it wants to know, the host shows the same dict in a status line or ``/status``.
A figure that is not the provider's own count says so (``estimated``), and an unknown is
never shown as zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..compaction.window import window_in_effect

if TYPE_CHECKING:
    from .state import AgentState

__all__ = ["context_status", "render_status"]


def context_status(agent: AgentState) -> dict[str, Any]:
    """Tokens in use (and whether estimated), window, threshold, percents, compactions."""
    engine = agent.compressor
    real = int(getattr(engine, "last_prompt_tokens", 0) or 0)
    tokens = agent.current_prompt_tokens()
    exact = (
        real > 0
        and agent.last_request_len == len(agent.messages)
        and not agent.usage.last_estimated
    )
    window = int(engine.context_length)
    threshold = int(engine.threshold_tokens)
    return {
        "session_id": agent.session_id,
        "tokens": tokens,
        "estimated": not exact,
        "context_length": window,
        "threshold_tokens": threshold,
        "window_source": window_in_effect(engine).describe(),
        "threshold_source": str(getattr(engine, "threshold_source", "") or "default"),
        "percent_of_window": round(tokens / window * 100, 1) if window else None,
        "percent_of_threshold": round(tokens / threshold * 100, 1) if threshold else None,
        "compactions": int(engine.compression_count),
        "messages": len(agent.messages),
        "tool_outputs": agent.output_guard.stats.as_dict(),
    }


def render_status(status: dict[str, Any]) -> str:
    """``/status`` as a few lines of text."""
    approx = "~" if status["estimated"] else ""
    source = "estimated" if status["estimated"] else "reported by the provider"
    pct = status["percent_of_window"]
    lines = [
        f"Context: {approx}{status['tokens']:,} / {status['context_length']:,} tokens"
        + " in the next request (messages, system prompt and tool schemas; "
        + (f"{pct}% of the window, {source})" if pct is not None else f"{source})"),
        f"Compaction threshold: {status['threshold_tokens']:,} tokens"
        + (
            f" ({status['percent_of_threshold']}% reached)"
            if status["percent_of_threshold"] is not None
            else ""
        ),
        f"Window: {status['context_length']:,} tokens, from "
        f"{status.get('window_source') or 'unknown'}; threshold ratio from "
        f"{status.get('threshold_source') or 'unknown'}",
        f"Compactions this session: {status['compactions']}",
        f"Messages in context: {status['messages']}",
        f"Session: {status['session_id']}",
    ]
    outputs = status.get("tool_outputs") or {}
    if outputs.get("spilled"):
        lines.append(
            f"Tool outputs kept out of the context: {outputs['chars_kept_out_of_context']:,} "
            f"chars ({outputs['spilled']} spilled: {outputs['saved']} saved, "
            f"{outputs['deduplicated']} already saved, {outputs['pointers']} re-runnable, "
            f"{outputs['fallbacks']} could not be saved); "
            f"{outputs['bytes_not_written']:,} bytes kept off the disk"
        )
    return "\n".join(lines)
