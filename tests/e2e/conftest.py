"""The end-to-end fixtures every module here shares: a client whose tables verify afterwards,
and the stack's store (defined with the gateway's own tests)."""

from tests.e2e.test_gateway_e2e import client, store, stores

__all__ = ["client", "store", "stores"]
