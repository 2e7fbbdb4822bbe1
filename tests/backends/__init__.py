"""Tests of harness/backends."""
