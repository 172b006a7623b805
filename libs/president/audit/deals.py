"""The committed deals of a table's log: each round's commitment, deal and reveal checked.

For every round, the ``DealCommitted`` event before the cards: its deal order,
hand size, jokers and options are what the rules give for the table at that
moment; the ``DealRevealed`` event after the round: the secret matches the
fingerprint, and the deal it re-creates (DEAL.md) is exactly the hands and
set-aside cards of ``RoundStarted``; or the ``DealSecretLost`` event in its place,
when the operator's dealer lost the secret: the round is noted as a finding
(:data:`~president.audit.reports.SECRET_LOST`) and the walk goes on. A
``DealSecretLost`` between a commitment and its deal withdraws that commitment
(a finding too): the round is then committed afresh and checked against the new one.
:class:`DealLedger` keeps the rounds of one table as the walk meets them and raises
:class:`~president.audit.reports.Found` at the first bad one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from president import codec
from president.audit.commands import decode
from president.audit.explain import card_words
from president.audit.reports import (
    FAILED,
    IN_PROGRESS,
    SECRET_LOST,
    VERIFIED,
    WITHDRAWN,
    Discrepancy,
    Found,
    RoundReport,
)
from president.deal import DEAL_VERSION, hands_by_seat, verify_fingerprint
from president.deal import fingerprint as deal_fingerprint
from president.events.v1 import events_pb2 as pb
from president.hosting.events import DealCommitted, DealRevealed, DealSecretLost
from president.rules import game as g
from president.rules import round as rnd
from president.rules.options import OptionError
from president.store import StoredEvent

_HEX_SECRET = re.compile(r"[0-9a-f]{64}")
"""A secret as stored: 32 bytes in lowercase hex."""
_HEX_FINGERPRINT = _HEX_SECRET
"""A fingerprint as stored: 32 bytes in lowercase hex."""
_DEAL_REVEALED = codec.type_name(pb.DealRevealed)
REVEAL_GRACE = timedelta(seconds=60)
"""How long a live log may show a round ended and not revealed before its game's end is an error."""


@dataclass
class RoundTrack:
    """One round of the log as far as the walk has come: committed, dealt, ended, revealed."""

    game_no: int
    round_no: int
    fingerprint: str
    deal_order: tuple[int, ...]
    hand_size: int | None
    jokers: bool
    committed_at: int
    dealt: StoredEvent | None = None
    deal_checked: bool = False
    ended_at: int | None = None
    revealed_at: int | None = None
    secret_hex: str | None = None
    lost_at: int | None = None

    @property
    def key(self) -> tuple[int, int]:
        return self.game_no, self.round_no

    def where(self) -> str:
        return f"round {self.round_no} of game {self.game_no}"

    def report(self, status: str) -> RoundReport:
        return RoundReport(
            game_no=self.game_no,
            round_no=self.round_no,
            fingerprint=self.fingerprint,
            status=status,
            committed_at=self.committed_at,
            dealt_at=self.dealt.version if self.dealt is not None else None,
            ended_at=self.ended_at,
            revealed_at=self.revealed_at,
            secret_hex=self.secret_hex,
            lost_at=self.lost_at,
        )


