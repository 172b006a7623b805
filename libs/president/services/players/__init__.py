"""The players service: accounts (guests and named), their sessions and tokens."""
