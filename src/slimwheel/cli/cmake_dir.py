"""``slimwheel cmake-dir [--prefix] [--json]``: where slimwheel's CMake package is."""

from __future__ import annotations

import argparse
import json

HELP = "print the folder of slimwheel's CMake package (for CMAKE_MODULE_PATH, or --prefix for find_package)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--prefix",
        action="store_true",
        help="print the prefix for CMAKE_PREFIX_PATH (find_package(slimwheel CONFIG) and (cudss CONFIG))",
    )
    parser.add_argument("--json", action="store_true", help="print a slimwheel.cmake-dir/1 JSON document")


def run(args: argparse.Namespace) -> int:
    from slimwheel.build.locate import cmake_dir

    folder = cmake_dir()
    if args.json:
        # The module folder is also the prefix: slimwheelConfig.cmake and cudss/ sit in it.
        document = {"schema": "slimwheel.cmake-dir/1", "module_dir": str(folder), "prefix": str(folder)}
        print(json.dumps(document, indent=2))
    else:
        print(folder)
    return 0
