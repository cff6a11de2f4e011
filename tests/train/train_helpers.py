"""Shared data of the train tests: a learnable toy task and the settings of a short LoRA run. (A named module, not
``conftest``: test folders share the name ``conftest``, so importing from it picks whichever folder's came first.)"""

from __future__ import annotations

NAMES = ["Tom Hanks", "Meryl Streep", "Ridley Scott", "Greta Gerwig", "Bong Joon-ho", "Agnes Varda",
         "Akira Kurosawa", "Sofia Coppola"]
RELATIONS = {"star in": "starred_actors", "direct": "directed_by", "write": "written_by"}


def toy_records() -> list[dict]:
    """A learnable toy task: the response repeats the bracketed name and maps the verb to a relation."""
    records = []
    for name in NAMES:
        for verb, relation in RELATIONS.items():
            records.append({"id": f"{relation}-{name}", "messages": [
                {"role": "system", "content": "You translate questions into SPARQL."},
                {"role": "user", "content": f"Question: Which films did [{name}] {verb}?"},
                {"role": "assistant", "content": f'SELECT ?f WHERE {{ ?f :{relation} "{name}" }}'}]})
    return records


def sft_config(base, data, out, **changes):
    from sparqlab.train.sft import SFTConfig

    settings = {"max_steps": 8, "batch_size": 8, "grad_accum": 1, "learning_rate": 1e-2, "eval_fraction": 0.25,
                "eval_steps": 4, "save_steps": 4, "lora_r": 8, "lora_alpha": 16, "threads": 1, "progress": False,
                "seed": 0}
    return SFTConfig(base=str(base), data=str(data), out=str(out), **{**settings, **changes})
