"""The operator's signatures: the stated bytes of a receipt and of a feed head, signed with Ed25519.

A receipt (the chain hash of a table's event, sent with every change) and
each entry of the public commitment feed (the head of its chain) carry the
operator's Ed25519 signature over the bytes below, so whoever holds one can
show that the operator issued it, and a forged one (a hash changed, a chain
recomputed) is told apart from a rewritten log. ``docs/auditing.md`` states
the same bytes:

- a receipt: ``president-receipt/1 LF <stream id> LF <version> LF <hash> LF``
  (:func:`receipt_bytes`);
- a feed head: ``president-feed-head/1 LF <seq> LF <hash> LF``
  (:func:`feed_head_bytes`).

A key is named by its id, the first 16 hex digits of the SHA-256 of its 32
raw public bytes (:func:`key_id`). The table service signs with a
:class:`Signer` read from its key file; the gateway publishes the public
keys (``GetOperatorKeys``); the audit checks with :class:`OperatorKeys`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)

ALGORITHM = "ed25519"
RECEIPTS_REMEMBERED = 4096
"""Receipts a signer remembers it signed (Ed25519 is deterministic: the same signature)."""
RECEIPT_CONTEXT = "president-receipt/1"
FEED_HEAD_CONTEXT = "president-feed-head/1"


def receipt_bytes(stream_id: str, version: int, event_hash: str) -> bytes:
    """The bytes a receipt's signature covers: its stream, version and event hash."""
    return f"{RECEIPT_CONTEXT}\n{stream_id}\n{version}\n{event_hash}\n".encode()


def feed_head_bytes(seq: int, entry_hash: str) -> bytes:
    """The bytes a feed entry's signature covers: its place and its chain hash."""
    return f"{FEED_HEAD_CONTEXT}\n{seq}\n{entry_hash}\n".encode()


def key_id(public_key: bytes) -> str:
    """A public key's id: the first 16 hex digits of the SHA-256 of its 32 raw bytes."""
    return hashlib.sha256(public_key).hexdigest()[:16]


def raw_public(key: Ed25519PublicKey) -> bytes:
    """A public key's 32 raw bytes."""
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


class BadKeyFile(ValueError):
    """A signing key file that cannot be read, in one sentence."""


@dataclass(frozen=True)
class Signature:
    """A signature and the id of the key that made it."""

    key_id: str
    signature: bytes


class Signer:
    """The operator's signing key: signs receipts and feed heads."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        self.public_key = raw_public(private_key.public_key())
        self.key_id = key_id(self.public_key)
        # An event's receipt goes out in the command's answer and on NATS: signed once.
        self._receipts = lru_cache(maxsize=RECEIPTS_REMEMBERED)(self._sign_receipt)

    @classmethod
    def generate(cls) -> Signer:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_file(cls, path: str | Path) -> Signer:
        """Read a PEM (PKCS #8) Ed25519 private key; :class:`BadKeyFile` if it is none."""
        try:
            key = load_pem_private_key(Path(path).read_bytes(), password=None)
        except OSError as error:
            raise BadKeyFile(f"signing key {path}: cannot read it ({error.strerror})") from None
        except (ValueError, TypeError) as error:
            raise BadKeyFile(f"signing key {path}: not a PEM private key ({error})") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise BadKeyFile(f"signing key {path}: not an Ed25519 key")
        return cls(key)

    @classmethod
    def kept_at(cls, path: str | Path) -> tuple[Signer, bool]:
        """The key in ``path``, made there first if there is none; and whether it was made.

        A new key is written as PEM (PKCS #8), readable by its owner only, and never
        over a file: of two makers at once, the second reads the first one's key.
        """
        target = Path(path)
        if target.exists():
            return cls.from_file(target), False
        signer = cls.generate()
        pem = signer._key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return cls.from_file(target), False
        except OSError as error:
            raise BadKeyFile(f"signing key {path}: cannot write it ({error.strerror})") from None
        with os.fdopen(descriptor, "wb") as out:
            out.write(pem)
        return signer, True

    def sign(self, message: bytes) -> Signature:
        return Signature(self.key_id, self._key.sign(message))

    def sign_receipt(self, stream_id: str, version: int, event_hash: str) -> Signature:
        return self._receipts(stream_id, version, event_hash)

    def _sign_receipt(self, stream_id: str, version: int, event_hash: str) -> Signature:
        return self.sign(receipt_bytes(stream_id, version, event_hash))

    def sign_feed_head(self, seq: int, entry_hash: str) -> Signature:
        return self.sign(feed_head_bytes(seq, entry_hash))


class OperatorKeys:
    """The operator's published public keys, by id: checks signatures."""

    def __init__(self, keys: Iterable[bytes]) -> None:
        self._keys = {key_id(raw): Ed25519PublicKey.from_public_bytes(raw) for raw in keys}

    @classmethod
    def from_hex(cls, texts: Iterable[str]) -> OperatorKeys:
        """Keys from 64-digit hex texts; ValueError naming one that is none."""
        raws = []
        for text in texts:
            try:
                raw = bytes.fromhex(text.strip())
            except ValueError:
                raw = b""
            if len(raw) != 32:
                raise ValueError(
                    f"{text!r} is not an Ed25519 public key (64 hex digits, its 32 raw bytes)"
                )
            raws.append(raw)
        return cls(raws)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._keys)

    def __bool__(self) -> bool:
        return bool(self._keys)

    def signed(self, message: bytes, signer_id: str, signature: bytes) -> bool:
        """Whether ``signature`` is the signature of ``message`` by the key ``signer_id``."""
        key = self._keys.get(signer_id)
        if key is None or len(signature) != 64:
            return False
        try:
            key.verify(signature, message)
        except InvalidSignature:
            return False
        return True
