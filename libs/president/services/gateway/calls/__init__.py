"""What each public call does: input checks, then the service behind the gateway.

Tables and seats, plays, the lobby, a table's activity, scores and ratings,
accounts, the deal check, page tokens. The gateway's own refusals
(:class:`~president.services.gateway.calls.refused.Refused`) get their status
at the doors (:mod:`president.services.gateway.api`).
"""
