"""``palimpsest chat``: the agent in a terminal.

A thin front end over :class:`palimpsest.agent.loop.Agent`: it reads lines with
``input()`` (GNU readline editing when the platform has it), hands slash commands to
``Agent.command`` and everything else to ``Agent.run``, prints the events with
:mod:`.render`, and after each turn one status line with the context use. The conversation
lives in the session store, so ``--session`` picks it up again, compactions included.

Ctrl-C during a turn asks the agent to stop at its next safe point (a second Ctrl-C stops
at once); either way the session stays consistent and the prompt comes back. Ctrl-C or
EOF at the prompt, or ``/exit``, leaves and prints the command that resumes the session.

``--model replay:PATH`` answers with the recorded assistant turns of a transcript file
(:mod:`palimpsest.agent.replay_model`): an offline demo, and what the terminal tests use.
"""

from __future__ import annotations

import shlex
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from ..agent.replay_model import REPLAY_PREFIX, ReplayChatModel, build_script
from ..compaction.window import ContextWindow, resolve_window
from ..config import Settings, load_settings
from ..errors import PalimpsestError
from ..messages import load_transcript, validate_transcript
from ..providers.anthropic_messages import tool_clearing_edit
from ..providers.base import ChatModel
from ..providers.connect import connect
from ..safety.redact import redact
from ..storage.contract import Store
from .common import CONTEXT_LENGTH_HELP, context_length_of, fail, handle_errors
from .render import EventRenderer, short_id, status_line
from .sessions import DbOption, open_store
from .terminal_text import for_terminal

if TYPE_CHECKING:
    from ..agent.loop import Agent

__all__ = ["EXIT_COMMANDS", "PROMPT", "TOOL_SETS", "chat_command", "chat_loop", "resolve_model"]

PROMPT = "> "
"""What the terminal shows when it waits for a line."""

EXIT_COMMANDS = frozenset({"/exit", "/quit"})

TOOL_SETS = ("workspace",)
"""Values ``--tools`` accepts: ``workspace`` adds file and shell tools confined to the
current directory."""

NO_MODEL = (
    "no model: pass --model SPEC (for example openai:gpt-4o-mini, or "
    "openai-compatible:local --base-url http://127.0.0.1:8765/v1 for llama.cpp's server: "
    "see docs/providers-local.md), or set model.name in config.yaml. Offline, with no "
    "model at all: palimpsest chat --model replay:TRANSCRIPT answers with a recorded "
    "transcript's replies (try replay:examples/marshmallow-1867.traj)"
)

HELP_TEXT = """commands:
  /help               this list
  /status             context use: messages and tokens against the threshold and window
  /usage              model calls, tokens and cost so far
  /compress [focus]   compact the conversation now (optionally keeping a topic in detail)
  /undo               undo the last compaction
  /new                start a new session
  /exit, /quit        leave (Ctrl-D too); prints the command that resumes the session
Ctrl-C stops a reply at the next safe point; a second Ctrl-C stops it at once."""


def _replay_model(path_text: str) -> ChatModel:
    path = Path(path_text).expanduser()
    messages = load_transcript(path)
    validate_transcript(messages, path=str(path))
    script = build_script(messages)
    if not script.replies:
        fail(f"{path}: the transcript records no assistant reply to replay")
    return ReplayChatModel(script.replies, model=f"{REPLAY_PREFIX}:{path.name}")


def resolve_model(spec: str | None, base_url: str | None, settings: Settings) -> ChatModel:
    """The chat model: ``--model`` (``replay:PATH`` included), else ``model.name`` from the
    config; a missing one is a user error naming the fix."""
    chosen = spec or settings.model.name
    if not chosen:
        fail(NO_MODEL)
    prefix, _, rest = chosen.partition(":")
    if prefix.strip().lower() == REPLAY_PREFIX:
        if not rest.strip():
            fail("--model replay: needs a transcript path, for example replay:session.json")
        return _replay_model(rest.strip())
    options: dict[str, Any] = {}
    compression = settings.compression
    if compression.server_tool_clearing and prefix.strip().lower() == "anthropic":
        # the server clears old tool results; a clearing breaks the cache, so it must
        # reclaim at least what the proactive prune would have (docs/pruning.md)
        options["tool_clearing"] = tool_clearing_edit(
            trigger_tokens=compression.proactive_prune_tokens or None,
            clear_at_least_tokens=compression.proactive_prune_min_reclaim_tokens or None,
        )
    return connect(chosen, base_url=base_url, **options)


