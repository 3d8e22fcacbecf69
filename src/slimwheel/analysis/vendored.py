"""Vendored copies of NVIDIA's libraries: which members are copies, the soname each had before it was
renamed, and the NVIDIA release it came from.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence

from packaging.utils import canonicalize_name

from slimwheel.analysis.inspect import _candidate_members
from slimwheel.analysis.libraries import api_library_of, is_driver_library, other_makers_of, runtime_majors
from slimwheel.analysis.model import Confidence, IdentifiedRelease, VendoredCopy, _ElfMember
from slimwheel.analysis.static import _is_code
from slimwheel.catalog.model import Catalog, LibraryProvider
from slimwheel.findings import Finding, FindingKind, Severity
from slimwheel.names import LibraryFileName, NameStyle, parse_library_file_name
from slimwheel.sources import ArchiveSource

__all__ = ["named_like_copies"]


def named_like_copies(wheel: ArchiveSource, catalog: Catalog) -> dict[str, str]:
    """Members whose file name is an NVIDIA library's (any of the three styles): member -> stem."""
    names = catalog.library_names
    is_provider_wheel = canonicalize_name(wheel.distribution) in catalog.distributions
    found = {}
    for member in _candidate_members(wheel):
        parsed = parse_library_file_name(posixpath.basename(member.name))
        if (
            parsed is not None
            and not _is_providers_original(is_provider_wheel, parsed)
            and parsed.stem in names
            and parsed.style is not NameStyle.WINDOWS
            and other_makers_of(parsed.stem) is None  # only its content can say it is NVIDIA's
            and not _far_smaller_than_builds(member.file_size, parsed, catalog)  # see _SMALLEST_COPY
        ):
            found[member.name] = parsed.stem
    return found


def _far_smaller_than_builds(size: int, parsed: LibraryFileName, catalog: Catalog) -> bool:
    """Whether a file is far smaller than NVIDIA's builds of the sonames its name may be (of the
    major it spells: ``libcudart.so.13``'s are 704 kB at least; ``cudart64_13.dll``, 471 kB, is none)."""
    major = (parsed.version or "").split(".")[0]
    spelled = f"lib{parsed.stem}.so" + (f".{major}" if major else "")  # not the Windows DLLs, smaller
    providers = catalog.providers(name=parsed.stem, include_prereleases=True)
    smallest = _smallest_build(p for p in providers if _refines(p.library.soname, spelled))
    return smallest is not None and size < _SMALLEST_COPY * smallest


def _is_providers_original(is_provider_wheel: bool, parsed: LibraryFileName | None) -> bool:
    """Whether a library file of a wheel is one of NVIDIA's originals: in NVIDIA's own wheel its
    libraries are, but a file auditwheel grafted (a hashed name) is a copy of another wheel's library
    whichever wheel holds it (nvidia-pytriton 0.7.0's ``libcudart-09529672.so.12.6.77``)."""
    return is_provider_wheel and (parsed is None or parsed.style is not NameStyle.AUDITWHEEL)


def _original_soname(
    item: _ElfMember, parsed: LibraryFileName | None, consumers: Iterable[_ElfMember]
) -> tuple[str, bool]:
    """The soname a vendored copy had before it was renamed, and whether the file itself says so.

    auditwheel rewrites the SONAME, but the consumers' version needs (File -> Name) and the copy's own
    version definitions keep the original (``libnvrtc.so.11.2`` for ``libnvrtc-672ee683.so.11.8.89``).
    Where neither does (``libnvrtc-builtins`` has no versioned symbols), the answer is only a guess
    from the file name (False): the identified NVIDIA release's own file must replace it.
    """
    basename = posixpath.basename(item.member.name)
    stem = parsed.stem if parsed else None
    if parsed is not None and parsed.style is NameStyle.AUDITWHEEL:
        for consumer in consumers:
            for need in consumer.facts.version_needs if consumer.facts else ():
                if need.file == basename:
                    for name in need.names:
                        candidate = parse_library_file_name(name)
                        if candidate and candidate.stem == stem and candidate.style is NameStyle.PLAIN:
                            return name, True
        for name in item.facts.version_definitions if item.facts else ():
            candidate = parse_library_file_name(name)
            if candidate and candidate.stem == stem and candidate.style is NameStyle.PLAIN:
                return name, True
        major = (parsed.version or "").split(".")[0]
        return (f"lib{parsed.stem}.so.{major}" if major else f"lib{parsed.stem}.so"), False
    if item.facts and item.facts.soname and parsed and parsed.style is not NameStyle.AUDITWHEEL:
        return item.facts.soname, True
    if parsed and parsed.plain_soname:
        return parsed.plain_soname, False
    return basename, False


