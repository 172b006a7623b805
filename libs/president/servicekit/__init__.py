"""What every service shares: settings, logs, metrics, errors, the gRPC server and NATS."""
