"""SDK drivers: each official SDK client runs a scenario's IR request and reports what it saw, as IR.

`harness.drivers.registry.get("<frontend protocol>")` gives a driver; SDKs load lazily.
"""

from harness.drivers.base import Driver, SdkResult, UnsupportedRequest
from harness.drivers.registry import get, names

__all__ = ["Driver", "SdkResult", "UnsupportedRequest", "get", "names"]
