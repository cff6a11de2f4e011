"""Adversarial rerun: hostile queries, model output, HTTP clients, files and caches against the workbench.

Each class of attack runs in a child process; a case that kills its child (a crash of the caller, which is what
the guard must prevent) is counted ``crashed`` and the child restarts after it. Every case ends as

* ``refused``: stopped with the workbench's typed error or clean message (and, for queries, no request leaked to
  the counting listener, the store unchanged);
* ``handled``: ran correctly (a slow model served, a run completing with model output it had to clean);
* ``crashed``: the process died, an untyped exception escaped, a request got out, or a wrong result came back.

Usage: python benchmarks/adversarial.py [--classes service,update,...] [--json OUT]

``--probes`` runs the probes of issue 40 instead (failures of the machinery: disk full, a garbage model endpoint,
dripping servers, bombs, names), one line each, held or broken, with time, peak memory and exit code
(:mod:`machinery_probes`, beside this file).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

Case = tuple[str, Callable[[], tuple[str, str]]]
_OPEN: list = []

SMALL_TTL = """@prefix ex: <http://example.org/> .
ex:alice ex:knows ex:bob ; ex:name "Alice" .
ex:bob ex:name "Bob" .
"""


class Listener:
    """Counts every TCP connection on 127.0.0.1 and answers like a SPARQL endpoint."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/sparql"
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        body = b'{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"type": "literal", "value": "x"}}]}}'
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
                                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                except OSError:
                    pass


def small_kg(scratch: Path, **options):
    from sparqlab.kg import open_kg

    path = scratch / "small.ttl"
    path.write_text(SMALL_TTL, encoding="utf-8")
    return open_kg(path, cache=False, **options)


def expect_kg_error(kg, query: str, listener: Listener | None = None, accept: bool = False,
                    **options) -> tuple[str, str]:
    """refused if the query ends in a typed KGError (and nothing reached the listener); a result counts as
    handled when ``accept`` (a heavy query that finished within its limits), else as crashed."""
    from sparqlab.kg import KGError

    before = listener.connections if listener else 0
    try:
        result = kg.query(query, **options)
        outcome, detail = ("handled" if accept else "crashed"), f"accepted: {len(result)} rows"
    except KGError as error:
        outcome, detail = "refused", f"{type(error).__name__}: {str(error)[:90]}"
    except Exception as error:  # noqa: BLE001 - an untyped error is what this counts
        outcome, detail = "crashed", f"{type(error).__name__}: {str(error)[:90]}"
    if listener and listener.connections != before:
        outcome, detail = "crashed", f"{listener.connections - before} request(s) leaked; {detail}"
    return outcome, detail


SERVICE = [
    "ASK {{ {{}} .SERVICE <{u}> {{?a ?b ?c}} }}", "SELECT * WHERE {{ SERVICE <{u}> {{ ?a ?b ?c }} }}",
    "select * where {{ service silent <{u}> {{ ?a ?b ?c }} }}", "SELECT * {{ SeRvIcE <{u}> {{ ?a ?b ?c }} }}",
    "SELECT * WHERE {{ ?s ?p ?o }}SERVICE<{u}>{{?a ?b ?c}}", "SELECT * {{ ?s ?p ?o .SERVICE<{u}>{{?a ?b ?c}} }}",
    "SELECT * {{ #x\nSERVICE <{u}> {{ ?a ?b ?c }} }}", "SELECT * {{ SERV\\u0049CE <{u}> {{ ?a ?b ?c }} }}",
    "PREFIX r: <{u}#>\nSELECT * {{ SERVICE r: {{ ?a ?b ?c }} }}",
    "SELECT * {{ VALUES ?v {{ <{u}> }} SERVICE ?v {{ ?a ?b ?c }} }}",
    "SELECT * {{ BIND(<{u}> AS ?v) SERVICE ?v {{ ?a ?b ?c }} }}",
    "SELECT * {{ ?s ?p ?o FILTER EXISTS {{ SERVICE <{u}> {{ ?a ?b ?c }} }} }}",
    "SELECT * {{ ?s ?p ?o FILTER NOT EXISTS {{ SERVICE <{u}> {{ ?a ?b ?c }} }} }}",
    "SELECT * {{ ?s ?p ?o OPTIONAL {{ SERVICE <{u}> {{ ?a ?b ?c }} }} }}",
    "SELECT * {{ ?s ?p ?o MINUS {{ SERVICE <{u}> {{ ?s ?b ?c }} }} }}",
    "SELECT * {{ {{ ?s ?p ?o }} UNION {{ SERVICE <{u}> {{ ?a ?b ?c }} }} }}",
    "SELECT * {{ {{ SELECT * {{ SERVICE <{u}> {{ ?a ?b ?c }} }} }} }}",
    "SELECT (COUNT(*) AS ?n) {{ SERVICE <{u}> {{ ?a ?b ?c }} }}", "ASK {{ GRAPH ?g {{ SERVICE <{u}> {{ ?a ?b ?c }} }} }}",
    "CONSTRUCT {{ ?a ?b ?c }} {{ SERVICE <{u}> {{ ?a ?b ?c }} }}", "DESCRIBE ?a {{ SERVICE <{u}> {{ ?a ?b ?c }} }}",
    "SELECT * {{ SERVICE <{u}> {{ SERVICE <{u}> {{ ?a ?b ?c }} }} }}",
    "SELECT * {{ SERVICE\t<{u}>\n{{ ?a ?b ?c }} }}", "SELECT * {{ ?s ?p ?o }} # SERVICE <{u}>\nLIMIT 1",
]


