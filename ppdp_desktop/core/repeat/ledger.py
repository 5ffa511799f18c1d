"""The release ledger: every release of every project published on this computer, in one SQLite file.

One row per release (table ``releases``): when (UTC, ISO 8601), the project, the method and its parameters (JSON),
the ordinal (the n-th release of the project), the folder (absolute path of the release folder or ``.zip``), the
manifest (SHA-256 of its ``SHA256SUMS``, hex), the signer's fingerprint, whether its randomness was persistent and
its pseudonyms stable, the cumulative guarantee (JSON), the project's budget and the reason given to exceed it, the
generalization node, its status (``pending`` or ``published``) and the id of the process that wrote it. The
release's records (:class:`ReleaseRecords`: keyed digests and what was spent, never a value) are four blobs in table
``records``, keyed by the release's id.

**Written around the atomic publish.** :meth:`Ledger.begin` commits a ``pending`` row with its records just before
the release is renamed into place (:func:`ppdp_desktop.core.release.pipeline.publish_release`), and
:meth:`Ledger.mark_published` switches it to ``published`` right after. Each commit is durable when it returns
(write-ahead log, ``synchronous=FULL``). Whenever the ledger is opened, a pending row is *settled*:

* published, if its folder exists and its ``SHA256SUMS`` (in a ``.zip``: the member) hashes to the stored manifest:
  the rename happened, the release is out;
* deleted with its records, if not, once the process that wrote it is gone (a killed run); a row of a process
  still running is left alone: its publish is under way.

So after a kill -9 at any instant, the release and its ledger row exist together or not at all. Only published
rows are listed (:meth:`Ledger.releases`) and counted (:meth:`Ledger.previous_records`).

A ledger that cannot be read (damaged, written by a newer version, locked too long) is a :class:`ReleaseError`
naming the file and what to do. What a row holds, and how a pending one is judged: :mod:`.ledger_rows`.
"""
from __future__ import annotations

import contextlib
import math
import os
import re
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ppdp_desktop.core.data.bounded_json import parse_json
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.repeat.appdata import DATA_VARIABLE, ledger_path, private_folder
from ppdp_desktop.core.repeat.ledger_rows import LedgerEntry, LedgerRelease, dumps, manifest_of, writer_alive
from ppdp_desktop.core.repeat.records import ReleaseRecords

__all__ = ["SCHEMA_VERSION", "Ledger", "LedgerEntry", "LedgerRelease", "manifest_of"]

SCHEMA_VERSION = 1
PENDING, PUBLISHED = "pending", "published"
#: seconds a writer waits for another process's write to finish before the ledger counts as locked
BUSY_SECONDS = 30.0
_HEX64 = re.compile(r"[0-9a-f]{64}")
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS releases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    project_id TEXT NOT NULL,
    method TEXT NOT NULL,
    parameters TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    folder TEXT NOT NULL,
    manifest TEXT NOT NULL,
    signer TEXT,
    persistent INTEGER NOT NULL,
    stable_pseudonyms INTEGER NOT NULL,
    cumulative TEXT NOT NULL,
    budget REAL,
    override_reason TEXT,
    node TEXT,
    status TEXT NOT NULL CHECK (status IN ('{PENDING}', '{PUBLISHED}')),
    writer INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS releases_by_project ON releases (project_id, status, id);
