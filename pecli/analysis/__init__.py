"""Measurements of positional encodings: pure functions over schemes and arrays."""
