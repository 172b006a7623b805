"""The services behind the gateway: their ports and adapters, and which table-service
replica holds a table's lease."""
