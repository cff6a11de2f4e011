"""Helpers of the DeSQ tests: a small movie memory with the deterministic bag-of-words encoder (the strategy
logic is tested apart from embedding quality)."""

from __future__ import annotations

from sparqlab.methods.desq.kb_memory import Entry, KBMemory, hashed_bag_of_words

MOVIE_ENTRIES = [
    Entry("entity/Film/Wind", "Wind", "film (1992) directed by Carroll Ballard", "entity"),
    Entry("entity/Tag/Wind", "Wind", "tag on 3 films (Twister, Gone with the Wind)", "entity"),
    Entry("entity/Person/Ridley%20Scott", "Ridley Scott", "director of 12 films (Alien, Gladiator)", "entity"),
    Entry("entity/Person/Tony%20Scott", "Tony Scott", "director of 9 films (Top Gun, Man on Fire)", "entity"),
    Entry("entity/Genre/Drama", "Drama", "genre of 5000 films", "entity"),
    Entry("relation/directed_by", "directed_by", "a director of the film", "property"),
    Entry("relation/has_tags", "has_tags", "a user tag of the film (topics, people, moods)", "property"),
    Entry("class/Film", "Film", "a film (movie)", "class"),
]


def small_memory(entries: list[Entry]) -> KBMemory:
    return KBMemory(entries, hashed_bag_of_words([e.text for e in entries]), model="hashing",
                    embed=hashed_bag_of_words)
