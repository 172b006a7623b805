"""Presets and options, with the one name RULES.md gives each rule.

``options_for(preset, overrides)`` is the only way in: it starts from the
preset, applies the overrides by option name, and rejects an unknown name or
value with a sentence a person understands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from president.rules.cards import CardSyntaxError, card_name, parse_card


class OptionError(ValueError):
    """An unknown preset, option name or value, or a player count out of range."""


PRESETS = ("classic", "club", "house", "house-rapid", "traditional")

#: The allowed values of each option that takes one of a few words.
CHOICES: dict[str, tuple[str, ...]] = {
    "later_lead": ("president", "bottom"),
    "count_rule": ("exact", "more_beats_fewer"),
    "pass_rule": ("reenter", "sit_out"),
    "skip_on_match": ("off", "same_or_nothing", "must_pass"),
    "twos": ("plain", "up_a_count", "only_twos_beat_two"),
    "deal_extras": ("seat_order", "bottom_first", "discard"),
    "scoring": ("classic", "below", "house"),
}


@dataclass(frozen=True, slots=True)
class Options:
    """Every rule a table can set. Field names are the option names of RULES.md."""

    preset: str
    min_players: int
    max_players: int
    first_lead: int
    first_lead_must_include: bool
    later_lead: str
    equal_rank: bool
    count_rule: str
    must_match_type: bool
    pass_rule: str
    one_lap: bool
    revolution: bool
    skip_on_match: str
    four_closes: bool
    strongest_closes: bool
    finish_with_two: bool
    jokers: bool
    twos: str
    poker_hands: bool
    suit_order: bool
    social: bool
    change_seats: bool
    deal_extras: str
    exchange: tuple[int, ...]
    rapid: bool
    turn_seconds: int
    rapid_seconds: int
    advance_seconds: int
    bot_delay_ms: int
    bot_pace_ms: int
    takeover_seconds: int
    leaderboards: bool
    scoring: str
    game_end: str

    # -- derived facts the engine asks on every action, computed once ----------
    exact_count: bool = dataclasses.field(init=False, compare=False, repr=False)
    """A response has exactly the top's card count."""
    sit_out: bool = dataclasses.field(init=False, compare=False, repr=False)
    """A pass removes the player from the trick (``sit_out``, and always in rapid mode)."""
    skip_rule: str = dataclasses.field(init=False, compare=False, repr=False)
    """``skip_on_match`` as it acts: always off in rapid mode."""
    equal_rank_answers: bool = dataclasses.field(init=False, compare=False, repr=False)
    """Whether a response may match the top's rank.

    Besides ``equal_rank``, the skip rules and the social rule only make sense
    when matching ranks may be played, so they allow it too.
    """

    plain_compare: bool = dataclasses.field(init=False, compare=False, repr=False)
    """Answers compare by rank alone: exact counts, no jokers, special 2s, suits or poker."""

    plain_tricks: bool = dataclasses.field(init=False, compare=False, repr=False)
    """Turns go round the table one seat at a time and answers compare by rank alone:
    ``plain_compare``, and no rapid mode, one lap or social rule (classic, club, house)."""

    def __post_init__(self) -> None:
        skip_rule = "off" if self.rapid else self.skip_on_match
        exact = self.count_rule == "exact" or self.must_match_type
        plain_compare = (
            exact
            and not self.jokers
            and self.twos == "plain"
            and not self.suit_order
            and not self.poker_hands
        )
        derived = {
            "plain_compare": plain_compare,
            "plain_tricks": plain_compare and not (self.rapid or self.one_lap or self.social),
            "exact_count": self.count_rule == "exact" or self.must_match_type,
            "sit_out": self.pass_rule == "sit_out" or self.rapid,
            "skip_rule": skip_rule,
            "equal_rank_answers": self.equal_rank or skip_rule != "off" or self.social,
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    @property
    def target_score(self) -> int | None:
        kind, _, value = self.game_end.partition(":")
        return int(value) if kind == "target" else None

    @property
    def round_limit(self) -> int | None:
        kind, _, value = self.game_end.partition(":")
        return int(value) if kind == "rounds" else None

    def to_dict(self) -> dict[str, Any]:
        """Option name to value, in the form ``options_for`` takes back (cards as text)."""
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            if field.name in ("min_players", "max_players") or not field.init:
                continue
            out[field.name] = getattr(self, field.name)
        out["players"] = f"{self.min_players}..{self.max_players}"
        out["first_lead"] = card_name(self.first_lead)
        out["exchange"] = list(self.exchange)
        return out


_BASE: dict[str, Any] = {
    "min_players": 4,
    "max_players": 7,
    "first_lead": parse_card("3C"),
    "first_lead_must_include": False,
    "later_lead": "bottom",
    "equal_rank": False,
    "count_rule": "exact",
    "must_match_type": False,
    "pass_rule": "reenter",
    "one_lap": False,
    "revolution": False,
    "skip_on_match": "off",
    "four_closes": False,
    "strongest_closes": False,
    "finish_with_two": False,
    "jokers": False,
    "twos": "plain",
    "poker_hands": False,
    "suit_order": False,
    "social": False,
    "change_seats": False,
    "deal_extras": "seat_order",
    "exchange": (2, 1),
    "rapid": False,
    "turn_seconds": 30,
    "rapid_seconds": 10,
    "advance_seconds": 0,
    "bot_delay_ms": 1200,
    "bot_pace_ms": 0,
    "takeover_seconds": 0,
    "leaderboards": True,
    "scoring": "below",
    "game_end": "rounds:7",
}

_HOUSE: dict[str, Any] = {
    "min_players": 3,
    "max_players": 6,
    "first_lead": parse_card("QH"),
    "equal_rank": True,
    "pass_rule": "sit_out",
    "revolution": True,
    "skip_on_match": "same_or_nothing",
    "four_closes": True,
    "strongest_closes": True,
    "finish_with_two": True,
    "deal_extras": "bottom_first",
    "scoring": "house",
    "game_end": "unlimited",
}

_PRESET_VALUES: dict[str, dict[str, Any]] = {
    # Rulebook 001: 4 players as written; 3 to 7 allowed with extras in seat order.
    "classic": {
        "min_players": 3,
        "max_players": 7,
        "first_lead_must_include": True,
        "later_lead": "president",
        "scoring": "classic",
        "game_end": "target:11",
    },
    # Rulebook 002.
    "club": {},
    # Rulebook 000.
    "house": _HOUSE,
    "house-rapid": {**_HOUSE, "rapid": True, "skip_on_match": "off"},
    # Rulebook 003: the folk rules.
    "traditional": {
        "min_players": 3,
        "max_players": 8,
        "count_rule": "more_beats_fewer",
        "deal_extras": "discard",
        "exchange": (2,),
        "game_end": "unlimited",
    },
}

_BOOL_OPTIONS = {
    name
    for name, value in _BASE.items()
    if isinstance(value, bool) and name not in ("min_players", "max_players")
}
_INT_OPTIONS = {"turn_seconds", "rapid_seconds"}
OPTION_NAMES = tuple(sorted({*_BASE.keys(), "players"} - {"min_players", "max_players"}))


def options_for(preset: str, overrides: Mapping[str, Any] | None = None) -> Options:
    """The options of ``preset`` with ``overrides`` applied, validated."""
    if preset not in _PRESET_VALUES:
        raise OptionError(f"unknown preset {preset!r}: choose one of {', '.join(PRESETS)}")
    values = {**_BASE, **_PRESET_VALUES[preset]}
    for name, raw in (overrides or {}).items():
        values.update(_parse_option(name, raw))
    if values["must_match_type"]:
        values["count_rule"] = "exact"
    options = Options(preset=preset, **values)
    _check_consistent(options)
    _check_rulebook(options)
    return options


def count_range(low: int, high: int) -> str:
    """A range of counts in words: "4 to 7", or "exactly 4" when it is one number."""
    return f"exactly {low}" if low == high else f"{low} to {high}"


#: The game lengths of rulebook 002 (club), and the one of practice and public tables.
CLUB_GAME_ENDS = ("rounds:5", "rounds:7", "rounds:10")
CLUB_OPEN_TABLE_GAME_END = "rounds:7"
#: Rulebook 002's player count.
CLUB_PLAYERS = (4, 7)


def _check_rulebook(options: Options) -> None:
    """OptionError for a combination its preset's rulebook contradicts."""
    preset = options.preset
    if preset in ("house", "house-rapid") and not options.equal_rank:
        raise OptionError(
            "rulebook 000 always lets a play of the same rank answer: "
            f"equal_rank cannot be switched off in {preset}"
        )
    if preset == "club":
        low, high = CLUB_PLAYERS
        if not low <= options.min_players <= options.max_players <= high:
            raise OptionError(
                f"club is played by {low} to {high} players (rulebook 002), not "
                f"{count_range(options.min_players, options.max_players)}"
            )
        if options.game_end not in CLUB_GAME_ENDS:
            raise OptionError(
                f"a club game is 5, 7 or 10 rounds (rulebook 002), not {options.game_end}"
            )


#: The option saying whether a table's rounds count for ratings and leaderboards: not a rule
#: of the game (the engine never reads it), a fact scoring reads from TableCreated.
LEADERBOARDS_OPTION = "leaderboards"


def with_table_defaults(values: Mapping[str, Any], *, practice: bool) -> dict[str, Any]:
    """A table's chosen options with the defaults its visibility sets: a practice table's
    rounds count for history but not for ratings or leaderboards (``leaderboards=false``)
    unless its options say otherwise."""
    chosen = dict(values)
    if practice:
        chosen.setdefault(LEADERBOARDS_OPTION, False)
    return chosen


def check_table_rules(options: Options, *, private: bool, practice: bool = False) -> None:
    """OptionError for options the table's visibility does not allow: a club game is
    7 rounds at practice and public tables, and the host's choice only at private ones;
    only a practice table moves on between rounds by itself (``advance_seconds``)."""
    if options.advance_seconds and not practice:
        raise OptionError(
            "only a practice table moves on between rounds by itself (advance_seconds): "
            "at other tables the host chooses"
        )
    if options.preset == "club" and not private and options.game_end != CLUB_OPEN_TABLE_GAME_END:
        raise OptionError(
            "a club game at a practice or public table is 7 rounds (rulebook 002): "
            "5 or 10 rounds are a host's choice at a private table"
        )


def check_player_count(options: Options, players: int) -> None:
    """Raise :class:`OptionError` unless ``players`` seats fit the options."""
    if not options.min_players <= players <= options.max_players:
        raise OptionError(
            f"{options.preset} is played by "
            f"{count_range(options.min_players, options.max_players)} players, not {players}"
        )
    deck = 54 if options.jokers else 52
    if players > deck:
        raise OptionError(f"a deck of {deck} cards cannot serve {players} players")


def _parse_option(name: str, raw: Any) -> dict[str, Any]:
    if name == "players":
        return _parse_players(raw)
    if name not in _BASE:
        raise OptionError(f"unknown option {name!r}: the options are {', '.join(OPTION_NAMES)}")
    if name in _BOOL_OPTIONS:
        if isinstance(raw, bool):
            return {name: raw}
        if isinstance(raw, str) and raw.lower() in ("true", "false", "on", "off", "yes", "no"):
            return {name: raw.lower() in ("true", "on", "yes")}
        raise OptionError(f"option {name} is true or false, not {raw!r}")
    if name in ("bot_delay_ms", "bot_pace_ms"):
        value = _as_int(name, raw)
        if not 0 <= value <= 10_000:
            raise OptionError(
                f"option {name} is a number of milliseconds from 0 to 10000, not {raw!r}"
            )
        return {name: value}
    if name == "takeover_seconds":
        value = _as_int(name, raw)
        if not 0 <= value <= 3600:
            raise OptionError(
                f"option takeover_seconds is a number of seconds from 0 (off) to 3600, not {raw!r}"
            )
        return {name: value}
    if name == "advance_seconds":
        value = _as_int(name, raw)
        if not 0 <= value <= 3600:
            raise OptionError(
                f"option advance_seconds is a number of seconds from 0 (off) to 3600, not {raw!r}"
            )
        return {name: value}
    if name in _INT_OPTIONS:
        value = _as_int(name, raw)
        if not 1 <= value <= 3600:
            raise OptionError(f"option {name} is a number of seconds from 1 to 3600, not {raw!r}")
        return {name: value}
    if name in CHOICES:
        if raw not in CHOICES[name]:
            raise OptionError(f"option {name} is one of {', '.join(CHOICES[name])}, not {raw!r}")
        return {name: raw}
    if name == "first_lead":
        try:
            return {name: parse_card(str(raw))}
        except CardSyntaxError as error:
            raise OptionError(f"option first_lead: {error}") from None
    if name == "exchange":
        return {name: _parse_exchange(raw)}
    if name == "game_end":
        return {name: _parse_game_end(raw)}
    raise OptionError(f"option {name} cannot be set")  # pragma: no cover


def _as_int(name: str, raw: Any) -> int:
    if isinstance(raw, bool):
        raise OptionError(f"option {name} is a whole number, not {raw!r}")
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise OptionError(f"option {name} is a whole number, not {raw!r}") from None


def _parse_players(raw: Any) -> dict[str, Any]:
    if isinstance(raw, int) and not isinstance(raw, bool):
        low = high = raw
    elif isinstance(raw, list | tuple) and len(raw) == 2:
        low, high = _as_int("players", raw[0]), _as_int("players", raw[1])
    elif isinstance(raw, str) and ".." in raw:
        first, _, second = raw.partition("..")
        low, high = _as_int("players", first), _as_int("players", second)
    else:
        raise OptionError(f"option players is a range such as 3..6, not {raw!r}")
    if not 2 <= low <= high <= 27:
        raise OptionError(f"option players must be a range within 2..27, not {raw!r}")
    return {"min_players": low, "max_players": high}


def _parse_exchange(raw: Any) -> tuple[int, ...]:
    if isinstance(raw, str):
        raw = [part for part in raw.replace(",", " ").split() if part]
    if not isinstance(raw, list | tuple):
        raise OptionError(f"option exchange is a list of card counts such as [2, 1], not {raw!r}")
    counts = tuple(_as_int("exchange", item) for item in raw)
    if any(not 1 <= count <= 4 for count in counts) or len(counts) > 3:
        raise OptionError(
            f"option exchange lists at most 3 counts, each 1 to 4 cards, not {list(raw)!r}"
        )
    return counts


def _parse_game_end(raw: Any) -> str:
    text = str(raw)
    kind, _, value = text.partition(":")
    if kind == "unlimited" and not value:
        return text
    # ASCII digits only: str.isdigit() also takes "²", which int() refuses.
    if (
        kind in ("target", "rounds")
        and value.isascii()
        and value.isdigit()
        and 1 <= int(value) <= 1000
    ):
        return f"{kind}:{int(value)}"
    raise OptionError(
        f"option game_end is target:N, rounds:N or unlimited (as target:11, rounds:7), not {raw!r}"
    )


def _check_consistent(options: Options) -> None:
    if options.takeover_seconds and options.takeover_seconds >= options.turn_seconds:
        raise OptionError(
            "option takeover_seconds must be shorter than turn_seconds "
            f"({options.takeover_seconds} is not below {options.turn_seconds}): the server "
            "takes over a disconnected seat before its turn timer runs out"
        )
    if options.first_lead >= 52 and not options.jokers:
        raise OptionError("option first_lead names a joker, but jokers are off")
