"""Prompts of the generic question → gold SPARQL training records (:func:`sparqlab.train.data.question_records`).

Written for the instruct models the papers fine-tune (Llama-3.2-3B-Instruct in GGC, Phi-4 / Qwen in DeSQ): a
system turn saying what to produce and how to format it, the KG's notes when a KG is given, and the question as
the user turn. The response is the gold query in a ```sparql block, the format
:func:`sparqlab.platform.parsing.extract_sparql` reads back at inference time.
"""

from __future__ import annotations

from sparqlab.platform import PromptTemplate

PROMPTS: dict[str, PromptTemplate] = {p.name: p for p in (
    PromptTemplate("question_system", (
        "You translate natural-language questions into SPARQL queries over the {kg_name} knowledge graph. "
        "Entity names the question mentions in [square brackets] are the topic entities. Write one complete, "
        "executable SPARQL 1.1 query that returns exactly the answers the question asks for, and reply with "
        "that query alone inside a ```sparql code block: no explanation before or after it."
        "{kg_notes}")),
    PromptTemplate("question_notes", "\n\nAbout this knowledge graph:\n{notes}"),
    PromptTemplate("question_user", "Question: {question}"),
    PromptTemplate("sparql_response", "```sparql\n{sparql}\n```"),
)}
"""Every prompt of the generic builder by name."""


def question_messages(question: str, kg_name: str, kg_notes: str = "") -> list[dict[str, str]]:
    """The system and user turns of a generic training record for ``question``: what a model fine-tuned on such
    records is asked at inference too (``sparqlab run direct -o prompt=trained``), since a tuned model answers
    the prompt it was trained on. ``kg_notes`` (e.g. :func:`sparqlab.kg.describe.kg_notes`) go into the system
    turn when not empty."""
    notes = PROMPTS["question_notes"].render(notes=kg_notes.strip()) if kg_notes.strip() else ""
    return [{"role": "system", "content": PROMPTS["question_system"].render(kg_name=kg_name, kg_notes=notes)},
            {"role": "user", "content": PROMPTS["question_user"].render(question=question)}]
