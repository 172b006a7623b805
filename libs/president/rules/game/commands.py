"""The commands of a table: seats, the deal, and the host's choices."""

from __future__ import annotations

from typing import NamedTuple


class SitDown(NamedTuple):
    """``player`` takes the free ``seat`` (a bot when ``is_bot``)."""

    seat: int
    player: str
    is_bot: bool = False
    display_name: str = ""

    def seated_name(self) -> str:
        """The name the seat shows: the display name trimmed, else the player's id."""
        return self.display_name.strip() or self.player


class Leave(NamedTuple):
    """The player of ``seat`` leaves (``removed``: the host removed them)."""

    seat: int
    removed: bool = False


class StartGame(NamedTuple):
    """Start a game with the seated players."""


class DealRound(NamedTuple):
    """The dealer's hands for the next round (masks by seat) and the cards set aside."""

    hands: tuple[int, ...]
    set_aside: int = 0


class NextRound(NamedTuple):
    """The host asks for the next round."""


class EndGame(NamedTuple):
    """The host ends the game between rounds."""


class PlayAgain(NamedTuple):
    """A new game with the same options, scores at zero."""


class BackToLobby(NamedTuple):
    """The table goes back to the lobby."""


GameCommand = (
    SitDown | Leave | StartGame | DealRound | NextRound | EndGame | PlayAgain | BackToLobby
)
