"""One process opens the embedded store at a time; the others ask it. Damage is found, named and mended.

These run the real `companion` command in subprocesses (a real Chroma store, the hashing embedder), as a user
would: recalls started at random moments of cold builds and watch runs, damaged stores, a server that never answers.
"""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from companion.embedding.hashing import HashEmbedder
from companion.locations import vault_data_dir
from companion.workspace import Workspace
from indexer.store import EXACT_MAX, damaged_files
from tests.helpers.cli import run_companion

WORDS = [
    "kitchen",
    "boiler",
    "permit",
    "budget",
    "chalet",
    "ski",
    "trip",
    "garden",
    "piano",
    "tax",
    "return",
    "jazz",
    "bass",
    "alpine",
    "lake",
    "harbour",
    "orchard",
    "lantern",
    "ferry",
    "meadow",
    "canyon",
    "glacier",
    "violin",
    "pottery",
]


def _write_vault(root: Path, notes: int) -> Path:
    """A vault of `notes` notes of two chunks each (more than Chroma keeps unsaved, so its index files exist)."""
    rnd = random.Random(7)
    (root / ".companion").mkdir(parents=True)
    (root / ".companion" / "companion.yaml").write_text("embedding:\n  provider: hash\n", encoding="utf-8")
    folder = root / "Notes"
    folder.mkdir()
    for i in range(notes):
        parts = ["\n\n".join(" ".join(rnd.choice(WORDS) for _ in range(70)) for _ in range(2))]
        (folder / f"note {i:04d}.md").write_text(
            f"---\ntype: fact\n---\n# Topic {i}\n\n{parts[0]}\n\n## More\n\n{parts[0][::-1]}\n", encoding="utf-8"
        )
    return root


@pytest.fixture(scope="module")
def big_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_vault(tmp_path_factory.mktemp("sharing") / "vault", 700)


def _popen(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "companion", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _snapshot(vault: Path, data: Path) -> tuple[dict[str, str], dict[str, bytes]]:
    """The manifest's chunks (id -> text hash) and every stored vector, read in this process."""
    ws = Workspace.open(vault, data_dir=data)  # the vault's own config names the hashing embedder
    try:
        chunks = {c.id: c.text_hash for n in ws.manifest.notes() for c in ws.manifest.chunks(n.path)}
        store = ws.store()
        ids = sorted(store.ids())
        vectors = {k: np.round(v, 5).tobytes() for k, v in store.embeddings(ids).items()}
        assert len(vectors) == len(ids), "some vectors are listed but unreadable"
        return chunks, vectors
    finally:
        ws.close()


@pytest.fixture(scope="module")
def clean_build(big_vault: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, bytes]]:
    data = tmp_path_factory.mktemp("clean")
    done = run_companion("index", "--vault", str(big_vault), "--data-dir", str(data))
    assert done.returncode == 0, done.stderr
    return _snapshot(big_vault, data)


def _recalls_during(writer: subprocess.Popen[str], vault: Path, data: Path, count: int, span: float) -> list[str]:
    """Start `count` recalls at random moments over `span` seconds while `writer` runs; their failures."""
    rnd = random.Random()
    moments = sorted(rnd.uniform(0.0, span) for _ in range(count))
    started = time.monotonic()
    readers: list[subprocess.Popen[str]] = []
    for moment in moments:
        time.sleep(max(0.0, started + moment - time.monotonic()))
        query = " ".join(rnd.sample(WORDS, 2))
        readers.append(_popen("recall", query, "--vault", str(vault), "--data-dir", str(data), "--k", "3", "--json"))
    failures = []
    for reader in readers:
        out, err = reader.communicate(timeout=180)
        if reader.returncode != 0:
            failures.append(f"exit {reader.returncode}: {err[-500:]}")
        elif "results" not in json.loads(out):
            failures.append(out[-300:])
    return failures


