"""Rotation against in-place compaction on the shared transcripts: what each costs a user.

Each transcript is replayed through the real agent (``palimpsest replay``'s
``replay_transcript``: the recorded assistant turns, the real compressor, a real SQLite
store) once per mode, in a window of ``--share`` of its rough size (so the longer ones must
compact). Then, for each run:

* **sessions**: how many the replay created, and how many ended with ``compression``;
* **recall**: the agent's own ``session_search`` tool (current session = the live one) is
  asked for up to ``--probes`` words that the conversation held before its compactions
  and that are no longer in the live context: how many come back (found at all, and found
  in this conversation);
* **resume**: a new agent bound to the id the host saved at the start (the first session)
  must land on the live history and the compaction count the replay ended with;
* **undo**: ``/undo`` on that resumed agent must give back the last compaction's
  messages, in memory and in the store.

Run: ``python benchmarks/compaction_modes.py [--data DIR] [--share 0.75] [--probes 10]``
(``DIR`` defaults to tests/data/transcripts, the copies of ../shared/data/transcripts).
docs/compaction.md quotes the result.
"""

from __future__ import annotations

import argparse
import io
import logging
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

from palimpsest.agent.loop import Agent
from palimpsest.agent.replay_model import ReplayChatModel, build_script
from palimpsest.cli.replay import Timeline, replay_transcript, with_compaction_mode
from palimpsest.config import Settings
from palimpsest.messages import content_text, load_transcript
from palimpsest.storage.search import SessionSearch
from palimpsest.storage.sessions import SessionStore
from palimpsest.tokens import estimate_messages_tokens_rough

SETS = ("swe-agent", "mini-swe-agent", "format-samples")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{7,}")


def transcripts(root: Path) -> list[Path]:
    return sorted(
        p
        for folder in SETS
        if (root / folder).is_dir()
        for p in (root / folder).iterdir()
        if p.is_file()
    )


def window_for(messages: list[dict[str, Any]], share: float) -> int:
    total = estimate_messages_tokens_rough(messages)
    largest = max(estimate_messages_tokens_rough([m]) for m in messages)
    return max(int(total * share), 2 * largest + 1000, 3000)


def text_of(messages: list[dict[str, Any]]) -> str:
    return "\n".join(content_text(m.get("content")) for m in messages)


def probes(original: list[dict[str, Any]], live: list[dict[str, Any]], count: int) -> list[str]:
    """Words the conversation said that the live context no longer holds (evenly spread;
    the transcript's system message is the agent's prompt, not a message, so not probed)."""
    kept_lower = {w.lower() for w in WORD.findall(text_of(live))}
    said = [m for m in original if m.get("role") != "system"]
    seen: dict[str, None] = {}
    for word in WORD.findall(text_of(said)):
        if word.lower() not in kept_lower:
            seen.setdefault(word, None)
    words = list(seen)
    if len(words) <= count:
        return words
    step = len(words) / count
    return [words[int(i * step)] for i in range(count)]


