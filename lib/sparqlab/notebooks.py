"""Headless reproduction: execute the project's notebooks with papermill, and open them in JupyterLab.

Every notebook in ``notebooks/`` has a cell tagged ``parameters`` whose defaults need no GPU and no network, so
``sparqlab reproduce`` re-executes all of them on a laptop (from cached model responses where a notebook asks for
replay). Parameters can be overridden, e.g. a real model URL, to run the same notebooks on a GPU endpoint. Each
parameter is declared with a type annotation (``limit: int = 40  # questions per dataset``); overrides are checked
against the declared name and type *before* any notebook runs, so a typo fails at once with a message naming the
parameter instead of cryptically in cell 7.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import yaml

from sparqlab.core.paths import PROJECT_ROOT, runs_dir

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"


def parameters_cell(source: str) -> nbformat.NotebookNode:
    """A code cell tagged ``parameters`` (the one papermill overrides and :func:`notebook_parameters` reads)."""
    return nbformat.v4.new_code_cell(source, metadata={"tags": ["parameters"]})


def write_generated_notebook(cells: list, name: str) -> Path:
    """Write ``cells`` as ``notebooks/<name>`` with the Python 3 kernelspec and say so (for ``scripts/make_*.py``)."""
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    })
    path = NOTEBOOKS_DIR / name
    nbformat.write(notebook, path)
    print(f"wrote {path}")
    return path


@dataclass
class NotebookOutcome:
    """How one notebook execution ended: ``error`` is ``None`` on success, else the failing cell's error."""

    notebook: str
    output: Path
    seconds: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class ReproduceReport:
    outcomes: list[NotebookOutcome] = field(default_factory=list)

    @property
    def failed(self) -> list[NotebookOutcome]:
        return [o for o in self.outcomes if not o.ok]

    def summary(self) -> str:
        lines = [f"{'ok' if o.ok else 'FAILED':6} {o.notebook:40} {o.seconds:7.1f}s  -> {o.output}" for o in self.outcomes]
        for outcome in self.failed:
            lines.append(f"\n{outcome.notebook} failed:\n{outcome.error}")
        verdict = "all notebooks ran" if not self.failed else f"{len(self.failed)} of {len(self.outcomes)} notebooks failed"
        return "\n".join(lines + [verdict])


def find_notebooks(names: list[str] | None = None, directory: Path = NOTEBOOKS_DIR) -> list[Path]:
    """The notebooks to run: all of ``directory`` in name order, or those named (by file name or stem)."""
    available = sorted(directory.glob("*.ipynb"))
    if not names:
        return available
    chosen = []
    for name in names:
        path = Path(name)
        if path.exists():
            chosen.append(path)
            continue
        matches = [nb for nb in available if nb.name == name or nb.stem == name or nb.stem.startswith(name)]
        if len(matches) != 1:
            known = ", ".join(nb.stem for nb in available)
            raise FileNotFoundError(f"no single notebook matches {name!r}; notebooks: {known}")
        chosen.append(matches[0])
    return chosen


def parse_parameter(text: str) -> Any:
    """An untyped command-line parameter value: a Python literal (``8``, ``None``, ``['a']``) or a plain string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


class ParameterError(ValueError):
    """A notebook parameter override that does not match the notebook's declaration (name or type)."""


@dataclass(frozen=True)
class NotebookParameter:
    """One assignment of a notebook's ``parameters`` cell: ``name: annotation = default  # help``.

    ``kind`` is the annotation in a small vocabulary: ``int``, ``float``, ``str``, ``bool``, ``dict``, ``any``,
    ``list[<kind>]`` and ``<kind> | None`` (also written ``Optional[<kind>]``, the form ``papermill
    --help-notebook`` can display). A parameter without annotation takes the kind of its default.
    """

    name: str
    kind: str
    default: Any
    help: str = ""

    def coerce(self, value: Any) -> Any:
        """``value`` (a command-line string or a YAML value) as this parameter's type, or :class:`ParameterError`.

        Strings are parsed by the declared type: ``None``/``null`` for optional parameters, ``true``/``false`` for
        booleans, and lists either comma-separated (``metaqa-1hop,mcqa-movies``) or as a ``[...]`` literal.
        """
        try:
            return _coerce(self.kind, value)
        except (ValueError, TypeError, yaml.YAMLError) as error:
            raise ParameterError(f"parameter {self.name!r} expects {self.kind}, got {value!r}: {error}") from None


