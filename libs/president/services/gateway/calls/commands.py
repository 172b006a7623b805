"""A command's one path to the table service: (account, table, command) in one call.

Every command a call makes goes through :meth:`Commands.submit` (for the
caller) or :meth:`Commands.sit` (a seat taken for someone, a bot or the
creator): the table service finds the account's seat and decides, and this
replica's feed is nudged with the version the command reached (on a refusal,
it checks that the store still holds what it showed: the history may have
been rewound). A client's command id is scoped by account and table
(:func:`scoped_command_id`), so a retry runs once.
"""

from __future__ import annotations

import hashlib
import hmac

from president.game.v1 import game_pb2 as gpb
from president.servicekit.errors import ServiceError
from president.servicekit.identity import Identity
from president.services.gateway.calls import checks
from president.services.gateway.calls.versions import CommandRequest, expected_version
from president.services.gateway.streams.feed import FeedHub
from president.services.gateway.upstream.ports import TablePort
from president.table.v1 import table_pb2 as tpb


class Commands:
    """Commands sent to the table service, each the version it reached."""

    def __init__(self, tables: TablePort, hub: FeedHub, id_key: bytes) -> None:
        self._tables = tables
        self._hub = hub
        self._id_key = id_key

    async def submit(
        self,
        identity: Identity,
        table: str,
        command: gpb.Command,
        command_id: str,
        expected_version: int | None = None,
    ) -> int:
        """Send (account, table, command) to the table service, which finds the account's
        seat and decides; with ``expected_version`` it runs only on that table version."""
        table_id = checks.table_id(table)
        command_id = scoped_command_id(identity.account_id, table_id, command_id)
        return await self._execute(
            table_id, command_id, identity.account_id, command, expected_version
        )

    async def run(
        self, identity: Identity, request: CommandRequest, command: gpb.Command, command_id: str
    ) -> int:
        """:meth:`submit` ``command`` for a call's request: at its table, on the version it
        was chosen on."""
        version = expected_version(request)
        return await self.submit(identity, request.table_id, command, command_id, version)

    async def sit(
        self,
        table_id: str,
        seat: int,
        player_id: str,
        name: str,
        is_bot: bool,
        command_id: str,
        actor: str,
        expected_version: int | None = None,
    ) -> int:
        """Seat ``player_id`` (a person or a bot) in ``seat``, asked by ``actor``."""
        sit_down = gpb.SitDown(seat=seat, player_id=player_id, display_name=name, is_bot=is_bot)
        command = gpb.Command(sit_down=sit_down)
        return await self._execute(table_id, command_id, actor, command, expected_version)

    def derived(self, what: str, command_id: str) -> str:
        """An id derived from a client's command id with the gateway's key (a table's id)."""
        return hmac.new(self._id_key, f"{what}:{command_id}".encode(), hashlib.sha256).hexdigest()

    async def _execute(
        self,
        table_id: str,
        command_id: str,
        actor: str,
        command: gpb.Command,
        expected_version: int | None,
    ) -> int:
        request = tpb.ExecuteCommandRequest(
            table_id=table_id,
            command_id=command_id,
            actor=gpb.Actor(player_id=actor),
            command=command,
        )
        if expected_version is not None:
            request.expected_version = expected_version
        try:
            response = await self._tables.submit(request)
        except ServiceError as error:
            self._hub.refused(table_id, error)  # acted on a lost history? the feed checks
            raise
        self._hub.nudge(table_id, response.version, response.committed)
        return response.version


def scoped_command_id(account_id: str, table_id: str, command_id: str) -> str:
    """The stored id of a client's command: scoped by the account and the table (command ids
    are unique in the whole store, and one account plays at many tables), so a retry runs
    once and two tables never share an id. The table is named by a digest, to stay short."""
    table = hashlib.sha256(table_id.encode()).hexdigest()[:12]
    return f"{account_id}@{table}:{command_id}"
