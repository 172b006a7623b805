"""End to end through the gateway: a table's activity and the lobby (issue 11).

The activity shows each reader exactly what Watch shows it, pages with
checked tokens; the lobby lists public tables only, filtered and paged. On
SQLite and PostgreSQL, the services as processes; the truth is the stored log.
"""

from __future__ import annotations

import grpc

from president.client import GatewayClient
from president.gateway.v1 import gateway_pb2 as pb
from tests.e2e import test_client_views as views
from tests.support.gateway_truth import Store, check_change, expect, table_of_humans

#: The gateway tests' fixtures: a client whose tables verify afterwards, the stack's store.
client, store, stores = views.client, views.store, views.stores


# --------------------------------------------------------------------------- activity
async def _all_activity(reader: GatewayClient, size: int) -> list[pb.ActivityItem]:
    items: list[pb.ActivityItem] = []
    token = ""
    while True:
        page = await reader.activity(page_size=size, page_token=token)
        assert len(page.items) <= size
        items.extend(page.items)
        token = page.next_page_token
        if not token:
            return items


async def test_the_activity_shows_each_reader_exactly_what_watch_shows(
    client: GatewayClient, store: Store
) -> None:
    """Two players, a spectator and an auditor page through a table's whole history (into
    its second round): every item is the very event Watch sends that reader, never another
    seat's cards or a secret before its reveal, with its sentence; versions run newest first
    from the table's version down to 1, each once."""
    humans = await table_of_humans(
        client, "house", humans=2, seats=4, options={"game_end": "rounds:3"}
    )
    table_id = client.table_id
    spectator, auditor = client.sibling(), client.sibling()
    await spectator.spectate(table_id)
    await auditor.spectate(table_id, auditor=True)
    await client.start()
    await views.drive_until(humans, lambda views: any(v.round.round_no == 2 for v in views))
    version = store.version(table_id)
    truth = store.truth(table_id)
    for reader in (*humans, spectator, auditor):
        items = [item for item in await _all_activity(reader, 17) if item.version <= version]
        assert [item.version for item in items] == list(range(version, 0, -1))
        watched = {c.version: c for c in await _watched(reader, version)}
        player = None if reader.seat is None else reader.player_id
        for item in items:
            if item.version > 1:
                assert item.event == watched[item.version].event, item.version
                check_change(watched[item.version], truth, player)
            assert item.text or item.event.type.endswith(("NextRoundStarted", "SeatsChanged"))
        texts = " ".join(item.text for item in items)
        assert "Host" in texts and "plays" in texts


async def _watched(reader: GatewayClient, version: int) -> list[pb.WatchResponse]:
    out: list[pb.WatchResponse] = []
    async for change in reader.watch(1):
        out.append(change)
        if change.version >= version:
            return out
    return out


async def test_bad_page_tokens_are_refused(client: GatewayClient) -> None:
    await client.create_table("house", display_name="Ada")
    await client.start()
    first = await client.activity(page_size=3)
    assert len(first.items) == 3 and first.next_page_token
    token = first.next_page_token
    second = await client.activity(page_size=3, page_token=token)
    assert second.items[0].version == first.items[-1].version - 1
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    body, signature = token.split(".")
    for forged in ("nonsense", token + "x", f"{body}.{signature[::-1]}", f"{signature}.{body}"):
        await expect(client.activity(page_token=forged), invalid, "PAGE_TOKEN_INVALID")
    other = client.sibling()
    await other.spectate(client.table_id)  # another reader may not use my token
    await expect(other.activity(page_token=token), invalid, "PAGE_TOKEN_INVALID")
    elsewhere = client.sibling()
    await elsewhere.create_table("house", display_name="Bo")
    client.touched.add(elsewhere.table_id)  # type: ignore[attr-defined]
    await expect(elsewhere.activity(page_token=token), invalid, "PAGE_TOKEN_INVALID")
    await expect(client.activity(page_size=201), invalid, "INVALID_PAGE_SIZE")


# --------------------------------------------------------------------------- the lobby
async def _whole_lobby(reader: GatewayClient, **filters: object) -> list[pb.TableSummary]:
    tables: list[pb.TableSummary] = []
    token = ""
    while True:
        page = await reader.lobby_page(page_size=2, page_token=token, **filters)  # type: ignore[arg-type]
        assert len(page.tables) <= 2
        tables.extend(page.tables)
        token = page.next_page_token
        if not token:
            ids = [t.table_id for t in tables]
            assert ids == sorted(set(ids)), "pages overlap or skip"
            return tables


