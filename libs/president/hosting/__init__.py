"""Hosting tables: the application layer between the rules engine and the store.

- :mod:`.streams`: which event stream holds a table.
- :mod:`.dealer`: the dealer port, the in-memory dealer, and a deal as the engine's command.
- :mod:`.events`: the table's own events beside the engine's (created, deals, reactions).
- :mod:`.projection`: a table folded from its stored events (the host, the gateway, the timer).
- :mod:`.seat_views`: what one seat may see of a table, as the protobuf clients receive.
- :mod:`.autoplay`: the move a bot (or a stand-in for a player who left) makes next.
- :mod:`.errors`: the host's refusals that are not the rules'.
- :mod:`.visibility`: who may find and join a table (practice, public, private).
- :mod:`.commands`: every command a table takes, the game's and its own, decided by one
  function.
- :mod:`.host`: :class:`~president.hosting.host.TableHost`, commands in, events appended.
"""
