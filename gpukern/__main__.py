"""``python -m gpukern``: the same command as the ``gpukern`` entry point."""

from .tools.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
