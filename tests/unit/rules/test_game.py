"""A whole game: seats and people, the host's choices, deal order, points to the end."""

from __future__ import annotations

import pytest

from president.hosting.dealer import deal_round
from president.play.offline import next_offline_command, play_game, round_secret
from president.rules import game as g
from president.rules import round as rnd
from president.rules.errors import Rejected
from president.rules.options import options_for


def _table(preset: str, players: int, **overrides: object) -> g.GameState:
    table = g.new_table(options_for(preset, overrides), players)
    for seat in range(players):
        table, _ = g.step(table, g.SitDown(seat, f"p{seat}"))
    table, _ = g.step(table, g.StartGame())
    return table


def _finish_round(table: g.GameState) -> tuple[g.GameState, list[g.GameEvent]]:
    events: list[g.GameEvent] = []
    turn = 0
    while table.phase == g.GamePhase.ROUND:
        command = next_offline_command(table, turn) or rnd.Timeout()
        turn += 1
        table, produced = g.step(table, command)
        events.extend(produced)
    return table, events


def _deal(table: g.GameState, number: int = 1) -> g.GameState:
    table, _ = g.step(table, deal_round(table, round_secret(7, table.game_no, number)))
    return table


def test_classic_plays_to_eleven_with_a_sole_leader() -> None:
    table, records = play_game(options_for("classic"), 4, seed=1)
    assert table.phase == g.GamePhase.GAME_OVER and not table.stopped
    best = max(table.scores)
    assert best >= 11
    assert table.winners == (table.scores.index(best),)
    assert table.scores.count(best) == 1
    assert all(points in (0, 1, 2) for points in table.round.result.points)  # type: ignore[union-attr]
    # Each round hands out exactly 2 + 1 points.
    assert sum(table.scores) == 3 * len(records)


def test_club_plays_seven_rounds_and_a_tie_shares_the_win() -> None:
    table, records = play_game(options_for("club"), 5, seed=2)
    assert len(records) == 7
    assert table.phase == g.GamePhase.GAME_OVER
    best = max(table.scores)
    assert table.winners == tuple(s for s in range(5) if table.scores[s] == best)
    assert sum(table.scores) == 7 * (4 + 3 + 2 + 1)


def test_unlimited_game_ends_when_the_host_says_and_the_standings_are_final() -> None:
    table, records = play_game(options_for("house"), 4, seed=3, rounds=3)
    assert len(records) == 3
    assert table.phase == g.GamePhase.GAME_OVER and not table.stopped
    best = max(table.scores)
    assert table.winners == tuple(s for s in range(4) if table.scores[s] == best)


def test_ending_a_set_number_of_rounds_early_stops_with_no_winner_then_lobby() -> None:
    table, _ = play_game(options_for("club"), 4, seed=4, rounds=2)
    assert table.stopped and table.winners == ()
    table, events = g.step(table, g.BackToLobby())
    assert table.phase == g.GamePhase.LOBBY and events == [g.ReturnedToLobby()]


def test_play_again_starts_a_new_game_with_scores_at_zero() -> None:
    table, _ = play_game(options_for("club"), 4, seed=5)
    assert any(table.scores)
    table, events = g.step(table, g.PlayAgain())
    assert events == [g.GameStarted(2, (0, 1, 2, 3))]
    assert (
        table.scores == (0, 0, 0, 0) and table.phase == g.GamePhase.DEALING and table.round_no == 0
    )


def test_host_choices_only_between_rounds() -> None:
    table = _table("club", 4)
    with pytest.raises(Rejected) as error:
        g.decide(table, g.NextRound())
    assert error.value.code == "WRONG_PHASE"
    table = _deal(table)
    with pytest.raises(Rejected):
        g.decide(table, g.EndGame())
    table, _ = _finish_round(table)
    assert table.phase == g.GamePhase.BETWEEN_ROUNDS
    table, _ = g.step(table, g.NextRound())
    assert table.phase == g.GamePhase.DEALING


def test_a_player_who_leaves_mid_round_is_played_by_a_bot_then_the_seat_is_freed() -> None:
    table = _deal(_table("house", 4))
    table, events = g.step(table, g.Leave(2))
    assert events == [g.SeatLeft(2, "p2", False)]
    assert table.seats[2].bot_plays and 2 in g.bot_seats(table)
    table, events = _finish_round(table)
    assert g.SeatFreed(2) in events
    assert not table.seats[2].occupied
    assert table.phase == g.GamePhase.BETWEEN_ROUNDS  # three players are left: the game goes on
    table, _ = g.step(table, g.NextRound())
    assert g.deal_order(table) == tuple(s for s in reversed(table.standings) if s != 2)
    table = _deal(table, 2)
    assert table.round is not None and table.round.players == (0, 1, 3)
    assert table.round.dealt[2] == 0
    assert sorted(h.bit_count() for h in table.round.dealt if h) == [17, 17, 18]


def test_fewer_than_three_players_interrupts_the_game() -> None:
    table = _deal(_table("house", 3))
    table, _ = g.step(table, g.Leave(0))
    table, events = _finish_round(table)
    assert isinstance(events[-2], g.GameInterrupted) and events[-1] == g.ReturnedToLobby()
    assert table.phase == g.GamePhase.LOBBY


def test_leaving_between_rounds_frees_the_seat_at_once() -> None:
    table, _ = _finish_round(_deal(_table("club", 5)))
    table, events = g.step(table, g.Leave(4, removed=True))
    assert events == [g.SeatLeft(4, "p4", True), g.SeatFreed(4)]


