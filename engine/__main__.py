"""`python -m engine ...` is the `murmur` command."""

import sys

from engine.cli import main

sys.exit(main())