_SCALARS = {"int": int, "float": float, "str": str, "bool": bool, "dict": dict}
_NONE_TEXT = {"none", "null", "~"}
_BOOL_TEXT = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def _coerce(kind: str, value: Any) -> Any:
    if kind.endswith(" | None"):
        if value is None or (isinstance(value, str) and value.strip().lower() in _NONE_TEXT):
            return None
        return _coerce(kind[: -len(" | None")], value)
    if kind.startswith("list["):
        inner = kind[5:-1]
        if isinstance(value, str):
            text = value.strip()
            value = yaml.safe_load(text) if text.startswith("[") else [p.strip() for p in text.split(",") if p.strip()]
        if not isinstance(value, list | tuple):
            raise TypeError("not a list (write a,b,c or [a, b, c])")
        return [_coerce(inner, item) for item in value]
    if kind == "any":
        return parse_parameter(value) if isinstance(value, str) else value
    if kind == "bool":
        if isinstance(value, str) and value.strip().lower() in _BOOL_TEXT:
            return _BOOL_TEXT[value.strip().lower()]
        if isinstance(value, bool):
            return value
        raise ValueError("not a boolean (true/false)")
    if kind == "dict":
        value = yaml.safe_load(value) if isinstance(value, str) else value
        if not isinstance(value, dict):
            raise TypeError("not a mapping (write {key: value})")
        return value
    if kind == "str":
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            return str(value)
        raise TypeError("not a string")
    if isinstance(value, bool):
        raise TypeError(f"a boolean is not {kind}")
    if kind == "int":
        if isinstance(value, float) and not value.is_integer():
            raise ValueError("not a whole number")
        return int(value)
    if kind == "float":
        return float(value)
    raise ValueError(f"unsupported parameter type {kind}")


def _kind_of(annotation: ast.expr | None, default: Any) -> str:
    """The kind of an annotation (see :class:`NotebookParameter`); ``any`` for what the vocabulary lacks."""
    if annotation is None:
        if default is None:
            return "any"
        if isinstance(default, list | tuple):
            inner = {type(v).__name__ for v in default}
            return f"list[{inner.pop()}]" if len(inner) == 1 and next(iter(inner), "") in _SCALARS else "list[any]"
        return type(default).__name__ if type(default).__name__ in _SCALARS else "any"
    if isinstance(annotation, ast.Name) and annotation.id in _SCALARS:
        return annotation.id
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        rest = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
        if len(rest) == 1:
            inner = _kind_of(rest[0], None)
            return inner if inner == "any" else f"{inner} | None"
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        if annotation.value.id == "Optional":
            inner = _kind_of(annotation.slice, None)
            return inner if inner == "any" else f"{inner} | None"
        if annotation.value.id in ("list", "tuple"):
            element = annotation.slice.elts[0] if isinstance(annotation.slice, ast.Tuple) else annotation.slice
            return f"list[{_kind_of(element, None)}]"
        if annotation.value.id == "dict":
            return "dict"
    return "any"


def notebook_parameters(notebook: Path) -> dict[str, NotebookParameter]:
    """The parameters a notebook declares in its cell tagged ``parameters`` (empty when it has none)."""
    nb = nbformat.read(notebook, as_version=4)
    cell = next((c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])), None)
    if cell is None:
        return {}
    lines = cell.source.splitlines()
    found = {}
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name, annotation, value = node.target.id, node.annotation, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, annotation, value = node.targets[0].id, None, node.value
        else:
            continue
        try:
            default = ast.literal_eval(value) if value is not None else None
        except (ValueError, SyntaxError):  # an expression (e.g. a computed path): shown as written
            default = ast.unparse(value)
        comment = lines[node.end_lineno - 1].partition("#")[2].strip() if "#" in lines[node.end_lineno - 1] else ""
        found[name] = NotebookParameter(name, _kind_of(annotation, default), default, comment)
    return found


