"""Files of a run folder written and read safely (level 0): atomic writes, no symbolic links followed.

Run folders are shared (a CI cache, a lab's NAS), so what is in one is not trusted:

* :func:`atomic_write` writes a file as a temporary file with an unpredictable name, created
  exclusively (``O_EXCL``: never through a link planted under that name), fsync'd and renamed
  over the target, which itself may not be a symbolic link;
* :func:`check_run_folder` refuses a folder holding a symbolic link that leads out of it, or a
  file that is not a regular file or folder (a FIFO would block a reader for ever, a device
  would feed it without end); :func:`check_writable_folder` also refuses a folder that is
  itself a link, before anything is written into it.

Library code: raises :class:`~edgebench.errors.ResultError`, never prints.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from edgebench.errors import DiskFullError, ResultError, UsageError, file_kind

LINK_HINT = "a run folder holds only its own files: remove the link (or copy the file in its place)"


def _umask() -> int:
    try:   # Linux: read it without changing it (os.umask sets it, which other threads would see)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


FULL = (errno.ENOSPC, errno.EDQUOT)


def disk_full(exc: BaseException, path) -> DiskFullError | None:
    """``exc`` as a :class:`~edgebench.errors.DiskFullError` naming ``path`` when it says the device
    is full (ENOSPC) or the quota reached (EDQUOT); None for anything else."""
    if not isinstance(exc, OSError) or exc.errno not in FULL:
        return None
    what = "no space left" if exc.errno == errno.ENOSPC else "disk quota exceeded"
    return DiskFullError(f"{what} on the device holding {path}: cannot write it",
                         "free some space there (or give --runs-dir / -o a folder on another disk) and run again")


def refuse_link(path, what: str = "file") -> None:
    """ResultError when ``path`` is a symbolic link (nothing is written or read through one)."""
    if os.path.islink(path):
        raise ResultError(f"{what} {path} is a symbolic link (to {os.readlink(path)}): edgebench does not "
                          "write or read run files through links", LINK_HINT)


def atomic_write(path, write, mode: int = 0o666) -> Path:
    """``write(f)`` into a new temporary file beside ``path`` (random name, ``O_EXCL``; ``mode`` less
    the umask), fsync it, rename it over ``path`` and fsync the folder. ``path`` may not be a link."""
    path = Path(path)
    refuse_link(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        full = disk_full(exc, path)
        if full is not None:
            raise full from None
        raise
    try:
        os.fchmod(fd, mode & ~_umask())           # mkstemp makes 0600; a file gets the usual mode
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        full = disk_full(exc, path)
        if full is not None:
            raise full from None
        raise
    fsync_dir(path.parent)
    return path


def write_output(path, write, what: str = "output") -> Path:
    """A file the user named (``report -o``, ``runs --csv``): ``write(f)`` into it atomically,
    creating its folder. Refused with one line: a folder, anything but a regular file (a FIFO
    would block for ever, a device such as /dev/full takes nothing); a link is followed to its
    target (the user's own choice). Any OSError becomes a UsageError naming the path."""
    p = Path(path)
    try:
        target = Path(os.path.realpath(p)) if os.path.islink(p) else p
        if target.exists() and not target.is_file():
            kind = "a folder" if target.is_dir() else file_kind(os.stat(target).st_mode)
            hint = (f"give a file name, e.g. {p / 'report.html'}" if target.is_dir()
                    else "give the path of a regular file")
            raise UsageError(f"{what} {p} is {kind}, not a file", hint)
        target.parent.mkdir(parents=True, exist_ok=True)
        return atomic_write(target, write)
    except OSError as exc:
        raise UsageError(f"cannot write {what} {p}: {exc.strerror or exc}",
                         "check the path, its permissions and the free space") from None


def create_exclusive(path):
    """A new file opened for binary writing; fails when anything (a link included) has that name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.fdopen(os.open(path, flags, 0o666), "wb")


def refuse_link_folder(folder, what: str = "folder") -> Path:
    """``folder`` created when missing (its parents too), then refused (ResultError) when it, or the
    folder holding it, is a symbolic link: a file made in it stays where the caller meant."""
    folder = Path(folder)
    for d in (folder.parent, folder):
        refuse_link(d, what)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ResultError(f"{what} {folder} is not a folder", "remove what is there under that name") from None
    refuse_link(folder, what)
    if not folder.is_dir():
        raise ResultError(f"{what} {folder} is not a folder", "remove what is there under that name")
    return folder


def open_stream(path, what: str = "output file"):
    """A new file for streaming binary writes (a child's stdout, a log): its folder created and
    checked not to be a link, the file created exclusively without following a link
    (``O_CREAT|O_EXCL|O_NOFOLLOW``). ResultError, one line, when anything already has that name
    (a planted link included) or the file cannot be made."""
    path = Path(path)
    refuse_link_folder(path.parent, f"folder of {what}")
    try:
        return create_exclusive(path)
    except FileExistsError:
        kind = "a symbolic link" if os.path.islink(path) else "already there"
        raise ResultError(f"{what} {path} is {kind}: edgebench writes only new files there",
                          "remove it (someone else's file or link in the folder)") from None
    except OSError as exc:
        raise ResultError(f"cannot create {what} {path}: {exc.strerror or exc}",
                          "check the folder, its permissions and the free space") from None


def write_new_or_same(path, data: bytes, what: str = "file") -> Path:
    """``data`` as ``path`` (atomically) unless it already holds exactly that; the folder and the file
    may not be links (a build folder with a name computable from public input)."""
    path = Path(path)
    refuse_link_folder(path.parent, f"folder of {what}")
    refuse_link(path, what)
    if path.is_file():
        with open(path, "rb", opener=_nofollow_opener) as f:
            if f.read(len(data) + 1) == data:
                return path
    return atomic_write(path, lambda f: f.write(data))


def _nofollow_opener(path, flags):
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))


def read_regular(path, limit: int, what: str = "file") -> bytes | None:
    """At most ``limit + 1`` bytes of ``path``, None when there is none; a symbolic link or anything but
    a regular file is refused (ResultError) before it is read."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ResultError(f"{what} {path} cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISLNK(st.st_mode):
        raise ResultError(f"{what} {path} is a symbolic link (to {os.readlink(path)}): edgebench does not read "
                          "it through a link", LINK_HINT)
    if not stat.S_ISREG(st.st_mode):
        raise ResultError(f"{what} {path} is {file_kind(st.st_mode)}, not a file", "remove it")
    try:
        with open(path, "rb", opener=_nofollow_opener) as f:
            return f.read(limit + 1)
    except OSError as exc:
        raise ResultError(f"{what} {path} cannot be read ({exc.strerror or exc})") from None


def fsync_dir(path) -> None:
    """fsync a folder, so a file renamed into it survives a power cut (a no-op where a folder
    cannot be opened, e.g. Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # not possible on every system (Windows)
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def check_run_folder(run_dir) -> Path:
    """``run_dir`` as a Path, after checking every entry below it: a symbolic link must stay inside
    the folder, and every other entry be a regular file or a folder. ResultError otherwise."""
    d = Path(run_dir)
    try:
        root = d.resolve()
        walk = list(os.walk(d, followlinks=False, onerror=_raise))
    except (OSError, RuntimeError) as exc:
        raise ResultError(f"run folder {d} cannot be read ({exc})", "check the folder and its permissions") from None
    for top, dirs, files in walk:
        for name in dirs + files:
            entry = os.path.join(top, name)
            try:
                st = os.lstat(entry)
            except OSError:
                continue        # gone meanwhile
            if stat.S_ISLNK(st.st_mode):
                target = Path(os.path.realpath(entry))
                if target != root and root not in target.parents:
                    raise ResultError(f"run folder {d}: {os.path.relpath(entry, d)} is a symbolic link to "
                                      f"{target}, outside the folder; refusing the folder", LINK_HINT)
            elif not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                raise ResultError(f"run folder {d}: {os.path.relpath(entry, d)} is {file_kind(st.st_mode)}, not a "
                                  "file; refusing the folder", "a run folder holds only regular files: remove it")
    return d


def check_writable_folder(run_dir) -> Path:
    """:func:`check_run_folder`, and the folder may not itself be a symbolic link (what is written
    into a run folder stays in it)."""
    refuse_link(run_dir, "run folder")
    return check_run_folder(run_dir)


def _raise(exc: OSError) -> None:
    raise exc


__all__ = [
    "LINK_HINT",
    "atomic_write",
    "check_run_folder",
    "check_writable_folder",
    "create_exclusive",
    "disk_full",
    "fsync_dir",
    "open_stream",
    "read_regular",
    "refuse_link",
    "refuse_link_folder",
    "write_new_or_same",
    "write_output",
]
