"""Entry point of the bundled `murmur` program: the engine's command line (`engine.cli`)."""

import multiprocessing
import sys

from engine.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
