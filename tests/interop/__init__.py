"""Tests of harness/interop."""
