"""Blinding values: what keeps a stored event's chain hash from giving away hidden cards.

A seat receives every event's chain hash (its receipt) and all the event's
metadata but its digest (actor, command id, time) with the payload it may see.
When the payload holds cards hidden from the seat (others' dealt hands, an
exchange between two other seats), the hash alone would commit to them
without a salt: a seat could hash each of the few hundred possible card sets
and keep the one that matches. (The command digest, also hashed, is made
from the command's cards and adds nothing unknown.) So the table service
writes into every event's metadata a blinding value (``blind``): 128 random
bits as 32 lowercase hex digits, drawn anew for each event. It is hashed
with the rest, stays in the stored log for auditors, and is never sent to a
seat (envelopes carry only the actor, command id and time).
"""

from __future__ import annotations

import random
import re
import secrets
from collections.abc import Callable

#: The metadata key of an event's blinding value.
BLIND = "blind"
#: The random bytes of a blinding value (written as twice as many hex digits).
BLIND_BYTES = 16
#: A well-formed blinding value, and nothing else.
BLIND_FORM = re.compile(r"[0-9a-f]{32}")

Blinding = Callable[[], str]
"""Where blinding values come from: one call, one fresh value."""


def blinding_value() -> str:
    """A fresh blinding value from the operating system's secure random source."""
    return secrets.token_hex(BLIND_BYTES)


def seeded_blinding(seed: int) -> Blinding:
    """Blinding values that follow from ``seed``, for recorded local games only.

    A seeded recorded game (:func:`president.play.recorded.seeded_host`)
    takes its round secrets from its seed too, so it hides nothing from
    anyone; its values follow from the seed so that the same seed records
    the same log, hash for hash. The table service always uses
    :func:`blinding_value`.
    """
    source = random.Random(f"president-blinding:{seed}")
    return lambda: source.randbytes(BLIND_BYTES).hex()