def check_parameters(notebooks: list[Path], parameters: dict[str, Any]) -> dict[Path, dict[str, Any]]:
    """Per notebook, the overrides it declares, coerced to the declared types.

    A name no chosen notebook declares is a :class:`ParameterError` listing the declared ones; a name only some
    notebooks declare goes only to those (so one ``-p model_url ...`` serves a whole reproduction).
    """
    declared = {path: notebook_parameters(path) for path in notebooks}
    known = sorted({name for params in declared.values() for name in params})
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        raise ParameterError(f"unknown parameter(s) {', '.join(unknown)}; the chosen notebook(s) declare: "
                             f"{', '.join(known) or '(none)'}")
    return {path: {name: params[name].coerce(value) for name, value in parameters.items() if name in params}
            for path, params in declared.items()}


def execute_notebook(notebook: Path, output_dir: Path, parameters: dict[str, Any] | None = None,
                     kernel_name: str = "python3", progress: bool = False) -> NotebookOutcome:
    """Run one notebook headless with papermill; the executed copy goes to ``output_dir``.

    ``progress`` shows papermill's per-cell progress bar (on stderr).
    """
    import papermill

    output_dir.mkdir(parents=True, exist_ok=True)
    output = output_dir / notebook.name
    start = time.perf_counter()
    try:
        papermill.execute_notebook(
            str(notebook), str(output), parameters=parameters or {}, kernel_name=kernel_name,
            cwd=str(notebook.parent), progress_bar=progress, log_output=False,
        )
    except papermill.PapermillExecutionError as error:
        return NotebookOutcome(notebook.name, output, time.perf_counter() - start,
                               f"cell {error.exec_count}: {error.ename}: {error.evalue}")
    return NotebookOutcome(notebook.name, output, time.perf_counter() - start)


def reproduce(names: list[str] | None = None, parameters: dict[str, Any] | None = None,
              output_dir: Path | None = None, progress: bool = False) -> ReproduceReport:
    """Execute the chosen notebooks (default: all) and report each outcome; a failure does not stop the rest.

    ``parameters`` are checked against every chosen notebook's declarations first (:func:`check_parameters`);
    nothing runs when one is wrong. ``progress`` prints ``[i/n] name`` with the elapsed time per notebook on
    stderr and shows a per-cell bar.
    """
    output_dir = output_dir or runs_dir() / "notebooks"
    notebooks = find_notebooks(names)
    checked = check_parameters(notebooks, parameters or {})
    report = ReproduceReport()
    for position, notebook in enumerate(notebooks, 1):
        if progress:
            print(f"[{position}/{len(notebooks)}] {notebook.name} ...", file=sys.stderr, flush=True)
        outcome = execute_notebook(notebook, output_dir, checked[notebook], progress=progress)
        if progress:
            print(f"[{position}/{len(notebooks)}] {notebook.name} {'ok' if outcome.ok else 'FAILED'} in "
                  f"{outcome.seconds:.1f}s", file=sys.stderr, flush=True)
        report.outcomes.append(outcome)
    return report


def lab_command(port: int, token: str, root: Path = PROJECT_ROOT, expose_app: bool = False) -> list[str]:
    """The ``jupyter lab`` command line ``sparqlab lab`` (and ``make lab``) runs: local only, no browser opened.

    It listens on 127.0.0.1 with the given access token, serves ``root`` (the checkout, so ``notebooks/`` and
    executed copies under ``runs/notebooks/`` are both reachable) and never contacts an extension registry.
    ``expose_app`` sets ``window.jupyterapp`` in the page, which the headless-browser check drives.
    """
    command = [str(Path(sys.executable).with_name("jupyter")), "lab", "--no-browser", "--ip=127.0.0.1",
               f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root}", "--LabApp.extension_manager=readonly",
               "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if expose_app:
        command.append("--LabApp.expose_app_in_browser=True")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI run as root; the server still listens on 127.0.0.1 only
    return command