async def test_the_lobby_lists_public_tables_by_name_and_never_private_ones(
    client: GatewayClient,
) -> None:
    friday = client.sibling()
    await friday.create_table(
        "club", seat_count=5, visibility="public", display_name="Ada", name="Friday club"
    )
    quick = client.sibling()
    await quick.create_table("house", seat_count=4, visibility="public", display_name="Bo")
    await quick.add_bot()
    await quick.add_bot()
    secret = client.sibling()
    await secret.create_table("club", visibility="private", display_name="Cy", name="Hidden")
    practice = client.sibling()
    await practice.create_table("house", display_name="Di", name="Solo")
    playing = client.sibling()
    await playing.create_table("house", seat_count=4, visibility="public", display_name="Ed")
    for _ in range(3):
        await playing.add_bot()
    await playing.start()
    ours = {t.table_id for t in (friday, quick, secret, practice, playing)}
    client.touched |= ours  # type: ignore[attr-defined]
    lobby = {t.table_id: t for t in await _whole_lobby(client) if t.table_id in ours}
    assert set(lobby) == {friday.table_id, quick.table_id}
    shown = lobby[friday.table_id]
    assert (shown.name, shown.preset, shown.host_name, shown.phase) == (
        "Friday club",
        "club",
        "Ada",
        "lobby",
    )
    assert (shown.seated, shown.free_seats, shown.seat_count) == (1, 4, 5)
    assert shown.spectators_allowed and shown.options.preset == "club"
    assert lobby[quick.table_id].free_seats == 1
    clubs = {t.table_id for t in await _whole_lobby(client, preset="club")}
    assert friday.table_id in clubs and quick.table_id not in clubs
    roomy = {t.table_id for t in await _whole_lobby(client, min_free_seats=2)}
    assert friday.table_id in roomy and quick.table_id not in roomy
    watching = {
        t.table_id: t for t in await _whole_lobby(client, in_progress=True) if t.table_id in ours
    }
    assert set(watching) == {friday.table_id, quick.table_id, playing.table_id}
    assert watching[playing.table_id].phase in ("playing", "between_rounds")
    # Bad input: a forged token, another query's token, an unknown preset.
    page = await client.lobby_page(page_size=1)
    assert page.next_page_token
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    await expect(client.lobby_page(page_token="forged.token"), invalid, "PAGE_TOKEN_INVALID")
    other_query = client.lobby_page(page_size=1, preset="club", page_token=page.next_page_token)
    await expect(other_query, invalid, "PAGE_TOKEN_INVALID")
    await expect(client.lobby_page(preset="poker"), invalid, "INVALID_PRESET")
    await expect(
        client.sibling().create_table("house", name="x" * 41), invalid, "INVALID_TABLE_NAME"
    )


# --------------------------------------------------------------------------- quick play
async def test_quick_play_opens_a_public_table_and_seats_the_next_player_there(
    client: GatewayClient,
) -> None:
    """``quick_play`` in the Python client: with no open public table of the preset (no other
    test lists a traditional one), the first player opens one and hosts it; the next player
    of the preset is seated there. An unknown preset is refused and seats nobody."""
    ada, ben, cy = client.sibling(), client.sibling(), client.sibling()
    opened = await ada.quick_play("traditional", display_name="Ada")
    client.touched.add(opened.table_id)  # type: ignore[attr-defined]
    assert opened.created and (ada.table_id, ada.seat) == (opened.table_id, opened.seat)
    assert opened.player_id == ada.player_id
    seated = await ben.quick_play("traditional", display_name="Ben")
    assert (seated.table_id, seated.created) == (opened.table_id, False)
    assert ben.seat == seated.seat != opened.seat
    view = await ben.get_table()  # the client acts at the table it was given
    assert (view.visibility, view.phase, view.viewer_seat) == ("public", "lobby", seated.seat)
    assert view.seats[seated.seat].display_name == "Ben"
    assert view.seats[opened.seat].player_id == ada.player_id == view.host_player_id
    listed = {t.table_id: t for t in await _whole_lobby(client, preset="traditional")}
    assert listed[opened.table_id].seated == 2
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    await expect(cy.quick_play("poker", display_name="Cy"), invalid, "INVALID_PRESET")
    assert (cy.table_id, cy.seat) == ("", None)
