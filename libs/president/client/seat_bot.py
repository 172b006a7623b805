"""The bot client: a seat played through the gateway from its own view's legal actions.

:func:`play_seat` is used by ``president run``, the end-to-end tests and the
load benchmark: it watches its seat's stream and answers with one of the
view's legal actions, resuming after a lost connection.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import grpc

from president.client.errors import RESUMABLE, GatewayError, connection_lost
from president.client.gateway import GatewayClient
from president.game.v1 import game_pb2 as gpb
from president.gateway.v1 import gateway_pb2 as pb
from president.rules.cards import parse_card

Action = tuple[str, list[str]]
#: The reason a stream ends with when the table's history it showed was lost (docs/clients.md).
HISTORY_REWOUND = "HISTORY_REWOUND"


def _strength(card: str) -> int:
    return parse_card(card)


def choose(view: gpb.TableView) -> Action | None:
    """A simple legal move from the view: the weakest play (most cards of it), else pass.

    In the exchange: the weakest cards that may be returned.
    """
    legal = list(view.round.legal)
    if not legal:
        return None
    gives = [list(a.cards) for a in legal if a.verb == "give"]
    if gives:
        return "give", min(gives, key=lambda cards: sorted(map(_strength, cards)))
    plays = [list(a.cards) for a in legal if a.verb == "play"]
    if plays:
        return "play", min(plays, key=lambda cards: (min(map(_strength, cards)) // 4, -len(cards)))
    if any(a.verb == "pass" for a in legal):
        return "pass", []
    return None


Policy = Callable[[gpb.TableView], Action | None]


@dataclass
class SeatLog:
    """What a bot client saw and did."""

    responses: list[pb.WatchResponse] = field(default_factory=list)
    actions: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    reconnects: int = 0
    #: Where in ``responses`` a watch began again from a snapshot after its stream ended
    #: HISTORY_REWOUND (the versions before it were lost: they may be seen again).
    rewinds: list[int] = field(default_factory=list)

    @property
    def last_view(self) -> gpb.TableView | None:
        return self.responses[-1].view if self.responses else None


class SeatActions(Protocol):
    """What a seat does: through its calls (:class:`GatewayClient`) or a :class:`Session`."""

    async def play(
        self, cards: Sequence[str], trick_version: int | None = None, command_id: str = ""
    ) -> int: ...

    async def pass_(self, trick_version: int | None = None, command_id: str = "") -> int: ...

    async def return_cards(self, cards: Sequence[str], command_id: str = "") -> int: ...

    async def host_action(self, choice: str, command_id: str = "") -> int: ...


async def act(
    client: SeatActions, view: gpb.TableView, policy: Policy = choose, command_id: str = ""
) -> int | None:
    """Take the policy's action on ``view``; the version after it, None when idle."""
    action = policy(view)
    if action is None:
        return None
    verb, cards = action
    rapid = not view.round.HasField("to_act")
    trick = view.round.trick_version if rapid else None
    if verb == "give":
        return await client.return_cards(cards, command_id=command_id)
    if verb == "play":
        return await client.play(cards, trick_version=trick, command_id=command_id)
    return await client.pass_(trick_version=trick, command_id=command_id)


async def play_seat(
    client: GatewayClient,
    *,
    policy: Policy = choose,
    host_rounds: int | None = None,
    until: Callable[[gpb.TableView], bool] | None = None,
    on_change: Callable[[pb.WatchResponse], None] | None = None,
    log: SeatLog | None = None,
    keep: bool = True,
    from_version: int = 0,
    session: bool = False,
) -> SeatLog:
    """Play the client's seat from its watch stream until the game is over (or ``until``).

    With ``host_rounds``, the client is the host: between rounds it asks for
    the next round, and ends the game after that many rounds. The stream
    starts with a snapshot, or after ``from_version``, and is resumed from
    the last version after a dropped connection. With ``session``, it
    watches and acts on one Session stream instead of Watch and calls. A
    stream that ends with its access token (TOKEN_EXPIRED) is opened again
    after a refresh; one whose history was rewound (DATA_LOSS HISTORY_REWOUND)
    is opened again from a snapshot.
    """
    log = log or SeatLog()
    last_version = from_version
    # A replayed past is watched, not acted on: act from the table's present version.
    acted_to = (await client.get_table()).version if from_version else 0
    unanswered: gpb.TableView | None = None  # a view whose action the connection lost

    async def decide(seat: SeatActions, view: gpb.TableView) -> None:
        """Act on ``view`` if it calls for it. The command id is the view's version: sent
        again after a lost connection, a command that went through runs only once."""
        nonlocal acted_to, unanswered
        if view.version < acted_to:
            return  # our last action is not in this view yet
        command_id = f"v{view.version}"
        unanswered = view
        if host_rounds is not None and view.phase == "between_rounds":
            choice = "end_game" if view.round.round_no >= host_rounds else "next_round"
            acted_to = await _tolerant(seat.host_action(choice, command_id), log) or acted_to
        elif view.phase == "round":
            after = await _tolerant(act(seat, view, policy, command_id), log)
            if after is not None:
                log.actions += 1
                acted_to = after
        unanswered = None

    while True:
        opened = client.session(last_version) if session else None
        seat: SeatActions = opened if opened is not None else client
        changes = opened.changes() if opened is not None else client.watch(last_version)
        try:
            if unanswered is not None:  # nothing new may come to act on: send it again
                await decide(seat, unanswered)
            async for change in changes:
                last_version = change.version
                if keep:
                    log.responses.append(change)
                if on_change is not None:
                    on_change(change)
                view = change.view
                if view.phase == "game_over" or (until is not None and until(view)):
                    return log
                await decide(seat, view)
            return log
        except GatewayError as error:
            if error.reason == "TOKEN_EXPIRED" and client.refresh_token:
                await client.refresh()  # the stream ended with the access token: go on
            elif error.reason == HISTORY_REWOUND:
                # The table's database lost changes this stream showed (a failover to a standby
                # that lacked them): they never happened. Start again from a snapshot of what
                # was kept, and act on that.
                last_version, acted_to, unanswered = 0, 0, None
                log.rewinds.append(len(log.responses))
            elif error.code not in RESUMABLE:
                raise
            else:
                await asyncio.sleep(0.2)
            log.reconnects += 1
        finally:
            if opened is not None:
                await opened.close()


async def _tolerant(call: Awaitable[int | None], log: SeatLog) -> int | None:
    """The call's result; a refusal (lost race, the timer was faster) is counted and skipped.

    A lost connection is raised: the caller reconnects and sends the command again.
    """
    try:
        return await call
    except GatewayError as error:
        if error.code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            raise
        if connection_lost(error):
            raise
        log.refused[error.reason] = log.refused.get(error.reason, 0) + 1
        return None


@contextlib.asynccontextmanager
async def connected(address: str) -> AsyncIterator[GatewayClient]:
    """A client on its own channel, closed afterwards."""
    client = GatewayClient.connect(address)
    try:
        yield client
    finally:
        await client.close()