def service_cases(scratch: Path) -> list[Case]:
    listener = Listener()
    kg = small_kg(scratch)
    cases = [(f"service {i}", lambda t=t: expect_kg_error(kg, t.format(u=listener.url), listener, timeout_s=10))
             for i, t in enumerate(SERVICE[:-1])]

    def in_a_comment() -> tuple[str, str]:  # a SERVICE only in a comment is no SERVICE: the query must run
        rows = kg.query(SERVICE[-1].format(u=listener.url))
        return ("handled" if len(rows) == 1 and listener.connections == 0 else "crashed"), "ran without a request"

    return [*cases, ("service in a comment only", in_a_comment)]


UPDATES = [
    "INSERT DATA { <http://x/a> <http://x/p> 1 }", "delete where { ?s ?p ?o }", "DeLeTe { ?s ?p ?o } WHERE { ?s ?p ?o }",
    "LOAD <http://127.0.0.1:9/data.ttl>", "CLEAR ALL", "DROP ALL", "DROP GRAPH <http://x/g>", "CREATE GRAPH <http://x/g>",
    "ADD DEFAULT TO <http://x/g>", "MOVE DEFAULT TO <http://x/g>", "COPY DEFAULT TO <http://x/g>",
    "WITH <http://x/g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", "# SELECT * {}\nINSERT DATA { <http://x/a> <http://x/p> 1 }",
    "BASE <http://x/> PREFIX select: <http://x/s#> DROP ALL", "\\u0049NSERT DATA { <http://x/a> <http://x/p> 1 }",
    "SELECT * WHERE { ?s ?p ?o } ; DROP ALL", "INSERT DATA { <http://x/a> <http://x/p> ",
    "PREFIX : <http://x/> insert { ?s :p 1 } where { ?s ?p ?o }",
]


def update_cases(scratch: Path) -> list[Case]:
    kg = small_kg(scratch)
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    before = kg.query(count).rows[0]["n"].value

    def attempt(update: str) -> tuple[str, str]:
        outcome, detail = expect_kg_error(kg, update)
        if kg.query(count).rows[0]["n"].value != before:
            return "crashed", "the store changed"
        return outcome, detail

    return [(f"update {i}", lambda u=u: attempt(u)) for i, u in enumerate(UPDATES)]


