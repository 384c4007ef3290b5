"""data.jsonl: the one reader and writer of JSONL run files."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from data.errors import InputError
from data.jsonl import JsonlWriter, read_jsonl, repair_tail, resume_ids, write_jsonl


def test_a_cut_off_last_line_is_skipped_on_read_and_dropped_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"id": "a"}\n\n{"id": "b"}\n{"id": "c", "sco')
    assert read_jsonl(path) == [{"id": "a"}, {"id": "b"}]
    with JsonlWriter(path) as writer:
        writer.write({"id": "d"})
    assert path.read_bytes() == b'{"id": "a"}\n\n{"id": "b"}\n{"id": "d"}\n'


def test_a_whole_last_record_without_its_newline_is_kept_and_ended(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "b"}')
    assert [record["id"] for record in read_jsonl(path)] == ["a", "b"]
    repair_tail(path)
    assert path.read_bytes() == b'{"id": "a"}\n{"id": "b"}\n'


def test_a_cut_off_multibyte_character_counts_as_a_cut_off_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    whole = json.dumps({"id": "é"}, ensure_ascii=False).encode()
    path.write_bytes(b'{"id": "a"}\n' + whole[:-3])
    assert read_jsonl(path) == [{"id": "a"}]
    repair_tail(path)
    assert path.read_bytes() == b'{"id": "a"}\n'


def test_a_tail_longer_than_one_read_block_is_repaired(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    long_line = json.dumps({"id": "b", "text": "x" * 200_000})
    path.write_text('{"id": "a"}\n' + long_line[:-10], encoding="utf-8")
    repair_tail(path)
    assert path.read_text(encoding="utf-8") == '{"id": "a"}\n'
    path.write_text(long_line[:-10], encoding="utf-8")  # no newline at all: the whole file is the cut-off line
    repair_tail(path)
    assert path.read_bytes() == b""


@pytest.mark.parametrize("middle", ['{"id": ', "[1, 2]", "not json"])
def test_a_bad_line_anywhere_but_last_is_an_error_naming_the_file_and_line(tmp_path: Path, middle: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(f'{{"id": "a"}}\n{middle}\n{{"id": "c"}}\n', encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path} line 2 is not JSON"):
        read_jsonl(path)
    path.write_text(f'{{"id": "a"}}\n{middle}\n', encoding="utf-8")  # ended by its newline: written whole, so corrupt
    with pytest.raises(InputError, match="line 2"):
        resume_ids(path)


def test_resume_ids_repairs_the_tail_and_keeps_the_first_record_per_id(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    assert resume_ids(path) == set() and not path.exists()
    path.write_bytes(b'{"id": "a", "n": 1}\n{"id": "b"}\n{"id": "a", "n": 2}\n{"id": "c", "lab')
    assert resume_ids(path) == {"a", "b"}
    assert read_jsonl(path) == [{"id": "a", "n": 1}, {"id": "b"}]


def test_write_jsonl_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("old\n", encoding="utf-8")
    write_jsonl(path, [{"id": "β"}, {"id": "b"}])
    assert path.read_text(encoding="utf-8") == '{"id": "β"}\n{"id": "b"}\n'
    assert not path.with_name("run.jsonl.partial").exists()


def test_each_record_is_on_disk_as_soon_as_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "run.jsonl"
    with JsonlWriter(path) as writer:
        writer.write({"id": "a"})
        assert read_jsonl(path) == [{"id": "a"}]  # flushed, while the writer is still open
        writer.sync()
    with pytest.raises(ValueError, match="closed"):
        writer.write({"id": "b"})
    with JsonlWriter(path, truncate=True) as writer:
        writer.write({"id": "c"})
    assert read_jsonl(path) == [{"id": "c"}]


def test_a_record_that_is_not_json_fails_before_touching_the_file(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with JsonlWriter(path) as writer:
        with pytest.raises(TypeError):
            writer.write({"id": object()})
        writer.write({"id": "a"})
    assert path.read_bytes() == b'{"id": "a"}\n'


def test_appends_from_many_threads_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    threads, per_thread, text = 8, 200, "x" * 5_000  # lines far over one write buffer

    with JsonlWriter(path) as writer:

        def append(thread: int) -> None:
            for index in range(per_thread):
                writer.write({"thread": thread, "index": index, "text": text})

        workers = [threading.Thread(target=append, args=(number,)) for number in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    records = read_jsonl(path)  # any interleaving would make some line fail to parse
    assert len(records) == threads * per_thread
    for thread in range(threads):
        assert [r["index"] for r in records if r["thread"] == thread] == list(range(per_thread))
    assert all(record["text"] == text for record in records)
