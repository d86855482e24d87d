"""`python -m engine ...` is the `murmur` command."""

import sys

from engine.parent_bond import bind_to_parent

bind_to_parent()  # first: before any import starts a thread (they inherit its niceness)

from engine.cli import main  # noqa: E402

sys.exit(main())
