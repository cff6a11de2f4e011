"""Foundation shared by every layer: paths, hashing, the file-backed cache, JSONL helpers."""