@contextlib.contextmanager
def serve_lab(root: Path = PROJECT_ROOT, token: str = "sparqlab", expose_app: bool = False,
              timeout_s: float = 60.0, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run JupyterLab in the background until the block ends; yields its base URL (``http://127.0.0.1:PORT``).

    Waits until ``/api/status`` answers with the token; raises ``RuntimeError`` with the server's log tail when it
    exits or does not answer within ``timeout_s``.
    """
    from sparqlab.core.processes import stop_process
    from sparqlab.kg.server import free_port

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:  # the server's log; a pipe could fill up and stall it
        process = subprocess.Popen(lab_command(port, token, root, expose_app), stdout=log, stderr=log, env=env)
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"jupyter lab exited: {log.read().decode(errors='replace')[-2000:]}")
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).read()
                    break
                except (urllib.error.URLError, ConnectionError):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"jupyter lab did not answer on {base} within {timeout_s:.0f} s") from None
                    time.sleep(0.2)
            yield base
        finally:
            stop_process(process)


BROWSER_CONTROLS = ("run", "question", "step", "◀ previous", "next ▶")
"""Labels of the trace browser's controls (:class:`sparqlab.widgets.TraceBrowser`) the browser check looks for."""

_RENDERED_CONTROLS = """(() => {
  const texts = [...document.querySelectorAll('.jp-OutputArea .widget-label, .jp-OutputArea button')]
    .map(e => e.textContent.trim()).filter(t => t);
  return JSON.stringify(texts);
})()"""


def find_chromium() -> str | None:
    """A Chromium or Chrome executable on ``PATH`` (``SPARQLAB_CHROMIUM`` wins), or ``None``."""
    import shutil

    candidates = [os.environ.get("SPARQLAB_CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"]
    return next((found for name in candidates if name and (found := shutil.which(name))), None)


def browser_check(notebook: Path, chromium: str, timeout_s: float = 180.0) -> list[str]:
    """Open ``notebook`` in JupyterLab in headless Chromium, run all its cells there, and return the labels of the
    widget controls that rendered in its outputs (so a caller can assert the trace browser is really drawn).

    The lab serves ``notebook.parent``; the kernel inherits this process's environment (``SPARQLAB_RUNS`` ...).
    Chromium is driven over the DevTools protocol (``websocket-client``). Raises ``RuntimeError`` on a timeout.
    """
    import websocket

    with serve_lab(notebook.parent, token="browsercheck", expose_app=True) as base, \
            tempfile.TemporaryDirectory() as profile:
        browser = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                                    "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={profile}",
                                    "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
                                    "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + timeout_s
            port_file = Path(profile) / "DevToolsActivePort"
            while not port_file.exists() or not port_file.read_text().strip():
                _wait(deadline, "Chromium did not open its DevTools port")
            port = port_file.read_text().split()[0]
            pages = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10).read())
            target = next(p for p in pages if p.get("type") == "page")
            connection = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=30,
                                                     suppress_origin=True)
            try:
                page = _DevTools(connection)
                page.call("Emulation.setFocusEmulationEnabled", enabled=True)  # headless has no window focus
                page.call("Page.navigate", url=f"{base}/lab/tree/{notebook.name}?token=browsercheck")
                panel = "Array.from(window.jupyterapp ? jupyterapp.shell.widgets('main') : []).find(w => w.sessionContext)"
                ready = f"(() => {{ const p = {panel}; return !!(p && p.sessionContext.session && " \
                        "p.sessionContext.session.kernel && p.sessionContext.session.kernel.status === 'idle'); })()"
                while not page.evaluate(ready):
                    _wait(deadline, "JupyterLab did not open the notebook with an idle kernel")
                # started, not awaited: running every cell takes longer than one DevTools reply may on a busy
                # machine; the loop below waits for the rendered controls until the deadline
                page.evaluate(f"(() => {{ jupyterapp.shell.activateById(({panel}).id); "
                              "jupyterapp.commands.execute('notebook:run-all-cells'); return true; })()")
                while True:
                    labels = json.loads(page.evaluate(_RENDERED_CONTROLS) or "[]")
                    if all(label in labels for label in BROWSER_CONTROLS):
                        return labels
                    _wait(deadline, f"the trace browser did not render (controls seen: {labels})")
            finally:
                connection.close()
        finally:
            from sparqlab.core.processes import stop_process

            stop_process(browser)


def _wait(deadline: float, message: str) -> None:
    if time.monotonic() > deadline:
        raise RuntimeError(message)
    time.sleep(0.5)


class _DevTools:
    """The few Chrome DevTools protocol calls the browser check needs, over one page's websocket."""

    def __init__(self, connection: Any):
        self.connection = connection
        self.next_id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.connection.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.connection.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"DevTools {method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")
