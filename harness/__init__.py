"""Record-and-replay protocol conformance harness for LLM protocol-translating proxies."""

__version__ = "0.1.0"
