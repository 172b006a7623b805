"""What each public call does: input checks, then the service behind the gateway.

Tables and seats, plays, the lobby, a table's activity, scores and ratings,
accounts, the deal check, page tokens. Refusals are domain errors; the
doors (:mod:`president.services.gateway.api`) give them their status.
"""
