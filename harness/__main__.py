"""`python -m harness` is the `conformance` command."""

import sys

from harness.cli import main

sys.exit(main())
