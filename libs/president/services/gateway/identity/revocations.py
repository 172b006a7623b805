"""The sessions the players service revoked, kept by every gateway replica.

The players service publishes each revoked session on NATS; a gateway keeps
it until the access tokens it covers have expired (``until``), and loads
the whole list when it starts and whenever its NATS connection comes back
(a revocation published while it was away is not lost). Checking a token
against it costs one dictionary look-up: no call per command.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable


class Revocations:
    """Revoked session ids, each until its access tokens expire anyway."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._until: dict[str, int] = {}
        self._clock = clock

    def revoke(self, session_id: str, until: int) -> None:
        """Refuse ``session_id``'s access tokens until ``until`` (Unix seconds)."""
        if session_id and until > self._clock():
            self._until[session_id] = max(until, self._until.get(session_id, 0))

    def load(self, revoked: Iterable[tuple[str, int]]) -> None:
        """Add a list the players service gave (kept ones stay)."""
        for session_id, until in revoked:
            self.revoke(session_id, until)
        self.prune()

    def revoked(self, session_id: str) -> bool:
        """Whether this session was revoked (an external identity, with none, never is)."""
        return bool(session_id) and session_id in self._until

    def prune(self) -> None:
        """Forget revocations whose access tokens have all expired."""
        now = self._clock()
        for session_id in [s for s, until in self._until.items() if until <= now]:
            del self._until[session_id]

    def __len__(self) -> int:
        return len(self._until)
