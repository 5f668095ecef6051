"""A minimal chat gateway with session hygiene, on the standard library only.

A gateway is a bot that serves many chats; each chat is one stored session. Before the
agent sees an inbound message, ``GatewayHygiene.deliver`` checks the stored session and
compacts it when it reached 85% of the model's window (palimpsest docs/agent.md, "Gateway
session hygiene"), then stores the message. The agent turn that follows answers it.

    python examples/gateway.py --demo                 # self-contained demo; exit 0
    python examples/gateway.py --serve --port 8765    # serve until Ctrl-C

Serving: ``POST /chat/<chat_id>`` on 127.0.0.1 with ``{"text": "..."}`` answers
``{"reply", "session_id", "hygiene": {...}}``. The model is an offline stand-in (no API
key, no network): it answers with a line about what it received. Swap in
``palimpsest.connect("openai:gpt-4o-mini")`` for a real one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from palimpsest import Completion, ScriptedChatModel, SessionStore
from palimpsest.agent import Agent, UsageEvent
from palimpsest.agent.hygiene import (
    CONTEXT_ERROR_MESSAGE,
    GatewayHygiene,
    HygieneResult,
    detach_pending,
    is_context_error,
)
from palimpsest.config import Settings
from palimpsest.errors import PalimpsestError
from palimpsest.messages import load_transcript
from palimpsest.storage.sessions import new_session_id

HERE = Path(__file__).resolve().parent
TRANSCRIPT = HERE / "marshmallow-1867.traj"
DEMO_WINDOW = 8_800
"""The demo model's window: the stored overnight session (~7,650 tokens) is above 85%."""


def offline_reply(messages: list[dict[str, Any]]) -> Completion:
    """The stand-in model: one line about the last user message and the request size."""
    last: dict[str, Any] = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    text = str(last.get("content", ""))[:60]
    return Completion(
        content=f"(offline model) got {text!r}; the request had {len(messages)} messages.",
        finish_reason="stop",
    )


class Gateway:
    """Chat ids routed to stored sessions; one hygiene check and one agent turn per message."""

    def __init__(self, store: SessionStore, context_length: int, settings: Settings) -> None:
        self.store = store
        self.context_length = context_length
        self.settings = settings
        self.model = ScriptedChatModel(default=offline_reply, model="offline")
        self.hygiene = GatewayHygiene(
            store, model=self.model, context_length=context_length, settings=settings
        )
        self.routes: dict[str, str] = {}
        self._lock = threading.Lock()
        self._chat_locks: dict[str, threading.Lock] = {}

    def route(self, chat_id: str) -> tuple[str, threading.Lock]:
        with self._lock:
            if chat_id not in self.routes:
                self.routes[chat_id] = new_session_id()
            return self.routes[chat_id], self._chat_locks.setdefault(chat_id, threading.Lock())

    def adopt(self, chat_id: str, session_id: str) -> None:
        with self._lock:
            self.routes[chat_id] = session_id  # AL-22: every later message goes there

    def handle(self, chat_id: str, text: str) -> dict[str, Any]:
        session_id, chat_lock = self.route(chat_id)
        # Hygiene is safe without this lock (its lease is in the store); the lock keeps
        # this chat's turns from overlapping, as a chat's replies come one at a time.
        with chat_lock:
            result = self.hygiene.deliver(session_id, text)
            self.adopt(chat_id, result.session_id)
            reply, final_id = self.turn(result)
            self.adopt(chat_id, final_id)
        return {"reply": reply, "session_id": final_id, "hygiene": describe(result)}

    def turn(self, result: HygieneResult) -> tuple[str, str]:
        """Answer the stored message with an agent bound to the session's tip."""
        agent = Agent(
            self.model,
            store=self.store,
            session_id=result.session_id,
            context_length=self.context_length,
            source="gateway",
            builtin_tools=False,
            settings=self.settings,
        )
        try:
            pending = detach_pending(agent)
            if pending is None:
                return "(nothing to answer)", result.session_id
            reply, prompt_tokens = "", 0
            for event in agent.run(pending):
                if isinstance(event, UsageEvent) and not event.estimated:
                    prompt_tokens = event.usage.prompt_tokens
                if event.kind == "turn_end":
                    reply = event.text or event.error or ""
                    if event.error and is_context_error(event.error, len(agent.messages)):
                        reply = CONTEXT_ERROR_MESSAGE
            if agent.session_id is not None and prompt_tokens > 0:
                self.hygiene.record_prompt_tokens(agent.session_id, prompt_tokens)
            return reply, agent.session_id or result.session_id
        finally:
            agent.close()


def describe(result: HygieneResult) -> dict[str, Any]:
    return {
        "compacted": result.compacted,
        "sequence": result.sequence,
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "threshold": result.threshold,
        "previous_session_id": result.previous_session_id,
        "warning": result.warning,
        "reason": result.reason,
    }


