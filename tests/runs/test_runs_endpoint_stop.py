"""A SPARQL endpoint that starts answering something that is no SPARQL result (an HTML page) mid-run is a failure of
the machinery, as a model endpoint doing the same is (issue 51): the run stops naming the URL, nothing is recorded
for the questions it could not answer, and the rerun once the endpoint has recovered answers them."""

from __future__ import annotations

import json
import socket
import urllib.request

from sparqlab.cli import main
from sparqlab.engines.oxigraph_server import serve_store
from sparqlab.graphs.movies import ensure_store
from support.hostile_http import http_reply, scripted_server

HEALTHY_REQUESTS = 4
MACHINERY = {"endpoint_error", "answer_error", "method_error"}
"""What the endpoint's failure was recorded as before (F1 0, exit 0)."""
DIRECT = ["run", "direct", "-d", "metaqa-1hop", "--limit", "6", "-m", "standin-keyword-rules", "--concurrency", "1",
          "--progress", "false", "--kg", "movies", "--kg-options", "cache=false", "-e", "html"]


def test_an_endpoint_answering_html_mid_run_stops_it_and_the_rerun_answers_the_rest(tmp_path, capsys):
    state = {"requests": 0, "recovered": False}

    with serve_store(ensure_store()) as oxigraph:
        def respond(path: str, conn: socket.socket) -> None:
            state["requests"] += 1
            if state["requests"] > HEALTHY_REQUESTS and not state["recovered"]:
                conn.sendall(http_reply(b"<html><body>502 Bad Gateway</body></html>", "text/html"))
                return
            with urllib.request.urlopen(oxigraph + path[path.index("?"):]) as answer:
                conn.sendall(http_reply(answer.read(), answer.headers["Content-Type"]))

        with scripted_server(respond) as url:
            run = [*DIRECT, "--kg-url", f"{url}/query", "--output-root", str(tmp_path / "runs"),
                   "--cache-path", str(tmp_path / "responses.sqlite")]
            assert main(run) == 1
            err = capsys.readouterr().err
            assert "not a SPARQL result" in err and url in err and "502 Bad Gateway" in err
            (predictions,) = (tmp_path / "runs" / "html").glob("*/predictions.jsonl")
            first = [json.loads(line) for line in predictions.read_text().splitlines()]
            assert len(first) < 6 and not {r.get("error_category") for r in first} & MACHINERY

            state["recovered"] = True
            assert main(run) == 0
            records = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert sorted(r["id"] for r in records) == sorted({r["id"] for r in records}) and len(records) == 6
    assert not {r.get("error_category") for r in records} & MACHINERY
