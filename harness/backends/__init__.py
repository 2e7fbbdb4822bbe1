"""Reference backends: each provider's wire produced by its protocol's encoder from a scenario's scripted reply."""

from harness.backends.app import ReplyFn, create_backend_app, wire_app
from harness.backends.chunking import effective
from harness.backends.respond import WireReply, respond

__all__ = ["ReplyFn", "WireReply", "create_backend_app", "effective", "respond", "wire_app"]
