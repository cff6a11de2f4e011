"""A job's own model server: the ``serve:`` block of a grid (and of ``sparqlab reproduce``).

On a cluster the GPU belongs to the job, so the job starts the OpenAI-compatible server itself (``vllm serve``,
``sparqlab serve-model`` or any other command), waits until ``GET /v1/models`` answers, runs its cells or
notebooks against ``127.0.0.1:PORT`` and stops the server however the job ends::

    serve:
      model: Qwen/Qwen2.5-7B-Instruct      # the served name; every role naming it is sent to this server
      command: vllm serve {model} --host {host} --port {port} --tensor-parallel-size {gpus}
      gpus: 1
      start_timeout_s: 900
      timeout_min: 240                     # Slurm resources of the job
      mem_gb: 64

A cell whose model (or one of its roles' models) is the served one and names no URL gets the endpoint
``serve:MODEL`` (:func:`served_endpoint`): stable across jobs, so the run id and the resume do not depend on the
port a job happened to get; the job hands the real URL to the run through ``served_urls``
(:class:`~sparqlab.runs.config.ExecutionSettings`), which is not part of the run id.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparqlab.core.config import CheckedConfig
from sparqlab.core.processes import free_port, stop_process
from sparqlab.runs.config import SERVED_PREFIX
from sparqlab.runs.store import write_json

LOG_NAME = "model-server.log"
"""The server's stdout and stderr, in the job's folder (appended by every start of a requeued job)."""

STATE_NAME = "model-server.json"
"""The running server's process id, URL and command, in the job's folder (removed when it is stopped)."""

TEMPLATE_FIELDS = ("model", "host", "port", "gpus")


class ServerStartError(RuntimeError):
    """The job's model server exited or did not answer ``/v1/models`` in time; the message is one line with the
    tail of its log."""


class ServerDied(RuntimeError):
    """The job's model server exited while the job still needed it."""


@dataclass(frozen=True)
class ServeSpec(CheckedConfig):
    """The model server a job starts for its cells (the grid's ``serve:`` block).

    - ``model``: the model name the server serves; every cell role naming this model (and no URL) is sent to it.
    - ``command``: the command line that starts the server, with ``{model}``, ``{host}``, ``{port}`` and
      ``{gpus}`` filled in (e.g. ``vllm serve {model} --port {port} --tensor-parallel-size {gpus}``, or offline
      ``sparqlab serve-model --model {model} --port {port}``); run without a shell, the job's Python environment's
      ``bin`` folder first on ``PATH``.
    - ``gpus``: GPUs of the job (``{gpus}``; Slurm ``gpus_per_node``).
    - ``host``: the address the server listens on and is called at.
    - ``port``: its port (0: a free port of the node, chosen when the job starts).
    - ``start_timeout_s``: how long the server may take to answer ``/v1/models`` (loading weights can take minutes).
    - ``stop_grace_s``: after SIGTERM, how long the server may take to exit before SIGKILL.
    - ``jobs``: how many jobs share the grid's cells, each with its own server (cells run one after the other
      within a job).
    - ``timeout_min`` / ``mem_gb`` / ``cpus_per_task``: Slurm resources of each job (over ``executor.slurm``).
    """

    model: str
    command: str
    gpus: int = 1
    host: str = "127.0.0.1"
    port: int = 0
    start_timeout_s: float = 900.0
    stop_grace_s: float = 30.0
    jobs: int = 1
    timeout_min: int | None = None
    mem_gb: int | None = None
    cpus_per_task: int | None = None

    def check(self) -> None:
        if not self.model or not self.command.strip():
            raise ValueError("serve needs the served model's name (model) and the command that serves it (command)")
        try:
            self.command.format(**dict.fromkeys(TEMPLATE_FIELDS, ""))
        except (KeyError, IndexError, ValueError) as error:
            raise ValueError(f"serve.command {self.command!r} uses an unknown placeholder {error}; it may use "
                             + ", ".join("{" + name + "}" for name in TEMPLATE_FIELDS)) from None
        if self.jobs < 1 or self.gpus < 0 or self.start_timeout_s <= 0 or self.stop_grace_s < 0:
            raise ValueError("serve: jobs must be >= 1, gpus >= 0, start_timeout_s > 0 and stop_grace_s >= 0")

    @property
    def endpoint(self) -> str:
        return served_endpoint(self.model)

    def argv(self, port: int) -> list[str]:
        return shlex.split(self.command.format(model=self.model, host=self.host, port=port, gpus=self.gpus))

    def slurm_parameters(self) -> dict[str, Any]:
        """The submitit parameters of a job with this server."""
        resources = {"gpus_per_node": self.gpus, "timeout_min": self.timeout_min, "mem_gb": self.mem_gb,
                     "cpus_per_task": self.cpus_per_task}
        return {name: value for name, value in resources.items() if value is not None}


