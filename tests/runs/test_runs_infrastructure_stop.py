"""A failure of the machinery is never a score (issue 40 item 1): a full disk under the caches, a model endpoint that
answers garbage, a missing dependency and a crashing scorer stop the run with one line naming the cause and the
file or URL; nothing is recorded for those questions, and the rerun (once the cause is gone) answers them with
the healthy run's scores."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import subprocess
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from runs_helpers import EchoChatMethod, LookupMethod, TinyKG, tiny_questions

from sparqlab.cli import main
from sparqlab.core.cache import JsonCache
from sparqlab.core.errors import InfrastructureError, MissingDependency, StorageFull, as_infrastructure
from sparqlab.runs import RunAborted, RunConfig, run, run_summary
from sparqlab.runs.store import METRICS, PREDICTIONS, RunStore, read_json
from sparqlab.serving.model_server import serve_in_background

DIRECT = ["run", "direct", "-d", "metaqa-1hop", "--limit", "6", "-m", "standin-keyword-rules", "--concurrency", "2",
          "--progress", "false"]


def recorded(run_dir: Path) -> list[dict]:
    path = run_dir / PREDICTIONS
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def only_run(root: Path, experiment: str) -> Path:
    (folder,) = (root / experiment).iterdir()
    return folder


# -- a full disk under the caches -------------------------------------------------------------------------------


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str = "1m"):
    """A real filesystem of ``size`` at ``path`` (needs root and mount), unmounted afterwards."""
    path.mkdir(parents=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip()}): the disk-full test needs root")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(folder: Path) -> Path:
    """Write a file into ``folder`` until its filesystem is full; the file's path (remove it to free the space)."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as handle:
        for size in (65536, 4096, 1):  # down to the last byte
            try:
                while True:
                    handle.write(b"\0" * size)
            except OSError as error:
                assert error.errno == errno.ENOSPC
    return filler


def cache_with_kg(folder: Path, movies_kg) -> Path:
    """``folder`` as a ``SPARQLAB_CACHE``: the built movie KG linked in (read-only), the two caches created."""
    build = movies_kg.store_path.parent
    (folder / "kg").mkdir(parents=True)
    (folder / "kg" / build.name).symlink_to(build)
    for name in ("queries.sqlite", "responses.sqlite"):
        JsonCache(folder / name)
    return folder


@pytest.mark.slow
def test_a_full_cache_disk_stops_the_run_and_the_rerun_gives_the_healthy_scores(tmp_path, monkeypatch, capsys,
                                                                                   movies_kg, root):
    monkeypatch.setenv("SPARQLAB_CACHE", str(cache_with_kg(tmp_path / "healthy-cache", movies_kg)))
    assert main([*DIRECT, "-e", "healthy"]) == 0
    healthy = read_json(only_run(root, "healthy") / METRICS)
    assert healthy["n_done"] == 6 and healthy["f1"] > 0

    with small_tmpfs(tmp_path / "full-cache") as cache:
        monkeypatch.setenv("SPARQLAB_CACHE", str(cache_with_kg(cache, movies_kg)))
        assert main([*DIRECT, "-e", "warm", "--limit", "1"]) == 0  # the method's preparation is cached
        filler = fill(cache)
        capsys.readouterr()
        assert main([*DIRECT, "-e", "full"]) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        assert err.startswith("sparqlab run: RunAborted: run ") and "database or disk is full" in err
        assert f"cannot write {cache}/" in err and ".sqlite" in err  # the cache file is named
        stopped = only_run(root, "full")
        done = recorded(stopped)
        assert len(done) < 6  # not one question scored as the method's failure: only real answers are kept
        by_id = {r["id"]: r for r in recorded(only_run(root, "healthy"))}
        assert [(r["f1"], r["error_category"]) for r in done] == \
               [(by_id[r["id"]]["f1"], by_id[r["id"]]["error_category"]) for r in done]
        assert run_summary(stopped)["status"] == "incomplete"

        filler.unlink()
        assert main([*DIRECT, "-e", "full"]) == 0
        resumed = read_json(stopped / METRICS)
    assert resumed["n_done"] == 6 and resumed["complete"]
    assert resumed["f1"] == healthy["f1"] and resumed["error_categories"] == healthy["error_categories"]


def test_a_storage_error_in_the_run_folder_names_the_file(tmp_path):
    store = RunStore(tmp_path / "run")
    store.open()
    store._predictions = open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115 - every write: ENOSPC
    with pytest.raises(StorageFull, match=f"cannot write {tmp_path / 'run' / 'predictions.jsonl'}: No space left"):
        store.append({"id": "q0"}, [])
    store.close()  # the unwritten rest of the line is what the append reported, not a second error


# -- a model endpoint that answers garbage ----------------------------------------------------------------------


