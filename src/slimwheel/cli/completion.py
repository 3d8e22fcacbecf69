"""``slimwheel completion {bash,zsh}``: the shell code that completes slimwheel's commands and options.

Completion itself is argcomplete's (a well-kept library for argparse): the shell calls ``slimwheel``
with argcomplete's variables set, and ``main`` hands the parser to argcomplete before parsing. Both
need ``pip install 'slimwheel[completion]'``; nothing imports argcomplete otherwise.
"""

from __future__ import annotations

import argparse
import sys

from slimwheel.errors import UsageError

HELP = "print the shell code that completes slimwheel's commands and options (bash or zsh)"

INSTALL = "pip install 'slimwheel[completion]' (argcomplete)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=("bash", "zsh"), help="the shell to complete in")
    parser.epilog = (
        'use: eval "$(slimwheel completion bash)" in ~/.bashrc (zsh: ~/.zshrc, with compinit loaded). '
        + (parser.epilog or "")
    )


def run(args: argparse.Namespace) -> int:
    try:
        from argcomplete.shell_integration import shellcode
    except ImportError as exc:
        raise UsageError("shell completion needs argcomplete, which is not installed", hint=INSTALL) from exc
    sys.stdout.write(shellcode(["slimwheel"], shell=args.shell))
    return 0
