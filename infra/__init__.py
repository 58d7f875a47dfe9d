"""Infrastructure every app shares: the Redis clients and the Redis key names."""
