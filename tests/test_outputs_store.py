"""OutputStore: content addressing, streaming, names, reads, references, disk errors."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import textwrap
import threading
import tracemalloc
from pathlib import Path

import pytest

from palimpsest.config import OutputsSettings, Settings
from palimpsest.errors import DatabaseCorruptError, StorageError, UserError
from palimpsest.outputs.store import OutputStore, default_root
from readonly import read_only

SRC = Path(__file__).resolve().parents[1] / "src"
SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture
def store(tmp_path: Path) -> OutputStore:
    return OutputStore(tmp_path / "outputs", chunk_size=64)


def test_default_root_and_settings(isolated_home: Path, tmp_path: Path) -> None:
    assert default_root() == isolated_home / "outputs"
    assert OutputStore().root == isolated_home / "outputs"
    custom = Settings(outputs=OutputsSettings(path=str(tmp_path / "o")))
    assert OutputStore.from_settings(custom).root == tmp_path / "o"
    assert OutputStore.from_settings(custom.outputs).root == tmp_path / "o"


def test_a_store_that_was_only_read_creates_nothing(store: OutputStore) -> None:
    assert store.list() == [] and store.total_bytes() == 0
    assert store.resolve("a" * 64) is None and store.resolve("abcdef12") is None
    with pytest.raises(UserError, match="no saved output"):
        store.read_window("a" * 64)
    assert not store.root.exists()


def test_put_text_layout_fields_and_dedup(store: OutputStore) -> None:
    text = "line one\n" + f"token {SECRET}\n" * 20
    first = store.put_text(text, tool_name="terminal")
    stored = first.path.read_bytes()
    assert first.digest == hashlib.sha256(stored).hexdigest()
    assert first.path == store.root / "objects" / first.digest[:2] / f"{first.digest}.txt"
    assert SECRET.encode() not in stored and b"[REDACTED]" in stored
    assert (first.new, first.kind, first.tool_name) == (True, "text", "terminal")
    assert first.size_bytes == len(stored) and first.chars == len(stored.decode())
    again = store.put_text(text, tool_name="other")
    assert (again.new, again.digest, again.created, again.tool_name) == (
        False,
        first.digest,
        first.created,
        "terminal",
    )
    assert again.last_used >= first.last_used
    assert len(store.list()) == 1 and store.total_bytes() == len(stored)
    assert list((store.root / "tmp").iterdir()) == []


def test_every_put_goes_through_the_same_path(store: OutputStore, tmp_path: Path) -> None:
    data = ("caf\u00e9 " * 50 + "\n").encode() * 20
    source = tmp_path / "out.log"
    source.write_bytes(data)
    digests = {
        store.put_text(data.decode()).digest,
        store.put_bytes(data).digest,
        store.put_bytes(bytearray(data)).digest,
        store.put_stream(io.BytesIO(data)).digest,
        store.put_file(source).digest,
    }
    assert len(digests) == 1 and source.exists()
    moved = store.put_file(source, move=True)
    assert not source.exists() and moved.path.read_bytes() == data


def test_redact_false_keeps_the_secret(store: OutputStore) -> None:
    found = store.put_text(f"{SECRET}\n", redact=False)
    assert found.path.read_bytes() == f"{SECRET}\n".encode()


def test_binary_and_invalid_utf8(store: OutputStore) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4 + f"password={SECRET}".encode()
    image = store.put_bytes(png)
    assert image.path.suffix == ".bin" and image.kind == "PNG image" and image.chars is None
    assert image.path.read_bytes() == png  # raw, never redacted
    blob = store.put_bytes(b"\x00\x01\x02")
    assert blob.kind == "binary data"
    latin = store.put_bytes(b"caf\xe9 password=hunter22\n")
    assert latin.kind == "text (not valid UTF-8)" and latin.path.suffix == ".txt"
    assert (
        latin.path.read_bytes().startswith(b"caf\xe9 password=")
        and b"hunter22" not in latin.path.read_bytes()
    )
    with pytest.raises(UserError, match=r"PNG image \(1,0\d\d bytes\).*binary"):
        store.read_window(image.digest)
    with pytest.raises(UserError, match="binary"):
        store.grep(image.digest, "x")
    assert store.read_window(latin.digest).text.startswith("caf\ufffd ")


def test_put_stream_rejects_a_text_stream(store: OutputStore) -> None:
    with pytest.raises(TypeError, match="binary stream"):
        store.put_stream(io.StringIO("text"))  # type: ignore[arg-type]


def test_streaming_holds_only_a_chunk(tmp_path: Path) -> None:
    # 8 MB through 64 KiB chunks: peak Python allocation stays a few chunks, not the file.
    source = tmp_path / "big.log"
    line = b"0123456789 abcdefghij " * 4 + b"\n"
    with source.open("wb") as handle:
        for _ in range(8 * 1024 * 1024 // len(line)):
            handle.write(line)
    store = OutputStore(tmp_path / "outputs", chunk_size=64 * 1024)
    tracemalloc.start()
    try:
        found = store.put_file(source)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found.size_bytes == source.stat().st_size
    assert found.digest == hashlib.sha256(source.read_bytes()).hexdigest()
    assert peak < 2 * 1024 * 1024, f"peak {peak:,} bytes"


def test_eight_threads_store_the_same_output_once(store: OutputStore) -> None:
    text = "same output\n" * 500
    results: list[object] = []
    barrier = threading.Barrier(8)

    def put() -> None:
        barrier.wait()
        results.append(store.put_text(text, session_id="s1"))

    threads = [threading.Thread(target=put) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({r.digest for r in results}) == 1  # type: ignore[attr-defined]
    assert sum(r.new for r in results) == 1  # type: ignore[attr-defined]
    assert len(store.scan_objects()) == 1 and len(store.list()) == 1
    assert list((store.root / "tmp").iterdir()) == []


def test_processes_store_the_same_output_once(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from palimpsest.outputs.store import OutputStore
        found = OutputStore({str(tmp_path / "outputs")!r}).put_text("x" * 100_000)
        print(found.digest, int(found.new))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(6)
    ]
    outputs = [p.communicate(timeout=60)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len({o[0] for o in outputs}) == 1 and sum(int(o[1]) for o in outputs) == 1


def test_resolve_accepts_every_kind_of_name(store: OutputStore) -> None:
    found = store.put_text("hello\n")
    digest = found.digest
    for name in (digest, digest.upper(), digest[:8], found.path.name, str(found.path),
                 f"objects/{digest[:2]}/{digest}.txt", f" {digest[:12]} "):  # fmt: skip
        resolved = store.resolve(name)
        assert resolved is not None and resolved.digest == digest, name
    assert store.resolve(f"{digest}.bin") is None and store.resolve("hello") is None
    assert store.resolve("f" * 64) is None and store.resolve(digest + "0") is None
    assert store.resolve(str(store.root / "index.db")) is None
    with pytest.raises(UserError, match="at least 8"):
        store.resolve(digest[:7])


def test_an_ambiguous_prefix_lists_the_candidates(store: OutputStore) -> None:
    store.put_text("seed\n")
    bucket = store.root / "objects" / "ab"
    bucket.mkdir(parents=True, exist_ok=True)
    for tail in ("1", "2"):
        (bucket / f"{'abcdef12' + tail * 56}.txt").write_text(tail)
    with pytest.raises(UserError, match="ambiguous") as caught:
        store.resolve("abcdef12")
    assert "abcdef1211111111" in str(caught.value) and "abcdef1222222222" in str(caught.value)
    resolved = store.resolve("abcdef121")
    assert resolved is not None and resolved.kind == "text" and resolved.size_bytes == 1


def test_resolve_refuses_paths_outside_the_root(store: OutputStore, tmp_path: Path) -> None:
    found = store.put_text("inside\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("nope")
    for name in (str(outside), "../secret.txt", "objects/../../secret.txt", "/etc/passwd"):
        with pytest.raises(PermissionError):
            store.resolve(name)
    evil = store.root / "objects" / "00" / ("0" * 64 + ".txt")
    evil.parent.mkdir()
    evil.symlink_to(outside)
    with pytest.raises(PermissionError):
        store.resolve(str(evil))
    assert store.resolve("0" * 64) is None  # a planted symlink is not an object
    assert store.read_window(found.digest).text == "inside\n"


def test_read_window_and_grep_touch_the_object(store: OutputStore) -> None:
    cafe = "caf\u00e9"
    text = "".join(f"{i:03d} {cafe if i % 7 == 0 else 'tea'}\n" for i in range(200))
    found = store.put_text(text)
    store.touch(found.digest, now=1_000.0)  # last_used only moves forward
    row = store.resolve(found.digest)
    assert row is not None and row.last_used == found.last_used
    window = store.read_window(found.digest[:10], offset=5, limit=30)
    assert window.start == 5 and window.text == text.encode()[5 : window.end].decode()
    assert window.total_bytes == found.size_bytes and window.has_more
    matches = store.grep(found.digest, "caf\u00e9", max_matches=3)
    assert [m.line_number for m in matches] == [1, 8, 15]
    assert matches[1].line == "007 caf\u00e9"
    after = store.resolve(found.digest)
    assert after is not None and after.last_used >= found.last_used
    assert os.stat(found.path).st_mtime == pytest.approx(after.last_used, abs=1)


def test_references(store: OutputStore) -> None:
    a = store.put_text("a\n", session_id="s1", call_id="c1")
    b = store.put_text("b\n")
    store.add_ref(b.digest, "s1")
    store.add_ref(b.digest, "s2", "c9")
    assert [(r.session_id, r.call_id) for r in store.refs(a.digest)] == [("s1", "c1")]
    assert {(r.session_id, r.call_id) for r in store.refs(b.digest)} == {("s1", None), ("s2", "c9")}
    assert {o.digest for o in store.list("s1")} == {a.digest, b.digest}
    assert [o.digest for o in store.list("s2")] == [b.digest]
    assert [o.digest for o in store.list()] == [b.digest, a.digest]
    with pytest.raises(UserError, match="no saved output"):
        store.add_ref("c" * 64, "s1")


def test_a_read_only_store_raises_storage_error_and_loses_nothing(tmp_path: Path) -> None:
    store = OutputStore(tmp_path / "outputs")
    kept = store.put_text("first\n")
    with read_only(store.root, store.root / "tmp", store.root / "objects"):
        with pytest.raises(StorageError) as caught:
            store.put_text("second\n")
        assert "cannot save the tool output" in str(caught.value) and caught.value.path
        assert store.read_window(kept.digest).text == "first\n"  # reads still work
    assert list((store.root / "tmp").iterdir()) == []


def test_a_full_disk_raises_storage_error_and_leaves_no_temp(tmp_path: Path) -> None:
    # RLIMIT_FSIZE makes writes past 1 MB fail with EFBIG, as a full disk fails with ENOSPC.
    script = textwrap.dedent(
        f"""
        import resource, signal
        from palimpsest.errors import StorageError
        from palimpsest.outputs.store import OutputStore
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        store = OutputStore({str(tmp_path / "outputs")!r})
        store.put_text("small\\n")
        resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))
        try:
            store.put_bytes(b"y" * 3_000_000)
        except StorageError as exc:
            print("StorageError", exc.path)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("StorageError ") and "/tmp/put-" in done.stdout
    store = OutputStore(tmp_path / "outputs")
    assert list((store.root / "tmp").iterdir()) == [] and len(store.scan_objects()) == 1


