"""`python -m supervisor ...` is `coldrun ...` (used by simulated reboots to re-execute)."""

import sys

from supervisor.cli import main

sys.exit(main())
