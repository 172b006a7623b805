"""Scoring: standings, game results and player statistics, read models built from the stream."""
