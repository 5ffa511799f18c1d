"""What the release ledger keeps of one release's records: keyed digests and what was spent, never a value.

A release of a project is one row of the ledger (:mod:`.ledger`); its records are kept as a few arrays, one entry
per released record, stored as blobs (8 bytes a record and array), so that a million-record release adds its
record digests to the ledger in milliseconds and the cumulative guarantee (:mod:`.accounting`) is computed with
numpy over whole arrays.

* ``identities``: the record's identity (the identifier columns' values, else the whole original record) as a
  64-bit digest keyed with the project's custodian secret (or, without one, with this installation's secret):
  someone holding the ledger but not the secret cannot test a guessed patient number against it.
* ``draws``: what was drawn for the record, as a 64-bit digest. Under persistent randomness it is the digest of
  (identity, each randomized column's true value, the mechanism that randomized it): the same digest in two
  releases means the same draws and so the same released values, which teaches an attacker nothing new. A
  release whose draws are fresh (no custodian secret, or a method whose noise is not per record) gets digests
  that never repeat.
* ``epsilon``: the local differential privacy epsilon this release spends on the record's values (0 when
  nothing about the record was randomized, ``inf`` when the method gives no epsilon bound).
* ``classes``: for a release whose quasi-identifiers were generalized, a 64-bit digest of the record's released
  quasi-identifier combination (its equivalence class), so that the intersection of two releases can be
  computed; None otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ReleaseRecords"]


@dataclass(frozen=True, eq=False)
class ReleaseRecords:
    """One release's records as the ledger keeps them (aligned arrays, one entry per released record)."""

    identities: np.ndarray
    draws: np.ndarray
    epsilon: np.ndarray  # may be one value broadcast to every record (read-only: a stride of 0)
    classes: np.ndarray | None = None
    #: this release only, never stored: per record, whether a later stage redrew its persistent draw (a kept
    #: partition's lowered retention), so that the statement does not promise it the same released value
    rederived: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.identities)
        for name in ("identities", "draws", "epsilon", "classes", "rederived"):
            array = getattr(self, name)
            if array is None:
                continue
            dtype = np.float64 if name == "epsilon" else bool if name == "rederived" else np.uint64
            array = np.asarray(array)
            # an epsilon the same for every record may stay one value broadcast (a stride of 0: 8 bytes, read-only)
            if not (name == "epsilon" and array.dtype == dtype and array.ndim == 1 and array.strides == (0,)):
                array = np.ascontiguousarray(array, dtype=dtype)
            if array.ndim != 1 or len(array) != n:
                raise ValueError(f"ReleaseRecords.{name} must hold one entry per record ({n}); got shape {array.shape}.")
            object.__setattr__(self, name, array)

    def __len__(self) -> int:
        return len(self.identities)

    # --- blobs -----------------------------------------------------------------------------------
    def to_blobs(self) -> dict[str, memoryview | None]:
        """The arrays as little-endian bytes (the ledger's columns), views of the arrays where they are little-endian
        already (5M records: no 40 MB copies per column for sqlite to copy again); an epsilon the same for every
        record (the usual case: one release spends one epsilon) is kept once, 8 bytes instead of 8 a record."""
        def little(array: np.ndarray, dtype: str) -> memoryview:
            return memoryview(np.ascontiguousarray(array, dtype=dtype).data).cast("B")

        blobs: dict[str, memoryview | None] = {
            name: (None if getattr(self, name) is None else little(getattr(self, name), "<u8"))
            for name in ("identities", "draws", "classes")}
        epsilon = self.epsilon
        constant = len(epsilon) > 0 and bool(np.all(epsilon == epsilon[0]))
        blobs["epsilon"] = little(epsilon[:1] if constant else epsilon, "<f8")
        return blobs

    @classmethod
    def from_blobs(cls, identities: bytes, draws: bytes, epsilon: bytes, classes: bytes | None) -> ReleaseRecords:
        """The inverse of :meth:`to_blobs`."""
        ids = np.frombuffer(identities, dtype="<u8").astype(np.uint64)
        spent = np.frombuffer(epsilon, dtype="<f8").astype(np.float64)
        if len(spent) == 1 and len(ids) != 1:  # one epsilon for every record (to_blobs)
            spent = np.full(len(ids), spent[0])
        return cls(ids, np.frombuffer(draws, dtype="<u8").astype(np.uint64), spent,
                   None if classes is None else np.frombuffer(classes, dtype="<u8").astype(np.uint64))
