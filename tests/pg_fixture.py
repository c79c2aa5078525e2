"""A real, throwaway PostgreSQL server for the shared-store tests (and benchmarks/store_pg_scale.py).

``PgServer(tmp).start()`` runs Debian's ``initdb`` and ``pg_ctl`` (``postgresql`` package, version 15 here)
on a fresh data folder, listening on 127.0.0.1 at a free port and on a Unix socket in the same temporary
folder, password authentication only (scram-sha-256; the superuser ``edgebench`` with a random password).
PostgreSQL refuses to run as root: when the tests run as root the binaries run as an unprivileged system
user (``edgebench-pg``, made with ``useradd`` when absent, else ``nobody``) through ``runuser -u USER --``
with an argv list; the data folder is a ``mkdtemp`` folder given to that user. ``stop()`` is
``pg_ctl stop -m immediate`` and removes the folder. Nothing of the system's clusters is read or changed.
"""
from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

PG_DIRS = [Path("/usr/lib/postgresql") / v / "bin" for v in ("17", "16", "15", "14", "13")]
SUPERUSER = "edgebench"
SERVICE_USER = "edgebench-pg"


def find_pg_bin() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None."""
    for candidate in [*PG_DIRS, *(Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p)]:
        if all((candidate / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return candidate
    which = shutil.which("pg_ctl")
    if which:
        real = Path(os.path.realpath(which)).parent
        if (real / "initdb").is_file() and (real / "postgres").is_file():
            return real
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _service_user() -> str | None:
    """Who runs the server: None (ourselves) unless root, then a dedicated unprivileged user."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVICE_USER)
        return SERVICE_USER
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    made = subprocess.run([useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                           SERVICE_USER], capture_output=True, timeout=30)
    if made.returncode == 0:
        return SERVICE_USER
    return "nobody"


class PgServer:
    """One PostgreSQL server in a temporary folder; ``url`` is its libpq URL with the password."""

    def __init__(self, bindir: Path | None = None):
        found = bindir or find_pg_bin()
        if found is None:
            raise FileNotFoundError("PostgreSQL's initdb/pg_ctl/postgres not found (apt-get install postgresql)")
        self.bindir = found
        self.user = _service_user()
        self.password = secrets.token_urlsafe(16)
        self.port = 0
        self.root = Path(tempfile.mkdtemp(prefix="edgebench-pg-"))
        self.data = self.root / "data"
        self.sock = self.root / "sock"
        self.log = self.root / "server.log"

    # -- running the binaries as the service user
    def _argv(self, tool: str, *args: str) -> list:
        argv = [str(self.bindir / tool), *args]
        if self.user is not None:
            argv = ["runuser", "-u", self.user, "--", *argv]
        return argv

    def _run(self, tool: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(self._argv(tool, *args), capture_output=True, text=True, timeout=timeout,
                              cwd=str(self.root))

    def start(self) -> PgServer:
        self.sock.mkdir()
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            for p in (self.root, self.sock, pwfile):
                os.chown(p, entry.pw_uid, entry.pw_gid)
        os.chmod(self.root, 0o700)
        init = self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=scram-sha-256",
                         f"--pwfile={pwfile}", "-E", "UTF8", "--no-locale", "--no-sync")
        pwfile.unlink()
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stderr.strip()[-400:]}")
        self.port = _free_port()
        # settings in the data folder's own configuration (no option string through pg_ctl's shell)
        conf = self.data / "postgresql.auto.conf"
        settings = (f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                    f"unix_socket_directories = '{self.sock}'\nmax_connections = 60\n"
                    "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
        self._append_conf(conf, settings)
        started = self._run("pg_ctl", "start", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60")
        if started.returncode != 0:
            log = self.log.read_text(errors="replace")[-600:] if self.log.exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {started.stderr.strip()[-300:]} {log}")
        return self

    def _append_conf(self, conf: Path, text: str) -> None:
        if self.user is None:
            with open(conf, "a") as f:
                f.write(text)
            return
        # the file belongs to the service user; append through it (tee, argv, no shell)
        subprocess.run(["runuser", "-u", self.user, "--", "tee", "-a", str(conf)], input=text,
                       capture_output=True, text=True, check=True, timeout=30)

    def stop(self, remove: bool = True) -> None:
        if self.data.exists():
            self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30")
        if remove:
            shutil.rmtree(self.root, ignore_errors=True)

    def restart(self) -> None:
        """Start again after :meth:`stop` with ``remove=False`` (the store back online)."""
        started = self._run("pg_ctl", "start", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60")
        if started.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {started.stderr.strip()[-300:]}")

    def url(self, dbname: str = "postgres", password: str | None = None) -> str:
        pw = self.password if password is None else password
        return f"postgresql://{SUPERUSER}:{pw}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str) -> str:
        """A new empty database; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)
