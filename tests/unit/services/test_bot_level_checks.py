"""A bot's level is checked at the gateway and again at the table service."""

from __future__ import annotations

import pytest

from president.game.v1 import game_pb2 as gpb
from president.rules import game as g
from president.servicekit.errors import Code, ServiceError
from president.services.gateway.calls import bot_levels, checks
from president.services.table.commands import translate


def _refusal(call: object) -> ServiceError:
    assert callable(call)
    with pytest.raises(ServiceError) as refused:
        call()
    assert refused.value.status == Code.INVALID_ARGUMENT and refused.value.message
    return refused.value


def test_a_level_is_basic_strong_or_refused() -> None:
    assert checks.bot_level("") == "basic"
    assert checks.bot_level("strong") == "strong"
    assert _refusal(lambda: checks.bot_level("Strong")).reason == "UNKNOWN_BOT_LEVEL"


def test_a_practice_tables_bot_level_leaves_its_rules() -> None:
    asked = gpb.TableOptions(preset="club", options={"bot_level": "strong", "jokers": "on"})
    rules, level = bot_levels.practice_level(asked, "practice")
    assert level == "strong" and dict(rules.options) == {"jokers": "on"}
    assert dict(asked.options) == {"bot_level": "strong", "jokers": "on"}  # not changed
    plain = gpb.TableOptions(preset="club")
    assert bot_levels.practice_level(plain, "public") == (plain, "basic")
    refused = _refusal(lambda: bot_levels.practice_level(asked, "public"))
    assert refused.reason == "INVALID_OPTIONS" and "bot_level" in refused.message
    unknown = gpb.TableOptions(options={"bot_level": "grandmaster"})
    assert _refusal(lambda: bot_levels.practice_level(unknown, "practice")).reason == (
        "UNKNOWN_BOT_LEVEL"
    )


def test_the_table_service_seats_no_bot_of_an_unknown_level() -> None:
    def sit(player_id: str) -> gpb.Command:
        return gpb.Command(sit_down=gpb.SitDown(seat=1, player_id=player_id, is_bot=True))

    assert translate(sit("bot:strong:1")).command == g.SitDown(1, "bot:strong:1", True, "")
    assert translate(sit("bot-1")).command == g.SitDown(1, "bot-1", True, "")
    refused = _refusal(lambda: translate(sit("bot:grandmaster:1")))
    assert refused.reason == "UNKNOWN_BOT_LEVEL"
