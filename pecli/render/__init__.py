"""Rendering for people: Rich tables and (imported lazily) matplotlib figures."""