class FlakyProxy:
    """A 127.0.0.1 proxy in front of a model server: while ``broken``, every chat completion is answered 200 with
    an error body (what a crashed vLLM behind a proxy sends); ``/models`` and everything else pass through."""

    def __init__(self, upstream: str):
        self.upstream = upstream.removesuffix("/v1")
        self.broken = True
        self.html_models = False
        self.refuse_with: int | None = None
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if proxy.html_models:
                    return self._send(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
                self._forward()

            def do_POST(self):
                if proxy.refuse_with and self.path.endswith("/chat/completions"):
                    self.rfile.read(int(self.headers["Content-Length"]))
                    return self._send(proxy.refuse_with, json.dumps({"error": {
                        "message": "Incorrect API key provided", "type": "invalid_request_error"}}).encode())
                if proxy.broken and self.path.endswith("/chat/completions"):
                    self.rfile.read(int(self.headers["Content-Length"]))
                    return self._send(200, json.dumps({"error": {"message": "CUDA out of memory. Tried to allocate "
                                                                            "2.00 GiB", "code": 500}}).encode())
                self._forward()

            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                request = urllib.request.Request(proxy.upstream + self.path, data=body, method=self.command,
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=30) as answer:
                    self._send(answer.status, answer.read())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.handle_error = lambda request, address: None  # a client gone mid-answer (the run stopped)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FlakyProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def flaky_model():
    with serve_in_background("standin-keyword-rules") as upstream, FlakyProxy(upstream) as proxy:
        yield proxy


@pytest.mark.slow
def test_an_endpoint_answering_garbage_stops_the_run_and_the_rerun_completes_without_a_flag(flaky_model, root, tmp_path,
                                                                                               capsys, movies_kg):
    served = [*DIRECT, "--model-url", flaky_model.url]
    flaky_model.broken = False
    assert main([*served, "-e", "healthy", "--cache-path", str(tmp_path / "healthy-responses.sqlite")]) == 0
    healthy = read_json(only_run(root, "healthy") / METRICS)

    flaky_model.broken = True
    capsys.readouterr()
    assert main([*served, "-e", "flaky"]) == 1
    err = capsys.readouterr().err
    assert "CUDA out of memory" in err and flaky_model.url in err
    assert err.splitlines()[0].startswith("sparqlab run: RunAborted: run ")
    stopped = only_run(root, "flaky")
    assert recorded(stopped) == []

    flaky_model.broken = False
    assert main([*served, "-e", "flaky"]) == 0  # no --redo: nothing was recorded
    resumed = read_json(stopped / METRICS)
    assert resumed["n_done"] == 6 and resumed["complete"]
    assert resumed["f1"] == healthy["f1"] and resumed["error_categories"] == healthy["error_categories"]


def test_a_model_list_in_html_names_the_url(flaky_model, capsys):
    flaky_model.html_models = True
    assert main(["models", "list", "--url", flaky_model.url]) == 1
    err = capsys.readouterr().err
    assert f"{flaky_model.url}/models answered with something that is not a model list" in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("sparqlab models list: the model endpoint ")


def test_an_endpoint_refusing_this_client_stops_the_run(flaky_model, root, capsys, movies_kg):
    flaky_model.broken, flaky_model.refuse_with = False, 401
    assert main([*DIRECT, "--model-url", flaky_model.url, "-e", "refused"]) == 1
    err = capsys.readouterr().err
    assert "(HTTP 401)" in err and "Incorrect API key provided" in err and flaky_model.url in err
    assert len(err.strip().splitlines()) == 2 and "what to do: " in err and "SPARQLAB_API_KEY" in err
    assert recorded(only_run(root, "refused")) == []  # on main: six model_request_error answers, exit 0


# -- a missing dependency, a crashing scorer ---------------------------------------------------------------------


class NeedsAModule(LookupMethod):
    """Imports a package that is not installed while answering (DeSQ without igraph)."""

    name = "needs-module"

    async def answer(self, question, ctx):
        import sparqlab_not_installed_anywhere  # noqa: F401

        return await super().answer(question, ctx)


class CrashingScorer(LookupMethod):
    name = "crashing-scorer"

    def score(self, question, output, predicted, gold):
        raise KeyError("label")


@pytest.mark.parametrize(("method", "says"), [(NeedsAModule(), "'sparqlab_not_installed_anywhere' is not installed"),
                                              (CrashingScorer(), "crashed on question q")])
def test_a_missing_module_or_a_crashing_scorer_stops_the_run(root, method, says):
    config = RunConfig(experiment="stop", output_root=str(root), progress=False)
    with pytest.raises(RunAborted, match=says) as stopped:
        run(method, tiny_questions(4), config, kg=TinyKG(4))
    assert isinstance(stopped.value.__cause__, InfrastructureError)
    assert recorded(only_run(root, "stop")) == []

    fixed = run(LookupMethod(), tiny_questions(4), RunConfig(experiment="fixed", output_root=str(root),
                                                             progress=False), kg=TinyKG(4))
    assert fixed.metrics["f1"] == 1.0


def test_a_method_error_of_the_method_is_still_its_answer(root):
    result = run(LookupMethod({"q1": "raise"}), tiny_questions(3),
                 RunConfig(experiment="own", output_root=str(root), progress=False), kg=TinyKG(3))
    assert result.metrics["complete"] and result.metrics["error_categories"]["method_error"] == 1


def test_disguised_infrastructure_errors_are_recognised():
    assert isinstance(as_infrastructure(OSError(errno.ENOSPC, "No space left on device", "/x/y")), StorageFull)
    assert "cannot write /x/y" in str(as_infrastructure(OSError(errno.ENOSPC, "No space left on device", "/x/y")))
    assert isinstance(as_infrastructure(ModuleNotFoundError("no", name="igraph")), MissingDependency)
    assert as_infrastructure(OSError(errno.ENOENT, "missing")) is None
    assert as_infrastructure(KeyError("label")) is None


# -- recorded failures of the machinery (older runs) and --redo --------------------------------------------------


def test_a_run_holding_recorded_infrastructure_errors_lists_incomplete_and_is_redone(root, capsys):
    config = RunConfig(experiment="old", output_root=str(root), model="standin-echo", progress=False)
    first = run(EchoChatMethod(), tiny_questions(3), config, kg=TinyKG(3))
    lines = recorded(first.run_dir)
    lines[0]["error_category"] = "model_unavailable"  # as a version that recorded them wrote it
    lines[1]["scores"] = {"score_error": "KeyError: 'label'"}
    (first.run_dir / PREDICTIONS).write_text("".join(json.dumps(line) + "\n" for line in lines))

    assert run_summary(first.run_dir)["status"] == "incomplete"
    assert main(["runs", "list", "--root", str(root)]) == 0
    assert "incomplete" in capsys.readouterr().out

    again = run(EchoChatMethod(), tiny_questions(3), config, kg=TinyKG(3))
    assert again.answered == 2 and again.metrics["complete"] and again.metrics["n_infrastructure_errors"] == 0


@pytest.mark.slow
def test_run_redo_answers_a_recorded_category_again(root, capsys, movies_kg):
    command = [*DIRECT, "-e", "redo"]
    assert main(command) == 0
    folder = only_run(root, "redo")
    categories = read_json(folder / METRICS)["error_categories"]
    category = next(name for name in categories if name != "none")
    capsys.readouterr()
    assert main([*command, "--redo", f"{category},not_a_category"]) == 0
    assert f"{categories[category]} answered now" in capsys.readouterr().out
    assert main([*command, "--redo", "a,,b"]) == 1
    assert "--redo 'a,,b': give error categories separated by commas" in capsys.readouterr().err


def test_a_crash_of_the_workbench_scoring_names_the_scorer_and_the_question(root, monkeypatch):
    import sparqlab.eval.assess as assess

    def broken(*args, **kwargs):
        raise KeyError("label")

    monkeypatch.setattr(assess, "score_and_categorise", broken)
    with pytest.raises(RunAborted, match=r"the scorer sparqlab.eval.assess crashed on question q\d: "
                                         r"KeyError: 'label'"):
        run(LookupMethod(), tiny_questions(2), RunConfig(experiment="eval", output_root=str(root), progress=False),
            kg=TinyKG(2))
    assert recorded(only_run(root, "eval")) == []


# -- an answer that does not fit its query names the KG ----------------------------------------------------------


class LabelDroppingKG(TinyKG):
    """A KG whose answers leave out the ``?label`` its label queries bind in every row (an impostor endpoint)."""

    def _execute(self, sparql, timeout_s, max_rows):
        return super()._execute(sparql.replace("SELECT ?item ?label", "SELECT ?item")
                                .replace("SELECT ?e ?label", "SELECT ?e"), timeout_s, max_rows)


def test_a_row_without_the_label_its_query_binds_names_the_kg_not_a_key_error():
    from sparqlab.eval.normalise import fetch_labels
    from sparqlab.kg.errors import EndpointError
    from sparqlab.kg.search import build_index

    kg = LabelDroppingKG(3)
    kg.profile = dataclasses.replace(kg.profile, label_predicate="http://example.org/tiny/value")
    with pytest.raises(EndpointError, match=r"tiny-test-kg answered a query with a row that binds no \?label"):
        fetch_labels(kg, ["http://example.org/tiny/e1"])
    with pytest.raises(EndpointError, match=r"binds no \?label"):
        build_index(kg, Path("/nonexistent/never-written.sqlite"))
