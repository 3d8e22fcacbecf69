"""Pytest fixtures for this area (filled in by the module's tests)."""