def _file_version(parsed: LibraryFileName | None, original_soname: str) -> str | None:
    """The release a copy's file name carries: auditwheel's keeps the file's version
    (``libnvrtc-672ee683.so.11.8.89``), and a plain name that extends its soname is the real file's
    (``libtensorrt_rtx.so.1.7.1``, soname ``libtensorrt_rtx.so.1``); a name that is the soname says
    only the soname (``libnvrtc.so.11.2`` serves CUDA 11.2 to 11.8)."""
    if parsed is None or not parsed.version:
        return None
    if parsed.style is NameStyle.AUDITWHEEL:
        return parsed.version
    if parsed.style is NameStyle.PLAIN and f"lib{parsed.stem}.so.{parsed.version}".startswith(
        f"{original_soname}."
    ):
        return parsed.version
    return None


def _identify(
    catalog: Catalog,
    record_sha256: str | None,
    original_soname: str,
    parsed: LibraryFileName | None,
    *,
    said: bool = False,
    major: int | None = None,
) -> IdentifiedRelease | None:
    """The NVIDIA release a copy is of: by its sha256, else by its soname, else by its library's name
    where the soname is a guess the release's refines, or the file's version names the release.
    ``said``: the copy itself gives ``original_soname`` (its SONAME, its version definitions).
    ``major``: the one CUDA major the wheel's runtime sonames name, whose releases a copy matched by
    soname alone is taken from where they ship it."""
    if record_sha256:
        exact = catalog.by_sha256(record_sha256)
        if exact:
            # The same bytes can ship under several sonames: the one the copy's name says comes first
            # (``libcudss.so.0`` for a copy named ``libcudss.so.0`` or ``libcudss.so.0.7.1``).
            best = sorted(
                exact,
                key=lambda p: (
                    not (
                        _refines(p.library.soname, original_soname)
                        or _refines(original_soname, p.library.soname)
                    )
                ),
            )
            return _identified(best[0], Confidence.EXACT, len({p.release.key for p in exact}), "sha256")
    providers = catalog.providers(soname=original_soname, include_prereleases=True)

    def of_that_release(provider: LibraryProvider) -> bool:
        # Unread, the soname is a guess (the whole file name): the name is read against the release's
        # own soname too. A soname the copy gives stands: libcudss.so.0.7 is no release of libcudss.so.0.
        version = _file_version(parsed, original_soname) or (
            None if said else _file_version(parsed, provider.library.soname)
        )
        if not version or version.count(".") < 1:
            return False  # a major alone says no release
        return provider.version == version or provider.version.startswith(f"{version}.")

    if not providers and parsed is not None:
        # The soname may be a guess from the file name that misses its minor part (libnvrtc-builtins):
        # the library's releases with the same soname major serve, not another major's. MegEngine 1.13
        # vendors CUDA 10.1's libnvrtc.so.10.1, which no wheel ships; NVRTC 13 is no source of it. A
        # soname the copy gives is no guess: CUDA 10.0's libcurand.so.10.0 (cntk-gpu 2.7) is not
        # cuRAND 10.4's libcurand.so.10, which a NEEDED of libcurand.so.10.0 would not find. A file
        # named for its release serves whatever its soname: cuFile 1.15.1 is libcufile.so.1.15.1 with
        # soname libcufile.so.0 (legate 26.6 vendors it; auditwheel's name keeps only the file's).
        providers = tuple(
            p
            for p in catalog.providers(name=parsed.stem, include_prereleases=True)
            if _refines(p.library.soname, original_soname)
            or (not said and _refines(original_soname, p.library.soname))
            or of_that_release(p)
        )
    if not providers:
        return None
    by_name = [p for p in providers if of_that_release(p)]
    # One release number, several CUDA majors' wheels (tensorrt-rtx-cu12-libs and -cu13-libs 1.7.1.116):
    # the major the wheel's runtime sonames name.
    by_name = [p for p in by_name if p.release.cuda_major == major] or by_name
    if by_name:
        return _identified(
            by_name[0], Confidence.BY_NAME, len({p.release.key for p in by_name}), "file version"
        )
    # Of the sonames a guess admits, those the copy's file name spells (libcupti.so.11.7, not .11.8,
    # for libcupti-1a2b3c4d.so.11.7.101) come first: the others are other libraries by ABI.
    named = _named_file(parsed)
    spelled = [p for p in providers if named and _refines(named, p.library.soname)]
    providers = tuple(spelled) or providers
    # NCCL's libnccl.so.2 ships in nvidia-nccl-cu11, -cu12 and -cu13: a CUDA 11 wheel's copy
    # (cupy-cuda110 8.6) is not of CUDA 13's, which repair would never require for it either.
    of_major = [p for p in providers if p.release.cuda_major == major]
    providers = tuple(of_major) or providers
    return _identified(providers[0], Confidence.BY_SONAME, len({p.release.key for p in providers}), "soname")


