"""Tournaments: the committed seat draw of SEAT_DRAW.md, pure, no I/O."""
