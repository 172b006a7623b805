"""The titles of the finishing places (President, ..., Scum) in each preset's rulebook."""

from __future__ import annotations

from president.rules.round import role_key

ROLE_NAMES: dict[str, dict[str, str]] = {
    "house": {
        "top": "President",
        "second": "Vice-president",
        "middle": "Neutral",
        "second_bottom": "Vice-asshole",
        "bottom": "Asshole",
    },
    "club": {
        "top": "President",
        "second": "Vice President",
        "middle": "Citizen",
        "second_bottom": "Vice Peasant",
        "bottom": "Peasant",
    },
    "classic": {
        "top": "President",
        "second": "Vice-President",
        "middle": "Citizen",
        "second_bottom": "Vice-Scum",
        "bottom": "Scum",
    },
    "traditional": {
        "top": "President",
        "second": "Vice-President",
        "middle": "Neutral",
        "second_bottom": "Vice-Asshole",
        "bottom": "Asshole",
    },
}


def role_name(preset: str, place: int, players: int) -> str:
    """The title of ``place`` (0 = first) for the preset's rulebook."""
    book = "house" if preset.startswith("house") else preset
    return ROLE_NAMES[book][role_key(place, players)]


def roles(preset: str, standings: tuple[int, ...]) -> dict[int, str]:
    """Seat to title for a finishing order."""
    return {seat: role_name(preset, place, len(standings)) for place, seat in enumerate(standings)}