def parser_cases(scratch: Path) -> list[Case]:
    kg = small_kg(scratch)
    chains = {"union": " UNION ".join(["{}"] * 30_000), "path": "?a " + "/".join(["<http://e/k>"] * 30_000) + " ?c",
              "or": "?a ?b ?c FILTER(" + " || ".join(["?a"] * 30_000) + ")",
              "plus": "BIND(" + " + ".join(["1"] * 30_000) + " AS ?x)"}
    queries = {
        "3,000 braces": "SELECT * WHERE " + "{" * 3000 + "}" * 3000,
        "10,000 braces": "SELECT * WHERE " + "{" * 10000 + "}" * 10000,
        "3,000 parentheses": "SELECT * { FILTER(" + "(" * 3000 + "1" + ")" * 3000 + ") }",
        "3,000 blank-node brackets": "SELECT * { ?s ?p " + "[ ?p " * 3000 + "1" + " ]" * 3000 + " }",
        "3,000 nested subqueries": "SELECT * " + "{ SELECT * " * 3000 + "{}" + " }" * 3000,
        **{f"30,000-long {name} chain": f"SELECT * WHERE {{ {chain} }}" for name, chain in chains.items()},
        "unbalanced": "SELECT * WHERE { { ?s ?p ?o }", "close first": "SELECT * WHERE } ?s ?p ?o {",
        "empty": "", "comment only": "# SELECT", "lone surrogate": 'SELECT * { ?s ?p "\udcff" }',
        "NUL byte": "SELECT * { ?s ?p \x00 }", "2 MB query": 'SELECT * { ?s ?p "' + "a" * 2_000_000 + '" }',
        "undeclared prefix": "SELECT * { wd:Q42 ?p ?o }", "not a query": "HELLO WORLD",
        "unterminated string": 'SELECT * { ?s ?p "abc }', "unterminated long string": "SELECT * { ?s ?p '''abc }",
        "non-string query": None,
    }
    return [(name, lambda q=q: expect_kg_error(kg, q, timeout_s=5)) for name, q in queries.items()]


def dos_cases(scratch: Path) -> list[Case]:
    kg = small_kg(scratch, workers=1, memory_limit_gb=0.5)
    values = " ".join(str(i) for i in range(600))
    long_values = " ".join(f'"{i:0100d}"' for i in range(2000))
    queries = {
        "COUNT over 3 x 600 VALUES": "SELECT (COUNT(*) AS ?n) { " + " ".join(f"VALUES ?{v} {{ {values} }}" for v in "xyz")
                                     + " }",
        "ORDER BY over a VALUES product": f"SELECT * {{ VALUES ?x {{ {long_values} }} VALUES ?y {{ {long_values} }} }} "
                                          "ORDER BY ?x ?y",
        "GROUP_CONCAT of a product": f"SELECT (GROUP_CONCAT(?x) AS ?g) {{ VALUES ?x {{ {long_values} }} VALUES ?y "
                                     f"{{ {long_values} }} }}",
        "property path closure product": "SELECT (COUNT(*) AS ?n) { ?a (<http://example.org/knows>|!<http://x>)* ?b . "
                                         + " ".join(f"VALUES ?{v} {{ {values} }}" for v in "xy") + " }",
        "slow parse naming service": "SELECT * { ?service ?p ?o FILTER(" + " || ".join(["?service"] * 30_000) + ") }",
        "catastrophic-looking regex": "SELECT * { " + f"VALUES ?x {{ {long_values} }} VALUES ?y {{ {long_values} }}"
                                      + " FILTER(REGEX(CONCAT(?x, ?y), '(0+)+1')) }",
    }
    return [(name, lambda q=q: expect_kg_error(kg, q, accept=True, timeout_s=2)) for name, q in queries.items()]


