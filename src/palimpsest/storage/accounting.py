"""Persisting token usage per response, on every platform (spec SS-39, SS-40, TK-19).

Accounting is written after every API call for every session that has an id, so usage
survives even when a higher-level save step is skipped or fails. Counters are added in
SQL (``col = col + ?``) inside one write transaction, so concurrent processes reporting
usage for the same session never lose an increment.
"""

from __future__ import annotations

from typing import Any

import apsw

from ..usage import CanonicalUsage
from .contract import SqlGateway
from .writes import token_update

__all__ = ["TokenAccounting"]


class TokenAccounting:
    """The token-accounting half of :class:`~.sessions.SessionStore`."""

    _db: SqlGateway

    def update_token_counts(
        self,
        session_id: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        model: str | None = None,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        reasoning_tokens: int = 0,
        estimated_cost_usd: float | None = None,
        actual_cost_usd: float | None = None,
        cost_status: str | None = None,
        cost_source: str | None = None,
        pricing_version: str | None = None,
        billing_provider: str | None = None,
        billing_base_url: str | None = None,
        billing_mode: str | None = None,
        api_call_count: int = 0,
        absolute: bool = False,
        unreported_calls: int = 0,
    ) -> None:
        """Add (or with ``absolute`` set) token counters and cost (SS-39).

        A missing session is created with source ``unknown``; ``model`` and ``billing_*``
        fill only empty columns; ``None`` costs leave the columns unchanged.
        ``unreported_calls`` counts calls whose provider sent no usage (the token
        counters are then a lower bound).
        """

        def update(con: apsw.Connection) -> None:
            token_update(con, session_id, absolute=absolute, **fields)

        fields: dict[str, Any] = dict(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
            reasoning_tokens=reasoning_tokens,
            api_call_count=api_call_count,
            unreported_calls=unreported_calls,
            estimated_cost_usd=estimated_cost_usd,
            actual_cost_usd=actual_cost_usd,
            model=model,
            billing_provider=billing_provider,
            billing_base_url=billing_base_url,
            billing_mode=billing_mode,
            cost_status=cost_status,
            cost_source=cost_source,
            pricing_version=pricing_version,
        )
        self._db.write(update)

    def record_usage(
        self,
        session_id: str,
        usage: CanonicalUsage | None,
        cost_usd: float | None = None,
        *,
        model: str | None = None,
    ) -> None:
        """Add one response's usage to the session (TK-19): every bucket and one API call.

        ``usage=None`` (the provider reported none) adds one API call and one unreported
        call, and no tokens: unknown is recorded as unknown, not as zero.
        """
        if usage is None:
            self.update_token_counts(
                session_id,
                api_call_count=1,
                unreported_calls=1,
                estimated_cost_usd=cost_usd,
                model=model,
            )
            return
        self.update_token_counts(
            session_id,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            api_call_count=usage.request_count,
            estimated_cost_usd=cost_usd,
            model=model,
        )
