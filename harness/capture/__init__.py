"""Captured HTTP exchanges from files: vcrpy cassettes, go-vcr v2 cassettes, Go httprr traces, raw bodies.

Used by `conformance decode` and by tests that read real recorded traffic. Bodies come out decoded from
their transport encodings (gzip, chunked), byte for byte as the provider sent the payload.
"""

from harness.capture.loader import CaptureError, Interaction, is_capture, load_interactions

__all__ = ["CaptureError", "Interaction", "is_capture", "load_interactions"]
