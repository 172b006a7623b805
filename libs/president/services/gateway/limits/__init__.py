"""How much a caller may do: rate limits per call class, open streams per identity and
peer, and the admission that asks both before any work."""
