"""docs/replies.md's table of what each call kind sends is the code's: regenerated here and compared, and one row
checked against what reaches a server."""

import re
from pathlib import Path

from sparqlab.methods import DirectSparql
from sparqlab.platform.sampling import sampling_table
from sparqlab.runs import RunConfig, run
from support.llama_like import LlamaLike, serve_llama_like

REPLIES = Path(__file__).parents[2] / "docs" / "replies.md"


def test_the_documented_table_is_the_one_the_code_makes():
    documented = re.search(r"<!-- sampling-table[^>]*-->\n(.*?)<!-- /sampling-table -->", REPLIES.read_text(),
                           re.DOTALL)
    assert documented, "docs/replies.md lost its sampling-table markers"
    assert documented.group(1) == sampling_table(), "regenerate it: python -m sparqlab.platform.sampling"


def test_a_row_of_the_table_is_what_the_wire_carries(tmp_path):
    row = next(line for line in sampling_table().splitlines() if line.startswith("| direct | `generate` |"))
    assert row == "| direct | `generate` | 0 (request default) | 1 (request default) | 2048 | none |"
    server = LlamaLike()
    with serve_llama_like(server) as url:
        run(DirectSparql(), config=RunConfig(kg="movies", dataset="metaqa-1hop", limit=1, model="smollm2-135m",
                                             model_url=url, output_root=str(tmp_path), cache="off", progress=False))
    sent = server.requests[0]
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"], "stop" in sent) == (0.0, 1.0, 2048, False)