def _named_file(parsed: LibraryFileName | None) -> str | None:
    """The file name an auditwheel copy had before it was grafted, where its name keeps a version
    with a minor part: ``libcudart.so.11.0.221`` for ``libcudart-3f3c6934.so.11.0.221``."""
    if parsed is None or parsed.style is not NameStyle.AUDITWHEEL or "." not in (parsed.version or ""):
        return None
    return f"lib{parsed.stem}.so.{parsed.version}"


# A file that only shares a soname with NVIDIA's library, is under this part of the smallest of NVIDIA's
# builds of it, and defines other NVIDIA libraries' API too is no copy of it. Of 158 files named like
# NVIDIA's libraries in 530 wheels tried, copies were 0.65 to 1.01 of it (cumm-cu102's NVRTC 10.2 the
# least); chidori-gpu 0.1.5's remote-CUDA client ships one 231 kB library, which defines cuBLAS's,
# cuDNN's, NVRTC's and the runtime's API, as libcublas.so.13 (0.004 of cuBLAS 13's smallest),
# libcudart.so.13 (0.33) and four more, which repair had dropped for NVIDIA's. Such a small file is
# read even where repair leaves copies unread (named_like_copies): reading it costs little.
_SMALLEST_COPY = 0.5


def _smallest_build(providers: Iterable[LibraryProvider]) -> int | None:
    """The size of the smallest of the providers' files whose size the catalog knows."""
    sizes = [provider.library.size for provider in providers if provider.library.size]
    return min(sizes) if sizes else None


def _interposer(item: _ElfMember, identified: IdentifiedRelease | None, catalog: Catalog) -> str:
    """Why a file identified by its soname alone is no copy of NVIDIA's library, where it is far
    smaller than every build of it NVIDIA's wheels ship (``_SMALLEST_COPY``) and defines other NVIDIA
    libraries' API as its own code; "" otherwise."""
    if identified is None or identified.confidence is not Confidence.BY_SONAME or item.facts is None:
        return ""
    smallest = _smallest_build(catalog.providers(soname=identified.soname, include_prereleases=True))
    if smallest is None or item.member.file_size >= _SMALLEST_COPY * smallest:
        return ""
    own = parse_library_file_name(identified.soname)
    others = sorted(
        {
            library
            for symbol in item.exported_api
            if (library := api_library_of(symbol.name))
            and own is not None
            and not (library.startswith(own.stem) or own.stem.startswith(library))
            and _is_code(item.facts, symbol)
        }
    )
    if not others:
        return ""
    return (
        f"{identified.soname} here is {item.member.file_size:,} bytes, NVIDIA's smallest build of it "
        f"{smallest:,}, and it defines the API of {', '.join(others)} too: no copy of NVIDIA's library "
        "(a shim or an interposer named for it), so it is the wheel's own library and stays"
    )


def _refines(soname: str, guess: str) -> bool:
    return soname == guess or soname.startswith(guess + ".")


def _identified(
    provider: LibraryProvider, confidence: Confidence, candidates: int, evidence: str
) -> IdentifiedRelease:
    return IdentifiedRelease(
        soname=provider.library.soname,
        distribution=provider.distribution,
        version=provider.version,
        cuda_major=provider.release.cuda_major,
        confidence=confidence,
        official_path=provider.library.path,
        candidates=candidates,
        evidence=evidence,
    )


