"""The (identity, draw) pairs that earlier records fold onto without being sorted (:mod:`.distinct`).

Under persistent randomness most records of an earlier release carry a pair the current release holds too (an
unchanged value drawn the same way). Such a record adds nothing but, possibly, a larger epsilon for its pair and the
fact that an earlier release holds it; folding it onto the pair with one comparison (:class:`IdentityFold`: one
pair per identity) or one ``searchsorted`` (:class:`PairFold`: several pairs per identity) keeps the ten million
earlier records of ten releases out of any sort.
"""
from __future__ import annotations

import numpy as np

__all__ = ["IdentityFold", "PairFold", "spread"]

_U64 = np.uint64


def spread(x: np.ndarray) -> np.ndarray:
    """Fibonacci hashing: times an odd constant (a bijection of 64-bit words), whose high bits depend on every
    bit of ``x`` -- so even small integers spread over the high bits that sort keys keep."""
    return x * _U64(0x9E3779B97F4A7C15)


class IdentityFold:
    """Per identity (by its index), at most one pair: its draw, whether the identity has one (``held``), the largest
    epsilon recorded for it, and whether an earlier release holds it (``before``)."""

    def __init__(self, nu: int) -> None:
        self.draw = np.zeros(nu, dtype=_U64)
        self.epsilon = np.zeros(nu)
        self.before = np.zeros(nu, dtype=bool)
        self.held = np.zeros(nu, dtype=bool)

    def fold(self, index: np.ndarray, draws: np.ndarray, epsilon: np.ndarray,
             eligible: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fold the earlier records carrying their identity's pair (``eligible`` ones only, else those of identities
        that hold one); return the others."""
        same = self.draw[index] == draws
        same &= self.held[index] if eligible is None else eligible
        if not same.any():
            return index, draws, epsilon
        np.maximum.at(self.epsilon, index[same], epsilon[same])
        self.before[index[same]] = True
        rest = ~same
        return index[rest], draws[rest], epsilon[rest]


class PairFold:
    """The distinct pairs of some current records (identities with several records), keyed by 64-bit words: the
    identity's index in the high bits, a hash of the draw in the low ones. Keys are compared with the draws
    themselves, so the folding is exact: the records of a key that holds two different pairs (a hash collision)
    are left out (:attr:`leftover`) for the exact grouping."""

    def __init__(self, index: np.ndarray, draws: np.ndarray, epsilon: np.ndarray, positions: np.ndarray, nu: int) -> None:
        self._bits = max(1, (nu - 1).bit_length())
        keys = self._keys(index, draws)
        order = np.argsort(keys, kind="stable")
        keys, draws = keys[order], draws[order]
        new = np.ones(len(keys), dtype=bool)
        new[1:] = keys[1:] != keys[:-1]
        run = np.cumsum(new) - 1
        clash = np.zeros(len(keys), dtype=bool)
        clash[1:] = ~new[1:] & (draws[1:] != draws[:-1])
        bad = np.zeros(int(run[-1]) + 1 if len(run) else 0, dtype=bool)
        bad[run[clash]] = True
        starts = np.flatnonzero(new)[~bad]
        self.keys, self.draw = keys[starts], draws[starts]
        self.index = index[order][starts]
        self.epsilon = np.maximum.reduceat(epsilon[order], np.flatnonzero(new))[~bad] if len(keys) else np.zeros(0)
        self.before = np.zeros(len(starts), dtype=bool)
        clean = ~bad[run]
        self.positions = positions[order][clean]
        self.entries = (np.cumsum(~bad) - 1)[run[clean]]
        self.leftover = positions[order][~clean]

    def _keys(self, index: np.ndarray, draws: np.ndarray) -> np.ndarray:
        return (index.astype(_U64) << _U64(64 - self._bits)) | (spread(draws) >> _U64(self._bits))

    def fold(self, index: np.ndarray, draws: np.ndarray, epsilon: np.ndarray,
             eligible: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fold the (``eligible``) earlier records carrying one of the pairs; return the others."""
        candidates = np.flatnonzero(eligible)
        if not len(candidates) or not len(self.keys):
            return index, draws, epsilon
        keys = self._keys(index[candidates], draws[candidates])
        where = np.searchsorted(self.keys, keys)
        np.minimum(where, len(self.keys) - 1, out=where)
        hit = (self.keys[where] == keys) & (self.draw[where] == draws[candidates])
        if not hit.any():
            return index, draws, epsilon
        np.maximum.at(self.epsilon, where[hit], epsilon[candidates[hit]])
        self.before[where[hit]] = True
        rest = np.ones(len(index), dtype=bool)
        rest[candidates[hit]] = False
        return index[rest], draws[rest], epsilon[rest]

    def totals(self, nu: int) -> np.ndarray:
        """Per identity, the epsilon of its pairs here."""
        return np.bincount(self.index, weights=self.epsilon, minlength=nu)
