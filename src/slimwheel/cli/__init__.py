"""The ``slimwheel`` command: a thin shell over the library. ``main(argv) -> int``."""

from slimwheel.cli.main import console_main, main

__all__ = ["console_main", "main"]
