"""Tournaments: many tables, one event, and a seat draw anyone can check (pure, no I/O)."""
