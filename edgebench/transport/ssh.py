"""The ``ssh`` transport: run the agent on a Linux board through the system OpenSSH client.

Using the system ``ssh``/``scp`` (not a Python SSH library) means the user's
``~/.ssh/config``, keys, ``ssh-agent``, jump hosts and ``known_hosts`` apply
exactly as on the command line. Security rules kept here:

* host key checking is never weakened: no ``StrictHostKeyChecking=no``, no
  ``UserKnownHostsFile=/dev/null``; an unknown or changed key is an error with a hint;
* ``BatchMode=yes`` always, so ssh fails instead of waiting for a password or a
  host-key prompt, and ``ConnectTimeout`` bounds the connection attempt;
* every command is an argv list (never ``shell=True``); the command line run on
  the board is ``shlex.join`` of an argv list, with paths passed as arguments.

:meth:`SshTransport.open` copies the agent zipapp (see :mod:`.bundle`) to
``<remote_dir>/agent-<sha12>.pyz`` on the board unless that exact file is already
there, then starts it with ``ssh -T ... -- host python3 <zipapp> --cache-dir
<remote_dir>/agent``. Models are not copied here: they travel over the agent
protocol (``has_model``/``put_model``, keyed by sha256) and stay cached on the board.
"""
from __future__ import annotations

import math
import re
import secrets
import shlex
import subprocess
import tempfile
from urllib.parse import urlsplit

from edgebench.errors import EdgebenchError, RuntimeMissingError, TransportError, UsageError
from edgebench.transport.bundle import agent_zipapp
from edgebench.transport.process import ProcessChannel

MIN_PYTHON = (3, 9)

# Runs on the board under sh: $1 remote dir, $2 agent path, $3 python, $4 python code.
_PREFLIGHT = (
    'mkdir -p -- "$1" || exit 90; '
    'if test -f "$2"; then echo EB_AGENT=present; else echo EB_AGENT=absent; fi; '
    'exec "$3" -c "$4"'
)
# One line (some login shells are csh): the Python version and whether numpy is there.
_PY_PROBE = (
    "import sys, importlib.util as u; "
    "print('EB_PY=%d.%d.%d' % tuple(sys.version_info[:3])); "
    "print('EB_NUMPY=%d' % (u.find_spec('numpy') is not None))"
)
# $1 temporary path, $2 final path: rename (atomic) so a partial copy is never used.
_FINISH_COPY = 'chmod 0644 -- "$1" && mv -f -- "$1" "$2"'
# Fallback when scp cannot work (no sftp-server on the board): stream stdin into $1.
_CAT_COPY = 'cat > "$1" && chmod 0644 -- "$1" && mv -f -- "$1" "$2"'


def parse_ssh_url(url: str) -> tuple[str | None, str, int | None]:
    """``ssh://[user@]host[:port]`` or ``[user@]host`` -> ``(user, host, port)``."""
    text = url.strip()
    if "://" not in text:
        text = "ssh://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"invalid ssh URL {url!r}: {exc}",
                         hint="use ssh://[user@]host[:port]") from exc
    if parts.scheme != "ssh":
        raise UsageError(f"not an ssh URL: {url!r}", hint="use ssh://[user@]host[:port]")
    host = parts.hostname or ""
    user = parts.username or None
    if parts.password is not None:
        raise UsageError(f"ssh URL {url!r} contains a password",
                         hint="edgebench uses keys only (ssh-copy-id user@host); drop ':password'")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise UsageError(f"ssh URL {url!r} has a path or query", hint="use ssh://[user@]host[:port]")
    for what, value in (("host", host), ("user", user or "x")):
        if not value or value.startswith("-") or re.search(r"[\s'\"\\;&|`$<>]", value):
            raise UsageError(f"invalid {what} in ssh URL {url!r}", hint="use ssh://[user@]host[:port]")
    return user, host, port


