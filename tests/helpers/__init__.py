"""Test helpers shared across components (imported, never via conftest)."""
