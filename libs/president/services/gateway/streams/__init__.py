"""Watching a table: following its events here, and fanning each change out to its seats
and its audience, serialized once per kind of viewer, with its receipt and presence."""
