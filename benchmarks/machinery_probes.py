"""The probes of issue 40 ("a failure of the machinery is never a score"), rerun: one line each, held or broken.

Every probe runs in a fresh child process (its own interpreter, its memory capped at :data:`MEMORY_CAP_GB` and its
time at :data:`TIME_CAP_S`, so a probe that blows up cannot take the machine with it), against servers this
script starts on 127.0.0.1. For each it prints ``held`` / ``broken``, the wall time, the peak memory of the child
(and of its own children) and the exit code. A probe holds when the workbench does what issue 40 asks: stops
with a clear, typed error naming the file or URL, within its deadline, in small memory, recording no failure of
the machinery as a method's answer.

Usage (``benchmarks/adversarial.py --probes`` runs the same)::

    python benchmarks/machinery_probes.py [--only NAME,...] [--json OUT]

Run with another checkout's interpreter (``/path/to/main/.venv/bin/python benchmarks/machinery_probes.py``) to
probe that checkout's behaviour: the probes use only APIs that both have.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.hostile_http import dripping as drip  # noqa: E402 - the tests' scripted servers, shared
from support.hostile_http import http_reply as reply_bytes  # noqa: E402
from support.hostile_http import scripted_server as server  # noqa: E402

MEMORY_CAP_GB = 3.0
TIME_CAP_S = 120.0
RESULTS_TYPE = "application/sparql-results+json"
RUN = ["run", "direct", "-d", "metaqa-1hop", "-e", "probe", "--progress", "false"]


# -- servers on 127.0.0.1 ------------------------------------------------------------------------------------------

def dripping(reply: bytes, interval_s: float = 1.0) -> Callable[[str, socket.socket], None]:
    """Headers at once, then the body one byte every ``interval_s``."""
    return drip(reply, reply.index(b"\r\n\r\n") + 4, interval_s)


def fixed(reply: bytes) -> Callable[[str, socket.socket], None]:
    return lambda path, conn: conn.sendall(reply)


def model_server(completion: Callable[[], bytes] | bytes) -> Callable[[str, socket.socket], None]:
    """An OpenAI-compatible server listing model ``m`` whose ``/chat/completions`` answers ``completion``."""
    models = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()

    def respond(path: str, conn: socket.socket) -> None:
        if path.endswith("/models"):
            conn.sendall(reply_bytes(models))
        else:
            conn.sendall(completion() if callable(completion) else completion)

    return respond


def completion(text: str = "SELECT ?x WHERE { ?x ?p ?o } LIMIT 1", usage: str | None = None) -> bytes:
    body = ('{"object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": {"role": '
            f'"assistant", "content": {json.dumps(text)}}}, "finish_reason": "stop"}}], "usage": '
            + (usage or '{"prompt_tokens": 5, "completion_tokens": 5}') + "}")
    return reply_bytes(body.encode())


def streamed_results(total_bytes: int, content_type: str = RESULTS_TYPE) -> Callable[[str, socket.socket], None]:
    """A SPARQL JSON result of about ``total_bytes`` labelled ``content_type``, generated while it is sent."""
    row = b'{"a": {"type": "literal", "value": "' + b"x" * 200 + b'"}},'
    rows = total_bytes // len(row)
    head, tail = b'{"head": {"vars": ["a"]}, "results": {"bindings": [', b'{"a": {"type": "literal", "value": "y"}}]}}'
    length = len(head) + rows * len(row) + len(tail)

    def respond(path: str, conn: socket.socket) -> None:
        conn.sendall(reply_bytes(b"", content_type, length=length) + head)
        block = row * 4096
        for _ in range(rows // 4096):
            conn.sendall(block)
        conn.sendall(row * (rows % 4096) + tail)

    return respond


# -- probes --------------------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    code: int | None
    seconds: float
    peak_mb: float
    out: str
    err: str


@dataclass
class Probe:
    name: str
    setup: Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]
    """Returns the child's command (after the interpreter) and environment additions."""
    held: Callable[[Outcome, Path], tuple[bool, str]]
    wrap: list[str] | None = None
    """A command to run the child under (``unshare ... sh -c``), the child's command appended."""


def python(code: str) -> list[str]:
    return ["-c", textwrap.dedent(code)]


def cli(*args: str) -> list[str]:
    return ["-c", "import sys; from sparqlab.cli import main; raise SystemExit(main(sys.argv[1:]))", *args]


def predictions(runs: Path) -> list[dict]:
    records = []
    for path in runs.rglob("predictions.jsonl"):
        records += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return records


def error_categories(runs: Path) -> set[str]:
    return {str(r.get("error_category")) for r in predictions(runs) if r.get("error_category")}


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip() and not line.startswith("call_s:")]
    return lines[-1][:150] if lines else ""


def typed(out: Outcome, kind: str, *words: str) -> tuple[bool, str]:
    """Held when the child printed ``kind: message`` containing every word (the snippets print their error)."""
    line = next((line for line in out.out.splitlines() if line.startswith(kind)), last_line(out.out + out.err))
    return line.startswith(kind) and all(word in line for word in words), line[:150]


def catching(body: str) -> str:
    """A snippet running ``body`` (its imports first, untimed) and printing ``ErrorType: message`` of what it
    raised (or ``ok: ...``), then ``call_s:`` the time the rest took."""
    lines = textwrap.dedent(body).strip().splitlines()
    imports = "\n".join(line for line in lines if line.startswith(("from ", "import ")))
    rest = "\n".join(line for line in lines if not line.startswith(("from ", "import ")))
    return python("import sys, time\n" + imports + "\nstarted = time.monotonic()\ntry:\n" + textwrap.indent(rest, "    ")
                  + "\nexcept BaseException as error:\n    print(f'{type(error).__name__}: {error}'[:400])\n"
                  "print(f'call_s: {time.monotonic() - started:.1f}')\n")


