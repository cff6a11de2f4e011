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
