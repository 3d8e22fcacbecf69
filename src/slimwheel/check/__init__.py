"""Wheel + Catalog -> CheckReport: where glibc's loader would find each DT_NEEDED once installed.

The install is simulated, not performed: the wheel's files at their installed paths (relative to
site-packages) plus the library files of every NVIDIA release its Requires-Dist allows on the target
platform, transitive requirements and cuda-toolkit's extras included. Each DT_NEEDED of each ELF file is
then looked up the way glibc's ``_dl_map_object`` does, for every allowed version of the providers
that ship a file of that name, so a range that admits a release without the library is caught.

Other requirements (``torch``, ``tensorrt``, ``jaxlib``: distributions the catalog does not know) take
part when a ``DistFileSource`` is given and some DT_NEEDED is neither this wheel's, an NVIDIA
library, nor a system one: their library files, for the oldest and newest release each requirement
allows on the target (``slimwheel.dist_files``), join the tree, and a file found there resolves to
the requirement (``Resolution.REQUIREMENT``). Their sonames are taken to be their file names. A
requirement whose files cannot be learned (offline, the index fails) adds nothing to the tree and a
warning, so what only it could provide stays unresolved: never a pass on a guess.

What is simulated, in glibc's order: the DT_RPATH of the object (ignored when it has DT_RUNPATH, as
glibc drops DT_RPATH then), the DT_RPATH of each object up its loader chain inside the wheel, then the
object's DT_RUNPATH. ``$ORIGIN`` is the folder of the object whose entry it is. What is not: the
Python executable's own RPATH, ``LD_LIBRARY_PATH``, ``ld.so.cache`` and the default folders (the
system and driver classes stand in for them), and libraries that are satisfied only because another
object loaded the same soname first (that depends on load order, so it is not counted on, unless the
caller names the requirement that loads it ``preloaded``: ``import torch`` loads ``torch/lib``).

Layout (one module per step): ``target`` (platform, Python, which releases pip could install),
``providers`` (the releases the requirements bring in, a query on ``slimwheel.requirements``; the
files of requirements the catalog does not know), ``tree`` (the simulated install and glibc's search
through ``slimwheel.ldso``), ``diagnose`` (answers -> findings), ``model`` (the report), ``run``
(``check_wheel``: the steps in order).
"""

from __future__ import annotations

from slimwheel.check.model import (
    CheckFinding,
    CheckKind,
    CheckReport,
    FileCheck,
    Lookup,
    NeededCheck,
    ProviderRelease,
    RequirementCheck,
    RequirementReach,
)
from slimwheel.check.run import check_wheel
from slimwheel.findings import Pin
from slimwheel.ldso import EntryTag, SearchFolder

__all__ = [
    "CheckFinding",
    "CheckKind",
    "CheckReport",
    "EntryTag",
    "FileCheck",
    "Lookup",
    "NeededCheck",
    "Pin",
    "ProviderRelease",
    "RequirementCheck",
    "RequirementReach",
    "SearchFolder",
    "check_wheel",
]
