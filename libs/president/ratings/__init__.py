"""Ratings, leaderboard windows and ranks, and players' totals: pure functions, no I/O."""
