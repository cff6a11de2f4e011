"""GGC prompt templates (kept as data): generator and corrector, for the label-based movie KG (the paper's MCQA
setting), for Wikidata (the paper's appendix B variant), for Freebase (the Wikidata variant with Freebase's
MID, dotted-relation and CVT conventions) and for DBpedia (its dbr:/dbo:/dbp: conventions).

Written for instruction-tuned chat models served by vLLM (gpt-oss-120b, Llama-3.1-70B, Llama-3.2-3B — the
paper fine-tunes the last one on exactly these instruction/response pairs, see :mod:`sparqlab.methods.ggc.data`). The
user turn starts with ``Question:`` and a generated query travels in a ```` ```sparql ```` block, which the
stand-ins read the way a model would.
"""

from __future__ import annotations

from sparqlab.platform.prompts import PromptTemplate, prompt_table

_LABEL_CONVENTIONS = """\
Everything is matched by its label. A name in square brackets, such as [Blade Runner], is a topic entity: match \
it with rdfs:label and the exact text inside the brackets. Relations are matched by label too: bind a variable \
with ?rel rdfs:label "relation_label" and use that variable as the predicate, for example
  ?film ?rel ?person . ?rel rdfs:label "directed_by" . ?person rdfs:label "Ridley Scott" .
Return the answer entities as ?uri together with their labels as ?label (SELECT DISTINCT ?label ?uri)."""

_WIKIDATA_CONVENTIONS = """\
A name in square brackets, such as [Douglas Adams], is a topic entity. Use the prefixes wd: \
<http://www.wikidata.org/entity/> and rdfs: <http://www.w3.org/2000/01/rdf-schema#> when you need them, match \
entities you are unsure of by their English rdfs:label, and use only identifiers you are certain of."""

_FREEBASE_CONVENTIONS = """\
A name in square brackets, such as [Jamaica], is a topic entity. Freebase entities are MIDs such as ns:m.03_r3 and \
relations are dotted ids such as ns:location.country.languages_spoken, with the prefix ns: \
<http://rdf.freebase.com/ns/>. Many facts pass through an unnamed mediator (CVT) node, reached by one relation and \
left by another. Match entities you are unsure of by their English ns:type.object.name, and return the answer \
entities (MIDs), not their names."""

_DBPEDIA_CONVENTIONS = """\
A name in square brackets, such as [Gustave Eiffel], is a topic entity. DBpedia resources are dbr: IRIs made from \
the Wikipedia title (dbr:Gustave_Eiffel), ontology properties and classes are dbo: (dbo:birthPlace, dbo:Person) \
and raw infobox properties dbp:, with the prefixes dbr: <http://dbpedia.org/resource/>, dbo: \
<http://dbpedia.org/ontology/> and dbp: <http://dbpedia.org/property/>. Match entities you are unsure of by their \
rdfs:label with a language tag, and return resource IRIs, not their names."""

_REPLY = "Reply with exactly one query inside a ```sparql fenced block and nothing else."

GENERATOR_USER = PromptTemplate("generator_user", "Question: {question}")

CORRECTOR_USER = PromptTemplate("corrector_user", """\
Question: {question}

Generated query:
```sparql
{sparql}
```{feedback}""")

CORRECTOR_FEEDBACK = PromptTemplate("corrector_feedback", "\n\nExecution feedback: {feedback}.")

_TAIL = """

About this knowledge graph:
{kg_notes}

""" + _REPLY


def _generator(variant: str, subject: str, conventions: str) -> PromptTemplate:
    """The generator's system prompt of one variant: task line, the KG's conventions, its notes, reply format."""
    return PromptTemplate(f"generator_{variant}", f"You translate questions{subject} into SPARQL 1.1 queries over "
                          f"the {{kg_name}} knowledge graph.\n\n{conventions}" + _TAIL)


def _corrector(variant: str, elements: str, conventions: str) -> PromptTemplate:
    """The corrector's system prompt of one variant (paper, section 3.5: keep what matches, change what does not)."""
    return PromptTemplate(f"corrector_{variant}", f"""\
You check and repair SPARQL 1.1 queries over the {{kg_name}} knowledge graph. You are only called when a gate \
has judged that a generated query probably answers its question wrongly.

Compare the query with the question: the topic entities, the {elements}, every constraint, which variable holds \
the answer and the query form. Change what does not match and keep every part that already does. If you find \
nothing you are confident about, return the generated query unchanged. Do not change what the question asks and \
do not add facts it does not state.

{conventions}""" + _TAIL)


PROMPTS = prompt_table(
    _generator("movies", " about films", _LABEL_CONVENTIONS),
    _generator("wikidata", "", _WIKIDATA_CONVENTIONS),
    _corrector("movies", "relations", _LABEL_CONVENTIONS),
    _corrector("wikidata", "properties", _WIKIDATA_CONVENTIONS),
    _generator("freebase", "", _FREEBASE_CONVENTIONS),
    _corrector("freebase", "relations", _FREEBASE_CONVENTIONS),
    _generator("dbpedia", "", _DBPEDIA_CONVENTIONS),
    _corrector("dbpedia", "properties", _DBPEDIA_CONVENTIONS),
    GENERATOR_USER,
    CORRECTOR_USER,
    CORRECTOR_FEEDBACK,
)
"""Every GGC prompt by name; ``generator_<variant>`` / ``corrector_<variant>`` are system prompts."""

VARIANTS = ("movies", "wikidata", "freebase", "dbpedia")


def generator_messages(question: str, kg_name: str, kg_notes: str, variant: str = "movies") -> list[dict]:
    """System + user turn asking for the initial query s(0) (paper, section 3.3)."""
    system = PROMPTS[f"generator_{variant}"].render(kg_name=kg_name, kg_notes=kg_notes)
    return [{"role": "system", "content": system},
            {"role": "user", "content": GENERATOR_USER.render(question=question)}]


def corrector_messages(question: str, sparql: str, kg_name: str, kg_notes: str, variant: str = "movies",
                       feedback: str | None = None) -> list[dict]:
    """System + user turn asking for s(c) = C(q, s(0)) (paper, section 3.5); ``feedback`` is the KG execution
    feedback line (:meth:`sparqlab.methods.ggc.feedback.KGFeedback.describe`) or ``None``."""
    system = PROMPTS[f"corrector_{variant}"].render(kg_name=kg_name, kg_notes=kg_notes)
    extra = CORRECTOR_FEEDBACK.render(feedback=feedback) if feedback else ""
    return [{"role": "system", "content": system},
            {"role": "user", "content": CORRECTOR_USER.render(question=question, sparql=sparql.strip(),
                                                             feedback=extra)}]
