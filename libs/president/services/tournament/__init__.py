"""The tournament service: tournaments created, listed, entered and withdrawn from, as events."""
