"""ListTables: the lobby, a page at a time, from the table service's directory.

Only public tables are ever listed (the directory's ``listed_only``, an
indexed column: practice and private tables never leave the table service):
by default those in the lobby with a free seat, with ``in_progress`` also
the games under way, to spectate. Filters (preset, free seats) and the page
(by table id) go to the directory's query, so a page costs what it lists.
Page tokens hold the last table id, bound to the request's filters.
"""

from __future__ import annotations

from president.gateway.v1 import gateway_pb2 as pb
from president.hosting.visibility import PUBLIC
from president.rules.options import PRESETS
from president.services.gateway.calls.checks import invalid
from president.services.gateway.calls.page_tokens import PageTokens, page_size
from president.services.gateway.upstream.ports import TablePort
from president.table.v1 import table_pb2 as tpb

#: The lobby's phase of each table phase.
PHASES = {
    "lobby": "lobby",
    "dealing": "playing",
    "round": "playing",
    "between_rounds": "between_rounds",
    "game_over": "game_over",
}


def lobby_tokens(key: bytes) -> PageTokens:
    """The lobby's page tokens (bound to the filters; a lobby has no reader to bind)."""
    return PageTokens(key, "lobby")


def _filters(request: pb.ListTablesRequest) -> dict[str, object]:
    return {
        "preset": request.preset,
        "free": request.min_free_seats,
        "playing": request.in_progress,
        "size": request.page_size,
    }


#: The lobby's summaries of the table service's, each encoded as a ListTablesResponse of
#: it alone, by the table service's encoding: the lobby lists the same tables again and
#: again, and the encodings of a repeated field's items joined are the field's.
_ENCODED: dict[bytes, bytes] = {}
KEPT_ENCODED = 4_096


def _encoded(item: tpb.TableSummary) -> bytes:
    key = item.SerializeToString()
    encoded = _ENCODED.get(key)
    if encoded is None:
        summary = pb.TableSummary(
            table_id=item.table_id,
            options=item.options,
            seated=item.seated,
            seat_count=item.seat_count,
            name=item.name,
            preset=item.options.preset,
            host_name=item.host_name,
            phase=PHASES.get(item.phase, item.phase),
            free_seats=item.seat_count - item.seated,
            spectators_allowed=True,
        )
        encoded = pb.ListTablesResponse(tables=[summary]).SerializeToString()
        if len(_ENCODED) >= KEPT_ENCODED:
            _ENCODED.clear()  # the busy tables come back at once
        _ENCODED[key] = encoded
    return encoded


async def lobby_page(
    tables: TablePort, request: pb.ListTablesRequest, tokens: PageTokens
) -> pb.ListTablesResponse:
    """The page of public tables ``request`` asks for."""
    size = page_size(request.page_size)
    if request.preset and request.preset not in PRESETS:
        raise invalid("INVALID_PRESET", f"the presets are {', '.join(PRESETS)}")
    after = ""
    if request.page_token:
        position = tokens.read(request.page_token, _filters(request))
        if not isinstance(position, str):
            raise invalid("PAGE_TOKEN_INVALID", "this page token holds no page of the lobby")
        after = position
    found = await tables.list_tables(
        tpb.ListTablesRequest(
            open_only=not request.in_progress,
            listed_only=True,
            preset=request.preset,
            min_free_seats=request.min_free_seats,
            limit=size + 1,
            after_table_id=after,
        )
    )
    # Never a table that is not public, whatever the directory says.
    parts = [_encoded(item) for item in found[:size] if item.visibility == PUBLIC]
    out = pb.ListTablesResponse.FromString(b"".join(parts))
    if len(found) > size:
        out.next_page_token = tokens.issue(_filters(request), found[size - 1].table_id)
    return out
