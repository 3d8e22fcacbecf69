"""Working folders and files that a killed run does not leave behind for good.

slimwheel writes in three places that a SIGKILL (or a power cut) could strand: scratch folders in the
temporary directory (``slimwheel-repair-<hex>``), the staging folder inside the output folder
(``.slimwheel-staging-<hex>``) and WheelWriter's temporary file beside the final wheel
(``.<wheel>.<hex>.tmp``). Each is held under an exclusive ``flock`` by the process that made it, for as
long as it is in use; the kernel releases the lock when that process ends, however it ends. Whoever
makes a new one first removes the leftovers of the same kind in the same folder: those whose lock it
can take, since their owner is gone. One whose owner still runs (another slimwheel working in
parallel) is never touched, and nothing that its kind's own pattern does not name.

A folder's lock is the file ``<folder>.lock`` beside it, made and locked before the folder and removed
after it, so a folder without its lock file is a leftover too. A file is its own lock. Whoever makes a
lock file checks, once it holds the lock, that the name still leads to the file it locked: a cleaner
may have taken a brand-new lock file for a leftover in the instant between its creation and its lock.

A forked child (a process pool's worker) inherits the descriptors that hold these locks, and a pool
worker outlives a parent killed with SIGKILL: in every forked child those descriptors are pointed at
/dev/null at once, so that only the process that made a folder or file keeps it locked.

Where ``fcntl`` is missing (Windows), nothing is locked and nothing is cleaned.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from slimwheel.errors import SlimwheelError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LOCKING",
    "ScratchError",
    "lock_new_file",
    "private_folder",
    "release",
    "remove_abandoned_files",
    "scratch_folder",
    "temporary_directory",
]

LOCKING: bool = fcntl is not None
_LOCK_SUFFIX = ".lock"
_RANDOM_HEX = 16  # hex digits after a folder's prefix
_ATTEMPTS = 16


class ScratchError(SlimwheelError):
    """No scratch folder could be made (the temporary directory is missing, full or read-only)."""


# The files this process holds locked: descriptor -> (device, inode). Never taken for leftovers, even
# where flock is emulated with POSIX locks (NFS), which do not conflict within one process.
_HELD: dict[int, tuple[int, int]] = {}


def _after_fork_in_child() -> None:
    """A forked child (a process pool's worker) shares the parent's locks through the descriptors it
    inherits, and would keep them held should the parent be killed while it lives on: point those
    descriptors at /dev/null (the numbers stay valid for whatever file object wraps them)."""
    if not _HELD:
        return
    null = os.open(os.devnull, os.O_RDWR)
    for descriptor in _HELD:
        with suppress(OSError):
            os.dup2(null, descriptor)
    os.close(null)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A private folder in the temporary directory (``$TMPDIR``), removed when the block ends; see
    ``private_folder``. A folder that cannot be made is a ScratchError (one line)."""
    parent = temporary_directory()
    try:
        folder, descriptor = _make_folder(parent, prefix)
    except OSError as exc:
        raise ScratchError(
            f"{parent}: cannot make a scratch folder there ({exc.strerror or exc})",
            hint="point TMPDIR at a writable folder",
        ) from exc
    with _held(folder, descriptor):
        yield folder


def temporary_directory() -> Path:
    """The temporary directory, chosen as ``tempfile.gettempdir`` chooses it (``tempfile.tempdir`` if
    set, then ``$TMPDIR``, ``$TEMP``, ``$TMP``, the platform's folders, the current folder), but without
    its probe: gettempdir writes a randomly named file into each candidate and removes it again, and a
    run killed in between leaves that file behind where nothing can tell it was ours."""
    if tempfile.tempdir is not None:
        return Path(tempfile.tempdir)
    candidates = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")]
    if os.name == "nt":  # pragma: no cover - Windows
        candidates += [os.path.expandvars(r"%SYSTEMROOT%\Temp"), r"c:\temp", r"c:\tmp", r"\temp", r"\tmp"]
    else:
        candidates += ["/tmp", "/var/tmp", "/usr/tmp"]  # noqa: S108 - the stdlib's own list
    for candidate in filter(None, candidates):
        if Path(candidate).is_dir() and os.access(candidate, os.W_OK | os.X_OK):
            return Path(candidate).absolute()
    # Nothing usable: the first one named, so that the error names the folder the user pointed at.
    return Path(next(filter(None, candidates), os.curdir)).absolute()


@contextmanager
def private_folder(parent: Path, prefix: str) -> Iterator[Path]:
    """A new folder ``<parent>/<prefix><hex>`` (mode 0o700), locked while the block runs and removed
    with its content when it ends. Leftovers of earlier runs with the same prefix in ``parent`` whose
    owner is gone are removed first. OSError when the folder cannot be made."""
    folder, descriptor = _make_folder(parent, prefix)
    with _held(folder, descriptor):
        yield folder


@contextmanager
def _held(folder: Path, descriptor: int) -> Iterator[None]:
    """Remove ``folder``, then its lock file, then let go of the lock, when the block ends."""
    try:
        yield
    finally:
        _remove_tree(folder)
        with suppress(OSError):
            _lock_path(folder).unlink()
        release(descriptor)
        with suppress(OSError):
            os.close(descriptor)


def _make_folder(parent: Path, prefix: str) -> tuple[Path, int]:
    _remove_abandoned_folders(parent, prefix)
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NOFOLLOW
    for _ in range(_ATTEMPTS):
        folder = parent / f"{prefix}{secrets.token_hex(_RANDOM_HEX // 2)}"
        lock = _lock_path(folder)
        try:
            descriptor = os.open(lock, flags, 0o600)
        except FileExistsError:
            continue
        try:
            if not lock_new_file(descriptor, lock):
                os.close(descriptor)
                continue  # a cleaner took it for a leftover: another name
            folder.mkdir(0o700)
        except BaseException as exc:
            release(descriptor)
            with suppress(OSError):
                lock.unlink()
            os.close(descriptor)
            if isinstance(exc, FileExistsError):
                continue
            raise
        return folder, descriptor
    raise FileExistsError(f"no free name for a folder {prefix}* in {parent}")


def lock_new_file(descriptor: int, path: Path) -> bool:
    """Take the exclusive lock on a file just created at ``path`` (open as ``descriptor``); False when
    the name no longer leads to it (a cleaner removed it between its creation and this lock): the
    caller then closes it and makes another. Call ``release`` before closing it."""
    mine = os.fstat(descriptor)
    if LOCKING:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # waits at most for a cleaner's unlink
        try:
            now = os.lstat(path)
        except FileNotFoundError:
            return False
        if (now.st_dev, now.st_ino) != (mine.st_dev, mine.st_ino):
            return False
    _HELD[descriptor] = (mine.st_dev, mine.st_ino)
    return True


def release(descriptor: int) -> None:
    """Forget a lock ``lock_new_file`` took, before its descriptor is closed (closing lets it go)."""
    _HELD.pop(descriptor, None)


def remove_abandoned_files(folder: Path, pattern: re.Pattern[str]) -> None:
    """Remove the regular files in ``folder`` whose names ``pattern`` matches in full and whose
    lock (on the file itself) is free: files a process held locked until it died. Best effort."""
    if not LOCKING:
        return
    for name in _names(folder):
        if not pattern.fullmatch(name):
            continue
        path = folder / name
        descriptor = _take_abandoned(path)
        if isinstance(descriptor, int):
            with suppress(OSError):
                path.unlink()
            os.close(descriptor)


def _remove_abandoned_folders(parent: Path, prefix: str) -> None:
    if not LOCKING:
        return
    shape = re.compile(re.escape(prefix) + f"[0-9a-f]{{{_RANDOM_HEX}}}")
    stems = {name.removesuffix(_LOCK_SUFFIX) for name in _names(parent)}
    for stem in sorted(s for s in stems if shape.fullmatch(s)):
        folder = parent / stem
        lock = _lock_path(folder)
        taken = _take_abandoned(lock)
        if taken is None:
            continue  # its owner still runs (or it is not ours to judge)
        _remove_tree(folder)
        if isinstance(taken, int):
            with suppress(OSError):
                lock.unlink()
            os.close(taken)


_MISSING = "missing"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _take_abandoned(path: Path) -> int | str | None:
    """The descriptor of ``path`` holding its lock, when its lock was free (its owner is gone);
    ``_MISSING`` when there is no such file; None when it is held, not a regular file, or cannot be
    opened (not ours to judge)."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC | _NOFOLLOW)
    except FileNotFoundError:
        return _MISSING
    except OSError:
        return None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or (status.st_dev, status.st_ino) in _HELD.values():
            raise OSError("not a regular file, or this process's own")
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        now = os.lstat(path)  # still the file at that name (not removed and made anew meanwhile)
        if (now.st_dev, now.st_ino) != (status.st_dev, status.st_ino):
            raise OSError("replaced")
    except OSError:
        os.close(descriptor)
        return None
    return descriptor


def _names(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return [entry.name for entry in entries]
    except OSError:
        return []


def _lock_path(folder: Path) -> Path:
    return folder.with_name(folder.name + _LOCK_SUFFIX)


def _remove_tree(path: Path) -> None:
    """Remove a folder and everything in it (a symbolic link or file of that name: the name only);
    folders inside made read-only are made writable first. Best effort."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            path.unlink()
            return
    except OSError:
        return
    shutil.rmtree(path, ignore_errors=True)
    if not os.path.lexists(path):
        return
    for root, folders, _ in os.walk(path):
        for name in folders:
            inner = Path(root, name)
            if not inner.is_symlink():
                with suppress(OSError):
                    inner.chmod(0o700)
    with suppress(OSError):
        path.chmod(0o700)
    shutil.rmtree(path, ignore_errors=True)
