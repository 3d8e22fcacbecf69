"""``python -m slimwheel``."""

from slimwheel.cli import console_main

console_main()