def classify_ssh_failure(
    stderr: str, where: str, host: str = "HOST", login: str = "user@host"
) -> EdgebenchError | None:
    """Turn what ssh/scp printed into one typed error, or None if nothing matched.

    ``where`` names the board in the message ("ssh pi@pi5:2222"); ``host`` (as
    known_hosts names it, "[pi5]:2222") and ``login`` (ssh-copy-id's arguments,
    "-p 2222 pi@pi5") are used in the hints' example commands.
    """
    low = stderr.lower()
    host_hint_verify = (
        "verify the board's fingerprint (on the board: ssh-keygen -lf "
        "/etc/ssh/ssh_host_ed25519_key.pub)"
    )
    if "remote host identification has changed" in low or re.search(r"host key for .* has changed", low):
        return TransportError(
            f"host key mismatch for {where}: the board's SSH host key differs from the one "
            "in known_hosts (re-imaged board, or someone in the middle)",
            hint=f"{host_hint_verify}, then remove the stale entry with "
            f"ssh-keygen -R {shlex.quote(host)} and connect once with plain ssh to accept "
            "the new key; never disable host key checking",
        )
    if "host key verification failed" in low or re.search(r"no \S+ host key is known", low):
        return TransportError(
            f"unknown host key for {where}: the board is not in known_hosts and edgebench "
            "never accepts host keys by itself (BatchMode)",
            hint=f"connect once with plain ssh, {host_hint_verify} against what ssh shows, "
            "and accept it (or fix ~/.ssh/known_hosts); never disable host key checking",
        )
    if "could not resolve hostname" in low:
        return TransportError(
            f"{where} is unreachable: cannot resolve the host name",
            hint="check the name (or use the board's IP address) and your network/DNS",
        )
    unreachable = (
        ("connection refused", "connection refused",
         "check the port and that sshd runs on the board (sudo systemctl enable --now ssh)"),
        ("no route to host", "no route to host",
         "check that the board is powered, on the same network, and the address is right"),
        ("network is unreachable", "network is unreachable",
         "check this computer's network connection and the board's address"),
        ("timed out", "connection timed out",
         "check that the board is powered and on the network, the address, and firewalls"),
        ("kex_exchange_identification", "the connection was closed during the handshake",
         "sshd on the board refused the session (firewall, MaxStartups, TCP wrappers)"),
        ("connection reset", "the connection was reset",
         "check the network path to the board and its sshd"),
        ("connection closed by", "the connection was closed by the board",
         "check the board's sshd logs (journalctl -u ssh)"),
    )
    for needle, what, hint in unreachable:
        if needle in low:
            return TransportError(f"{where} is unreachable: {what}", hint=hint)
    for needle in ("not responding", "broken pipe"):
        if needle in low:
            return TransportError(
                f"lost the connection to {where}: {_last_lines(stderr, 1)}",
                hint="the board stopped answering (power, network, overheating?); "
                "check it and run again",
            )
    if "unprotected private key file" in low or "bad permissions" in low:
        return TransportError(
            f"authentication to {where} failed: ssh refuses a private key with open permissions",
            hint="chmod 600 the key file named in ssh's message",
        )
    if "permission denied" in low or "too many authentication failures" in low:
        return TransportError(
            f"authentication to {where} failed: no key was accepted "
            "(BatchMode: passwords are not asked for)",
            hint=f"install your public key on the board with ssh-copy-id {login}, "
            "or name the key with IdentityFile in ~/.ssh/config; keys with a passphrase "
            "must be loaded into ssh-agent",
        )
    return None


def _last_lines(stderr: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not ln.startswith("@")]
    return " | ".join(lines[-n:]) or "no message"


class SshChannel(ProcessChannel):
    """A ProcessChannel over ``ssh``; failures of ssh itself become one clear line."""

    def __init__(self, argv: list[str], description: str, host: str = "HOST",
                 login: str = "user@host"):
        self._host = host
        self._login = login
        super().__init__(argv, description)

    def diagnostics(self) -> str:
        text = super().diagnostics()
        if self.returncode == 255:
            err = classify_ssh_failure(self.stderr_tail(max_lines=40, max_chars=8000),
                                       self.description, self._host, self._login)
            if err is not None:
                return err.one_line()
        return text


