"""The seven services of the President table backend, each its own process."""
