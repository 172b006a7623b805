"""The end-to-end fixtures every module here shares: a client whose tables verify afterwards,
and the stack's store (defined with the gateway's own tests); the audiences' stack of an
audience replica and a NATS of its own (one per module that asks)."""

from tests.e2e.test_gateway_e2e import client, store, stores
from tests.support.audiences import audience_nats, audience_stack, audience_store

__all__ = ["audience_nats", "audience_stack", "audience_store", "client", "store", "stores"]
