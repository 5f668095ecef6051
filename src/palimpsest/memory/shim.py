"""Calling ``on_memory_write`` hooks written against older signatures.

Providers in the wild declare the hook as ``(action, target, content)``,
``(action, target, content, metadata)``, keyword-only variants, or ``**kwargs``. The shim
reads the signature and passes only what it accepts, so an older provider keeps working
and optional keyword arguments reach only hooks that can take them (MEM-47, MEM-52).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["call_memory_write"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def call_memory_write(
    hook: Callable[..., Any],
    action: str,
    target: str,
    content: str,
    metadata: Mapping[str, Any] | None,
    **optional: Any,
) -> Any:
    """Call ``hook`` with the arguments its signature accepts."""
    try:
        params = inspect.signature(hook).parameters
    except (TypeError, ValueError):  # builtins without a signature: the seed form
        return hook(action, target, content, metadata)
    kinds = [p.kind for p in params.values()]
    var_pos = inspect.Parameter.VAR_POSITIONAL in kinds
    var_kw = inspect.Parameter.VAR_KEYWORD in kinds
    positional = [p for p in params.values() if p.kind in _POSITIONAL]
    args: list[Any] = [action, target, content]
    if not var_pos:
        args = args[: len(positional)]
    kwargs: dict[str, Any] = {}
    meta = dict(metadata) if metadata is not None else None
    meta_param = params.get("metadata")
    if meta_param is not None and meta_param.kind is not inspect.Parameter.POSITIONAL_ONLY:
        kwargs["metadata"] = meta
    elif var_pos or len(positional) > len(args):
        args.append(meta)
    elif var_kw:
        kwargs["metadata"] = meta
    for key, value in optional.items():
        param = params.get(key)
        if (param is not None and param.kind is not inspect.Parameter.POSITIONAL_ONLY) or (
            var_kw and param is None
        ):
            kwargs[key] = value
    return hook(*args, **kwargs)