def test_seats_are_taken_once_and_only_in_the_lobby_or_between_rounds() -> None:
    table = g.new_table(options_for("club"), 4)
    table, _ = g.step(table, g.SitDown(0, "ann"))
    for command, code in [
        (g.SitDown(0, "bob"), "SEAT_TAKEN"),
        (g.SitDown(1, "ann"), "ALREADY_SEATED"),
        (g.SitDown(9, "bob"), "NO_SUCH_SEAT"),
        (g.Leave(3), "NO_SUCH_SEAT"),
    ]:
        with pytest.raises(Rejected) as error:
            g.decide(table, command)
        assert error.value.code == code
    with pytest.raises(Rejected, match="4 to 7 players, not 1") as too_few:
        g.decide(table, g.StartGame())
    assert too_few.value.code == "NOT_ENOUGH_PLAYERS"


def test_deal_order_and_extras_follow_the_preset() -> None:
    club = _table("club", 5)
    assert g.deal_order(club) == (0, 1, 2, 3, 4) and g.hand_size(club) is None
    club = _deal(club)
    assert [h.bit_count() for h in club.round.hands] == [11, 11, 10, 10, 10]  # type: ignore[union-attr]
    traditional = _table("traditional", 5)
    assert g.hand_size(traditional) == 10
    traditional = _deal(traditional)
    assert traditional.round.set_aside.bit_count() == 2  # type: ignore[union-attr]
    house = _deal(_table("house", 5))
    house, _ = _finish_round(house)
    house, _ = g.step(house, g.NextRound())
    order = g.deal_order(house)
    assert order == tuple(reversed(house.standings))
    house = _deal(house, 2)
    hands = house.round.dealt  # type: ignore[union-attr]
    # The last two places of the previous round get the two extra cards.
    assert [hands[s].bit_count() for s in order] == [11, 11, 10, 10, 10]


def test_a_deal_that_does_not_follow_the_deal_order_is_refused() -> None:
    table = _table("club", 4)
    good = deal_round(table, round_secret(1, 1, 1))
    bad = g.DealRound((good.hands[0] | good.hands[1], 0, good.hands[2], good.hands[3]))
    with pytest.raises(Rejected) as error:
        g.decide(table, bad)
    assert error.value.code == "BAD_DEAL"


def test_change_seats_puts_the_president_first_and_scores_follow_players() -> None:
    table = _deal(_table("traditional", 4, change_seats=True))
    table, _ = _finish_round(table)
    standings = table.standings
    by_player = {table.seats[s].player: table.scores[s] for s in range(4)}
    order = [table.seats[s].player for s in standings]
    table, events = g.step(table, g.NextRound())
    assert isinstance(events[0], g.SeatsChanged)
    assert [seat.player for seat in table.seats] == order
    assert {table.seats[s].player: table.scores[s] for s in range(4)} == by_player
    assert table.standings == (0, 1, 2, 3)


def test_round_two_exchanges_and_the_right_player_leads() -> None:
    for preset, leader_place in (("classic", 0), ("club", -1)):
        table, _ = _finish_round(_deal(_table(preset, 4)))
        standings = table.standings
        table, _ = g.step(table, g.NextRound())
        table = _deal(table, 2)
        state = table.round
        assert state is not None and state.phase == rnd.RoundPhase.EXCHANGE
        assert {(p.giver, p.receiver, p.size) for p in state.pending} == {
            (standings[0], standings[3], 2),
            (standings[1], standings[2], 1),
        }
        table, _ = g.step(table, rnd.Timeout())
        assert table.round is not None and table.round.to_act == standings[leader_place]


def test_replaying_a_games_events_gives_the_same_table() -> None:
    events: list[g.GameEvent] = []
    options = options_for("house")
    table, _ = play_game(options, 5, seed=9, rounds=3, listener=lambda e, _t: events.append(e))
    assert g.replay(events, options, 5) == table


@pytest.mark.parametrize("preset", ["classic", "club", "house", "house-rapid", "traditional"])
def test_folding_events_together_gives_what_folding_them_one_by_one_gives(preset: str) -> None:
    """``evolve_all`` folds runs of round events into the round at once; the table after
    any stretch of events must be the one ``evolve`` gives event by event."""
    events: list[g.GameEvent] = []
    options = options_for(preset)
    play_game(options, 5, seed=3, rounds=3, listener=lambda e, _t: events.append(e))
    start = g.new_table(options, 5)
    assert g.evolve_all(start, events) == g.replay(events, options, 5)
    for size in (1, 2, 3, 5, 8, 13):  # stretches that end anywhere: mid-trick, mid-round
        stretched = start
        for first in range(0, len(events), size):
            stretched = g.evolve_all(stretched, events[first : first + size])
        assert stretched == g.replay(events, options, 5)


def test_bots_of_one_level_share_their_account_but_a_person_sits_once() -> None:
    table = g.new_table(options_for("club"), 4)
    for seat in (1, 2):
        table, _ = g.step(table, g.SitDown(seat, "bot:basic", True))
    assert [s.player for s in table.seats[1:3]] == ["bot:basic", "bot:basic"]
    table, _ = g.step(table, g.SitDown(0, "ann"))
    with pytest.raises(Rejected) as error:
        g.step(table, g.SitDown(3, "ann"))
    assert error.value.code.value == "ALREADY_SEATED"
