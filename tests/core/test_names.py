"""A KG or dataset given as a file, folder or URL is shown by a short name, never by an absolute path."""

from sparqlab.core.names import short_name


def test_short_names_of_names_files_folders_and_urls(tmp_path):
    folder = tmp_path / "music.v2"
    folder.mkdir()
    assert short_name("mcqa-movies") == "mcqa-movies"
    assert short_name("/data/music/test.jsonl") == "test"
    assert short_name(tmp_path / "music.ttl") == "music"
    assert short_name(str(folder) + "/") == "music.v2", "a folder keeps its whole name"
    assert short_name("http://gpu-node:7001/sparql") == "gpu-node"
    assert short_name("https://query.wikidata.org/sparql") == "query.wikidata.org"
    assert short_name(None) is None
