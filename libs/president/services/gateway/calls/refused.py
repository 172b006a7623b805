"""The gateway's own refusals: a call refused by the gateway's rules, not a service's."""

from __future__ import annotations


class Refused(Exception):
    """A call the gateway refuses by its own rules: a stable reason and a sentence.

    The entrypoint gives it its transport status
    (:data:`president.services.gateway.api.handlers.REFUSED_STATUS`).
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message
