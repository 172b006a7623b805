"""A retried command is the same command: a digest of each command, kept with its events.

The store makes a command id idempotent: an append of an id that wrote
before writes nothing and returns the first result. A client that sends the
same id again with other content (other cards, another seat, another actor,
another kind of command) is not retrying: it is refused as a conflicting retry
(``CommandConflict``, COMMAND_ID_REUSED), never answered with the first
command's result. The digest rides in each event's metadata (``digest``);
events stored before it existed carry none and are not compared.

The digest is defined here once (:func:`command_digest`), over terms an auditor
rebuilds from the stored events alone (``docs/auditing.md``, "The command
digest"): SHA-256 of netstrings (a tag, the actor, the command's kind, its
fields as text), its first 24 hex digits. So ``audit verify`` recomputes it and
refuses one that is not the command's own: it can hold no chosen data. Which
terms each command has is :func:`president.hosting.commands.digest_terms`.

Events stored before this definition carry the digest of the first format
(:func:`legacy_command_digest`: SHA-256 of the actor and Python's ``repr`` of the
command), which a retry and the audit still accept for them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence

from president.hosting.errors import CommandConflict
from president.store import AppendResult, EventStore

#: The metadata key of a command's digest.
DIGEST = "digest"
#: The first item hashed: names the definition (another one would name another tag).
DIGEST_TAG = "president/command-digest/2"
#: Hex digits kept of the SHA-256 (96 bits: a chance collision needs 2**48 commands).
DIGEST_HEX_DIGITS = 24

Term = str | int | bool
"""One field of a command as the digest writes it: text as is, an integer in decimal,
a boolean as ``true`` or ``false`` (cards are text: their names, weakest first)."""


def netstring(data: bytes) -> bytes:
    """``<length>:<bytes>,`` (D. J. Bernstein's netstrings): items that cannot run together."""
    return b"%d:%s," % (len(data), data)


def term_text(term: Term) -> str:
    """A field as the digest writes it (see :data:`Term`)."""
    if isinstance(term, bool):
        return "true" if term else "false"
    if isinstance(term, int):
        return str(term)
    return term


def digest_input(actor: str, kind: str, fields: Sequence[Term]) -> bytes:
    """The bytes hashed: the netstrings of the tag, the actor, the kind and each field, in
    UTF-8, concatenated."""
    items = (DIGEST_TAG, actor, kind, *(term_text(field) for field in fields))
    return b"".join(netstring(item.encode("utf-8")) for item in items)


def command_digest(actor: str, kind: str, fields: Sequence[Term]) -> str:
    """The digest of the command of ``kind`` with ``fields``, sent by ``actor``."""
    digest = hashlib.sha256(digest_input(actor, kind, fields)).hexdigest()
    return digest[:DIGEST_HEX_DIGITS]


def legacy_command_digest(subject: object, actor: str) -> str:
    """The digest of the first format, which events stored before :func:`command_digest`
    carry: SHA-256 of ``f"{actor}\\n{subject!r}"``, ``subject`` as it was then made
    (:func:`president.hosting.commands.legacy_digest_of`)."""
    return hashlib.sha256(f"{actor}\n{subject!r}".encode()).hexdigest()[:DIGEST_HEX_DIGITS]


def check_same(
    store: EventStore, earlier: AppendResult, command_id: str, digests: Collection[str]
) -> None:
    """CommandConflict unless the earlier append of ``command_id`` was this very command
    (its kept digest is one of ``digests``: this command's, in each format)."""
    first = store.read_stream(earlier.stream_id, earlier.first_version, 1)
    kept = first[0].metadata.get(DIGEST) if first else None
    if kept is not None and kept not in digests:
        raise CommandConflict(command_id)
