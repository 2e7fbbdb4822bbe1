"""How fast a report opens: load `index.html` from file:// in headless Chromium (the browser tests' driver) and
print the time until the page says it is ready, then (optionally) the time to open one case's view.

    python scripts/report_load.py reports/<run-id>/index.html ["long-output[anthropic->openai,stream]"]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from urllib.parse import quote

from harness.report.browser import Browser


def main() -> None:
    """Open the page, then the case view, and print both times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path, help="a report's index.html")
    parser.add_argument("case", nargs="?", help="a case id whose view to open and time")
    args = parser.parse_args()
    with Browser(timeout=120) as browser:
        started = time.monotonic()
        ready = browser.open(args.page)
        wall = (time.monotonic() - started) * 1000
        print(f"ready in {ready:.0f} ms (page clock), {wall:.0f} ms wall with navigation")  # noqa: T201
        print("shown:", browser.evaluate("document.getElementById('shown').textContent"))  # noqa: T201
        if args.case:
            started = time.monotonic()
            browser.open(args.page, "case=" + quote(args.case, safe=""))
            browser.wait_for(f"document.getElementById('case-view').dataset.loaded === {json.dumps(args.case)}")
            rows = browser.evaluate("document.querySelectorAll('.event-diff tbody tr').length")
            took = (time.monotonic() - started) * 1000
            print(f"case view {args.case} in {took:.0f} ms wall; event diff rows: {rows}")  # noqa: T201


if __name__ == "__main__":
    main()