CREATE TABLE IF NOT EXISTS records (
    release_id INTEGER PRIMARY KEY REFERENCES releases (id) ON DELETE CASCADE,
    n_records INTEGER NOT NULL,
    identities BLOB NOT NULL,
    draws BLOB NOT NULL,
    epsilon BLOB NOT NULL,
    classes BLOB
);
"""
_COLUMNS = ("id, created, project_id, method, parameters, ordinal, folder, manifest, signer, persistent, "
            "stable_pseudonyms, cumulative, budget, override_reason, node")


class Ledger:
    """The release ledger (``path``: default :func:`~ppdp_desktop.core.repeat.appdata.ledger_path`).

    Opening makes the file and its schema if needed and settles pending rows. A context manager; :meth:`close`
    when done. One instance may be used from several threads (its calls are serialized).
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else ledger_path()
        self._lock = threading.RLock()
        self._connection: sqlite3.Connection | None = None
        with self._guard("opened"):
            self._connection = self._connect()
            self._settle_pending()

    # --- opening -----------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        new = not self.path.exists()
        if new:
            private_folder(self.path.parent)
            with contextlib.suppress(FileExistsError):  # owner-only from the start (SQLite's own files copy it)
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        connection = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        try:
            if new:
                connection.execute("PRAGMA page_size = 65536")  # large pages: a 1M-record blob is 128 pages, not 2,000
            if connection.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
                raise sqlite3.OperationalError("the write-ahead log cannot be used on this disk")
            connection.execute("PRAGMA synchronous = FULL")
            connection.execute("PRAGMA foreign_keys = ON")
            self._check_schema(connection)
        except BaseException:
            connection.close()
            raise
        return connection

    def _check_schema(self, connection: sqlite3.Connection) -> None:
        """Make the tables of a new ledger; refuse one written by a newer version."""
        made = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").fetchone()
        if made is None:
            with self._transaction(connection):
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    connection.execute(statement)
                if connection.execute("SELECT 1 FROM schema_version").fetchone() is None:
                    connection.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        found = connection.execute("SELECT max(version) FROM schema_version").fetchone()[0]
        if not isinstance(found, int) or found < 1:
            raise ValueError(f"its schema version is {found!r}")
        if found > SCHEMA_VERSION:
            raise ReleaseError(f"The release ledger {self.path} was written by a newer version of PPDP Desktop (ledger "
                               f"version {found}; this one reads version {SCHEMA_VERSION}); update PPDP Desktop.",
                               file=str(self.path))

    @staticmethod
    @contextlib.contextmanager
    def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
        """A write transaction (``BEGIN IMMEDIATE``: the write lock first), committed at the end, rolled back on error."""
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    @contextlib.contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        """SQLite's and the file system's errors as one :class:`ReleaseError` naming the ledger and what to do."""
        try:
            with self._lock:
                yield
        except ReleaseError:
            raise
        except (sqlite3.Error, OSError, ValueError) as exc:
            raise self._error(doing, exc) from None

    def _error(self, doing: str, exc: BaseException) -> ReleaseError:
        text = str(exc) or type(exc).__name__
        if isinstance(exc, sqlite3.OperationalError) and "locked" in text:
            advice = "another PPDP Desktop is writing to it; try again when it has finished"
        elif isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError) or \
                isinstance(exc, ValueError):
            advice = ("it is damaged: restore it from a backup, or move it aside to start an empty ledger (the "
                      "releases recorded in it then no longer count towards any project's cumulative guarantee)")
        else:
            advice = f"check that the folder {self.path.parent} exists and is yours, or set {DATA_VARIABLE} to another"
        return ReleaseError(f"The release ledger {self.path} cannot be {doing} ({text}); {advice}.",
                            file=str(self.path))

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            raise ReleaseError(f"The release ledger {self.path} is closed.", file=str(self.path))
        return self._connection

    # --- settling pending rows -----------------------------------------------------------------------
    def _settle(self, release_id: int, folder: str, manifest: str, writer_gone: bool) -> None:
        """Publish a pending row whose release is in place; delete it (and its records) when it is not and its
        writer is gone. Called inside a write transaction."""
        db = self._db()
        if manifest_of(folder) == manifest:
            db.execute("UPDATE releases SET status = ? WHERE id = ? AND status = ?", (PUBLISHED, release_id, PENDING))
        elif writer_gone:
            db.execute("DELETE FROM records WHERE release_id = ?", (release_id,))
            db.execute("DELETE FROM releases WHERE id = ? AND status = ?", (release_id, PENDING))

    def _settle_pending(self) -> None:
        db = self._db()
        if db.execute("SELECT 1 FROM releases WHERE status = ? LIMIT 1", (PENDING,)).fetchone() is None:
            return
        with self._transaction(db):
            rows = db.execute("SELECT id, folder, manifest, writer FROM releases WHERE status = ?", (PENDING,)).fetchall()
            for release_id, folder, manifest, writer in rows:
                self._settle(release_id, folder, manifest, not writer_alive(writer))

    # --- reading ---------------------------------------------------------------------------------------
    def releases(self, project_id: str | None = None) -> list[LedgerRelease]:
        """The published releases (of ``project_id``, else of every project), oldest first."""
        query = (f"SELECT {_COLUMNS}, coalesce(r.n_records, 0) FROM releases LEFT JOIN records r ON r.release_id = id "
                 f"WHERE status = ?")
        arguments: tuple[Any, ...] = (PUBLISHED,)
        if project_id is not None:
            query, arguments = query + " AND project_id = ?", (*arguments, project_id)
        with self._guard("read"):
            rows = self._db().execute(query + " ORDER BY id", arguments).fetchall()
            return [self._release(row) for row in rows]

    def _release(self, row: tuple) -> LedgerRelease:
        (release_id, created, project, method, parameters, ordinal, folder, manifest, signer, persistent, stable,
         cumulative, budget, reason, node, n_records) = row
        def read(text: str) -> Any:  # within the bounds of every JSON the app reads (a damaged ledger is refused)
            return parse_json(text, f"The release ledger {self.path}, release {release_id}", error=ReleaseError,
                              max_bytes=None, constants=True)

        return LedgerRelease(release_id, created, project, method, read(parameters), ordinal, folder, manifest,
                             signer, bool(persistent), bool(stable), read(cumulative), budget, reason,
                             None if node is None else read(node), n_records, self.records_of)

    def records_of(self, release_id: int) -> ReleaseRecords:
        """The records of release ``release_id`` (opening the file again if this ledger was closed)."""
        with self._guard("read"):
            if self._connection is None:
                reading = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True, timeout=BUSY_SECONDS)
                with contextlib.closing(reading) as connection:
                    return self._read_records(connection, release_id)
            return self._read_records(self._connection, release_id)

    def _read_records(self, db: sqlite3.Connection, release_id: int) -> ReleaseRecords:
        row = db.execute("SELECT n_records, identities, draws, epsilon, classes FROM records WHERE release_id = ?",
                         (release_id,)).fetchone()
        if row is None:
            raise ReleaseError(f"The release ledger {self.path} has no records of release {release_id}.",
                               file=str(self.path))
        records = ReleaseRecords.from_blobs(*row[1:])
        if len(records) != row[0]:
            raise ValueError(f"release {release_id} has {len(records)} records, {row[0]} were written")
        return records

    def previous_records(self, project_id: str) -> list[ReleaseRecords]:
        """The records of every published release of ``project_id``, oldest first."""
        return [release.records() for release in self.releases(project_id)]

    def next_ordinal(self, project_id: str) -> int:
        """The ordinal the project's next release gets (1 for its first); a release under way counts."""
        with self._guard("read"):
            found = self._db().execute("SELECT max(ordinal) FROM releases WHERE project_id = ?", (project_id,)).fetchone()
            return int(found[0] or 0) + 1

    # --- writing ---------------------------------------------------------------------------------------
    def begin(self, entry: LedgerEntry, folder: Path, manifest: str) -> int:
        """Commit a pending row for ``entry``, to be published at ``folder`` (absolute) with ``manifest`` (the
        SHA-256 of its ``SHA256SUMS``, hex), with its records; return its id. The ordinal is assigned here."""
        row = self._row(entry, folder, manifest)
        blobs = entry.records.to_blobs()
        with self._guard("written"):
            db = self._db()
            with self._transaction(db):
                ordinal = int(db.execute("SELECT coalesce(max(ordinal), 0) + 1 FROM releases WHERE project_id = ?",
                                         (entry.project_id,)).fetchone()[0])
                cursor = db.execute(
                    "INSERT INTO releases (created, project_id, method, parameters, ordinal, folder, manifest, signer, "
                    "persistent, stable_pseudonyms, cumulative, budget, override_reason, node, status, writer) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (*row[:4], ordinal, *row[4:]))
                release_id = cursor.lastrowid
                if release_id is None:
                    raise sqlite3.OperationalError("no row id was assigned")
                sizes = {name: None if blob is None else len(blob) for name, blob in blobs.items()}
                row_id = db.execute(  # room for the blobs, then written in pieces: sqlite holds no copy of them
                    "INSERT INTO records (release_id, n_records, identities, draws, epsilon, classes) VALUES "
                    "(?, ?, zeroblob(?), zeroblob(?), zeroblob(?), CASE WHEN ? IS NULL THEN NULL ELSE zeroblob(?) END)",
                    (release_id, len(entry.records), sizes["identities"], sizes["draws"], sizes["epsilon"],
                     sizes["classes"], sizes["classes"])).lastrowid
                for name, blob in blobs.items():
                    if blob is not None and len(blob):
                        _write_blob(db, name, row_id, blob)
            return release_id

    def _row(self, entry: LedgerEntry, folder: Path, manifest: str) -> tuple:
        """The row's values but the ordinal, checked (a programming error is a ValueError, before any write)."""
        if not isinstance(entry.records, ReleaseRecords):
            raise ValueError("LedgerEntry.records must be ReleaseRecords")
        if not isinstance(entry.project_id, str) or not entry.project_id:
            raise ValueError("LedgerEntry.project_id must be a non-empty str")
        if not isinstance(manifest, str) or not _HEX64.fullmatch(manifest):
            raise ValueError(f"the manifest must be 64 lower-case hex digits; got {manifest!r:.80}")
        if not Path(folder).is_absolute():
            raise ValueError(f"the release folder must be an absolute path; got {folder}")
        budget = None if entry.budget is None else float(entry.budget)
        if budget is not None and math.isnan(budget):
            raise ValueError("the budget must be a number")
        node = None if entry.node is None else dumps([int(level) for level in entry.node])
        created = datetime.now(UTC).isoformat(timespec="seconds")
        return (created, entry.project_id, str(entry.method), dumps(dict(entry.parameters)), str(folder), manifest,
                entry.signer, int(bool(entry.persistent)), int(bool(entry.stable_pseudonyms)),
                dumps(dict(entry.cumulative)), budget, entry.override_reason, node, PENDING, os.getpid())

    def mark_published(self, release_id: int) -> None:
        """Switch pending row ``release_id`` to published (its release is in place)."""
        with self._guard("written"):
            db = self._db()
            with self._transaction(db):
                updated = db.execute("UPDATE releases SET status = ? WHERE id = ? AND status = ?",
                                     (PUBLISHED, release_id, PENDING)).rowcount
                if not updated and db.execute("SELECT 1 FROM releases WHERE id = ?", (release_id,)).fetchone() is None:
                    raise ReleaseError(f"The release ledger {self.path} lost the row of release {release_id} while it "
                                       "was published (was the ledger replaced?).", file=str(self.path))

    def discard(self, release_id: int) -> None:
        """Remove pending row ``release_id`` and its records after a failed publish; should its release be in place
        all the same (the failure came after the rename), the row is published instead: never a release without
        its row."""
        with self._guard("written"):
            db = self._db()
            with self._transaction(db):
                row = db.execute("SELECT folder, manifest FROM releases WHERE id = ? AND status = ?",
                                 (release_id, PENDING)).fetchone()
                if row is not None:
                    self._settle(release_id, row[0], row[1], writer_gone=True)

    def close(self) -> None:
        """Close the file (the releases read from it can still read their records)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: bytes of a record blob written at a time (:func:`_write_blob`)
_BLOB_PIECE = 4 << 20


def _write_blob(db: sqlite3.Connection, column: str, row_id: int | None, blob: memoryview) -> None:
    """Write ``blob`` into the zero-filled ``records.column`` of row ``row_id``, a piece at a time."""
    if row_id is None:
        raise sqlite3.OperationalError("no row id was assigned to the records")
    with db.blobopen("records", column, row_id) as target:
        for start in range(0, len(blob), _BLOB_PIECE):
            target.write(blob[start:start + _BLOB_PIECE])