def server_cases(scratch: Path) -> list[Case]:
    import httpx

    from sparqlab.serving.model_server import MAX_BODY_BYTES, serve_in_background

    context = serve_in_background("standin-echo", read_timeout_s=1.0)
    url = context.__enter__()
    _OPEN.append(context)  # served until the child exits
    host, port = url.split("//")[1].split("/")[0].rsplit(":", 1)
    root = url.removesuffix("/v1")

    def openai_error(reply: httpx.Response) -> tuple[str, str]:
        try:
            shaped = set(reply.json()["error"]) == {"message", "type", "param", "code"}
        except (ValueError, KeyError, TypeError):
            shaped = False
        good = 400 <= reply.status_code < 500 and shaped
        return ("refused" if good else "crashed"), f"HTTP {reply.status_code}{'' if shaped else ', not OpenAI-shaped'}"

    def post(body: bytes) -> tuple[str, str]:
        return openai_error(httpx.post(f"{url}/chat/completions", content=body, timeout=60))

    def half_open(opening: bytes) -> tuple[str, str]:
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(opening)
            try:
                while sock.recv(65536):
                    pass
            except TimeoutError:
                return "crashed", "still open after 30 s"
        return "refused", "closed by the server"

    def streamed():
        yield from (b" " * 2**20 for _ in range(MAX_BODY_BYTES // 2**20 + 2))

    message = b'"messages": [{"role": "user", "content": "hi"}]'
    bodies = {
        "nested JSON": b'{"model": "standin-echo", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "lone surrogate": b'{"model": "standin-echo", "messages": [{"role": "user", "content": "\\ud800"}]}',
        "not UTF-8": b'{"model": "standin-echo", "messages": [{"role": "user", "content": "\xff"}]}',
        "not JSON": b"{model", "not an object": b"[1, 2]", "no messages": b'{"model": "standin-echo"}',
        "wrong model": b'{"model": "gpt-9", ' + message + b"}",
        "stream": b'{"model": "standin-echo", "stream": true, ' + message + b"}",
        "n=2": b'{"model": "standin-echo", "n": 2, ' + message + b"}",
        "bad temperature": b'{"model": "standin-echo", "temperature": "hot", ' + message + b"}",
    }
    cases: list[Case] = [(name, lambda b=b: post(b)) for name, b in bodies.items()]
    cases += [(f"{method} {path}", lambda m=method, p=path: openai_error(httpx.request(m, root + p, timeout=30)))
              for method, path in [("GET", "/nowhere"), ("POST", "/v1/embeddings"), ("GET", "/v1/chat/completions"),
                                   ("DELETE", "/v1/models"), ("PUT", "/health")]]
    cases.append(("streamed 18 MB body", lambda: openai_error(httpx.post(f"{url}/chat/completions",
                                                                          content=streamed(), timeout=60))))
    declared = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n{"

    def declared_oversize() -> tuple[str, str]:
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(declared)
            head = sock.recv(65536)
        return ("refused" if head.startswith(b"HTTP/1.1 413") else "crashed"), head[:15].decode(errors="replace")

    cases.append(("declared 100 MB body", declared_oversize))
    for name, opening in [("silent connection", b""), ("half the headers", b"POST /v1/chat/completions HTTP/1.1\r\n"),
                          ("half the body", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 50"
                                            b"\r\n\r\n{")]:
        cases.append((name, lambda o=opening: half_open(o)))
    return cases


MODEL_OUTPUTS = {
    "lone surrogate": 'SELECT ?x WHERE { ?x ?p "\ud800" }', "surrogate only": "\udfff",
    "NUL characters": "SELECT\x00 * {}", "1 MB of text": "x " * 500_000,
    "an update": "INSERT DATA { <http://x/a> <http://x/b> 1 }", "SERVICE": "SELECT * { SERVICE <http://127.0.0.1:9/> {} }",
    "3,000 braces": "SELECT * WHERE " + "{" * 3000 + "}" * 3000, "no SPARQL at all": "I cannot answer that.",
    "code fence with junk": "```sparql\nSELECT ?x WHERE { ?x ?y\n```", "empty": "",
}


def model_output_cases(scratch: Path) -> list[Case]:
    from sparqlab.data.question import Question
    from sparqlab.kg import open_kg
    from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse
    from sparqlab.methods import get_method
    from sparqlab.runs import RunConfig, run

    class Scripted(ChatModel):
        name, is_standin = "standin-scripted", True

        def __init__(self, text: str):
            self.text = text

        async def acomplete(self, request: ChatRequest) -> ChatResponse:
            return ChatResponse(self.text)

    os.environ["SPARQLAB_RUNS"] = str(scratch / "runs")
    kg = open_kg("movies", cache=False)

    def attempt(name: str, text: str) -> tuple[str, str]:
        config = RunConfig(experiment=f"output-{abs(hash(name))}", kg="movies", model="standin-scripted",
                           progress=False, cache="off")
        questions = [Question("q1", "who directed Alien", gold_answers=["Ridley Scott"], kg="movies")]
        try:
            result = run(get_method("direct")(), questions, config, kg=kg, model=Scripted(text))
            again = run(get_method("direct")(), questions, config, kg=kg, model=Scripted(text))
        except Exception as error:  # noqa: BLE001 - a run that dies on model output is what this counts
            return "crashed", f"{type(error).__name__}: {str(error)[:80]}"
        category = result.predictions()["error_category"].iloc[0]
        if result.metrics["n_done"] != 1 or again.answered != 0:
            return "crashed", "the record was not written or not resumed"
        return ("refused" if isinstance(category, str) else "handled"), f"recorded as {category}"

    return [(name, lambda n=name, t=text: attempt(n, t)) for name, text in MODEL_OUTPUTS.items()]


QUESTION_FILES = {
    "gold dict": b'{"id": "1", "text": "q", "gold_answers": {"Alien": 1}}\n',
    "gold string": b'{"id": "1", "text": "q", "gold_answers": "Alien"}\n',
    "gold nested element": b'{"id": "1", "text": "q", "gold_answers": [["a"]]}\n',
    "gold null element": b'{"id": "1", "text": "q", "gold_answers": [null]}\n',
    "gold NaN": b'{"id": "1", "text": "q", "gold_answers": [NaN]}\n',
    "not UTF-8": b'{"id": "1", "text": "a\xffb"}\n', "lone surrogate": b'{"id": "1", "text": "\\ud800"}\n',
    "deep nesting": b'{"id": "1", "text": "q", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
    "torn last line": b'{"id": "1", "text": "q"}\n{"id": "2", "te', "bad middle line": b'{"id": "1"\n{"id": "2", "text": "q"}\n',
    "empty": b"", "not an object": b"[1, 2]\n", "missing text": b'{"id": "1"}\n',
    "text is a number": b'{"id": "1", "text": 5}\n', "bad answer form": b'{"id": "1", "text": "q", "answer_form": "x"}\n',
}
PREDICTION_FILES = {
    "answers as a string": {"id": "1", "predicted_answers": "Alien", "gold_answers": ["A", "l", "i", "e", "n"]},
    "gold as a dict": {"id": "1", "predicted_answers": ["a"], "gold_answers": {"a": 1}},
    "gold as a string": {"id": "1", "predicted_answers": ["a"], "gold_answers": "a"},
    "nested element": {"id": "1", "predicted_answers": [["a"]], "gold_answers": ["a"]},
    "null element": {"id": "1", "predicted_answers": [None], "gold_answers": ["a"]},
    "missing gold": {"id": "1", "predicted_answers": ["a"]},
}


def file_cases(scratch: Path) -> list[Case]:
    from sparqlab.cli.evaluate import evaluate_records, read_predictions
    from sparqlab.data.files import read_questions

    def clean(load: Callable[[], object]) -> tuple[str, str]:
        try:
            loaded = load()
        except ValueError as error:
            named = "line" in str(error) or "holds no" in str(error)
            return ("refused" if named else "crashed"), str(error)[:100]
        except Exception as error:  # noqa: BLE001
            return "crashed", f"{type(error).__name__}: {str(error)[:80]}"
        return "crashed", f"accepted: {loaded!r:.80}"

    cases: list[Case] = []
    for name, content in QUESTION_FILES.items():
        path = scratch / f"questions-{len(cases)}.jsonl"
        path.write_bytes(content)
        cases.append((f"questions: {name}", lambda p=path: clean(lambda: read_questions(p))))
    for name, record in PREDICTION_FILES.items():
        path = scratch / f"predictions-{len(cases)}.jsonl"
        path.write_text(json.dumps({"id": "0", "predicted_answers": ["a"], "gold_answers": ["a"]}) + "\n"
                        + json.dumps(record) + "\n", encoding="utf-8")
        cases.append((f"predictions: {name}", lambda p=path: clean(lambda: evaluate_records(read_predictions(p)))))
    return cases


def cache_cases(scratch: Path) -> list[Case]:
    from sparqlab.core.cache import CacheCorrupt, JsonCache

    def filled(name: str) -> Path:
        path = scratch / f"{name}.sqlite"
        cache = JsonCache(path)
        for i in range(400):
            cache.put("ns", f"k{i}", {"i": i, "pad": "x" * 500})
        cache._connect().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return path

    def damage(path: Path, how: str) -> None:
        data = bytearray(path.read_bytes())
        if how == "middle":
            data[len(data) // 2 - 20_000: len(data) // 2 + 20_000] = os.urandom(40_000)
        elif how == "whole":
            data = bytearray(os.urandom(len(data)))
        elif how == "truncated":
            data = data[: len(data) // 2]
        elif how == "header":
            data[:100] = os.urandom(100)
        path.write_bytes(bytes(data))
        if how == "value":
            with sqlite3.connect(path) as conn:
                conn.execute("UPDATE entries SET value = '{\"i\": ' WHERE key = 'k7'")

    def attempt(how: str, rebuild: bool) -> tuple[str, str]:
        path = filled(f"{how}-{rebuild}")
        damage(path, how)
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                cache = JsonCache(path, rebuild=rebuild)
                values = [cache.get("ns", f"k{i}") for i in range(400)]
        except CacheCorrupt as error:
            return ("refused" if str(path) in str(error) else "crashed"), str(error)[:90]
        except Exception as error:  # noqa: BLE001
            return "crashed", f"{type(error).__name__}: {str(error)[:80]}"
        if seen and str(path) in str(seen[0].message) and all(v is None for v in values):
            return "refused", "moved aside and rebuilt, with a warning naming the file"
        wrong = [i for i, v in enumerate(values) if v is not None and v.get("i") != i]
        return "crashed", f"read silently ({len(wrong)} wrong values)"

    return [(f"{how}, {'rebuild' if rebuild else 'stop'}", lambda h=how, r=rebuild: attempt(h, r))
            for how in ("middle", "whole", "truncated", "header", "value") for rebuild in (False, True)]


CLASSES = {"service": service_cases, "update": update_cases, "parser": parser_cases, "dos": dos_cases,
           "server": server_cases, "model_output": model_output_cases, "files": file_cases, "cache": cache_cases}


def work(name: str, start: int) -> None:
    """Child: run the class's cases from ``start``, one JSON line each as it finishes."""
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="sparqlab-adversarial-") as scratch:
        os.environ.setdefault("SPARQLAB_RUNS", str(Path(scratch) / "runs"))
        cases = CLASSES[name](Path(scratch))
        print(json.dumps({"total": len(cases)}), flush=True)
        for index, (case, attempt) in enumerate(cases[start:], start=start):
            print(json.dumps({"index": index, "case": case, "started": True}), flush=True)
            try:
                outcome, detail = attempt()
            except Exception as error:  # noqa: BLE001 - counted, never fatal to the benchmark
                outcome, detail = "crashed", f"{type(error).__name__}: {str(error)[:80]}"
            print(json.dumps({"index": index, "case": case, "outcome": outcome, "detail": detail}), flush=True)
    os._exit(0)  # skip slow interpreter teardown of servers and workers


def run_class(name: str) -> list[dict]:
    """Parent: run one class in children, counting a child's death as a crash of the case it was running."""
    results: list[dict] = []
    start, total = 0, None
    while total is None or start < total:
        child = subprocess.run([sys.executable, __file__, "--worker", name, "--start", str(start)],
                               capture_output=True, text=True, timeout=3600)
        running = None
        for line in child.stdout.splitlines():
            record = json.loads(line)
            if "total" in record:
                total = record["total"]
            elif "outcome" in record:
                results.append(record)
                running = None
            else:
                running = record
        if running is not None:  # the child died in the middle of this case
            results.append({**running, "outcome": "crashed", "detail": f"process died (exit {child.returncode})"})
            start = running["index"] + 1
        elif total is None:
            raise RuntimeError(f"class {name} could not start: {child.stderr[-800:]}")
        else:
            start = total
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--classes", default=",".join(CLASSES), help="comma-separated classes to run")
    parser.add_argument("--json", help="write every case's outcome to this file")
    parser.add_argument("--verbose", action="store_true", help="print every case")
    parser.add_argument("--probes", action="store_true", help="run the probes of issue 40 (machinery_probes.py)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probes:
        sys.path.insert(0, str(Path(__file__).parent))
        from machinery_probes import main as run_probes

        run_probes(["--json", args.json] if args.json else [])
        return
    if args.worker:
        work(args.worker, args.start)
        return
    report = {}
    print(f"{'class':<14}{'tried':>7}{'refused':>9}{'handled':>9}{'crashed':>9}")
    for name in args.classes.split(","):
        results = run_class(name)
        report[name] = results
        counts = {k: sum(r["outcome"] == k for r in results) for k in ("refused", "handled", "crashed")}
        print(f"{name:<14}{len(results):>7}{counts['refused']:>9}{counts['handled']:>9}{counts['crashed']:>9}",
              flush=True)
        for record in results:
            if args.verbose or record["outcome"] == "crashed":
                print(f"    {record['outcome']:<8} {record['case']}: {record['detail']}")
    every = [r for results in report.values() for r in results]
    print(f"{'all':<14}{len(every):>7}" + "".join(f"{sum(r['outcome'] == k for r in every):>9}"
                                                for k in ("refused", "handled", "crashed")))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