def disk_full(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    (scratch / "full").mkdir()
    return cli(*RUN, "--limit", "300", "-m", "standin-keyword-rules", "--output-root", str(scratch / "runs"),
               "--cache-path", str(scratch / "full" / "responses.sqlite")), {}


def disk_full_held(out: Outcome, scratch: Path) -> tuple[bool, str]:
    categories = error_categories(scratch / "runs")
    ok = out.code not in (0, None) and "method_error" not in categories
    return ok, f"categories {sorted(categories)}; {last_line(out.err)}"


def garbage_model(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    body = reply_bytes(b'{"error": {"message": "CUDA out of memory. Tried to allocate 2.00 GiB"}}')
    url = stack.enter_context(server(model_server(body)))
    return cli(*RUN, "--limit", "3", "-m", "m", "--model-url", f"{url}/v1", "--output-root",
               str(scratch / "runs")), {}


def garbage_model_held(out: Outcome, scratch: Path) -> tuple[bool, str]:
    categories = error_categories(scratch / "runs")
    ok = out.code not in (0, None) and "model_request_error" not in categories
    return ok, f"categories {sorted(categories)}; {last_line(out.err)}"


def missing_dependency(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    code = ("import sys; sys.modules['igraph'] = None; from sparqlab.cli import main; "
            "raise SystemExit(main(sys.argv[1:]))")
    return ["-c", code, "run", "desq", "-d", "metaqa-1hop", "-e", "probe", "--progress", "false", "--limit", "2",
            "-m", "standin-desq", "--output-root", str(scratch / "runs")], {}


def missing_dependency_held(out: Outcome, scratch: Path) -> tuple[bool, str]:
    categories = error_categories(scratch / "runs")
    ok = out.code not in (0, None) and "igraph" in out.err and not any("score" in c for c in categories)
    return ok, f"categories {sorted(categories)}; {last_line(out.err)}"


def sparql_drip(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    body = b'{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"type": "literal", "value": "x"}}]}}'
    url = stack.enter_context(server(dripping(reply_bytes(body, RESULTS_TYPE))))
    return catching(f"""
        from sparqlab.kg import EndpointKG, QueryOptions
        from sparqlab.kg.profiles import generic_profile
        kg = EndpointKG("{url}/sparql", generic_profile("probe"), options=QueryOptions(timeout_s=5))
        print("ok:", len(kg.query("SELECT ?a WHERE {{ ?a ?b ?c }}")))
    """), {}


def model_drip(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    url = stack.enter_context(server(dripping(completion())))
    return catching(f"""
        from sparqlab.core.event_loops import run_sync
        from sparqlab.llm.base import ChatRequest
        from sparqlab.llm.openai_backend import OpenAIModel
        model = OpenAIModel("m", base_url="{url}/v1", timeout_s=10, max_retries=0)
        print("ok:", run_sync(model.acomplete(ChatRequest.build("m", "hi"))).text)
    """), {}


def within(seconds: float, kind: str, *words: str) -> Callable[[Outcome, Path], tuple[bool, str]]:
    """Held when the snippet's call (not the interpreter's start) ended with ``kind`` within ``seconds``."""
    def held(out: Outcome, scratch: Path) -> tuple[bool, str]:
        ok, line = typed(out, kind, *words)
        call_s = next((float(line.split()[1]) for line in out.out.splitlines() if line.startswith("call_s:")),
                      out.seconds)
        return ok and call_s < seconds, f"call {call_s:g} s; {line}"

    return held


LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n <!ENTITY a "hahahahahahahahahaha">\n'
          + "".join(f' <!ENTITY {chr(98 + i)} "{f"&{chr(97 + i)};" * 10}">\n' for i in range(9))
          + ']>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">\n'
          ' <rdf:Description rdf:about="http://example.org/s"><ex:p>&j;</ex:p></rdf:Description>\n</rdf:RDF>\n')
BOMB_LEVELS = "\n".join(["  - &a [x, x, x, x, x, x, x, x, x, x]"] + [
    f"  - &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]" for i in range(9)])
"""Ten levels of ten YAML aliases: under 500 bytes that stand for 10^10 values, under keys the files accept."""
SMALL_TTL = '@prefix ex: <http://example.org/> .\nex:a ex:p ex:b .\nex:b ex:p "B" .\n'


def laughs(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    (scratch / "laughs.rdf").write_text(LAUGHS, encoding="utf-8")
    return catching(f"""
        from sparqlab.kg import open_kg
        print("ok:", len(open_kg("{scratch / 'laughs.rdf'}", cache=False).query("SELECT * {{ ?s ?p ?o }}")))
    """), {}


def yaml_kg(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    (scratch / "data.ttl").write_text(SMALL_TTL, encoding="utf-8")
    (scratch / "data.kg.yaml").write_text("notes:\n" + BOMB_LEVELS + "\n", encoding="utf-8")
    return catching(f"""
        from sparqlab.kg import open_kg
        print("ok:", len(open_kg("{scratch / 'data.ttl'}", cache=False).query("SELECT * {{ ?s ?p ?o }}")))
    """), {}


def yaml_grid(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    (scratch / "grid.yaml").write_text("methods: {direct: {method: direct}}\ndatasets: {metaqa-1hop: {}}\n"
                                       "description:\n" + BOMB_LEVELS + "\n", encoding="utf-8")
    return cli("sweep", str(scratch / "grid.yaml"), "--dry-run"), {}


def yaml_grid_held(out: Outcome, scratch: Path) -> tuple[bool, str]:
    return out.code == 1 and "grid.yaml" in out.err and out.seconds < 10, last_line(out.err)


def huge_result(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    url = stack.enter_context(server(streamed_results(400 * 2**20)))
    return catching(f"""
        from sparqlab.kg import EndpointKG, QueryOptions
        from sparqlab.kg.profiles import generic_profile
        kg = EndpointKG("{url}/sparql", generic_profile("probe"), options=QueryOptions(timeout_s=60))
        print("ok:", len(kg.query("SELECT ?a WHERE {{ ?a ?b ?c }}")), "rows")
    """), {}


def small_memory(limit_mb: float, kind: str, *words: str) -> Callable[[Outcome, Path], tuple[bool, str]]:
    def held(out: Outcome, scratch: Path) -> tuple[bool, str]:
        ok, line = typed(out, kind, *words)
        return ok and out.peak_mb < limit_mb, line

    return held


def capped_while_read(out: Outcome, scratch: Path) -> tuple[bool, str]:
    """Held when the row cap (or the byte cap) stopped the reading: capped rows or a typed error, in small memory
    and a few seconds, never the 400 MB parsed whole."""
    line = last_line(out.out)
    call_s = next((float(x.split()[1]) for x in out.out.splitlines() if x.startswith("call_s:")), out.seconds)
    stopped = line.startswith(("ok: 10000 rows", "EndpointError"))
    return stopped and out.peak_mb < 600 and call_s < 10, f"call {call_s:g} s; {line}"


def huge_reply(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    big = completion("x" * (50 * 2**20))
    url = stack.enter_context(server(model_server(big)))
    return catching(f"""
        from sparqlab.core.event_loops import run_sync
        from sparqlab.llm.base import ChatRequest
        from sparqlab.llm.openai_backend import OpenAIModel
        model = OpenAIModel("m", base_url="{url}/v1", max_retries=0)
        print("ok:", len(run_sync(model.acomplete(ChatRequest.build("m", "hi"))).text), "characters")
    """), {}


def many_prefixes(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    declarations = "".join(f"@prefix p{i}: <http://example.org/namespace/number/{i}/> .\n" for i in range(5000))
    (scratch / "prefixes.ttl").write_text(declarations + "p1:a p2:b p4999:c .\n", encoding="utf-8")
    return catching(f"""
        from sparqlab.kg import open_kg
        rows = open_kg("{scratch / 'prefixes.ttl'}", cache=False).query("SELECT ?o WHERE {{ p1:a p2:b ?o }}")
        print("ok:", len(rows), "row")
    """), {}


def usage(value: str) -> Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]:
    def setup(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        url = stack.enter_context(server(model_server(completion(usage=value))))
        return catching(f"""
            from sparqlab.core.event_loops import run_sync
            from sparqlab.llm.base import ChatRequest
            from sparqlab.llm.openai_backend import OpenAIModel
            model = OpenAIModel("m", base_url="{url}/v1", max_retries=0)
            print("ok:", run_sync(model.acomplete(ChatRequest.build("m", "hi"))).usage)
        """), {}

    return setup


def dotdot(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    (scratch / "runs").mkdir()
    return cli("run", "direct", "-d", "metaqa-1hop", "--limit", "1", "-m", "standin-keyword-rules", "-e", "..",
               "--progress", "false", "--output-root", str(scratch / "runs")), {}


def dotdot_held(out: Outcome, scratch: Path) -> tuple[bool, str]:
    outside = [p.name for p in scratch.iterdir() if p.name not in ("runs", "runs-default")]
    return out.code not in (0, None) and not outside, f"outside the runs folder: {outside}; {last_line(out.err)}"


def figure_names(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    return python("""
        from sparqlab.plots import figure_stem
        pairs = [({"model": "org/model-a"}, {"model": "org_model-a"}),
                 ({"model": "a" * 50 + "-one"}, {"model": "a" * 50 + "-two"})]
        same = [a for a, b in pairs if figure_stem("f", a) == figure_stem("f", b)]
        print(("ok: distinct" if not same else f"collide: {same}")[:150])
    """), {}


def from_folder(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    return python(f"""
        import json, pathlib, sys
        from sparqlab.cli import main
        scratch = pathlib.Path("{scratch}")
        args = ["run", "direct", "-d", "metaqa-1hop", "--limit", "1", "-m", "standin-keyword-rules", "-e", "e",
                "--progress", "false"]
        assert main(args + ["--output-root", str(scratch / "given")]) == 0
        folder = next((scratch / "given" / "e").iterdir())
        saved = json.loads((folder / "config.json").read_text())
        saved["run"]["execution"].update(output_root=str(scratch / "elsewhere"),
                                         cache_path=str(scratch / "elsewhere.sqlite"))
        (folder / "config.json").write_text(json.dumps(saved))
        main(["run", "--from", str(folder), "--progress", "false"])  # no location given: the defaults
        wrote = [name for name in ("elsewhere", "elsewhere.sqlite") if (scratch / name).exists()]
        print("ok: stayed" if not wrote else f"wrote: where the folder said ({{', '.join(wrote)}})")
    """), {}


def redirect(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    body = b'{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"type": "literal", "value": "x"}}]}}'
    other = stack.enter_context(server(fixed(reply_bytes(body, RESULTS_TYPE))))
    url = stack.enter_context(server(fixed(reply_bytes(b"", "text/plain", "302 Found",
                                                       {"Location": f"{other}/sparql"}))))
    return catching(f"""
        from sparqlab.kg import EndpointKG
        from sparqlab.kg.profiles import generic_profile
        kg = EndpointKG("{url}/sparql", generic_profile("probe"))
        print("ok: followed,", len(kg.query("SELECT ?a WHERE {{ ?a ?b ?c }}")), "row; run id keeps", kg.identity)
    """), {}


def killed_build(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    (scratch / "data.ttl").write_text(SMALL_TTL, encoding="utf-8")
    cache = scratch / "cache"
    return python(f"""
        import os, pathlib, signal, subprocess, sys, time
        data, cache = pathlib.Path("{scratch / 'data.ttl'}"), pathlib.Path("{cache}")
        env = dict(os.environ, SPARQLAB_CACHE=str(cache))
        # a build killed while it writes: its scratch folder stays behind
        child = subprocess.Popen([sys.executable, "-c", "import pathlib, time, tempfile\\n"
            "from sparqlab.engines import oxigraph_store\\n"
            "def fill(store):\\n    time.sleep(60)\\n"
            "oxigraph_store.install_store(pathlib.Path(r'{cache}') / 'kg' / 'victim', fill)"], env=env)
        while not list((cache / "kg").glob(".building-*")):
            time.sleep(0.1)
        child.send_signal(signal.SIGKILL); child.wait()
        from sparqlab.kg import open_kg
        os.environ["SPARQLAB_CACHE"] = str(cache)
        open_kg(str(data), cache=False).close()
        left = list((cache / "kg").glob(".building-*"))
        print("ok: removed" if not left else f"left: {{len(left)}} scratch folder(s)")
    """), {}


def ok_line(kind: str = "ok") -> Callable[[Outcome, Path], tuple[bool, str]]:
    return lambda out, scratch: typed(out, kind)


PROBES = [
    Probe("disk full on the cache", disk_full, disk_full_held),
    Probe("model endpoint answering garbage", garbage_model, garbage_model_held),
    Probe("missing optional dependency (igraph)", missing_dependency, missing_dependency_held),
    Probe("SPARQL endpoint dripping 1 B/s, timeout 5 s", sparql_drip, within(6.5, "QueryTimeout")),
    Probe("model reply dripping 1 B/s, timeout_s 10", model_drip, within(11.5, "ModelOverloaded")),
    Probe("billion-laughs RDF/XML as --kg", laughs, small_memory(400, "ValueError", "laughs.rdf")),
    Probe("YAML alias bomb as .kg.yaml", yaml_kg, within(5, "ValueError", "data.kg.yaml")),
    Probe("YAML alias bomb grid, sweep --dry-run", yaml_grid, yaml_grid_held),
    Probe("400 MB SPARQL result", huge_result, capped_while_read),
    Probe("50 MB model reply", huge_reply, small_memory(400, "ModelRequestError")),
    Probe("Turtle with 5,000 prefixes", many_prefixes, ok_line()),
    Probe("usage with a 400-digit count", usage('{"prompt_tokens": ' + "9" * 400 + ', "completion_tokens": 1}'),
          ok_line("ModelRequestError")),
    Probe("usage nested 100,000 deep", usage("[" * 100_000 + "]" * 100_000), ok_line("ModelRequestError")),
    Probe("negative token counts", usage('{"prompt_tokens": -5, "completion_tokens": -7}'),
          ok_line("ModelRequestError")),
    Probe("experiment name ..", dotdot, dotdot_held),
    Probe("figure names that differ only in / or after 40 characters", figure_names, ok_line()),
    Probe("run --from a folder naming other output locations", from_folder, ok_line()),
    Probe("endpoint redirecting to another origin", redirect, ok_line("EndpointError")),
    Probe("killed KG build leaves .building-*", killed_build, ok_line()),
]


# -- issue 51: untrusted bytes from endpoints and systems, endpoint failures, request framing --------------------

GRAPH_LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "' + b"a" * 40 + b'">'
                + b"".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'.encode() for i in range(8))
                + b']><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
                  b'rdf:about="urn:s"><p xmlns="urn:">&i;</p></rdf:Description></rdf:RDF>')
"""593 bytes of RDF/XML that stand for 4 GB of text (ten to the eighth copies of 40 characters)."""
TEXT2SPARQL_REPLY = json.dumps({"dataset": "urn:d", "question": "q",
                                "query": "SELECT ?film WHERE { ?film ?p ?o } " + "#" * 240}).encode()


def endpoint_answering(body: bytes, content_type: str = RESULTS_TYPE, query: str = "SELECT ?a WHERE {{ ?a ?b ?c }}",
                       ) -> Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]:
    """A probe asking one query of an endpoint that answers ``body`` labelled ``content_type``."""
    def setup(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        url = stack.enter_context(server(fixed(reply_bytes(body, content_type))))
        return catching(f"""
            from sparqlab.kg import EndpointKG, QueryOptions
            from sparqlab.kg.profiles import generic_profile
            kg = EndpointKG("{url}/sparql", generic_profile("probe"), options=QueryOptions(timeout_s=30))
            result = kg.query("{query}")
            print("ok:", result.boolean if result.kind == "ask" else f"{{len(result)}} rows")
        """), {}

    return setup


def labelled_results(content_type: str) -> Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]:
    """A 100 MB SPARQL JSON result (under the byte cap at the default 10,000 rows: only the row cap stops it
    early), labelled ``content_type``."""
    def setup(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        url = stack.enter_context(server(streamed_results(100 * 10**6, content_type)))
        return catching(f"""
            from sparqlab.kg import EndpointKG, QueryOptions
            from sparqlab.kg.profiles import generic_profile
            kg = EndpointKG("{url}/sparql", generic_profile("probe"), options=QueryOptions(timeout_s=60))
            print("ok:", len(kg.query("SELECT ?a WHERE {{ ?a ?b ?c }}")), "rows")
        """), {}

    return setup


def row_capped(out: Outcome, scratch: Path) -> tuple[bool, str]:
    """Held when the row cap stopped the reading of an answer under the byte cap: 10,000 rows, under 300 MiB and
    2 s (issue 51's bar)."""
    ok, detail = within(2, "ok: 10000 rows")(out, scratch)
    return ok and out.peak_mb < 300, detail


def long_literal() -> bytes:
    """One SPARQL JSON binding whose literal is 40 MB."""
    return (b'{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"type": "literal", "value": "'
            + b"x" * 40_000_000 + b'"}}]}}')


def external_asking(respond: Callable[[str, socket.socket], None], timeout_s: float = 30.0, prepare: bool = False,
                    ) -> Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]:
    """A probe asking ``external`` one question of a system answering with ``respond`` (``prepare``: only read
    its self-description, and print the size of what ``config.json`` would keep of the method)."""
    def setup(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        url = stack.enter_context(server(respond))
        action = ('run_sync(system.prepare(PrepareContext(kg)))\n'
                  'print("ok: describe() holds", len(json.dumps(system.describe())), "bytes")' if prepare else
                  'ctx = QuestionContext(Question("q1", "Who directed Alien?"), kg)\n'
                  'print("ok:", run_sync(system.answer(ctx.question, ctx)).error_category)')
        return catching(textwrap.dedent(f"""
            import json
            from sparqlab.data.question import Question
            from sparqlab.kg import EndpointKG
            from sparqlab.kg.profiles import generic_profile
            from sparqlab.core.event_loops import run_sync
            from sparqlab.text2sparql.external import ExternalSystem
            from sparqlab.platform.context import PrepareContext, QuestionContext
            kg = EndpointKG("http://127.0.0.1:9/sparql", generic_profile("unused"))
            system = ExternalSystem(endpoint="{url}/", timeout_s={timeout_s}, retries=0, dataset_iri="urn:d")
        """) + action), {}

    return setup


def gzip_bomb(mebibytes: int) -> bytes:
    """A gzip stream of ``mebibytes`` MiB of spaces (6,144: about 6 MiB), made quickly: after a full flush every
    MiB of spaces compresses to the same bytes, so one is repeated, and the trailer's CRC-32 is computed apart."""
    import struct
    import zlib

    packer, block = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16), b" " * 2**20
    first = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    steady = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    end = packer.flush()[:-8]  # the final block, without the trailer of the two MiB compressed here
    crc = 0
    for _ in range(mebibytes):
        crc = zlib.crc32(block, crc)
    trailer = struct.pack("<II", crc, (mebibytes * 2**20) & 0xFFFFFFFF)
    return first + steady * (mebibytes - 1) + end + trailer


def external_bomb(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    bomb = reply_bytes(gzip_bomb(6 * 1024), headers={"Content-Encoding": "gzip"})
    return external_asking(fixed(bomb))(scratch, stack)


def self_description(path: str, conn: socket.socket) -> None:
    """A system whose ``/openapi.json`` is 40 MB (its description)."""
    if path.endswith("openapi.json"):
        document = json.dumps({"info": {"title": "t", "version": "1", "description": "x" * 40_000_000}})
        conn.sendall(reply_bytes(document.encode()))
    else:
        conn.sendall(reply_bytes(TEXT2SPARQL_REPLY))


def model_throttled(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    throttled = reply_bytes(b'{"error": {"message": "slow down"}}', status="429 Too Many Requests",
                            headers={"Retry-After": "999999"})
    url = stack.enter_context(server(model_server(throttled)))
    return catching(f"""
        from sparqlab.core.event_loops import run_sync
        from sparqlab.llm.base import ChatRequest
        from sparqlab.llm.openai_backend import OpenAIModel
        model = OpenAIModel("m", base_url="{url}/v1", max_retries=4)
        print("ok:", run_sync(model.acomplete(ChatRequest.build("m", "hi"))).text)
    """), {}


def endpoint_turning_html(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    """A run on the movie KG through an endpoint that answers HTML from its 8th request until the file
    ``recovered`` exists; the child runs, recovers it and reruns."""
    import urllib.request

    from sparqlab.engines.oxigraph_server import serve_store
    from sparqlab.graphs.movies import ensure_store

    oxigraph = stack.enter_context(serve_store(ensure_store()))
    seen = [0]

    def respond(path: str, conn: socket.socket) -> None:
        seen[0] += 1
        if seen[0] > 8 and not (scratch / "recovered").exists():
            conn.sendall(reply_bytes(b"<html><body>502 Bad Gateway (maintenance)</body></html>", "text/html"))
            return
        with urllib.request.urlopen(oxigraph + path[path.index("?"):] if "?" in path else oxigraph) as answer:
            conn.sendall(reply_bytes(answer.read(), answer.headers.get("Content-Type", RESULTS_TYPE)))

    url = stack.enter_context(server(respond))
    return python(f"""
        import json, pathlib, subprocess, sys
        scratch = pathlib.Path("{scratch}")
        def run():
            done = subprocess.run([sys.executable, "-c", "import sys; from sparqlab.cli import main; "
                                   "raise SystemExit(main(sys.argv[1:]))", "run", "direct", "-d", "metaqa-1hop",
                                   "-e", "probe", "--progress", "false", "--limit", "20", "-m",
                                   "standin-keyword-rules", "--kg", "movies", "--kg-url", "{url}/query",
                                   "--output-root", str(scratch / "runs"), "--cache-path",
                                   str(scratch / "responses.sqlite"), "--kg-options", "cache=false"],
                                  capture_output=True, text=True)
            lines = [json.loads(line) for path in (scratch / "runs").rglob("predictions.jsonl")
                     for line in path.read_text().splitlines() if line.strip()]
            f1 = sum(line.get("f1") or 0 for line in lines) / max(1, len(lines))
            return done.returncode, len(lines), f1, (done.stderr.strip().splitlines() or [""])[-1][:90]
        first = run()
        (scratch / "recovered").touch()
        again = run()
        print(f"ok: first exit {{first[0]}}, {{first[1]}} records, F1 {{first[2]:.2f}}; rerun exit {{again[0]}}, "
              f"{{again[1]}} records, F1 {{again[2]:.2f}}; first said: {{first[3]}}")
    """), {}


def endpoint_turning_html_held(out: Outcome, scratch: Path) -> tuple[bool, str]:
    line = last_line(out.out + out.err)
    fields = line.split()
    held = line.startswith("ok: first exit") and fields[3] != "0," and "rerun exit 0, 20 records" in line
    return held, line


def framing(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    hidden = "GET /v1/models HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"
    return python(f"""
        import socket
        from urllib.parse import urlsplit
        from sparqlab.serving.model_server import serve_in_background
        both = (b"POST /v1/chat/completions HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 5\\r\\n"
                b"Transfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n{hidden}")
        folded = (b"POST /v1/chat/completions HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding:\\r\\n chunked"
                  b"\\r\\nContent-Length: 5\\r\\n\\r\\n0\\r\\n\\r\\n{hidden}")
        outcomes = []
        with serve_in_background("standin-echo") as url:
            for name, request in (("CL+TE", both), ("folded TE", folded)):
                with socket.create_connection(("127.0.0.1", urlsplit(url).port), timeout=5) as conn:
                    conn.sendall(request)
                    got = b""
                    try:
                        while chunk := conn.recv(65536):
                            got += chunk
                        closed = "closed"
                    except TimeoutError:
                        closed = "kept open"
                statuses = [part.split(b" ")[0].decode() for part in got.split(b"HTTP/1.1 ")[1:]]
                hidden = "hidden request answered" if b"standin-echo" in got else "hidden request not answered"
                outcomes.append(f"{{name}}: {{'/'.join(statuses)}}, {{hidden}}, {{closed}}")
        print(("ok: " if all("not answered, closed" in o and o.split(": ")[1].startswith("400,") for o in outcomes)
               else "smuggled: ") + "; ".join(outcomes))
    """), {}


PROBES += [
    Probe("graph answer: 593-byte RDF/XML entity expansion", endpoint_answering(
        GRAPH_LAUGHS, "application/rdf+xml", "DESCRIBE <urn:s>"), small_memory(300, "EndpointError", "entities")),
    Probe("100 MB SPARQL result labelled text/plain", labelled_results("text/plain"), row_capped),
    Probe("100 MB SPARQL result labelled APPLICATION/SPARQL-RESULTS+JSON",
          labelled_results("APPLICATION/SPARQL-RESULTS+JSON"), row_capped),
    Probe("one 40 MB literal", endpoint_answering(long_literal()), within(3, "ok: 1 rows")),
    Probe("SPARQL JSON bindings of strings", endpoint_answering(
        b'{"head": {"vars": ["a"]}, "results": {"bindings": ["x", "y"]}}'), ok_line("EndpointError")),
    Probe("SPARQL JSON nested 100,000 deep", endpoint_answering(b"[" * 100_000 + b"]" * 100_000),
          ok_line("EndpointError")),
    Probe('ASK {"boolean": "false"}', endpoint_answering(b'{"head": {}, "boolean": "false"}', query="ASK {{}}"),
          ok_line("EndpointError")),
    Probe("external reply: 6 MiB gzip bomb (6 GiB decoded)", external_bomb,
          small_memory(300, "ok: external_bad_reply")),
    Probe("external reply dripping 1 B / 0.5 s, timeout_s 3", external_asking(
        dripping(reply_bytes(TEXT2SPARQL_REPLY), 0.5), timeout_s=3), within(6, "ok: external_timeout")),
    Probe("external /openapi.json of 40 MB", external_asking(self_description, prepare=True),
          lambda out, scratch: (out.peak_mb < 300 and typed(out, "ok")[0]
                                and int(typed(out, "ok")[1].split()[3]) < 100_000, typed(out, "ok")[1])),
    Probe("model 429 with Retry-After 999999", model_throttled,
          lambda out, scratch: typed(out, "ModelOverloaded", "after 1 attempt")),
    Probe("SPARQL endpoint answering 200 text/html mid-run, then rerun", endpoint_turning_html,
          endpoint_turning_html_held),
    Probe("serve-model: Content-Length + Transfer-Encoding, folded TE", framing, ok_line()),
]


# -- issue 51: a researcher's mistakes named before work, values in range, no link followed, no half file ---------

MOVIES_RUN = ["run", "direct", "-d", "metaqa-1hop", "--limit", "2", "-m", "standin-keyword-rules", "-e", "m51",
              "--progress", "false"]
GRASP = "data/peers/grasp/ck25/gpt-41.search_extended_with_feedback.jsonl"


def cli_outcome(setup: str = "", after: str = "") -> list[str]:
    """A snippet: ``setup`` (Python, with ``scratch``, ``main`` and ``data_dir`` in scope; it sets ``argv``), then
    ``main(argv)`` with its stdout kept in ``out``, then ``after``; prints ``exit N: <stderr lines>`` and what
    ``after`` prints."""
    return python("import contextlib, io, json, os, pathlib, sys\nfrom sparqlab.cli import main\n"
                  "from sparqlab.core.paths import data_dir\n"
                  "scratch = pathlib.Path(sys.argv[1])\n" + textwrap.dedent(setup) + "\n"
                  "err, out = io.StringIO(), io.StringIO()\n"
                  "with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):\n    code = main(argv)\n"
                  "lines = [x.strip() for x in err.getvalue().splitlines() if x.strip() and not x.startswith('(run')]\n"
                  "print(f'exit {code}:', ' | '.join(lines)[:400])\n" + textwrap.dedent(after))


def exit_line(out: Outcome) -> str:
    return next((line for line in out.out.splitlines() if line.startswith("exit ")), last_line(out.out + out.err))


def refused(*words: str) -> Callable[[Outcome, Path], tuple[bool, str]]:
    """Held when the command exited 1 with a message holding every word (the setting, file or option named)."""
    def held(out: Outcome, scratch: Path) -> tuple[bool, str]:
        line = exit_line(out)
        facts = [line for line in out.out.splitlines() if line.startswith("fact:")]
        ok = line.startswith("exit 1:") and all(word in line for word in words) \
            and not any("outside changed" in f for f in facts)
        return ok, "; ".join([line[:200], *facts])

    return held


def setting_probe(*flags: str) -> Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]:
    def setup(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        return [*cli_outcome(f"argv = {MOVIES_RUN + list(flags)!r} + ['--output-root', str(scratch / 'runs')]",
                             "print('fact: answered', sum(1 for _ in scratch.rglob('predictions.jsonl')), 'runs')"),
                str(scratch)], {}
    return setup


def grasp_line(change: str) -> Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]:
    """``sparqlab import grasp`` of GRASP's released file with ``change`` applied to every line, then ``runs
    list`` (the folder must not be poisoned)."""
    def setup(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        return [*cli_outcome(f"""
            lines = [json.loads(x) for x in (data_dir().parent / {GRASP!r}).read_text().splitlines()]
            for r in lines:
                {change}
            (scratch / "peer.jsonl").write_text("".join(json.dumps(r) + "\\n" for r in lines))
            argv = ["import", "grasp", str(scratch / "peer.jsonl"), "-d", "ck25", "--kg", "ck25", "--output-root",
                    str(scratch / "runs"), "--progress", "false"]
        """, """
            cats = [json.loads(x).get("error_category") for p in scratch.rglob("predictions.jsonl")
                    for x in p.read_text().splitlines()]
            print("fact: records", len(cats), "method_error", cats.count("method_error"))
            listing = io.StringIO()
            with contextlib.redirect_stderr(listing), contextlib.redirect_stdout(io.StringIO()):
                listed = main(["runs", "list", "--root", str(scratch / "runs")])
            print("fact: runs list exit", listed, listing.getvalue().strip().splitlines()[-1:][0][:120]
                  if listing.getvalue().strip() else "")
        """), str(scratch)], {}
    return setup


def grasp_held(*words: str) -> Callable[[Outcome, Path], tuple[bool, str]]:
    def held(out: Outcome, scratch: Path) -> tuple[bool, str]:
        ok, detail = refused(*words)(out, scratch)
        return ok and "fact: records 0" in out.out and "runs list exit 0" in out.out, detail
    return held


def edited_score(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    return [*cli_outcome(f"""
        with contextlib.redirect_stdout(io.StringIO()):
            main(["import", "grasp", str(data_dir().parent / {GRASP!r}), "-d", "ck25", "--kg", "ck25", "--limit", "5",
                  "--output-root", str(scratch / "runs"), "--progress", "false"])
        preds = next(scratch.rglob("predictions.jsonl"))
        lines = preds.read_text().splitlines()
        first = json.loads(lines[0]); first["scores"]["text2sparql"] = 50; lines[0] = json.dumps(first)
        preds.write_text("\\n".join(lines) + "\\n")
        argv = ["leaderboard", "ck25", "--run", str(preds.parent)]
    """, """
        row = [x for x in out.getvalue().splitlines() if "[sparqlab]" in x]
        print("fact: row", row[0].split()[1:4] if row else "none")
    """), str(scratch)], {}


def own_questions(scratch: Path, rows: list[dict]) -> Path:
    path = scratch / "own.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def failing_gold(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    own = own_questions(scratch, [
        {"id": "q1", "text": "who directed Alien", "kg": "movies",
         "gold_sparql": 'SELECT ?d WHERE { ?f rdfs:label "Alien" ; mrel:directed_by ?d }'},
        {"id": "q2", "text": "who directed Nothing", "kg": "movies",
         "gold_sparql": 'SELECT ?d WHERE { ?f rdfs:label "No such film" ; mrel:directed_by ?d }'},
        {"id": "q3", "text": "broken gold", "kg": "movies", "gold_sparql": "SELECT ?d WHERE { ?f"}])
    return [*cli_outcome(f"argv = ['run', 'direct', '-d', {str(own)!r}, '-m', 'standin-keyword-rules', '--kg', "
                         "'movies', '--progress', 'false', '--output-root', str(scratch / 'runs')]"), str(scratch)], {}


def external_own(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    """A TEXT2SPARQL system (``sparqlab serve`` over a stand-in) asked the movie questions without a dataset
    IRI."""
    return [*cli_outcome("""
        import socket, subprocess, time
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
        server = subprocess.Popen([sys.executable, "-c", "import sys; from sparqlab.cli import main; "
                                   "sys.exit(main(sys.argv[1:]))", "serve", "direct", "-m", "standin-keyword-rules",
                                   "--kg", "movies", "--dataset-iri", "http://example.org/movies", "--port",
                                   str(port)], stderr=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL)
        for _ in range(300):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        argv = ["run", "external", "-o", f"endpoint=http://127.0.0.1:{port}/text2sparql", "-o", "retries=0",
                "-d", "metaqa-1hop", "--limit", "3", "--kg", "movies", "--progress", "false",
                "--output-root", str(scratch / "runs")]
    """, """
        server.kill()
        cats = [json.loads(x).get("error_category") for p in scratch.rglob("predictions.jsonl")
                for x in p.read_text().splitlines()]
        print("fact: records", len(cats), sorted(set(map(str, cats))))
    """), str(scratch)], {}


def genop_own(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    return [*cli_outcome("argv = ['run', 'genop', '-d', 'metaqa-1hop', '--limit', '3', '-m', "
                         "'standin-keyword-rules', '--progress', 'false', '--output-root', str(scratch / 'runs')]",
                         "print('fact: records', sum(len(p.read_text().splitlines()) for p in "
                         "scratch.rglob('predictions.jsonl')))"), str(scratch)], {}


def import_own(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    answers = scratch / "answers.json"
    answers.write_text(json.dumps([{"qname": "test_0", "query": "SELECT ?x WHERE { ?x ?p ?o } LIMIT 1"},
                                   {"qname": "test_1", "query": None}]), encoding="utf-8")
    return [*cli_outcome(f"argv = ['import', 'answers', {str(answers)!r}, '-d', 'metaqa-1hop', '--limit', '2', "
                         "'--progress', 'false', '--output-root', str(scratch / 'runs')]"), str(scratch)], {}


def imported_held(out: Outcome, scratch: Path) -> tuple[bool, str]:
    line = exit_line(out)
    return line.startswith("exit 0"), line[:200]


def workspace_grid(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    return python(f"""
        import os, pathlib
        from sparqlab.core.paths import init_workspace
        ws = pathlib.Path("{scratch}") / "ws"
        init_workspace(ws)
        grid = ws / "experiments" / "all_methods.yaml"
        os.environ["SPARQLAB_WORKSPACE"] = str(ws)
        os.chdir(ws / "notebooks")  # where papermill runs notebook 11
        from sparqlab.experiments.grid import load_grid
        loaded = load_grid("experiments/all_methods.yaml")
        print(("ok: " if loaded.path == grid else "ignored the workspace's copy: ") + f"read {{loaded.path}}")
    """), {}


def no_train_extra(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    """``sparqlab train sft`` where peft is not installed: the environment's packages but peft, linked into a
    folder the child reads instead of its site-packages (``-S``)."""
    import sysconfig

    site = scratch / "site"
    site.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith("peft"):
            (site / entry.name).symlink_to(entry)
    (scratch / "d.jsonl").write_text('{"messages": [{"role": "user", "content": "q"}, '
                                     '{"role": "assistant", "content": "a"}]}\n', encoding="utf-8")
    lib = str(Path(__file__).resolve().parents[1] / "lib")
    path = os.pathsep.join([p for p in os.environ.get("PYTHONPATH", lib).split(os.pathsep) if p] + [str(site)])
    return ["-S", *cli_outcome(f"argv = ['train', 'sft', '--base', str(scratch), '--data', {str(scratch / 'd.jsonl')!r}, "
                               "'--out', str(scratch / 'out')]"), str(scratch)], {"PYTHONPATH": path}


def linked(name: str) -> Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]:
    """Resume a finished run folder in which ``name`` is a link to a file outside (holding sound lines)."""
    def setup(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        return [*cli_outcome(f"""
            argv = {MOVIES_RUN!r} + ["--output-root", str(scratch / "runs")]
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                main(argv)
            folder = next((scratch / "runs" / "m51").iterdir())
            outside = scratch / "outside.txt"
            outside.write_text((folder / "predictions.jsonl").read_text().splitlines(keepends=True)[0])
            before = outside.read_bytes()
            (folder / {name!r}).unlink()
            (folder / {name!r}).symlink_to(outside)
        """, """
            after = outside.read_bytes()
            print("fact: the file outside", "unchanged" if after == before else "changed:",
                  "" if after == before else f"{len(before)} -> {len(after)} bytes, now starting {after[:12]!r}")
        """), str(scratch)], {}
    return setup


def full_report(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    """``runs report -o`` over an earlier report, with every file capped at 16 KiB (RLIMIT_FSIZE: EFBIG, as a
    full disk)."""
    return [*cli_outcome("""
        import resource
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(["run", "direct", "-d", "metaqa-1hop", "--limit", "30", "-m", "standin-keyword-rules", "-e", "m51",
                  "--progress", "false", "--output-root", str(scratch / "runs")])
        folder = next((scratch / "runs" / "m51").iterdir())
        report = scratch / "report.html"
        report.write_text("<html>the report of yesterday</html>")
        resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))
        argv = ["runs", "report", str(folder), "-o", str(report)]
    """, """
        text = report.read_text()
        print("fact: report now", len(text), "bytes", "(the old one)" if "yesterday" in text else
              ("(whole)" if text.rstrip().endswith("</html>") else "(truncated)"))
    """), str(scratch)], {}


def full_report_held(out: Outcome, scratch: Path) -> tuple[bool, str]:
    line = exit_line(out)
    fact = next((x for x in out.out.splitlines() if x.startswith("fact:")), "")
    return line.startswith("exit 1") and "report.html" in line and "(the old one)" in fact, f"{line[:160]}; {fact}"


def cut_init(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    """``sparqlab init`` cut by a full disk (RLIMIT_FSIZE below one notebook), then run again without it."""
    return python(f"""
        import pathlib, subprocess, sys
        ws = pathlib.Path("{scratch}") / "ws"
        code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (8000, 8000)); "
                "from sparqlab.cli import main; sys.exit(main(sys.argv[1:]))")
        cut = subprocess.run([sys.executable, "-c", code, "init", str(ws)], capture_output=True, text=True)
        again = subprocess.run([sys.executable, "-c", code.split("; ", 2)[2], "init", str(ws)], capture_output=True,
                               text=True)
        import json
        bad = []
        for nb in sorted((ws / "notebooks").glob("*.ipynb")):
            try:
                json.loads(nb.read_text())
            except ValueError:
                bad.append(nb.name)
        line = (cut.stderr.strip().splitlines() or [""])[-1][:120]
        print(("ok: " if not bad else f"kept truncated: {{bad[:2]}} ") + f"first init exit {{cut.returncode}} "
              f"({{line}}); rerun: {{again.stdout.strip()[:120]}}")
    """), {}


def damaged_shard(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    return [*cli_outcome("""
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for index in (0, 1):
                main(["run", "direct", "-d", "metaqa-1hop", "--limit", "6", "-m", "standin-keyword-rules", "-e",
                      "m51", "--progress", "false", "--output-root", str(scratch / "runs"), "--shard-index",
                      str(index), "--num-shards", "2"])
        shard = sorted((scratch / "runs" / "m51").iterdir())[1]
        lines = (shard / "predictions.jsonl").read_text().splitlines()
        record = json.loads(lines[0]); record["f1"] = 50; lines[0] = json.dumps(record)
        (shard / "predictions.jsonl").write_text("\\n".join(lines) + "\\n")
        argv = ["runs", "merge", str(shard)]
    """, """
        merged = [p for p in (scratch / "runs" / "m51").iterdir() if "shard" not in p.name]
        print("fact: merged folders", len(merged))
    """), str(scratch)], {}


def read_only_cache(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    """A response cache on a folder mounted read-only: a tmpfs remounted ro in a mount namespace of the probe's own
    (``unshare -rm``; gone with it), since chmod does not stop root."""
    folder = scratch / "ro"
    folder.mkdir()
    (scratch / "fill.py").write_text("import sys\nfrom sparqlab.core.cache import JsonCache\n"
                                     "JsonCache(sys.argv[1] + '/r.sqlite').put('n', 'k', 1)\n")
    (scratch / "open.py").write_text("import sys\nfrom sparqlab.core.cache import JsonCache\ntry:\n"
                                     "    JsonCache(sys.argv[1] + '/r.sqlite')\n    print('ok: opened')\n"
                                     "except Exception as error:\n"
                                     "    print(f'{type(error).__name__}: {error}'[:300])\n")
    script = ('mount -t tmpfs -o size=4m tmpfs "$1" && "$0" "$2/fill.py" "$1" && mount -o remount,ro "$1" '
              '&& "$0" "$2/open.py" "$1"')
    return python(f"""
        import subprocess, sys
        done = subprocess.run(["unshare", "-rm", "sh", "-c", {script!r}, sys.executable, "{folder}", "{scratch}"],
                              capture_output=True, text=True)
        print(done.stdout.strip() or done.stderr.strip()[-200:])
    """), {}


def read_only_held(out: Outcome, scratch: Path) -> tuple[bool, str]:
    line = last_line(out.out + out.err)
    return line.startswith("StorageFull") and "rm -f" not in line, line[:200]


def install_line(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
    """The README's install line, as written, with the pip of a fresh ``python3.11 -m venv`` (``--dry-run
    --no-deps``: only whether pip reads the line and builds the package's metadata)."""
    return python(f"""
        import os, pathlib, shutil, subprocess, sys
        sys.path.insert(0, "{Path(__file__).resolve().parents[1] / 'tests'}")
        from sparqlab.core.paths import PROJECT_ROOT
        from support.docs import install_command
        scratch = pathlib.Path("{scratch}")
        (scratch / "home" / "src").mkdir(parents=True)
        (scratch / "home" / "src" / "sparqlab").symlink_to(PROJECT_ROOT)
        subprocess.run([shutil.which("python3.11") or sys.executable, "-m", "venv", str(scratch / "venv")], check=True)
        pip = str(scratch / "venv" / "bin" / "pip")
        version = subprocess.run([pip, "--version"], capture_output=True, text=True).stdout.split()[1]
        line = [w.replace("$HOME", str(scratch / "home")) for w in install_command()]
        done = subprocess.run([pip, *line[1:], "--dry-run", "--no-deps"], capture_output=True, text=True)
        said = (done.stdout + done.stderr).strip().splitlines()
        print(("ok: " if done.returncode == 0 else "failed: ") + f"pip {{version}}: " + (said[-1] if said else "")[:150])
    """), {}


PROBE_CACHE = Path(tempfile.gettempdir()) / f"sparqlab-probes-cache-{os.getuid()}"
"""The KG store and caches of these probes (built once, kept between sessions): a probe that fills a disk or
edits a folder never touches a checkout's own ``.cache``."""


def isolated(setup: Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]
             ) -> Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]:
    def with_cache(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        args, env = setup(scratch, stack)
        return args, {"SPARQLAB_CACHE": str(PROBE_CACHE), **env}
    return with_cache


MISTAKE_PROBES = [
    Probe("--question-timeout-s 0", setting_probe("--question-timeout-s", "0"), refused("question_timeout_s")),
    Probe("--question-timeout-s nan", setting_probe("--question-timeout-s", "nan"), refused("question_timeout_s")),
    Probe("--question-timeout-s -5", setting_probe("--question-timeout-s", "-5"), refused("question_timeout_s")),
    Probe("--kg-options max_rows=0", setting_probe("--kg-options", "max_rows=0"), refused("max_rows")),
    Probe("--kg-options max_rows=-1", setting_probe("--kg-options", "max_rows=-1"), refused("max_rows")),
    Probe("--temperature nan", setting_probe("--temperature", "nan"), refused("temperature")),
    Probe("--max-tokens -5", setting_probe("--max-tokens", "-5"), refused("max_tokens")),
    Probe("--kg-options memory_limit_gb=8G", setting_probe("--kg-options", "memory_limit_gb=8G"),
          refused("memory_limit_gb")),
    Probe("import grasp: messages as strings", grasp_line('r["messages"] = [m.get("content") or "" for m in '
                                                          'r["messages"]]'), grasp_held("peer.jsonl, line 1")),
    Probe("import grasp: elapsed 1e308", grasp_line('r["elapsed"] = 1e308'), grasp_held("peer.jsonl, line 1")),
    Probe("import grasp: elapsed -1e9", grasp_line('r["elapsed"] = -1e9'), grasp_held("peer.jsonl, line 1")),
    Probe("leaderboard --run of a record edited to 50", edited_score, refused("predictions.jsonl, line 1")),
    Probe("own dataset: gold queries failing / empty", failing_gold, refused("q2", "q3", "--allow-gold-errors")),
    Probe("external on a non-challenge dataset", external_own, refused("dataset_iri")),
    Probe("genop on a dataset without GenOp queries", genop_own, refused("genop", "'query'")),
    Probe("import answers for a non-TEXT2SPARQL dataset", import_own, imported_held),
    Probe("notebook 11's grid in an init workspace", workspace_grid, ok_line()),
    Probe("sparqlab train sft without peft", no_train_extra, refused("pip install 'sparqlab[train]'")),
    Probe("resume: .lock is a link outside", linked(".lock"), refused("symbolic link")),
    Probe("resume: predictions.jsonl is a link outside", linked("predictions.jsonl"), refused("symbolic link")),
    Probe("runs report -o onto a full disk", full_report, full_report_held),
    Probe("init cut by a full disk, then rerun", cut_init, ok_line()),
    Probe("runs merge of a shard line edited to f1 50", damaged_shard, refused("f1 is 50")),
    Probe("read-only cache folder", read_only_cache, read_only_held),
    Probe("README install line with a fresh venv's pip", install_line, ok_line()),
]
PROBES += [Probe(p.name, isolated(p.setup), p.held) for p in MISTAKE_PROBES]

def run_probe(probe: Probe, disk_full_wrap: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="sparqlab-probe-") as folder, contextlib.ExitStack() as stack:
        scratch = Path(folder)
        args, env_extra = probe.setup(scratch, stack)
        env = {**os.environ, "SPARQLAB_RUNS": str(scratch / "runs-default"), **env_extra}
        command = [sys.executable, *args]
        if probe.setup is disk_full and disk_full_wrap:  # a real full filesystem: a 64 KiB tmpfs in a namespace
            full = scratch / "full"
            command = ["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o size=64k tmpfs "{full}" && exec "$@"',
                       "sh", *command]
        cap = int(MEMORY_CAP_GB * 2**30)
        start = time.monotonic()
        child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 errors="replace", start_new_session=True,
                                 preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_DATA, (cap, cap)))
        try:
            out, err = child.communicate(timeout=TIME_CAP_S)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, 9)
            out, err = child.communicate()
            err += f"\nkilled after {TIME_CAP_S:g} s"
        seconds = time.monotonic() - start
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        outcome = Outcome(child.returncode, seconds, peak_mb, out, err)
        ok, detail = probe.held(outcome, scratch)
        if seconds >= TIME_CAP_S:
            ok = False
        return {"probe": probe.name, "held": ok, "seconds": round(seconds, 1), "peak_mb": round(peak_mb),
                "exit": child.returncode, "detail": detail}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated probe numbers (1-based) to run")
    parser.add_argument("--json", help="write every probe's outcome to this file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:  # one probe in its own process, so RUSAGE_CHILDREN is that probe's alone
        probe = PROBES[int(args.worker)]
        print(json.dumps(run_probe(probe, shutil.which("unshare") is not None)))
        return 0
    chosen = [int(n) - 1 for n in args.only.split(",")] if args.only else range(len(PROBES))
    print(f"{'#':>2}  {'probe':<58}{'outcome':<9}{'time':>8}{'peak':>9}{'exit':>6}  detail")
    results = []
    for index in chosen:
        done = subprocess.run([sys.executable, __file__, "--worker", str(index)], capture_output=True, text=True)
        try:
            result = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            result = {"probe": PROBES[index].name, "held": False, "seconds": 0, "peak_mb": 0, "exit": None,
                      "detail": f"the probe itself failed: {done.stderr.strip()[-200:]}"}
        results.append(result)
        print(f"{index + 1:>2}  {result['probe']:<58}{'held' if result['held'] else 'broken':<9}"
              f"{result['seconds']:>7.1f}s{result['peak_mb']:>6} MB{str(result['exit']):>6}  {result['detail']}",
              flush=True)
    print(f"held {sum(r['held'] for r in results)} of {len(results)}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