@dataclass
class DealLedger:
    """The rounds of one table's log, and the round whose deal awaits its reveal."""

    reveals: dict[tuple[int, int], list[str]] = field(default_factory=dict)
    """Secrets revealed anywhere in the log, by (game, round)."""
    rounds: list[RoundTrack] = field(default_factory=list)
    pending: RoundTrack | None = None
    losses: list[Found] = field(default_factory=list)
    """The rounds whose secret the operator lost: findings, though the walk goes on."""

    def scan_reveals(self, events: Sequence[StoredEvent]) -> None:
        """Note the secrets revealed anywhere in the log, so a deal is checked where it is dealt."""
        for event in events:
            if event.type != _DEAL_REVEALED:
                continue
            try:
                revealed = decode(event)
            except Exception:  # a bad payload is reported where it is
                continue
            if isinstance(revealed, DealRevealed):
                key = (revealed.game_no, revealed.round_no)
                self.reveals.setdefault(key, []).append(revealed.secret_hex)

    # -- DealCommitted ---------------------------------------------------------
    def committed(self, stored: StoredEvent, event: DealCommitted, game: g.GameState) -> None:
        """A deal is committed: for the next round, as the rules deal it at this table now."""
        key = (event.game_no, event.round_no)
        previous = self.pending
        if previous is not None:
            if previous.ended_at is not None:
                raise Found(
                    stored,
                    f"{previous.where()} ended at version {previous.ended_at} but its secret "
                    "was never revealed, and a new deal is committed",
                )
            if previous.dealt is not None:
                raise Found(
                    stored,
                    f"a new deal is committed while {previous.where()} is still being played",
                )
            if previous.key == key and previous.fingerprint != event.fingerprint:
                raise Found(
                    stored,
                    f"{previous.where()} was already committed at version "
                    f"{previous.committed_at} with another fingerprint: a dealer that commits "
                    "twice could pick the deal it likes",
                )
            self.rounds.remove(previous)  # committed, never dealt: replaced
            self.pending = None
        if game.phase != g.GamePhase.DEALING:
            raise Found(
                stored,
                f"a deal is committed while the table is not waiting for one "
                f"(the table is {game.phase.replace('_', ' ')})",
            )
        expected_key = (game.game_no, game.round_no + 1)
        if key != expected_key:
            raise Found(
                stored,
                f"it commits round {event.round_no} of game {event.game_no}, but the next "
                f"round is round {expected_key[1]} of game {expected_key[0]}",
            )
        if event.deal_version != DEAL_VERSION:
            raise Found(
                stored,
                f"deal version {event.deal_version!r}: this audit checks {DEAL_VERSION!r} deals",
            )
        if not _HEX_FINGERPRINT.fullmatch(event.fingerprint):
            raise Found(stored, "its fingerprint is not 64 lowercase hex digits")
        order = g.deal_order(game)
        stored_order = tuple(event.deal_order)
        if stored_order != order:
            raise Found(
                stored,
                f"the deal order is {list(stored_order)}, but the rules deal this round "
                f"in the order {list(order)} (deal_extras {game.options.deal_extras})",
            )
        if event.players != len(order):
            raise Found(
                stored,
                f"it deals to {event.players} players, but {len(order)} players sit at the table",
            )
        if event.jokers != game.options.jokers:
            raise Found(stored, "whether jokers are in the deck differs from the table's options")
        limit = g.hand_size(game)
        if event.hand_size != (limit or 0):
            wanted = f"{limit} cards each" if limit else "no hand-size limit"
            raise Found(
                stored, f"it deals with hand size {event.hand_size}, but the rules give {wanted}"
            )
        try:
            options = codec.options_from_map(game.options.preset, dict(event.options))
        except OptionError as error:
            raise Found(stored, f"its options are not valid: {error}") from None
        if options != game.options:
            raise Found(stored, "its options differ from the table's options")
        track = RoundTrack(
            game_no=event.game_no,
            round_no=event.round_no,
            fingerprint=event.fingerprint,
            deal_order=order,
            hand_size=limit,
            jokers=event.jokers,
            committed_at=stored.version,
        )
        self.pending = track
        self.rounds.append(track)

    # -- RoundStarted ----------------------------------------------------------
    def check_deal(self, stored: StoredEvent, started: rnd.RoundStarted, game: g.GameState) -> None:
        """Before the deal is replayed: it was committed, and it is the committed deal."""
        pending = self.pending
        if pending is None or pending.dealt is not None:
            raise Found(stored, "this round was dealt without a committed deal before it")
        if pending.key != (game.game_no, game.round_no + 1):
            raise Found(
                stored,
                f"the deal committed at version {pending.committed_at} is for "
                f"{pending.where()}, not for round {game.round_no + 1} of game {game.game_no}",
            )
        if g.deal_order(game) != pending.deal_order:
            raise Found(
                stored, f"the table changed since the deal was committed at {pending.committed_at}"
            )
        for secret_hex in self.reveals.get(pending.key, ()):
            secret = _secret(secret_hex)
            if secret is None or not verify_fingerprint(secret, pending.fingerprint):
                continue  # reported where it is revealed
            _compare_deal(stored, started, pending, secret, game)
            pending.deal_checked = True
            return

    def dealt(self, stored: StoredEvent) -> None:
        """The rules dealt the committed round at ``stored``."""
        assert self.pending is not None
        self.pending.dealt = stored

    def ended(self, version: int) -> None:
        """The round being played ended at ``version``."""
        if self.pending is not None:
            self.pending.ended_at = version

    # -- DealRevealed ----------------------------------------------------------
    def revealed(self, stored: StoredEvent, event: DealRevealed, game: g.GameState) -> None:
        """A secret is revealed: of the round that just ended, matching its fingerprint."""
        pending = self._awaiting(stored, event.game_no, event.round_no)
        where = pending.where()
        if pending.ended_at is None:
            raise Found(
                stored,
                f"the secret of {where} is revealed before the round ended: "
                "anyone could have seen every hand",
            )
        secret = _secret(event.secret_hex)
        if secret is None:
            raise Found(stored, "the revealed secret is not 64 lowercase hex digits (32 bytes)")
        if not verify_fingerprint(secret, pending.fingerprint):
            raise Found(
                stored,
                f"the revealed secret does not match the fingerprint committed at version "
                f"{pending.committed_at}: it has fingerprint {deal_fingerprint(secret)}, "
                f"the commitment {pending.fingerprint}",
            )
        if not pending.deal_checked:  # pragma: no cover - the look-ahead checked it
            dealt = pending.dealt
            assert dealt is not None  # _awaiting: a dealt round
            started = decode(dealt)
            assert isinstance(started, rnd.RoundStarted)
            _compare_deal(dealt, started, pending, secret, game)
        pending.revealed_at = stored.version
        pending.secret_hex = event.secret_hex
        self.pending = None

    # -- DealSecretLost --------------------------------------------------------
    def lost(self, stored: StoredEvent, event: DealSecretLost) -> None:
        """The operator lost the secret of the round that just ended: noted as a finding
        (the round's deal can never be checked), and the walk goes on. Or of a round
        committed and not yet dealt: the commitment is withdrawn (:meth:`withdrawn`)."""
        pending = self.pending
        key = (event.game_no, event.round_no)
        if pending is not None and pending.dealt is None and pending.key == key:
            self.withdrawn(stored, event, pending)
            return
        pending = self._awaiting(stored, event.game_no, event.round_no)
        where = pending.where()
        if pending.ended_at is None:
            raise Found(stored, f"the secret of {where} is said lost before the round ended")
        if event.fingerprint != pending.fingerprint:
            raise Found(
                stored,
                f"it names fingerprint {event.fingerprint}, but {where} was committed at "
                f"version {pending.committed_at} with {pending.fingerprint}",
            )
        pending.lost_at = stored.version
        self.pending = None
        self.losses.append(
            Found(
                stored,
                f"the operator lost the secret of {where} (fingerprint {pending.fingerprint}, "
                f"committed at version {pending.committed_at}): its deal cannot be verified, "
                "ever",
            )
        )

    def withdrawn(self, stored: StoredEvent, event: DealSecretLost, pending: RoundTrack) -> None:
        """The operator lost the secret of a round committed and not dealt: that commitment
        is withdrawn, nothing was dealt from it, and the round may be committed afresh (with
        another fingerprint) and dealt from the new commitment, which is checked as any.
        A finding all the same: a dealer that withdraws commitments could pick the deal it
        likes."""
        where = pending.where()
        if event.fingerprint != pending.fingerprint:
            raise Found(
                stored,
                f"it names fingerprint {event.fingerprint}, but {where} was committed at "
                f"version {pending.committed_at} with {pending.fingerprint}",
            )
        pending.lost_at = stored.version
        self.pending = None
        self.losses.append(
            Found(
                stored,
                f"the operator lost the secret of {where} before its deal (fingerprint "
                f"{pending.fingerprint}, committed at version {pending.committed_at}): that "
                "commitment is withdrawn and the round committed afresh; a dealer that "
                "withdraws commitments could pick the deal it likes",
            )
        )

    def _awaiting(self, stored: StoredEvent, game_no: int, round_no: int) -> RoundTrack:
        """The dealt round ``(game_no, round_no)``, which awaits its reveal."""
        key = (game_no, round_no)
        where = f"round {round_no} of game {game_no}"
        pending = self.pending
        if pending is None or pending.key != key:
            done = next((r for r in self.rounds if r.key == key and r.revealed_at), None)
            if done is not None:
                raise Found(stored, f"{where} was already revealed at version {done.revealed_at}")
            raise Found(stored, f"it reveals {where}, but no deal of that round awaits its reveal")
        if pending.dealt is None:
            raise Found(stored, f"it reveals {where}, which was never dealt")
        return pending

    # -- the end of the log -----------------------------------------------------
    def check_last_reveal(
        self,
        events: Sequence[StoredEvent],
        game_ended: StoredEvent | None,
        now: datetime | None,
    ) -> list[str]:
        """The last round, if it ended unrevealed: Found once its game ended, else a warning.

        A live log is briefly between a round's end and its reveal: read at
        ``now``, within :data:`REVEAL_GRACE` of the round's end, that is a
        warning saying how long ago the round ended.
        """
        pending = self.pending
        if pending is None or pending.ended_at is None:
            return []
        first = events[0].version
        ended = events[pending.ended_at - first]
        ago = ""
        within_grace = False
        if now is not None:
            try:
                ended_time = datetime.fromisoformat(ended.time)
                elapsed = now - ended_time
            except (KeyError, ValueError, TypeError):
                elapsed = None
            if elapsed is not None:
                ago = f", {elapsed.total_seconds():.1f} s ago"
                within_grace = elapsed <= REVEAL_GRACE
        if game_ended is not None and not within_grace:
            raise Found(
                game_ended,
                f"the game ended, but {pending.where()} (ended at version {pending.ended_at}"
                f"{ago}) was never revealed: its deal cannot be checked against its "
                "fingerprint",
            )
        return [
            f"{pending.where()} ended at version {pending.ended_at} ({ended.time}{ago}) and "
            "its secret is not revealed yet: its deal is not checked"
        ]

    # -- the report ------------------------------------------------------------
    def round_reports(self, problem: Discrepancy | None) -> tuple[RoundReport, ...]:
        """Each round with its status; with a problem, the round awaiting its reveal failed."""
        reports = []
        for track in self.rounds:
            if track.revealed_at is not None:
                status = VERIFIED
            elif track.lost_at is not None:
                status = SECRET_LOST if track.dealt is not None else WITHDRAWN
            elif problem is not None and track is self.pending:
                status = FAILED
            else:
                status = IN_PROGRESS
            reports.append(track.report(status))
        return tuple(reports)


