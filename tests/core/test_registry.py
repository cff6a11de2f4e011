"""The one name table behind methods, stand-ins, datasets, KG profiles, searchers, tools and data builders."""

import pytest

from sparqlab.core.registry import Registry


def test_lookup_lists_names_suggests_and_refuses_a_second_item_under_a_taken_name():
    table = Registry("widget", group=None)
    table.register("blue", 1)
    table.register("green")(2)
    assert table.get("blue") == 1 and table["green"] == 2 and table.names() == ["blue", "green"]
    assert table.find("red") is None and "blue" in table and "red" not in table
    with pytest.raises(ValueError, match=r"unknown widget 'bleu' \(did you mean 'blue'\?\); known: blue, green"):
        table.get("bleu")
    table.register("blue", 1)  # the same item again: a module imported twice
    with pytest.raises(ValueError, match="a widget named 'blue' is already registered"):
        table.register("blue", 3)
    assert table.register("blue", 3, replace=True) == 3


def test_a_loader_runs_once_on_the_first_lookup_and_restored_undoes_registrations():
    calls = []
    table = Registry("profile", group=None)
    table.register_loader("derived", lambda: calls.append(1) or {"name": "derived"})
    assert table.names() == ["derived"] and not calls and table.loaded() == {}
    assert table.get("derived") is table.get("derived") and calls == [1]
    with table.restored():
        table.register("throwaway", {})
        assert "throwaway" in table
    assert table.names() == ["derived"]


def test_a_miss_loads_the_declared_plugins_of_the_tables_group():
    from sparqlab.kg.profiles import STORE_BUILDERS

    # the movie store builder is registered by sparqlab.graphs.movies, declared as a sparqlab.kgs entry point
    assert STORE_BUILDERS.known("movies") and STORE_BUILDERS.get("movies").__module__ == "sparqlab.graphs.movies"
