"""Dispatch to one module per command. Exit codes: 0 all well, 1 a problem found, 2 bad usage or input."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, Protocol

from slimwheel._version import __version__
from slimwheel.cli._output import Output
from slimwheel.errors import SlimwheelError

__all__ = ["console_main", "main"]

# command name -> module under slimwheel.cli; each module has add_arguments(parser) and run(args) -> int.
COMMANDS: dict[str, str] = {
    "show": "slimwheel.cli.show",
    "check": "slimwheel.cli.check",
    "plan": "slimwheel.cli.plan",
    "catalog": "slimwheel.cli.catalog",
    "repair": "slimwheel.cli.repair",
    "doctor": "slimwheel.cli.doctor",
    "verify": "slimwheel.cli.verify",
    "cmake-dir": "slimwheel.cli.cmake_dir",
    "publish": "slimwheel.cli.publish",
    "promote": "slimwheel.cli.promote",
    "yank": "slimwheel.cli.yank",
    "reindex": "slimwheel.cli.reindex",
    "completion": "slimwheel.cli.completion",
}


class CommandModule(Protocol):
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so every usage error ends the same way."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{self.prog}: {message}")


class _UsageError(Exception):
    pass


EXIT_CODES = "exit status: 0 all well; 1 a problem found; 2 bad usage or input; 130 interrupted."
"""Said at the end of every command's --help; a module's own ``EXIT_CODES`` says more where it has more."""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="slimwheel", description="Use NVIDIA's pip wheels instead of bundling them.", epilog=EXIT_CODES
    )
    parser.add_argument("--version", action="version", version=f"slimwheel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module_name in COMMANDS.items():
        module: CommandModule = importlib.import_module(module_name)
        epilog = getattr(module, "EXIT_CODES", EXIT_CODES)
        command_parser = sub.add_parser(name, help=module.HELP, description=module.HELP, epilog=epilog)
        module.add_arguments(command_parser)
        _add_output_options(command_parser, epilog=epilog, nested=False)
        command_parser.set_defaults(_run=module.run)
    return parser


def _add_output_options(parser: argparse.ArgumentParser, *, epilog: str, nested: bool) -> None:
    """-q/-v on a command and on each of its actions (``catalog update -q``); an action's copy leaves
    the command's value alone unless given (SUPPRESS), so ``catalog -q update`` stays quiet too."""
    default: object = argparse.SUPPRESS if nested else None
    group = parser.add_argument_group("output").add_mutually_exclusive_group()
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS if nested else False,
        help="say only errors and the result (no warnings, notes or progress)",
    )
    group.add_argument(
        "-v", "--verbose", action="count", default=default, help="also say notes (the detail behind warnings)"
    )
    for action in parser._actions:  # argparse offers no public walk over an action's sub-parsers
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                child.epilog = child.epilog or epilog
                _add_output_options(child, epilog=epilog, nested=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    if argv is None and "_ARGCOMPLETE" in os.environ:
        _complete(parser)  # the shell asks for completions (slimwheel completion): answered, then exit
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    args.out = Output.from_args(
        args.command,
        quiet=bool(getattr(args, "quiet", False)),
        verbose=getattr(args, "verbose", None) or 0,
        json=bool(getattr(args, "json", False)),
    )
    try:
        result: int = args._run(args)
    except SlimwheelError as exc:
        if exc.exit_code == 2:  # bad input or usage: one line, nothing else
            args.out.discard_warnings()
        print(f"slimwheel {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"slimwheel {args.command}: interrupted", file=sys.stderr)
        return 130
    finally:
        args.out.flush_warnings()  # after the result, grouped, each once
    return result


def _complete(parser: argparse.ArgumentParser) -> None:
    try:
        import argcomplete
    except ImportError:
        return  # completion was set up where argcomplete was installed: nothing to offer here
    argcomplete.autocomplete(parser)


def console_main() -> None:
    sys.exit(main())
