"""The web edge: browsers reach the gateway's API over Connect and gRPC-Web (HTTP/1.1)."""