class SshTransport:
    """Reach the agent on a Linux board via the system OpenSSH client.

    ``url``: ``ssh://[user@]host[:port]`` or ``[user@]host`` (host may be an alias
    from ``~/.ssh/config``). ``python``: the interpreter on the board (3.9+ with
    numpy and a TFLite runtime). ``ssh_options``: extra options placed before the
    destination for both ssh and scp (e.g. ``["-F", "cfg"]``, ``["-i", "key"]``,
    ``["-J", "jump"]``, ``["-o", "Opt=val"]``). ``remote_dir``: where the agent and
    its model cache live on the board, relative to the login directory unless
    absolute.
    """

    kind = "ssh"

    def __init__(
        self,
        url: str,
        python: str = "python3",
        ssh_options: list[str] | None = None,
        ssh: str = "ssh",
        scp: str = "scp",
        connect_timeout_s: float = 10,
        remote_dir: str = ".cache/edgebench",
        command_timeout_s: float = 120.0,
    ):
        self.url = url
        self.user, self.host, self.port = parse_ssh_url(url)
        self.python = python
        self.ssh_options = list(ssh_options or [])
        self.ssh = ssh
        self.scp = scp
        self.connect_timeout_s = connect_timeout_s
        if remote_dir.startswith("~/"):
            remote_dir = remote_dir[2:]  # ssh commands and scp paths start in the home dir
        self.remote_dir = remote_dir.rstrip("/") or "/"
        self.command_timeout_s = command_timeout_s
        self.copies = 0  # how many times this transport copied the agent to the board
        self.last_open_copied: bool | None = None
        self.remote_python_version: str | None = None
        self.agent_path: str | None = None

    # -- Transport ------------------------------------------------------------------
    def describe(self) -> str:
        text = "ssh "
        if self.user:
            text += f"{self.user}@"
        text += f"[{self.host}]" if ":" in self.host else self.host
        if self.port:
            text += f":{self.port}"
        return text

    def open(self) -> SshChannel:
        with tempfile.TemporaryDirectory(prefix="edgebench-agent-") as tmp:
            local, sha = agent_zipapp(tmp)
            remote = f"{self.remote_dir}/{local.name}"
            present = self._preflight(remote)
            if not present:
                self._copy(str(local), remote)
                self.copies += 1
            self.last_open_copied = not present
        self.agent_path = remote
        argv = self.ssh_argv([self.python, remote, "--cache-dir", f"{self.remote_dir}/agent"])
        return SshChannel(argv, self.describe(), self._key_host(), self._login())

    def _key_host(self) -> str:
        """The host as known_hosts names it (ssh-keygen -R argument)."""
        return f"[{self.host}]:{self.port}" if self.port and self.port != 22 else self.host

    def _login(self) -> str:
        """Arguments for ssh-copy-id naming this board."""
        login = f"{self.user}@{self.host}" if self.user else self.host
        return f"-p {self.port} {login}" if self.port and self.port != 22 else login

    # -- argv builders (public for tests and for --debug output) ----------------------
    def _common_options(self) -> list[str]:
        # ssh takes the first value it sees for an option: ours and the URL's come
        # first, then the caller's, then defaults the caller may override.
        opts = [
            "-o", "BatchMode=yes",
            "-o", f"ConnectTimeout={max(1, math.ceil(self.connect_timeout_s))}",
        ]
        if self.user:
            opts += ["-o", f"User={self.user}"]
        if self.port:
            opts += ["-o", f"Port={self.port}"]
        opts += [*self.ssh_options, "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"]
        return opts

    def ssh_argv(self, remote_argv: list[str]) -> list[str]:
        """``ssh`` argv running ``remote_argv`` on the board (quoted with shlex.join)."""
        return [self.ssh, "-T", *self._common_options(), "--", self.host, shlex.join(remote_argv)]

    def scp_argv(self, local: str, remote: str) -> list[str]:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return [self.scp, *self._common_options(), "--", local, f"{host}:{remote}"]

    # -- steps of open() ------------------------------------------------------------
    def _run(self, argv: list[str], what: str, input_bytes: bytes | None = None):
        timeout = self.connect_timeout_s + self.command_timeout_s
        try:
            return subprocess.run(
                argv, input=input_bytes if input_bytes is not None else b"",
                capture_output=True, timeout=timeout, check=False,
            )
        except FileNotFoundError as exc:
            raise TransportError(
                f"cannot {what}: {argv[0]!r} not found on this computer",
                hint="install the OpenSSH client (e.g. sudo apt install openssh-client)",
            ) from exc
        except subprocess.TimeoutExpired as exc:
            raise TransportError(
                f"{self.describe()} did not answer within {timeout:g} s while trying to {what}",
                hint="check the network path to the board; ConnectTimeout was "
                f"{self.connect_timeout_s:g} s",
            ) from exc

    def _fail(self, proc, what: str) -> EdgebenchError:
        stderr = proc.stderr.decode("utf-8", "replace")
        err = classify_ssh_failure(stderr, self.describe(), self._key_host(), self._login())
        if err is not None:
            return err
        return TransportError(
            f"cannot {what} on {self.describe()}: exit status {proc.returncode}: "
            f"{_last_lines(stderr)}"
        )

    def _preflight(self, remote_agent: str) -> bool:
        """mkdir the remote dir, check the agent file and the board's Python."""
        argv = self.ssh_argv(["sh", "-c", _PREFLIGHT, "edgebench", self.remote_dir,
                              remote_agent, self.python, _PY_PROBE])
        proc = self._run(argv, "connect")
        out = proc.stdout.decode("utf-8", "replace")
        if proc.returncode == 255:
            raise self._fail(proc, "connect")
        if proc.returncode in (126, 127):
            raise RuntimeMissingError(
                f"Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]}+ is missing on {self.describe()}: "
                f"{self.python!r} was not found or cannot be run",
                hint="install it (e.g. sudo apt install python3 python3-numpy) or give the "
                "interpreter's path (python=/usr/bin/python3.11)",
            )
        if proc.returncode == 90:
            raise TransportError(
                f"cannot create {self.remote_dir!r} on {self.describe()}: "
                f"{_last_lines(proc.stderr.decode('utf-8', 'replace'))}",
                hint="check the disk space and permissions of the login user's home",
            )
        match = re.search(r"^EB_PY=(\d+)\.(\d+)\.(\d+)", out, re.M)
        if proc.returncode != 0 or not match:
            raise self._fail(proc, "check the board's Python")
        version = tuple(int(v) for v in match.groups())
        self.remote_python_version = ".".join(map(str, version))
        if version[:2] < MIN_PYTHON:
            raise RuntimeMissingError(
                f"Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]}+ is missing on {self.describe()}: "
                f"{self.python!r} is Python {self.remote_python_version}",
                hint="install a newer python3 on the board or give its path (python=...)",
            )
        if "EB_NUMPY=0" in out:
            raise RuntimeMissingError(
                f"numpy is missing for {self.python} (Python {self.remote_python_version}) "
                f"on {self.describe()}",
                hint="install it on the board (sudo apt install python3-numpy, or pip install "
                "numpy) together with a TFLite runtime (pip install ai-edge-litert)",
            )
        return "EB_AGENT=present" in out

    def _copy(self, local: str, remote: str) -> None:
        tmp_remote = f"{remote}.tmp-{secrets.token_hex(4)}"
        proc = self._run(self.scp_argv(local, tmp_remote), "copy the agent")
        if proc.returncode == 0:
            proc = self._run(self.ssh_argv(["sh", "-c", _FINISH_COPY, "edgebench",
                                            tmp_remote, remote]), "install the agent")
            if proc.returncode != 0:
                raise self._fail(proc, "install the agent")
            return
        err = classify_ssh_failure(proc.stderr.decode("utf-8", "replace"), self.describe(),
                                   self._key_host(), self._login())
        if err is not None:
            raise err
        # scp failed for another reason (often: no sftp-server on the board): stream it.
        with open(local, "rb") as fh:
            data = fh.read()
        proc = self._run(self.ssh_argv(["sh", "-c", _CAT_COPY, "edgebench", tmp_remote, remote]),
                         "copy the agent", input_bytes=data)
        if proc.returncode != 0:
            raise self._fail(proc, "copy the agent")

    def __repr__(self) -> str:
        return f"SshTransport({self.url!r})"