def test_recalls_beside_cold_builds_and_watchers_leave_the_store_whole(
    big_vault: Path, clean_build: tuple[dict[str, str], dict[str, bytes]], tmp_path: Path
) -> None:
    for round_ in range(2):
        data = tmp_path / f"data-{round_}"
        build = _popen("index", "--vault", str(big_vault), "--data-dir", str(data))
        failures = _recalls_during(build, big_vault, data, 10, 3.0)
        _out, err = build.communicate(timeout=300)
        assert build.returncode == 0, err
        assert failures == []
        assert _snapshot(big_vault, data) == clean_build

        watch_data = tmp_path / f"watch-{round_}"
        watch = _popen("index", "--watch", "--vault", str(big_vault), "--data-dir", str(watch_data))
        try:
            assert _recalls_during(watch, big_vault, watch_data, 10, 3.0) == []
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # the watcher finishes its catch-up, then idles
                doctor = run_companion("doctor", "--json", "--vault", str(big_vault), "--data-dir", str(watch_data))
                report = json.loads(doctor.stdout)
                if report["index"]["notes"] == 700 and report["index"]["pending"] == 0:
                    break
                time.sleep(0.5)
            assert report["store"]["unreadable"] == 0 and report["healthy"], report["errors"]
            assert report["store"]["checked_by"] == "the process writing the index"
        finally:
            watch.terminate()
            watch.communicate(timeout=60)
        assert _snapshot(big_vault, watch_data) == clean_build


