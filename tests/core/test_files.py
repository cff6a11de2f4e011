"""Writing files safely (sparqlab.core.files): an output is replaced whole or not at all, a full disk names the
file, and nothing is written through a link."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from sparqlab.core.files import LinkRefused, atomic_write, open_appending, refuse_links


def test_a_write_cut_by_a_full_disk_keeps_the_old_file_and_names_the_new_one(tmp_path):
    """RLIMIT_FSIZE makes every write past 64 KiB fail with EFBIG, as a full disk fails it (Python ignores the
    SIGXFSZ signal); the report that was there stays whole and no scratch file is left."""
    target = tmp_path / "report.html"
    target.write_text("<html>the old report</html>")
    code = textwrap.dedent(f"""
        import resource
        from sparqlab.core.files import atomic_write
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
        try:
            atomic_write({str(target)!r}, "x" * 200_000)
        except Exception as error:
            print(type(error).__name__, error)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith(f"StorageFull cannot write {target}: File too large"), done.stdout + done.stderr
    assert target.read_text() == "<html>the old report</html>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"], "no scratch file is left"


def test_an_atomic_write_replaces_a_link_instead_of_writing_where_it_points(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    link = tmp_path / "folder" / "figure.json"
    link.parent.mkdir()
    link.symlink_to(outside)
    atomic_write(link, '{"new": true}')
    assert outside.read_text() == "precious" and not link.is_symlink() and link.read_text() == '{"new": true}'
    assert oct(link.stat().st_mode & 0o777) == "0o644", "readable by the other users of a shared folder"


def test_appends_and_folders_refuse_links(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "predictions.jsonl").symlink_to(outside)
    with pytest.raises(LinkRefused, match=f"{folder / 'predictions.jsonl'} is a symbolic link \\(to {outside}\\)"):
        open_appending(folder / "predictions.jsonl")
    with pytest.raises(LinkRefused, match="predictions.jsonl is a symbolic link"):
        refuse_links(folder)
    (tmp_path / "linked-run").symlink_to(folder)
    with pytest.raises(LinkRefused, match="linked-run is a symbolic link"):
        refuse_links(tmp_path / "linked-run")
    assert outside.read_text() == "precious"
    with open_appending(folder / "traces.jsonl") as handle:  # a plain file is created and appended to
        handle.write("line\n")
    assert (folder / "traces.jsonl").read_text() == "line\n"
