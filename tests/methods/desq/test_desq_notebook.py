"""notebooks/07_uri_correction.ipynb executes headless (`sparqlab reproduce`) with tiny parameters."""

from support.notebooks import reproduce


def test_uri_correction_notebook_reproduces_headless(tmp_path):
    done = reproduce(tmp_path, "07_uri_correction", parameters={
        "limit": "4", "train_limit": "150", "embedder": "hashing", "memory_limit": "4000", "wikidata_limit": "2",
        "wikidata_sets": "['qald10']", "lcquad2_limit": "2", "lcquad2_train_limit": "20", "experiment": "desq-nb"})
    text = done.text("07_uri_correction")
    for strategy in ("oracle", "always-retrieve", "roundtrip-exact", "roundtrip-fuzzy", "score-threshold",
                     "combined"):
        assert strategy in text
    assert "qald10" in text and "empty-vs-empty pairs" in text and "corpus BLEU" in text
    assert "train raw / test ref" in text and "unknown_slots" in text and "mapping_em" in text
    for name in ("uri_strategies", "desq_table2", "desq_panels"):  # the strategy chart, Figures 2 and 3
        figures = list((tmp_path / "figures" / "desq-nb").glob(f"{name}--*limit-4*.png"))
        assert len(figures) == 1 and figures[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
