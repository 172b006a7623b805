"""The Node client's fixture (its packages installed from the committed lockfile)."""

from tests.support.node_client import node_client

__all__ = ["node_client"]
