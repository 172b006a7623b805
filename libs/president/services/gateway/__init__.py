"""The gateway: the public door. Tokens, rights, input checks, commands, per-seat watch streams.

Its wings, each importing only the ones after it:

- ``api``: the doors (the gRPC servicer, the Session stream, the spectators' HTTP door);
- ``calls``: what each call does (tables and seats, plays, lobby, scores, accounts);
- ``streams``: watching a table (its feed, each change per seat, the audience);
- ``identity``: who is calling (tokens, issuers, revocations, stream guards);
- ``limits``: how much a caller may do (rate and stream limits);
- ``upstream``: the services behind the gateway.

``bootstrap`` builds a replica from its settings; ``main`` runs it.
"""