def _compare_deal(
    stored: StoredEvent,
    started: rnd.RoundStarted,
    pending: RoundTrack,
    secret: bytes,
    game: g.GameState,
) -> None:
    """The dealt hands and set-aside cards are those the secret re-creates (DEAL.md)."""
    dealt = hands_by_seat(
        secret, pending.deal_order, jokers=pending.jokers, hand_size=pending.hand_size
    )
    expected = dealt.masks(len(game.seats))
    hands = started.hands
    if len(hands) != len(expected):
        raise Found(stored, f"it deals {len(hands)} hands to a table of {len(expected)} seats")
    for seat, (have, want) in enumerate(zip(hands, expected, strict=True)):
        if have != want:
            raise Found(
                stored,
                f"seat {seat}'s dealt hand is not the committed deal: the log gives "
                f"{card_words(have & ~want)} that the revealed secret did not deal to this seat, "
                f"and lacks {card_words(want & ~have)}",
            )
    aside = dealt.set_aside_mask
    if started.set_aside != aside:
        raise Found(
            stored,
            f"the cards set aside are {card_words(started.set_aside)}, but the committed deal "
            f"sets aside {card_words(aside)}",
        )


def _secret(secret_hex: str) -> bytes | None:
    """The secret's bytes, or None when it is not 64 lowercase hex digits."""
    if not _HEX_SECRET.fullmatch(secret_hex):
        return None
    return bytes.fromhex(secret_hex)