def served_endpoint(model: str) -> str:
    """The stable endpoint of ``model`` served by the job itself (see the module docstring)."""
    return SERVED_PREFIX + model


def log_tail(path: Path, lines: int = 3) -> str:
    """The server's last ``lines`` non-empty output lines in its log (not the job's ``---`` start/stop marks),
    joined with `` | `` for a one-line message."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    kept = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("--- ")][-lines:]
    return " | ".join(kept) or "(no output)"


def _answers_models(url: str) -> bool:
    import httpx2

    try:
        return httpx2.get(f"{url}/models", timeout=2.0).status_code == 200
    except httpx2.HTTPError:
        return False


def _die_with_job() -> None:
    """Server pre-exec: be killed when the job process dies, even by SIGKILL (Linux ``PR_SET_PDEATHSIG``)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)


class ModelServer:
    """One started server process: its URL, its log and whether it still runs."""

    def __init__(self, spec: ServeSpec, folder: Path):
        self.spec = spec
        self.log_path = Path(folder) / LOG_NAME
        self.port = spec.port or free_port(spec.host)
        host = f"[{spec.host}]" if ":" in spec.host else spec.host
        self.url = f"http://{host}:{self.port}/v1"
        self.process: subprocess.Popen | None = None

    def start(self, now: Callable[[], float] = time.monotonic, poll_s: float = 0.2) -> None:
        """Start the command and wait until ``/v1/models`` answers; :class:`ServerStartError` (server stopped)
        when it exits first or ``start_timeout_s`` passes."""
        argv = self.spec.argv(self.port)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {shlex.join(argv)}\n")
            log.flush()
            try:
                self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                env=env, start_new_session=True, preexec_fn=_die_with_job)
            except OSError as error:
                raise ServerStartError(f"the model server `{shlex.join(argv)}` could not start: {error}") from None
        write_json(self.log_path.with_name(STATE_NAME), {"pid": self.process.pid, "url": self.url, "command": argv})
        deadline = now() + self.spec.start_timeout_s
        while not _answers_models(self.url):
            if self.process.poll() is not None:
                raise ServerStartError(self._failure(f"exited with code {self.process.returncode} before answering"))
            if now() > deadline:
                self.stop()
                raise ServerStartError(self._failure(f"did not answer {self.url}/models within "
                                                     f"{self.spec.start_timeout_s:g} s (stopped)"))
            time.sleep(poll_s)

    def _failure(self, what: str) -> str:
        return f"the model server for {self.spec.model!r} {what}: {log_tail(self.log_path)} (log: {self.log_path})"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def death(self) -> ServerDied:
        return ServerDied(self._failure(f"exited with code {self.process.returncode} while the job needed it"))

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after ``stop_grace_s``."""
        if self.process is not None and self.process.returncode is None:
            stop_process(self.process, self.spec.stop_grace_s, group=True)
            with self.log_path.open("a", encoding="utf-8") as log:
                log.write(f"--- stopped (exit code {self.process.returncode})\n")
        self.log_path.with_name(STATE_NAME).unlink(missing_ok=True)


@contextlib.contextmanager
def served_model(spec: ServeSpec, folder: str | Path) -> Iterator[ModelServer]:
    """Start the server of ``spec`` (log in ``folder``), yield it once ready, stop it however the block ends
    (an exception, ``SystemExit`` from submitit's requeue, SIGTERM; a SIGKILL of the job takes the server with it)."""
    server = ModelServer(spec, Path(folder))
    previous = signal.getsignal(signal.SIGTERM) if _main_thread() else None
    try:
        if previous is not None and previous in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, _exit_on_sigterm)  # run the finally below on `scancel` / kill
        server.start()
        yield server
    finally:
        server.stop()
        if previous is not None and previous in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, previous)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)