def test_a_reader_that_holds_the_store_hands_it_over_to_an_indexer(big_vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run_companion("index", "--vault", str(big_vault), "--data-dir", str(data)).returncode == 0
    ws = Workspace.open(big_vault, data_dir=data)
    try:
        vector = ws.embedder().embed(["ski trip"])[0]
        before = ws.store().nearest(vector, 5)
        assert ws.owner.owned  # nobody else held it: this process opened the store
        (big_vault / "Notes" / "added.md").write_text("a new note about the ferry harbour\n", encoding="utf-8")
        try:
            done = run_companion("index", "--vault", str(big_vault), "--data-dir", str(data), timeout=120)
            assert done.returncode == 0, done.stderr
        finally:
            (big_vault / "Notes" / "added.md").unlink()
        assert not ws.owner.owned  # it handed the store over when asked
        assert ws.store().nearest(vector, 5) == before  # and reads it again, opened anew
        assert ws.manifest.note("Notes/added.md") is not None  # written by the indexer meanwhile
        assert ws.store().count() == ws.manifest.counts()[1]
    finally:
        ws.close()


def test_the_same_question_gets_the_same_neighbours_in_every_process(big_vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run_companion("index", "--vault", str(big_vault), "--data-dir", str(data)).returncode == 0
    script = (
        "import sys, json\n"
        "from companion.workspace import Workspace\n"
        "ws = Workspace.open(sys.argv[1], data_dir=sys.argv[2])\n"
        "e = ws.embedder(); s = ws.store()\n"
        "print(json.dumps([[i for i, _ in s.nearest(e.embed([q])[0], 50)] for q in sys.argv[3:]]))\n"
        "ws.close()\n"
    )
    queries = ["kitchen boiler permit", "ski trip chalet", "jazz bass piano", "glacier", "tax return budget lake"]
    answers = {
        subprocess.run(
            [sys.executable, "-c", script, str(big_vault), str(data), *queries],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        for _ in range(3)
    }
    assert len(answers) == 1
    # And the answer is the exact one: every stored vector against the query.
    ws = Workspace.open(big_vault, data_dir=data)
    try:
        store, embedder = ws.store(), ws.embedder()
        assert store.count() <= EXACT_MAX
        ids = sorted(store.ids())
        got = store.embeddings(ids)
        matrix = np.stack([got[i] / np.linalg.norm(got[i]) for i in ids])
        vector = embedder.embed([queries[0]])[0]
        sims = matrix @ (vector / np.linalg.norm(vector))
        exact = [ids[i] for i in np.argsort(-sims)[:20]]
        assert json.loads(answers.pop())[0][:20] == exact
    finally:
        ws.close()


DAMAGE = {
    "folder deleted": "missing",
    "header truncated": "damaged",
    "vectors truncated": "damaged",
    "id map truncated": "damaged",
    "access garbled": "access statistics",
}
"""Each way of damaging a store, and what doctor must say about it."""


def _damage(name: str, chroma: Path, access: Path) -> None:
    segment = next(p for p in chroma.iterdir() if (p / "header.bin").exists())
    if name == "folder deleted":
        import shutil

        shutil.rmtree(chroma)
    elif name == "header truncated":
        (segment / "header.bin").write_bytes((segment / "header.bin").read_bytes()[:40])
    elif name == "vectors truncated":
        data = segment / "data_level0.bin"
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 3])
    elif name == "id map truncated":
        ids = segment / "index_metadata.pickle"
        ids.write_bytes(ids.read_bytes()[: ids.stat().st_size // 3])
    elif name == "access garbled":
        access.write_bytes(b"this is not a database" * 200)


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_doctor_names_the_damage_and_index_repairs_it(
    case: str, big_vault: Path, clean_build: tuple[dict[str, str], dict[str, bytes]], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    assert run_companion("index", "--vault", str(big_vault), "--data-dir", str(data)).returncode == 0
    assert run_companion("recall", "ski", "--vault", str(big_vault), "--data-dir", str(data)).returncode == 0
    root = vault_data_dir(big_vault, str(data))
    chroma, access = root / "chroma", root / "access.sqlite"
    assert access.exists()
    _damage(case, chroma, access)
    expected = DAMAGE[case]

    doctor = run_companion("doctor", "--vault", str(big_vault), "--data-dir", str(data), timeout=120)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr  # never a native abort (134), never "healthy"
    assert "NOT healthy" in doctor.stdout and expected in doctor.stdout
    assert "run `companion index`" in doctor.stdout
    if case != "access garbled":
        recall = run_companion("recall", "ski", "--no-sync", "--vault", str(big_vault), "--data-dir", str(data))
        assert recall.returncode != 0 or "words only" in recall.stdout  # never silently words only
        assert recall.returncode in (0, 4), recall.stderr

    repair = run_companion("index", "--vault", str(big_vault), "--data-dir", str(data), timeout=300)
    assert repair.returncode == 0, repair.stderr
    assert "repaired" in repair.stdout
    after = run_companion("doctor", "--vault", str(big_vault), "--data-dir", str(data), timeout=120)
    assert after.returncode == 0, after.stdout
    assert damaged_files(chroma) == []
    assert _snapshot(big_vault, data) == clean_build


def test_unreadable_vectors_found_by_doctor_are_embedded_again(big_vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run_companion("index", "--vault", str(big_vault), "--data-dir", str(data)).returncode == 0
    ws = Workspace.open(big_vault, data_dir=data)
    try:
        victims = sorted(ws.manifest.chunk_ids())[:3]
        with ws.writing():
            ws.store().delete(victims)  # as a damaged store loses them: listed by the manifest, gone from Chroma
    finally:
        ws.close()
    doctor = run_companion("doctor", "--json", "--vault", str(big_vault), "--data-dir", str(data))
    report = json.loads(doctor.stdout)
    assert report["store"]["missing"] == 3 and not report["healthy"]
    repair = run_companion("index", "--json", "--vault", str(big_vault), "--data-dir", str(data))
    line = json.loads(repair.stdout.splitlines()[0])
    assert line["chunks_embedded"] == 3 and line["repaired"]
    assert run_companion("doctor", "--vault", str(big_vault), "--data-dir", str(data)).returncode == 0


def test_a_chroma_server_that_never_answers_fails_with_its_url(tmp_path: Path) -> None:
    vault = _write_vault(tmp_path / "vault", 3)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # accepts connections (the kernel's backlog) and never answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        for command in (["recall", "ski"], ["index"]):
            done = run_companion(*command, "--vault", str(vault), "--chroma-url", url, timeout=120)
            assert done.returncode == 4, done.stderr
            assert url in done.stderr and "did not answer" in done.stderr
            assert "Traceback" not in done.stderr


def test_a_refused_chroma_server_is_one_plain_sentence(tmp_path: Path) -> None:
    vault = _write_vault(tmp_path / "vault", 3)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"  # bound, never listening: connections are refused
        done = run_companion("recall", "ski", "--vault", str(vault), "--chroma-url", url, timeout=120)
    assert done.returncode == 4, done.stderr
    assert url in done.stderr and "?." not in done.stderr and ".." not in done.stderr
    assert done.stderr.count("running") == 1


def test_index_lists_the_vaults_problems_as_doctor_does(tmp_path: Path) -> None:
    vault = _write_vault(tmp_path / "vault", 2)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "elsewhere.md").write_text("not the vault's\n", encoding="utf-8")
    (vault / "escape").symlink_to(outside)
    (vault / "Notes" / "loop").symlink_to(vault / "Notes")
    data = tmp_path / "data"
    text = run_companion("index", "--vault", str(vault), "--data-dir", str(data))
    assert text.returncode == 0, text.stderr
    assert "problem escape: symbolic link to outside the vault" in text.stdout
    assert "problem Notes/loop: symbolic link to a folder already in the vault" in text.stdout
    as_json = run_companion("index", "--json", "--vault", str(vault), "--data-dir", str(data))
    problems = {p["path"] for p in json.loads(as_json.stdout.splitlines()[0])["problems"]}
    assert problems == {"escape", "Notes/loop"}


def test_a_rebuild_after_a_model_change_starts_afresh(tmp_path: Path) -> None:
    vault = _write_vault(tmp_path / "vault", 5)
    data = tmp_path / "data"
    assert run_companion("index", "--vault", str(vault), "--data-dir", str(data)).returncode == 0
    ws = Workspace.open(vault, data_dir=data)
    ws.embedder_override = HashEmbedder(32)  # another model than the one the store was built with
    try:
        with pytest.raises(Exception, match="built with the model"):
            ws.store().count()
        with ws.writing():
            report = ws.indexer(rebuild=True).sync()
        assert report.chunks_embedded == ws.manifest.counts()[1] > 0
        assert ws.store().count() == report.chunks_embedded
    finally:
        ws.close()


def test_a_holder_that_does_not_answer_leaves_recall_to_words_and_says_so(tmp_path: Path) -> None:
    from indexer.lock import WriterLock

    vault = _write_vault(tmp_path / "vault", 20)
    data = tmp_path / "data"
    assert run_companion("index", "--vault", str(vault), "--data-dir", str(data)).returncode == 0
    silent = WriterLock(vault_data_dir(vault, str(data)), purpose="a process that serves nothing", long_lived=True)
    with silent:  # holds the index, never listens
        done = run_companion("recall", "ski trip", "--json", "--vault", str(vault), "--data-dir", str(data))
        doctor = run_companion("doctor", "--vault", str(vault), "--data-dir", str(data))
        index = run_companion("index", "--vault", str(vault), "--data-dir", str(data))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert "words only" in answer["notice"] and answer["results"]
    assert all(r["explanation"]["dense"] == 0 for r in answer["results"])
    assert doctor.returncode == 1 and "does not answer" in doctor.stdout
    assert index.returncode == 5 and "a process that serves nothing" in index.stderr


@pytest.mark.parametrize("url", ["notaurl", "http://127.0.0.1:99999", "ftp://127.0.0.1:8000"])
def test_a_chroma_url_that_is_no_address_is_a_bad_argument(url: str, tmp_path: Path) -> None:
    vault = _write_vault(tmp_path / "vault", 2)
    done = run_companion("recall", "ski", "--vault", str(vault), "--chroma-url", url, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "is not a Chroma server's address" in done.stderr and "Traceback" not in done.stderr


def test_a_manifest_damaged_inside_is_named_with_its_repair(tmp_path: Path) -> None:
    vault = _write_vault(tmp_path / "vault", 120)
    data = tmp_path / "data"
    assert run_companion("index", "--vault", str(vault), "--data-dir", str(data)).returncode == 0
    manifest = vault_data_dir(vault, str(data)) / "manifest.sqlite"
    with manifest.open("r+b") as handle:  # a page garbled in the middle: the header still says SQLite
        handle.seek(8192)
        handle.write(b"\xde\xad" * 4096)
    doctor = run_companion("doctor", "--json", "--vault", str(vault), "--data-dir", str(data))
    report = json.loads(doctor.stdout)
    assert doctor.returncode == 1 and not report["healthy"]
    assert "index --rebuild" in report["errors"][0]
    recall = run_companion("recall", "ski", "--json", "--vault", str(vault), "--data-dir", str(data))
    assert recall.returncode == 4 and "Traceback" not in recall.stderr
    assert "index --rebuild" in json.loads(recall.stdout)["error"]
    assert run_companion("index", "--rebuild", "--vault", str(vault), "--data-dir", str(data)).returncode == 0
    assert run_companion("doctor", "--vault", str(vault), "--data-dir", str(data)).returncode == 0


def test_doctor_names_a_writer_only_while_it_holds_the_lock(tmp_path: Path) -> None:
    vault = _write_vault(tmp_path / "vault", 2)
    data = tmp_path / "data"
    assert run_companion("index", "--vault", str(vault), "--data-dir", str(data)).returncode == 0
    lock = vault_data_dir(vault, str(data)) / "writer.lock"
    # What a process killed before it could clear the file leaves: its words, without its lock.
    lock.write_text(json.dumps({"pid": 999999, "purpose": "companion mcp --transport http", "since": 0}))
    report = json.loads(run_companion("doctor", "--json", "--vault", str(vault), "--data-dir", str(data)).stdout)
    assert report["writer"] is None and report["healthy"]