def chat_window(model: ChatModel, flag: int | None, settings: Settings) -> ContextWindow:
    """``--context-length``, else ``model.context_length``, else what the provider reports
    (its model list, asked once and cooled down on failure), else the built-in default."""
    from ..agent.window_setup import provider_window

    window = resolve_window(
        caller=flag,
        configured=settings.model.context_length,
        provider=lambda: provider_window(model),
        default=context_length_of(None, None),
    )
    assert window is not None  # the default is positive
    return window


@contextmanager
def _interrupts(agent: Agent, console: Console) -> Iterator[None]:
    """During a turn the first Ctrl-C asks the agent to stop at a safe point; a second one
    raises ``KeyboardInterrupt`` where the turn is (the agent keeps the session valid)."""
    pressed = 0

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        nonlocal pressed
        pressed += 1
        if pressed > 1:
            raise KeyboardInterrupt
        agent.interrupt()
        console.print("[yellow]stopping… (Ctrl-C again to stop now)[/]", highlight=False)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _ctrl_c_works() -> Iterator[None]:
    """Ctrl-C raises ``KeyboardInterrupt`` at the prompt even when chat was started with
    SIGINT ignored. A process started in the background of a non-interactive shell (a
    script's ``cmd &``, some CI runners and job launchers) inherits SIGINT ignored, and
    Python then installs no handler of its own: Ctrl-C at the prompt did nothing, and only
    EOF or ``/exit`` left. An interactive chat wants its Ctrl-C back."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupted(renderer: EventRenderer) -> None:
    renderer.finish()
    renderer.console.print("[yellow]interrupted: the session is kept[/]", highlight=False)


def _failed(renderer: EventRenderer, exc: PalimpsestError) -> None:
    renderer.finish()
    shown = escape(for_terminal(redact(str(exc))))
    renderer.console.print(f"[red]error:[/] {shown}", highlight=False)


def _run_turn(agent: Agent, text: str, renderer: EventRenderer) -> None:
    turn = agent.run(text)
    try:
        with _interrupts(agent, renderer.console):
            for event in turn:
                renderer.render(event)
    except KeyboardInterrupt:
        _interrupted(renderer)
    except PalimpsestError as exc:  # the turn failed; the session and the prompt stay
        _failed(renderer, exc)
    finally:
        # run() is a generator: closing it lets the agent finish the turn's bookkeeping now
        close = getattr(turn, "close", None)
        if close is not None:
            close()
        renderer.finish()


def _run_command(agent: Agent, line: str, renderer: EventRenderer) -> None:
    try:
        result = agent.command(line)
    except KeyboardInterrupt:  # e.g. a long /compress: the agent keeps the session valid
        _interrupted(renderer)
        return
    except PalimpsestError as exc:
        _failed(renderer, exc)
        return
    if result is None:
        renderer.console.print(
            f"[red]unknown command {escape(for_terminal(line.split()[0]))}[/]: /help lists the commands",
            highlight=False,
        )
        return
    for event in result.events:
        renderer.render(event)
    renderer.finish()
    if result.text:
        renderer.console.print(for_terminal(result.text), markup=False, highlight=False)


def chat_loop(
    agent: Agent, console: Console, read_line: Callable[[str], str] = input
) -> str | None:
    """Read lines until ``/exit``, EOF or Ctrl-C at the prompt; return the session id."""
    renderer = EventRenderer(console)
    while True:
        try:
            line = read_line(PROMPT).strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            break
        if not line:
            continue
        if line in EXIT_COMMANDS:
            break
        if line in ("/help", "/?"):
            console.print(HELP_TEXT, markup=False, highlight=False)
            continue
        if line.startswith("/"):
            _run_command(agent, line, renderer)
        else:
            _run_turn(agent, line, renderer)
        console.print(f"[dim]{escape(status_line(agent.context_status()))}[/]", highlight=False)
    return agent.session_id


def _tools_root(tools: list[str]) -> Path | None:
    for name in tools:
        for value in name.split(","):
            if value.strip() and value.strip() not in TOOL_SETS:
                fail(f"--tools {value.strip()!r} is not known; choose from: {', '.join(TOOL_SETS)}")
    return Path.cwd() if tools else None


def _open_store(db: Path | None) -> Store:
    """``--db``, else the store every command uses (``store.path`` from config, else
    ``$PALIMPSEST_HOME/state.db``)."""
    return open_store(db)


def _resume_id(store: Store, session: str | None) -> str | None:
    if session is None:
        return None
    found = store.resolve_session_id(session)
    if found is None:
        fail(
            f"no single session matches {session!r} (none does, or several start with it); "
            "list them with: palimpsest sessions list"
        )
    return store.resume_target(found)


def _welcome(agent: Agent, model: ChatModel, resumed: bool) -> str:
    where = f"session {short_id(agent.session_id)}"
    if resumed:
        where += f" resumed with {len(agent.messages)} messages"
    return f"palimpsest chat · {model.model} · {where} · /exit to leave"


def chat_command(
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Model spec (openai:..., anthropic:..., openai-compatible:NAME, "
            "llamacpp:PATH, replay:TRANSCRIPT); default: model.name from the config.",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="Server of an openai-compatible --model (ending in /v1)."),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option("--session", help="Resume this session (id or prefix) at its latest tip."),
    ] = None,
    tools: Annotated[
        list[str] | None,
        typer.Option(
            "--tools",
            help="Extra tools: 'workspace' (read/write/edit files and run shell commands "
            "in the current directory).",
        ),
    ] = None,
    context_length: Annotated[
        int | None, typer.Option("--context-length", min=1, help=CONTEXT_LENGTH_HELP)
    ] = None,
    db: DbOption = None,
) -> None:
    """Talk to an agent that keeps its conversation inside the window."""
    with suppress(ImportError):  # not on every platform
        import readline  # noqa: F401  (line editing and history for input())

    console = Console(highlight=False, soft_wrap=True)
    with handle_errors():
        settings = load_settings()
        workdir = _tools_root(tools or [])
        chat_model = resolve_model(model, base_url, settings)
        store = _open_store(db)
        try:
            resume = _resume_id(store, session)
            from ..agent.loop import Agent  # the loop pulls in every layer: load it to chat

            window = chat_window(chat_model, context_length, settings)
            agent = Agent(
                chat_model,
                store=store,
                memory=_memory(settings),
                context_length=window.tokens,
                session_id=resume,
                source="cli",
                workdir=workdir,
                settings=settings,
                stream=True,
            )
            agent.compressor.context_window = window  # /status names where it came from
            try:
                console.print(_welcome(agent, chat_model, session is not None), markup=False)
                with _ctrl_c_works():
                    session_id = chat_loop(agent, console)
            finally:
                agent.close()
            if session_id and not store.message_count(session_id):
                # Nothing was said: leave no empty "(untitled)" session behind.
                store.delete_session(session_id)
                session_id = None
        finally:
            store.close()
    if session_id:
        again = _resume_command(session_id, model, base_url, context_length, db, tools)
        console.print(f"session {session_id} · resume with: {again}", markup=False)


def _resume_command(
    session_id: str,
    model: str | None,
    base_url: str | None,
    context_length: int | None,
    db: Path | None,
    tools: list[str] | None,
) -> str:
    """The command that resumes this session as it ran: the same model, server, window,
    database and tools (a hint without them would start with a different setup, or fail
    with no model)."""
    parts = ["palimpsest", "chat", "--session", session_id]
    for flag, value in (
        ("--model", model),
        ("--base-url", base_url),
        ("--context-length", context_length),
        ("--db", db),
    ):
        if value is not None:
            parts += [flag, str(value)]
    for name in tools or []:
        parts += ["--tools", name]
    return shlex.join(parts)


def _memory(settings: Settings) -> Any:
    from ..memory.manager import MemoryManager

    return MemoryManager.from_settings(settings)
