"""API keys: `Authorization: Bearer KEY` (what the OpenAI client sends), compared in constant time."""

from __future__ import annotations

import hmac


def authorized(expected: str | None, header: str | None) -> bool:
    """Whether the request's Authorization header carries the server's key (always, without a key)."""
    if not expected:
        return True
    scheme, _, given = (header or "").partition(" ")
    if scheme.lower() != "bearer":
        given = ""
    return hmac.compare_digest(given.strip().encode(), expected.encode())