def test_a_damaged_index_is_reported_and_rebuilt(store: OutputStore) -> None:
    text = store.put_text("caf\u00e9\n" * 10, tool_name="pytest", session_id="s1")
    blob = store.put_bytes(b"\x1f\x8b\x08\x00zzz")
    store.close()
    index = store.root / "index.db"
    for suffix in ("-wal", "-shm"):
        index.with_name(index.name + suffix).unlink(missing_ok=True)
    index.write_bytes(b"garbage" * 1000)
    damaged = OutputStore(store.root)
    with pytest.raises(DatabaseCorruptError, match="--rebuild-index"):
        damaged.list()
    assert damaged.rebuild_index() == 2
    rows = {o.digest: o for o in damaged.list()}
    assert rows[text.digest].kind == "text" and rows[text.digest].chars == 50
    assert rows[blob.digest].kind == "gzip archive"
    assert damaged.refs(text.digest) == []  # references of a damaged index are lost
    assert len(list(store.root.glob("index.db.damaged-*"))) == 1


def test_rebuilding_a_sound_index_keeps_facts_and_references(store: OutputStore) -> None:
    found = store.put_text("x\n", tool_name="pytest", session_id="s1")
    orphan = store.put_text("y\n")
    store.index.write(lambda con: store.index.delete(con, [orphan.digest]))
    assert store.rebuild_index() == 2
    rows = {o.digest: o for o in store.list()}
    assert rows[found.digest].tool_name == "pytest" and rows[found.digest].created == found.created
    assert [r.session_id for r in store.refs(found.digest)] == ["s1"]
    assert orphan.digest in rows and not list(store.root.glob("index.db.damaged-*"))
