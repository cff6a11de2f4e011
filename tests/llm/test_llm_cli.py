"""`sparqlab models list`: registered stand-ins, or the models an endpoint serves."""

from sparqlab.cli import main


def test_models_list_names_the_registered_standins_with_their_summary(capsys):
    assert main(["models", "list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert {"standin-echo", "standin-latency", "standin-keyword-rules"} <= set(lines)
    assert "last user message" in lines["standin-echo"]


def test_models_list_of_an_endpoint(echo_server, capsys):
    assert main(["models", "list", "--url", echo_server]) == 0
    assert capsys.readouterr().out.split() == ["standin-echo"]


def test_models_list_of_a_dead_endpoint_fails_clearly(dead_url, capsys):
    assert main(["models", "list", "--url", dead_url]) == 1
    assert f"cannot reach the model endpoint {dead_url}" in capsys.readouterr().err


def test_models_without_an_action_prints_its_help(capsys):
    assert main(["models"]) == 2
    assert capsys.readouterr().out.startswith("usage: sparqlab models")