def make_handler(gateway: Gateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            parts = self.path.strip("/").split("/")
            if len(parts) != 2 or parts[0] != "chat" or not parts[1]:
                self.answer(404, {"error": "POST /chat/<chat_id>"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                text = json.loads(self.rfile.read(length) or b"{}").get("text")
            except (ValueError, AttributeError):
                text = None
            if not isinstance(text, str) or not text.strip():
                self.answer(400, {"error": 'send JSON {"text": "..."}'})
                return
            try:
                self.answer(200, gateway.handle(parts[1], text))
            except PalimpsestError as exc:
                self.answer(503, {"error": str(exc)})

        def answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return None  # quiet: the demo prints what matters

    return Handler


def post(port: int, chat_id: str, text: str) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/chat/{chat_id}",
        data=json.dumps({"text": text}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        body: dict[str, Any] = json.loads(response.read())
        return body


def seed_overnight_session(gateway: Gateway, chat_id: str) -> tuple[str, int]:
    """A chat that grew while nobody looked: a real 24-message agent transcript."""
    messages = load_transcript(TRANSCRIPT)
    system = next(str(m["content"]) for m in messages if m.get("role") == "system")
    sid = gateway.store.create_session(source="gateway", model="offline", system_prompt=system)
    gateway.store.append_messages(sid, [m for m in messages if m.get("role") != "system"])
    gateway.adopt(chat_id, sid)
    return sid, len(gateway.store.get_messages(sid))


def demo() -> int:
    settings = Settings()  # the defaults, whatever the local config says
    with tempfile.TemporaryDirectory() as home, SessionStore(Path(home) / "state.db") as store:
        gateway = Gateway(store, DEMO_WINDOW, settings)
        server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(gateway))
        port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print(f"gateway on http://127.0.0.1:{port} · window {DEMO_WINDOW:,} tokens")
        try:
            carol_old, stored = seed_overnight_session(gateway, "carol")
            print(f"carol's stored session {carol_old}: {stored} messages from overnight")
            compactions = 0
            script = [
                ("alice", "hello, can you help with my parser?"),
                ("bob", "hi there"),
                ("carol", "good morning, is the TimeDelta fix merged?"),
                ("carol", "and did the tests pass?"),
                ("alice", "thanks!"),
            ]
            for chat, text in script:
                body = post(port, chat, text)
                h = body["hygiene"]
                compactions += h["compacted"]
                print(f"[{chat}] > {text}")
                if h["compacted"]:
                    print(
                        f"  hygiene: compacted ~{h['tokens_before']:,} -> "
                        f"~{h['tokens_after']:,} tokens (threshold {h['threshold']:,}); "
                        f"continues in {body['session_id']} (was {h['previous_session_id']})"
                    )
                else:
                    print(f"  hygiene: nothing to do ({h['reason']})")
                if h["warning"]:
                    print(f"  warning: {h['warning']}")
                print(f"  < {body['reply']}")
            burst = burst_to_one_chat(port, "bob", 5)
            print(f"[bob] 5 messages at once: stored as sequence {burst}")
            ok = compactions == 1 and check_stored(store, gateway.routes["bob"])
        finally:
            server.shutdown()
            server.server_close()
        print(f"hygiene compactions: {compactions} · sessions: {store.session_count()}")
        return 0 if ok else 1


def burst_to_one_chat(port: int, chat_id: str, count: int) -> list[int]:
    """``count`` clients posting to one chat at the same moment."""
    barrier = threading.Barrier(count)
    sequences: list[int] = []

    def send(i: int) -> None:
        barrier.wait()
        sequences.append(post(port, chat_id, f"burst message {i}")["hygiene"]["sequence"])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(sequences)


def check_stored(store: SessionStore, session_id: str) -> bool:
    """Every burst message is in bob's session exactly once."""
    texts = [str(m.get("content")) for m in store.get_messages(session_id)]
    burst = [t for t in texts if t.startswith("burst message ")]
    return sorted(burst) == sorted(f"burst message {i}" for i in range(5))


def serve(port: int, db: Path, context_length: int) -> int:
    with SessionStore(db) as store:
        gateway = Gateway(store, context_length, Settings())
        server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(gateway))
        print(f"gateway on http://127.0.0.1:{server.server_address[1]} · POST /chat/<id>")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--demo", action="store_true", help="run the self-contained demo")
    mode.add_argument("--serve", action="store_true", help="serve on 127.0.0.1 until Ctrl-C")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--db", type=Path, default=Path("gateway-state.db"))
    parser.add_argument("--context-length", type=int, default=DEMO_WINDOW)
    args = parser.parse_args(argv)
    if args.demo:
        return demo()
    return serve(args.port, args.db, args.context_length)


if __name__ == "__main__":
    sys.exit(main())