def _find_vendored(
    wheel: ArchiveSource, catalog: Catalog, elf_members: Sequence[_ElfMember], findings: list[Finding]
) -> dict[str, VendoredCopy]:
    """Vendored NVIDIA copies by member path; bundled drivers and copies are added to ``findings``."""
    # Of the ELF members only: a wheel of 100,000 files would hold 100,000 hex digests here.
    elf_paths = {item.member.name for item in elf_members}
    record_sha = {entry.path: entry.sha256_hex for entry in wheel.record() if entry.path in elf_paths}
    nvidia_names = catalog.library_names
    # Showing one of NVIDIA's own wheels: its libraries are the originals, not vendored copies.
    own_distribution = canonicalize_name(wheel.distribution)
    is_provider_wheel = own_distribution in catalog.distributions

    # The loader searches for a DT_NEEDED entry by file name; a SONAME only matters once loaded.
    by_name: dict[str, _ElfMember] = {}
    for item in elf_members:
        by_name.setdefault(posixpath.basename(item.member.name), item)

    consumers_of: dict[str, list[_ElfMember]] = {}
    for item in elf_members:
        for soname in item.facts.needed if item.facts else ():
            provider = by_name.get(soname)
            if provider is not None:
                consumers_of.setdefault(provider.member.name, []).append(item)

    # The rule repair's CUDA major takes first (``_majors_linked``): one major the runtime sonames
    # name decides.
    linked = runtime_majors(
        [
            name
            for item in elf_members
            if item.facts
            for name in (*item.facts.needed, *((item.facts.soname,) if item.facts.soname else ()))
        ]
    )
    major = next(iter(linked)) if len(linked) == 1 else None

    vendored: dict[str, VendoredCopy] = {}
    for item in elf_members:
        basename = posixpath.basename(item.member.name)
        parsed = parse_library_file_name(basename)
        if is_driver_library(basename) or (
            item.facts and item.facts.soname and is_driver_library(item.facts.soname)
        ):
            findings.append(
                Finding(
                    FindingKind.BUNDLED_DRIVER,
                    Severity.ERROR,
                    item.member.name,
                    "bundles the NVIDIA driver library: it must come from the host, never from a wheel",
                )
            )
            continue
        consumers = consumers_of.get(item.member.name, [])
        original, said = _original_soname(item, parsed, consumers)
        identified = _identify(
            catalog, record_sha.get(item.member.name), original, parsed, said=said, major=major
        )
        if (
            not said
            and identified is not None
            and (
                identified.confidence in (Confidence.EXACT, Confidence.BY_NAME)
                or _refines(original, identified.soname)
                or _refines(_named_file(parsed) or "", identified.soname)
            )
        ):
            # Only the file name was there to go by (a copy repair drops unread). The same bytes as a
            # release's file carry its soname: triton's libcupti.so.2025.1.1, the toolkit's real file
            # name, is CUPTI's libcupti.so.12. A file version refines the guess (libnvrtc-builtins.so.12.6,
            # not .so.12), and names the release whose soname the guess missed: legate's
            # libcufile-1ecaf17d.so.1.15.1 is cuFile 1.15.1's libcufile.so.0, not libcufile.so.1. A real
            # file name is a release's soname and more: onnxruntime-ep-nv-tensorrt-rtx-cu13 0.5's
            # libcudart.so.13.4.36 is libcudart.so.13, whatever release built it. And a soname the
            # copy's old file name spells refines a guess from its major: lightseq's
            # libcudart-3f3c6934.so.11.0.221, unread (its version definitions say libcudart.so.11.0;
            # its consumer binds none), is CUDA 11's libcudart.so.11.0, not libcudart.so.11.
            original = identified.soname
        stem = parse_library_file_name(original)
        if _is_providers_original(is_provider_wheel, parsed) or (
            identified is None and (stem is None or stem.stem not in nvidia_names)
        ):
            continue
        interposer = _interposer(item, identified, catalog)
        if interposer:
            findings.append(
                Finding(FindingKind.NOT_NVIDIA_BUILD, Severity.INFO, item.member.name, interposer)
            )
            continue
        others = other_makers_of(stem.stem) if stem else None
        if others and not (identified and identified.by_the_file):
            findings.append(
                Finding(
                    FindingKind.NOT_NVIDIA_BUILD,
                    Severity.INFO,
                    item.member.name,
                    f"{original} is {others}; nothing in this copy matches an NVIDIA release (sha256, "
                    "file version), so it is the wheel's own library and stays",
                )
            )
            continue
        copy = VendoredCopy(
            path=item.member.name,
            name=stem.stem if stem else basename,
            original_soname=original,
            style=parsed.style if parsed else NameStyle.PLAIN,
            size=item.member.file_size,
            compressed_size=item.member.compress_size,
            identified=identified,
            needed_by=tuple(sorted(c.member.name for c in consumers)),
        )
        vendored[item.member.name] = copy
        where = (
            f"{identified.distribution} {identified.version} ({identified.confidence.value})"
            if identified
            else "no NVIDIA wheel matched"
        )
        findings.append(
            Finding(
                FindingKind.VENDORED_NVIDIA,
                Severity.WARNING,
                item.member.name,
                f"vendored copy of {original} ({copy.size} bytes): {where}",
            )
        )

    return vendored
