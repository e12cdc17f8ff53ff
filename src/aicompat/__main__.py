import sys

from .cli import main

# The guard matters for worker processes started with spawn (macOS,
# Windows): they import this module again and must not run the CLI.
if __name__ == "__main__":
    sys.exit(main())
