"""DeSQ's prompt table, written for instruction-tuned chat models served by vLLM (gpt-oss-120b, Llama-3.1-70B,
Llama-3.2-3B). Three steps use a model: verbalising a gold fragment into an atomic constraint (section 3.1, the
paper used gpt-oss-20b with low reasoning), decomposing a question into atomic constraints, and mapping the
constraints to fragments plus the URI grounding block (section 3.2). The paper fine-tunes the generator; here the
generator is prompted with the nearest training examples (and :func:`sparqlab.methods.desq.generation.finetune_records`
exports the same pairs as fine-tuning data).

``standin-desq`` reads the ``Question:`` lines and the first worked example of the ``decompose`` / ``map`` prompts.
"""

from __future__ import annotations

from sparqlab.platform.prompts import PromptTemplate, prompt_table

PROMPTS = prompt_table(
    PromptTemplate("verbalise", """\
You turn one piece of a SPARQL query into a short plain-English statement, an "atomic constraint".

The whole query answers this question: {question}
The piece to explain: {fragment}
Identifiers that appear in it:
{grounding}

Variables are written ?var1, ?var2 ...; identifiers are written uri1, uri2 ... and mean the entries listed above.
Describe what this piece requires in one sentence, using the labels of the identifiers instead of their names
(for the SELECT / ASK piece, say what the question wants returned). Reply with the sentence only."""),
    PromptTemplate("decompose", """\
You break a question about the {kg_name} knowledge graph into atomic constraints: one short statement per piece of \
the SPARQL query that would answer it — first what the question asks for, then one statement per relation the \
answer must satisfy (one fact of the graph each), then any filter, ordering or limit.

Worked examples:

{examples}

Now the new question. Reply with its numbered atomic constraints only, one per line, in the style of the examples.

Question: {question}
Atomic constraints:"""),
    PromptTemplate("decompose_example", "Question: {question}\nAtomic constraints:\n{constraints}"),
    PromptTemplate("map", """\
You translate atomic constraints of a question about the {kg_name} knowledge graph into SPARQL fragments, and \
ground every identifier they use.

Write each fragment with standard names: variables ?var1, ?var2 ... in order of first use, and uri1, uri2 ... \
for knowledge-graph identifiers (entities, relations, classes){prefix_note}. The first fragment is the query \
skeleton (e.g. SELECT DISTINCT ?var1 ?var2 WHERE {{}}); then one fragment per triple pattern or FILTER; then \
modifiers (ORDER BY, LIMIT ...). In "grounding", give for each uriN its identifier ("id"), its exact label in the \
graph ("label") and a short description ("description"); ids are opaque, so make the label and description \
precise: they are used to look the identifier up again.

Reply with one JSON object in this format and nothing else:
{format}

Worked examples:

{examples}

Question: {question}
Atomic constraints:
{constraints}
Output:"""),
    PromptTemplate("map_example", "Question: {question}\nAtomic constraints:\n{constraints}\nOutput: {output}"),
)
