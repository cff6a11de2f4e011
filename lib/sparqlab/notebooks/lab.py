"""JupyterLab on 127.0.0.1 over the workspace (``sparqlab lab``), and the headless-Chromium check that the trace
browser renders in it."""

from __future__ import annotations

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
from pathlib import Path
from typing import Any

from sparqlab.core.paths import workspace_root


def lab_command(port: int, token: str, root: Path | None = None, expose_app: bool = False) -> list[str]:
    """The ``jupyter lab`` command line ``sparqlab lab`` (and ``make lab``) runs: local only, no browser opened.

    It listens on 127.0.0.1 with the given access token, serves ``root`` (default the workspace, so ``notebooks/``
    and executed copies under ``runs/notebooks/`` are both reachable) and never contacts an extension registry.
    ``expose_app`` sets ``window.jupyterapp`` in the page, which the headless-browser check drives.
    """
    command = [str(Path(sys.executable).with_name("jupyter")), "lab", "--no-browser", "--ip=127.0.0.1",
               f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root or workspace_root()}", "--LabApp.extension_manager=readonly",
               "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if expose_app:
        command.append("--LabApp.expose_app_in_browser=True")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI run as root; the server still listens on 127.0.0.1 only
    return command


@contextlib.contextmanager
def serve_lab(root: Path | None = None, token: str = "sparqlab", expose_app: bool = False,
              timeout_s: float = 60.0, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run JupyterLab in the background until the block ends; yields its base URL (``http://127.0.0.1:PORT``).

    Waits until ``/api/status`` answers with the token; raises ``RuntimeError`` with the server's log tail when it
    exits or does not answer within ``timeout_s``.
    """
    from sparqlab.core.processes import free_port, stop_process

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
"""Labels of the trace browser's controls (:class:`sparqlab.plots.widgets.TraceBrowser`) the browser check looks for."""

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


@contextlib.contextmanager
def lab_page(notebook: Path, chromium: str, deadline: float) -> Iterator[tuple[_DevTools, str]]:
    """``notebook`` open in JupyterLab (serving ``notebook.parent``) in headless Chromium, its kernel idle: the
    page (DevTools protocol over ``websocket-client``) and a JavaScript expression for the notebook's panel."""
    import websocket

    from sparqlab.core.processes import stop_process

    with serve_lab(notebook.parent, token="browsercheck", expose_app=True) as base, \
            tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:  # Chromium's helpers may write late
        browser = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                                    "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={profile}",
                                    "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
                                    "--window-size=1400,1800", "about:blank"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
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
                yield page, panel
            finally:
                connection.close()
        finally:
            stop_process(browser)


def browser_check(notebook: Path, chromium: str, timeout_s: float = 180.0) -> list[str]:
    """Open ``notebook`` in JupyterLab in headless Chromium, run all its cells there, and return the labels of the
    widget controls that rendered in its outputs (so a caller can assert the trace browser is really drawn).

    The lab serves ``notebook.parent``; the kernel inherits this process's environment (``SPARQLAB_RUNS`` ...).
    Raises ``RuntimeError`` on a timeout.
    """
    deadline = time.monotonic() + timeout_s
    with lab_page(notebook, chromium, deadline) as (page, panel):
        # started, not awaited: running every cell takes longer than one DevTools reply may on a busy
        # machine; the loop below waits for the rendered controls until the deadline
        page.evaluate(f"(() => {{ jupyterapp.shell.activateById(({panel}).id); "
                      "jupyterapp.commands.execute('notebook:run-all-cells'); return true; })()")
        while True:
            labels = json.loads(page.evaluate(_RENDERED_CONTROLS) or "[]")
            if all(label in labels for label in BROWSER_CONTROLS):
                return labels
            _wait(deadline, f"the trace browser did not render (controls seen: {labels})")


_OUTPUT_TEXT = """(() => [...document.querySelectorAll('.jp-OutputArea-output')]
  .map(e => { const c = e.cloneNode(true); c.querySelectorAll('style').forEach(s => s.remove());
              return c.textContent; }).join('\\n'))()"""
"""The text of every output (``textContent``: also of cells scrolled out of view; styles left out)."""


def rendered_outputs(notebook: Path, chromium: str, expect: list[str], timeout_s: float = 120.0,
                     screenshot: Path | None = None, scroll_to: str | None = None) -> str:
    """Open an executed ``notebook`` in JupyterLab in headless Chromium without running anything and return the
    text its outputs show once every string of ``expect`` is in it (``screenshot``: a PNG of the page then, with
    the first output containing ``scroll_to`` scrolled to the top). Raises ``RuntimeError`` naming what is
    missing on a timeout."""
    import base64

    deadline = time.monotonic() + timeout_s
    with lab_page(notebook, chromium, deadline) as (page, _):
        while True:
            text = page.evaluate(_OUTPUT_TEXT) or ""
            missing = [e for e in expect if e not in text]
            if not missing:
                break
            _wait(deadline, f"the executed notebook does not show {missing} (it shows: {text[-1500:]!r})")
        if screenshot is not None:
            if scroll_to:
                page.evaluate("(() => { const o = [...document.querySelectorAll('.jp-OutputArea-output')]"
                              f".find(e => e.textContent.includes({json.dumps(scroll_to)})); "
                              "if (o) o.scrollIntoView(); return true; })()")
                time.sleep(1.0)  # let the scrolled cells paint
            shot = page.call("Page.captureScreenshot", format="png")
            screenshot.write_bytes(base64.b64decode(shot["data"]))
        return text


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
