"""The pure rules engine of President: no I/O, no clock, no randomness of its own."""