def run_one(path: Path, in_place: bool, share: float, count: int) -> dict[str, Any]:
    messages = load_transcript(path)
    script = build_script(messages)
    window = window_for(messages, share)
    settings = with_compaction_mode(Settings(), in_place)
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings.model_copy(
            update={"outputs": settings.outputs.model_copy(update={"path": f"{tmp}/outputs"})}
        )
        store = SessionStore(Path(tmp) / "state.db")
        try:
            timeline = Timeline(Console(file=io.StringIO()), as_json=True)
            totals = replay_transcript(
                script,
                store,
                context_length=window,
                timeline=timeline,
                name=path.name,
                settings=settings,
            )
            first = next(r for r in timeline.records if r["event"] == "session")["session_id"]
            final = str(totals["final_session_id"])
            live = store.get_messages(final)
            words = probes(messages, live, count) if totals["compactions"] else []
            search = SessionSearch(store)
            own = anywhere = 0
            lineage = set(store.lineage(final)) | {final}
            for word in words:
                result = search.search(word, current_session_id=final)
                hits = [r["session_id"] for r in result.get("results", [])]
                own += any(h in lineage for h in hits)
                anywhere += bool(store.search_messages(word, limit=1))  # the store's view
            sessions = store.session_count()
            ended = int(
                store.database.scalar(
                    "SELECT count(*) FROM sessions WHERE end_reason = 'compression'"
                )
                or 0
            )
            resumed = Agent(
                ReplayChatModel(model="replay:check", context_length=window),
                store=store,
                session_id=first,
                context_length=window,
                builtin_tools=False,
                settings=settings,
                source="replay",
            )
            try:
                resume_ok = (
                    resumed.session_id == final
                    and resumed.messages == live
                    and resumed.compressor.compression_count == totals["compactions"]
                )
                undo_ok = None
                if totals["compactions"]:
                    before = len(resumed.messages)
                    reply = resumed.command("/undo")
                    undo_ok = (
                        reply is not None
                        and reply.text.startswith("Undid")
                        and len(resumed.messages) > before
                        and store.get_messages(str(resumed.session_id)) == resumed.messages
                    )
            finally:
                resumed.close()
            return {
                "transcript": path.name,
                "mode": "in_place" if in_place else "rotation",
                "window": window,
                "compactions": totals["compactions"],
                "sessions": sessions,
                "ended_by_compression": ended,
                "probes": len(words),
                "in_store": anywhere,
                "found_in_conversation": own,
                "resume_ok": resume_ok,
                "undo_ok": undo_ok,
            }
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(__file__).resolve().parents[1] / "tests" / "data" / "transcripts"
    parser.add_argument("--data", type=Path, default=default)
    parser.add_argument("--share", type=float, default=0.75)
    parser.add_argument("--probes", type=int, default=10)
    args = parser.parse_args()
    logging.getLogger("palimpsest").setLevel(logging.ERROR)  # the compressor's status lines
    found = transcripts(args.data)
    if not found:
        parser.error(f"no transcripts under {args.data} (folders {', '.join(SETS)})")
    rows = [
        run_one(path, in_place, args.share, args.probes)
        for path in found
        for in_place in (False, True)
    ]
    header = (
        f"{'transcript':<52} {'mode':<9} {'win':>6} {'comp':>4} {'sess':>4} {'ended':>5} "
        f"{'probes':>6} {'store':>5} {'tool':>4} resume undo"
    )
    print(header)
    for r in rows:
        print(
            f"{r['transcript']:<52} {r['mode']:<9} {r['window']:>6} {r['compactions']:>4} "
            f"{r['sessions']:>4} {r['ended_by_compression']:>5} {r['probes']:>6} "
            f"{r['in_store']:>5} {r['found_in_conversation']:>4} {r['resume_ok']!s:>6} "
            f"{r['undo_ok']!s}"
        )
    for mode in ("rotation", "in_place"):
        mine = [r for r in rows if r["mode"] == mode]
        compacted = [r for r in mine if r["compactions"]]
        print(
            f"{mode}: {sum(r['compactions'] for r in mine)} compactions in "
            f"{len(compacted)}/{len(mine)} transcripts; {sum(r['sessions'] for r in mine)} "
            f"sessions ({sum(r['ended_by_compression'] for r in mine)} ended by compression); "
            f"recall: of {sum(r['probes'] for r in mine)} words the live context lost, the "
            f"store holds {sum(r['in_store'] for r in mine)}, the agent's session_search "
            f"finds {sum(r['found_in_conversation'] for r in mine)}; "
            f"resume ok {sum(bool(r['resume_ok']) for r in mine)}/{len(mine)}; "
            f"undo ok {sum(bool(r['undo_ok']) for r in compacted)}/{len(compacted)}"
        )


if __name__ == "__main__":
    sys.exit(main())
