"""A real, throwaway OpenSSH server on 127.0.0.1 for the ssh transport tests.

``SshServer.start(tmp)`` makes an ed25519 host key and a client key with
``ssh-keygen``, writes an ``sshd_config`` that listens on 127.0.0.1 only (key
authentication only, no PAM) and runs ``sshd -D -e -f <config>`` on a free port.
The client side gets its own ``ssh_config`` (used with ``ssh -F``) whose
``UserKnownHostsFile`` already holds the server's host key, with
``StrictHostKeyChecking yes``: the tests run with host key checking fully on.
Nothing of the user's or the system's ssh configuration is read or changed.
"""
from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"


def find_sshd() -> str | None:
    return shutil.which("sshd", path=os.pathsep.join(
        [os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin", "/sbin"]))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keygen(path: Path, comment: str = "edgebench-test") -> str:
    """Make an unencrypted ed25519 key pair at ``path``; return the public key line."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                   check=True, capture_output=True, timeout=30)
    os.chmod(path, 0o600)
    return Path(str(path) + ".pub").read_text().strip()


class SshServer:
    def __init__(self, root: Path, sshd: str = SSHD):
        self.root = Path(root)
        self.sshd = sshd
        self.user = getpass.getuser()
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.log_path = self.root / "sshd.log"

    # -- client-side helpers ------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}"

    def client_config(self, name: str = "ssh_config", identity: Path | None = None,
                      known_hosts: Path | None = None) -> Path:
        """Write an ``ssh -F`` config; defaults: the authorized key and correct known_hosts."""
        path = self.root / name
        path.write_text(
            "Host *\n"
            f"  IdentityFile {identity or self.client_key}\n"
            "  IdentitiesOnly yes\n"
            "  IdentityAgent none\n"
            "  PasswordAuthentication no\n"
            "  KbdInteractiveAuthentication no\n"
            f"  UserKnownHostsFile {known_hosts or self.known_hosts}\n"
            f"  GlobalKnownHostsFile {self.root / 'global_known_hosts'}\n"
            "  StrictHostKeyChecking yes\n"
            "  UpdateHostKeys no\n"
        )
        return path

    def ssh_options(self, **kw) -> list[str]:
        return ["-F", str(self.client_config(**kw))]

    def known_hosts_with(self, pubkey_line: str, name: str) -> Path:
        """A known_hosts file that lists ``pubkey_line`` as this server's key."""
        keytype, blob = pubkey_line.split()[:2]
        path = self.root / name
        path.write_text(f"[127.0.0.1]:{self.port} {keytype} {blob}\n")
        return path

    # -- server ---------------------------------------------------------------------
    def start(self) -> SshServer:
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)
        self.host_key = self.root / "ssh_host_ed25519_key"
        self.host_pub = keygen(self.host_key, "edgebench-test-host")
        self.client_key = self.root / "id_ed25519"
        self.client_pub = keygen(self.client_key)
        self.authorized_keys = self.root / "authorized_keys"
        self.authorized_keys.write_text(self.client_pub + "\n")
        os.chmod(self.authorized_keys, 0o600)
        (self.root / "global_known_hosts").write_text("")
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privilege separation dir
        last_error = ""
        for _ in range(5):  # another process may grab the port between probe and bind
            self.port = _free_port()
            config = self._write_config()
            check = subprocess.run([self.sshd, "-t", "-f", str(config)], capture_output=True,
                                   text=True, timeout=30)
            if check.returncode != 0:
                raise RuntimeError(f"sshd -t rejected the test config: {check.stderr.strip()}")
            log = open(self.log_path, "ab")
            self.proc = subprocess.Popen([self.sshd, "-D", "-e", "-f", str(config)],
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            log.close()
            if self._wait_listening(10.0):
                self.known_hosts = self.known_hosts_with(self.host_pub, "known_hosts")
                return self
            last_error = self.log_path.read_text(errors="replace")[-2000:]
            self.stop()
        raise RuntimeError(f"sshd did not start: {last_error}")

    def _write_config(self) -> Path:
        config = self.root / "sshd_config"
        config.write_text(
            f"Port {self.port}\n"
            "ListenAddress 127.0.0.1\n"
            f"HostKey {self.host_key}\n"
            f"PidFile {self.root / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {self.authorized_keys}\n"
            f"AllowUsers {self.user}\n"
            "PermitRootLogin prohibit-password\n"
            "PubkeyAuthentication yes\n"
            "PasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\n"
            "UsePAM no\n"
            "StrictModes no\n"
            "PrintMotd no\n"
            "X11Forwarding no\n"
            "AllowTcpForwarding no\n"
            "AllowAgentForwarding no\n"
            "PermitTunnel no\n"
            "MaxStartups 100\n"
            "LogLevel VERBOSE\n"
            "Subsystem sftp internal-sftp\n"
        )
        return config

    def _wait_listening(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""
