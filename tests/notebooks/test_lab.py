"""JupyterLab is part of the environment: the lab `sparqlab lab` runs starts headless on 127.0.0.1 and answers."""

import json
import urllib.error
import urllib.request

import pytest

from sparqlab.notebooks import lab_command, serve_lab


def get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read().decode()


def test_lab_command_is_local_and_token_protected():
    command = lab_command(9999, "tok")
    assert "--ip=127.0.0.1" in command and "--IdentityProvider.token=tok" in command and "--no-browser" in command
    assert "--LabApp.expose_app_in_browser=True" not in command
    assert "--LabApp.expose_app_in_browser=True" in lab_command(9999, "tok", expose_app=True)


def test_lab_starts_headless_serves_the_notebooks_and_the_widget_extension():
    with serve_lab(token="t0ken") as base:
        status, body = get(f"{base}/api/status?token=t0ken")
        assert status == 200 and "started" in json.loads(body)
        with pytest.raises(urllib.error.HTTPError) as denied:
            get(f"{base}/api/contents/notebooks")  # no token: refused
        assert denied.value.code == 403
        _, listing = get(f"{base}/api/contents/notebooks?token=t0ken")
        assert "00_quickstart.ipynb" in {item["name"] for item in json.loads(listing)["content"]}
        _, page = get(f"{base}/lab/tree/notebooks/00_quickstart.ipynb?token=t0ken")
        # the lab page lists the ipywidgets lab extension, so the trace browser widget can render
        assert "JupyterLab" in page and "@jupyter-widgets/jupyterlab-manager" in page


def test_sparqlab_lab_serves_the_workspace_and_its_url_opens_the_quickstart(tmp_path):
    """`sparqlab lab` in a workspace made by `sparqlab init`: the printed URL (with its token) is the workspace's
    copy of the quickstart."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    from sparqlab.core.paths import init_workspace
    from sparqlab.core.processes import free_port, stop_process

    init_workspace(tmp_path)
    env = {**os.environ, "SPARQLAB_WORKSPACE": str(tmp_path)}
    sparqlab = Path(sys.executable).with_name("sparqlab")
    process = subprocess.Popen([str(sparqlab), "lab", "--port", str(free_port())], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        url = process.stdout.readline().split(": ", 1)[1].strip()
        assert "/lab/tree/notebooks/00_quickstart.ipynb?token=" in url
        base, token = url.split("/lab/")[0], url.split("token=")[1]
        deadline = time.monotonic() + 60
        while True:
            try:
                status, page = get(url)
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "sparqlab lab did not answer"
                time.sleep(0.3)
        assert status == 200 and "JupyterLab" in page
        _, listing = get(f"{base}/api/contents/?token={token}")
        assert {item["name"] for item in json.loads(listing)["content"]} >= {"notebooks", "experiments"}
    finally:
        stop_process(process)
