"""``sparqlab desq ...``: DeSQ's KB memory, gold decompositions and EM of runs from the shell (``sparqlab eval structural``
lives with ``sparqlab eval`` and calls :func:`eval_structural`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser("desq", help="DeSQ: KB memory, gold decompositions",
                                   description="DeSQ (decomposition-based SPARQL generation) tools. Run the method "
                                               "itself with `sparqlab run desq -d DATASET -m MODEL -o strategy=NAME`.")
    commands = parser.add_subparsers(dest="desq_command", metavar="COMMAND")

    memory = commands.add_parser("memory", help="the KB memory (dense index over KG elements)")
    memory_commands = memory.add_subparsers(dest="memory_command", metavar="COMMAND")
    build = memory_commands.add_parser(
        "build", help="build (or load) and save a KB memory; prints entries, build time and index size")
    build.add_argument("--kg", default="movies",
                       help="KG whose entities, relations and classes are indexed: a name, RDF file or store folder")
    build.add_argument("--source", choices=["kg", "catalogue"], default="kg",
                       help="kg: the KG's own elements (read from it); catalogue: the KG profile's element "
                            "catalogue, for KGs too large to read (wikidata: data/wikidata_properties and the items "
                            "of data/wikidata_labels; freebase: "
                            "fb_roles relations and types plus the Freebase datasets' entities, data/freebase)")
    build.add_argument("--embedder", default="minilm",
                       help="minilm (offline all-MiniLM-L6-v2) or a sentence-transformers model name")
    build.add_argument("--entities", type=int, default=0,
                       help="at most N entries of the memory's most numerous kind (entities of a KG, Wikidata's "
                            "properties), in id order (0: all)")
    build.add_argument("--out", type=Path, default=None,
                       help="folder to save to (default: <cache>/desq-memory/<kg>[-catalogue]-<embedder>[-N]; a KG "
                            "given as a file or folder is named by its profile and content)")
    build.add_argument("--force", action="store_true", help="rebuild even if the folder holds a memory")
    build.set_defaults(handler=_memory_build)

    decompose = commands.add_parser(
        "decompose", help="print the gold decomposition of a query: fragments, placeholders, atomic constraints")
    decompose.add_argument("query", help="SPARQL text or a file holding it")
    decompose.add_argument("--kg", default="movies", help="KG the query is for (its id scheme and labels)")
    decompose.add_argument("--label-form", action="store_true",
                           help="keep label constraints (a KG whose gold queries use labels, such as the movie "
                                "KG) instead of resolving them to IRIs")
    decompose.set_defaults(handler=_decompose)

    em = commands.add_parser(
        "em", help="score runs' final queries with DeSQ's EM (RQ1: a direct run beside a DeSQ run)",
        description="Per run: the mean section-3.5 EM (triple order free, variables named by first appearance) and "
                    "the structural EM of each predicted query against the gold query, beside execution F1. No "
                    "query is executed.")
    em.add_argument("runs", nargs="+", help="run ids or run folders (`sparqlab runs list`)")
    em.set_defaults(handler=_em)
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)
    memory.set_defaults(handler=lambda args: memory.print_help() or 2)


def read_query(value: str | None, what: str) -> str:
    """A query given as text or as a path to a file holding it."""
    if not value:
        raise ValueError(f"{what} is missing")
    path = Path(value)
    try:
        if len(value) < 4096 and path.is_file():
            return path.read_text(encoding="utf-8")
    except OSError:
        pass
    return value


def eval_structural(gold: str | None, pred: str | None) -> int:
    """``sparqlab eval structural --gold Q1 --pred Q2``: prints ``match`` / ``no match``, returns 0 / 1."""
    from sparqlab.core.extras import require
    from sparqlab.eval.structural import structural_em

    require("desq", what="structural EM")

    matched = structural_em(read_query(pred, "--pred"), read_query(gold, "--gold"))
    print("match" if matched else "no match")
    return 0 if matched else 1


def _em(args: argparse.Namespace) -> int:
    import pandas as pd

    from sparqlab.methods.desq.metrics import query_em_table
    from sparqlab.runs.results import load_predictions

    table = query_em_table(pd.concat([load_predictions(run) for run in args.runs], ignore_index=True))
    print(table.to_string(float_format=lambda x: f"{x:.4f}"))
    return 0


def _memory_build(args: argparse.Namespace) -> int:
    import time

    from sparqlab.core.hashing import stable_hash
    from sparqlab.core.paths import cache_dir
    from sparqlab.kg import PROFILES, get_profile, open_kg
    from sparqlab.methods.desq.kb_memory import KBMemory, catalogue_entries, kg_entries, limit_entries, main_kind

    def entries():
        if args.source == "catalogue":
            return catalogue_entries(get_profile(args.kg))
        with open_kg(args.kg, cache=False) as kg:
            return kg_entries(kg)

    if PROFILES.known(args.kg):
        name = args.kg
    else:  # a file or folder: named by its profile and content, never by its path
        with open_kg(args.kg, cache=False) as kg:
            name = f"{kg.profile.name}-{stable_hash(kg.identity, 8)}"
    name += "-catalogue" if args.source == "catalogue" else ""
    folder = args.out or cache_dir() / "desq-memory" / "-".join(
        [name, args.embedder.replace("/", "_")] + ([str(args.entities)] if args.entities else []))
    start = time.perf_counter()
    if (folder / "memory.json").exists() and not args.force:
        memory, how = KBMemory.load(folder), "loaded"
    else:
        found = entries()
        memory, how = KBMemory.build(limit_entries(found, main_kind(found), args.entities), args.embedder), "built"
        memory.save(folder)
    kinds = {kind: stop - first for kind, (first, stop) in memory.blocks.items()}
    print(f"{how} {folder}")
    print(f"entries     {len(memory):,}  ({', '.join(f'{k} {n:,}' for k, n in kinds.items())})")
    print(f"embedder    {memory.model} ({memory.dimension} dimensions)")
    print(f"build time  {memory.info.get('build_s', '-')} s (this command: {time.perf_counter() - start:.1f} s)")
    print(f"index size  {memory.nbytes / 2**20:.1f} MiB")
    return 0


def _decompose(args: argparse.Namespace) -> int:
    from sparqlab.kg import open_kg
    from sparqlab.methods.desq.fragments import decompose, scheme_for
    from sparqlab.methods.desq.iri_form import iri_form
    from sparqlab.methods.desq.kb_memory import describer
    from sparqlab.methods.desq.verbalise import verbalise_with_templates

    sparql = read_query(args.query, "QUERY")
    with open_kg(args.kg, cache=False) as kg:
        if kg.profile.answer_key == "label" and not args.label_form:
            from sparqlab.data.movieqa import result_labels

            answers = result_labels(kg.query(sparql, timeout_s=120, max_rows=1_000_000))
            sparql = iri_form(sparql, answers, kg)
        decomposition = verbalise_with_templates(decompose(sparql, scheme_for(kg.profile), describer(None, kg)))
    print(f"query ({'label' if args.label_form else 'IRI'} form):\n  {sparql}\n\nfragments:")
    for number, fragment in enumerate(decomposition.fragments, start=1):
        print(f"  {number}. [{fragment.kind}] {fragment.text}\n     AC: {fragment.constraint}")
    print("\nplaceholders:")
    for slot in decomposition.slots:
        kind = decomposition.kinds.get(slot.placeholder, "")
        print(f"  {slot.placeholder}  {kind:8}  id={slot.id}  label={slot.label!r}  description={slot.description!r}")
    return 0
