"""`make check-mutations` stays runnable: every listed mutation still finds its anchor (a named definition holding
the text exactly once) and names test files that exist, so a refactor that moves code breaks this fast test, not
the slow mutation run."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("check_mutations", ROOT / "scripts" / "check_mutations.py")
check_mutations = sys.modules.setdefault("check_mutations", importlib.util.module_from_spec(spec))
spec.loader.exec_module(check_mutations)


@pytest.mark.parametrize("mutation", check_mutations.MUTATIONS, ids=lambda m: m.name)
def test_mutation_applies_once_and_its_tests_exist(mutation):
    text = (ROOT / mutation.file).read_text(encoding="utf-8")
    mutated = mutation.apply(text)
    assert mutated != text
    for test in mutation.tests:
        assert (ROOT / test.partition("::")[0]).is_file(), test


def test_an_anchor_scoped_to_a_definition_ignores_the_same_text_elsewhere():
    source = "def a():\n    x = 1\n\n\ndef b():\n    x = 1\n"
    mutation = check_mutations.Mutation("m", "f.py::b", "x = 1", "x = 2", ())
    assert mutation.apply(source) == "def a():\n    x = 1\n\n\ndef b():\n    x = 2\n"
    with pytest.raises(ValueError, match="occurs 2 times"):
        check_mutations.Mutation("m", "f.py", "x = 1", "x = 2", ()).apply(source)
