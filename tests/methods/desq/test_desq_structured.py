"""The structured output's JSON format and the parser that reports what is malformed."""

import json

from sparqlab.methods.desq.fragments import Fragment, Slot
from sparqlab.methods.desq.structured import output_json, parse_output

GOOD = {
    "constraints": [{"constraint": "We need the films", "fragment": "SELECT DISTINCT ?var1 WHERE {}"},
                    {"constraint": "A film is directed by Ridley Scott", "fragment": "?var1  uri1 uri2"}],
    "grounding": [{"placeholder": "uri1", "id": "relation/directed_by", "label": "directed_by",
                   "description": "a director of the film"},
                  {"placeholder": "uri2", "id": "entity/Person/Ridley%20Scott", "label": "Ridley Scott",
                   "description": "a person"}],
}


def test_well_formed_output_round_trips():
    parsed = parse_output(json.dumps(GOOD))
    assert parsed.problems == []
    assert [(f.kind, f.text, f.constraint) for f in parsed.fragments] == [
        ("skeleton", "SELECT DISTINCT ?var1 WHERE {}", "We need the films"),
        ("triple", "?var1 uri1 uri2", "A film is directed by Ridley Scott")]
    assert parsed.slots[1] == Slot("uri2", "entity/Person/Ridley%20Scott", "Ridley Scott", "a person")
    again = parse_output(output_json(parsed.fragments, parsed.slots))
    assert again.fragments == parsed.fragments and again.slots == parsed.slots


def test_json_inside_prose_and_a_code_fence_with_trailing_commas():
    text = ("Sure! Here is the output:\n```json\n" + json.dumps(GOOD, indent=1).replace(
        '"a person"\n', '"a person",\n') + "\n```\nHope this helps {not json}")
    parsed = parse_output(text)
    assert len(parsed.fragments) == 2 and len(parsed.slots) == 2
    assert parsed.problems == []  # trailing commas are JSON5, read by the lenient reader


def test_braces_inside_strings_do_not_confuse_the_parser():
    output = {"constraints": [{"constraint": "skeleton {x}", "fragment": "SELECT ?var1 WHERE {}"}], "grounding": []}
    parsed = parse_output("prefix } text " + json.dumps(output))
    assert parsed.fragments == [Fragment("skeleton", "SELECT ?var1 WHERE {}", "skeleton {x}")]


def test_malformed_output_is_reported_not_raised():
    assert parse_output("").problems == ["empty output"]
    assert parse_output("I cannot answer that.").problems == [
        "no JSON object with 'constraints' or 'grounding' found"]
    broken = {"constraints": [{"constraint": "a"}, "oops", {"fragment": "?var1 uri1 uri3"}],
              "grounding": [{"placeholder": "uri1", "id": "P31", "label": "instance of"},
                            {"placeholder": "uri1", "id": "P279"}, {"id": "P17"},
                            {"placeholder": "uri9", "id": "P9", "label": "x", "description": "y"}]}
    parsed = parse_output(json.dumps(broken))
    assert [f.text for f in parsed.fragments] == ["?var1 uri1 uri3"]
    assert parsed.slots[0] == Slot("uri1", "P31", "instance of", "")
    assert set(parsed.problems) == {
        "constraint 1 has no 'fragment' string", "constraint 2 has no 'fragment' string",
        "constraint 3 has no atomic constraint text",
        "grounding entry 1 (uri1) has no 'description'", "placeholder uri1 is grounded twice (the first entry is kept)",
        "grounding entry 3 has no 'placeholder'", "placeholder uri3 is used in a fragment but not grounded",
        "placeholder uri9 is grounded but used in no fragment"}
    assert parse_output(json.dumps({"constraints": "none", "grounding": {}})).problems == [
        "'constraints' is missing or not a list", "'grounding' is missing or not a list"]
