"""Who may find and join a table: its visibility, by name (the proto enum's VISIBILITY_<NAME>).

A constant module of its own, so a client can read it without the services' kit.
"""

PRACTICE, PUBLIC, PRIVATE = "practice", "public", "private"
#: Every visibility a table can have.
VISIBILITIES = (PRACTICE, PUBLIC, PRIVATE)
