"""Who is calling: access tokens and trusted issuers' JWTs verified into an identity,
the sessions revoked, and long streams that end with the identity that opened them."""
