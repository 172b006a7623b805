"""Bots play whole games: offline (the engine alone) or recorded (through TableHost, stored)."""
