"""The gateway: the public door. Tokens, rights, input checks, commands, per-seat watch streams."""
