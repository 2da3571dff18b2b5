"""Servers the team-warehouse tests need, started here on 127.0.0.1, on free ports, in temp folders,
and stopped at the end: a PostgreSQL 15 cluster from Debian's `postgresql` package (the catalog),
and moto's S3-compatible server (the object storage)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    """A throw-away cluster. initdb and pg_ctl refuse root: as root they run as the `postgres` user
    the package creates (every folder they touch is theirs, outside 0700 temp folders)."""

    def __init__(self):
        self.base = Path(tempfile.mkdtemp(prefix="iwh-pg-"))
        self.port = free_port()
        self.data, self.sock = self.base / "data", self.base / "sock"
        self.user = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "postgres")

    @staticmethod
    def missing() -> str | None:
        if not (PG_BIN / "initdb").exists():
            return f"{PG_BIN}/initdb is absent: install Debian's postgresql (apt-get install -y postgresql)"
        return None

    def _run(self, *cmd: str) -> str:
        if os.geteuid() == 0:
            cmd = ("runuser", "-u", "postgres", "--", *cmd)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{' '.join(cmd)}: {done.stderr[-2000:]}")
        return done.stdout

    def start(self) -> Postgres:
        self.data.mkdir()
        self.sock.mkdir()
        if os.geteuid() == 0:
            for p in (self.base, self.data, self.sock):
                shutil.chown(p, "postgres")
        self._run(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8",
                  "--no-sync")
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.base / "server.log"), "-w", "start",
                  "-o", f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.sock} "
                        "-c fsync=off -c max_connections=200")
        return self

    def createdb(self, name: str, owner: str | None = None) -> str:
        """A database (owned by the role `owner`, as docs/team.md makes the lake's)."""
        self._run(str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user,
                  *(("-O", owner) if owner else ()), name)
        return self.conninfo(name, owner)

    def role(self, name: str, *grants: str) -> str:
        """A login role (made once per cluster), granted the given roles' privileges."""
        self.sql("postgres", f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{name}') "
                             f"THEN CREATE ROLE {name} LOGIN; END IF; END $$")
        for granted in grants:
            self.sql("postgres", f"GRANT {granted} TO {name}")
        return name

    def password_role(self, name: str, password: str, *grants: str) -> str:
        """A login role that must give `password` (scram-sha-256) over TCP, while every other role is
        trusted: the cluster's first authentication line names it."""
        from psycopg import sql

        self.role(name, *grants)
        import psycopg

        with psycopg.connect(self.conninfo("postgres"), autocommit=True) as con:
            con.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(name), sql.Literal(password)))
        hba = self.data / "pg_hba.conf"
        hba.write_text(f"host all {name} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "reload")
        time.sleep(0.5)  # the postmaster reads it on SIGHUP
        return name

    def conninfo(self, db: str, user: str | None = None) -> str:
        return f"dbname={db} host=127.0.0.1 port={self.port} user={user or self.user}"

    def sql(self, db: str, text: str) -> None:
        import psycopg

        with psycopg.connect(self.conninfo(db), autocommit=True) as con:
            con.execute(text)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.base, ignore_errors=True)


class S3:
    """moto in server mode: an S3-compatible endpoint on 127.0.0.1 for the lake's data files and for
    runs read from object storage. Clients find it through the usual AWS_* variables (`env`)."""

    KEY, SECRET, REGION = "iwh-test-key", "iwh-test-secret", "us-east-1"

    def __init__(self):
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": self.KEY, "AWS_SECRET_ACCESS_KEY": self.SECRET, "AWS_REGION": self.REGION,
                "AWS_ENDPOINT_URL": self.endpoint}

    def start(self) -> S3:
        exe = Path(sys.executable).with_name("moto_server")
        self.proc = subprocess.Popen([str(exe), "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1)
                return self
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError("moto_server did not come up") from None
                time.sleep(0.1)

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.KEY,
                            aws_secret_access_key=self.SECRET, region_name=self.REGION)

    def bucket(self, name: str) -> str:
        self.client().create_bucket(Bucket=name)
        return f"s3://{name}"

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
            self.proc = None


class Relay:
    """A TCP relay on 127.0.0.1 to another server that can be frozen: its connections stay open and
    nothing more passes either way, as with a server that stops answering (a hung host, a dropped
    route), which DuckDB cannot interrupt a read from."""

    def __init__(self, port: int):
        import threading

        self.target = port
        self.port = free_port()
        self.flowing = threading.Event()
        self.flowing.set()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        while True:
            try:
                data = source.recv(65536)
                self.flowing.wait()
                if not data:
                    sink.shutdown(socket.SHUT_WR)
                    return
                sink.sendall(data)
            except OSError:
                return

    def freeze(self) -> None:
        self.flowing.clear()

    def stop(self) -> None:
        self.listener.close()
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.close()
        self.flowing.set()
