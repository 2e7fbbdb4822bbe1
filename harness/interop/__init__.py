"""External conformance suites run against the built-in proxy before the reference backends."""
