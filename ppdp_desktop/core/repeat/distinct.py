"""Per record of a release, what the project's earlier releases already hold of its patient (vectorized).

The cumulative guarantee (:mod:`.accounting`) needs, for each record of the release being made: whether its
identity was released before, whether its draw digest was drawn for that identity before, and the sum of epsilon
over the identity's *distinct* draw digests across every release (a digest counted once, with the largest
epsilon recorded for it). A million records a release and ten releases must take well under a second, so
nothing here loops over records, and the ten million earlier records are never sorted together:

* each earlier release is matched against the current release's sorted distinct identities by one
  ``searchsorted`` (a release the ledger keeps sorted by identity, :func:`by_identity`, needs no sort; another
  is put in order by one values-only sort);
* an earlier record carrying a pair of the current release (persistent randomness, an unchanged value) is folded
  onto it with one comparison, or one ``searchsorted`` for an identity with several current records; so is one
  carrying its identity's first other earlier pair (an old value kept over several releases) (:mod:`.folds`);
* what is left is checked for repeated digests by one values-only sort: when none repeats (fresh draws), each
  record is a pair of its own; otherwise the (identity, draw) pairs are grouped by one values-only sort of 64-bit
  words packing the identity's index, a hash of the draw digest and the record's position. A hash collision can
  only put different digests of one identity in one run of equal keys; such runs are found by comparing the
  digests themselves and re-sorted exactly, so the grouping is exact whatever the hash does.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ppdp_desktop.core.repeat.folds import IdentityFold, PairFold, spread
from ppdp_desktop.core.repeat.records import ReleaseRecords

__all__ = ["History", "by_identity", "history"]

_U64 = np.uint64


@dataclass(frozen=True)
class History:
    """Per record of the current release (aligned arrays)."""

    #: its identity was released before in this project
    matched: np.ndarray
    #: its draw digest was drawn for its identity in an earlier release (same released values)
    unchanged: np.ndarray
    #: sum of epsilon over the identity's distinct draw digests, earlier releases and this one
    cumulative: np.ndarray


def history(previous: Sequence[ReleaseRecords], current: ReleaseRecords, *, fresh: bool = False,
            hash_bits: int | None = None) -> History:
    """The history of each record of ``current`` in ``previous`` (see the module docstring).

    Parameters
    ----------
    previous, current : ReleaseRecords
        The project's earlier releases (any order) and the release being made.
    fresh : bool
        ``current``'s draws are fresh (not persistent): each of its records is a new draw whatever its digest,
        never unchanged.
    hash_bits : int, optional
        For tests: use at most this many bits of the draw hash in the packed sort keys (collisions then happen and
        must be resolved exactly).
    """
    n = len(current)
    if not previous and _all_distinct(current.identities):  # a project's first release, a patient a record
        nothing = np.zeros(n, dtype=bool)  # nothing released before; each identity's one draw is its sum
        return History(nothing, nothing.copy(), np.asarray(current.epsilon, dtype=np.float64) + 0.0)
    unique, inverse = np.unique(current.identities, return_inverse=True)
    inverse = np.ravel(inverse).astype(np.intp, copy=False)
    nu = len(unique)
    matched = np.zeros(nu, dtype=bool)
    # the current pairs earlier records fold onto: an identity's one record (the common case), or the distinct pairs
    # of an identity with several; fresh draws never fold onto anything
    single = np.zeros(nu, dtype=bool) if fresh else np.bincount(inverse, minlength=nu) == 1
    on_primary = single[inverse]
    primary = IdentityFold(nu)
    primary.draw[inverse[on_primary]] = current.draws[on_primary]
    primary.epsilon[inverse[on_primary]] = current.epsilon[on_primary]
    others = np.flatnonzero(~on_primary)
    several = None if fresh or not len(others) else PairFold(
        inverse[others], current.draws[others], current.epsilon[others], others, nu)
    # an identity's first earlier pair that is none of those is its "reference": later copies fold onto it
    reference = IdentityFold(nu)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]] = []
    for release in previous:
        index, draws, epsilon = _matched(unique, release)
        matched[index] = True
        index, draws, epsilon = primary.fold(index, draws, epsilon, single[index])
        if several is not None:
            index, draws, epsilon = several.fold(index, draws, epsilon, ~single[index])
        first = ~reference.held[index]  # an identity without one takes one of these draws (any one will do)
        reference.draw[index[first]] = draws[first]
        reference.held[index[first]] = True
        index, draws, epsilon = reference.fold(index, draws, epsilon)
        if len(index):
            parts.append((index, draws, epsilon, None))
    unchanged = np.zeros(n, dtype=bool)
    if fresh:  # every current record is a draw of its own
        cumulative = reference.epsilon + np.bincount(inverse, weights=current.epsilon, minlength=nu)
    else:
        unchanged[on_primary] = primary.before[inverse[on_primary]]
        cumulative = primary.epsilon
        if several is not None:
            cumulative = cumulative + several.totals(nu)
            unchanged[several.positions] = several.before[several.entries]
            left = several.leftover
            index, draws, epsilon = inverse[left], current.draws[left], current.epsilon[left]
            folded = reference.held[index] & (reference.draw[index] == draws)
            np.maximum.at(reference.epsilon, index[folded], epsilon[folded])
            unchanged[left[folded]] = True
            rest = ~folded
            if rest.any():
                parts.append((index[rest], draws[rest], epsilon[rest], left[rest]))
        cumulative = cumulative + reference.epsilon
    if parts:
        cumulative = cumulative + _extras(parts, unchanged, nu, hash_bits)
    return History(matched[inverse], unchanged, cumulative[inverse])


def _all_distinct(identities: np.ndarray) -> bool:
    """Whether no identity repeats (one values-only sort: a first release of 5M records then needs none of the
    folds' per-identity arrays, ~400 MB at its peak)."""
    ordered = np.sort(identities)
    return not bool(np.any(ordered[1:] == ordered[:-1]))


def _extras(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]], unchanged: np.ndarray,
            nu: int, hash_bits: int | None) -> np.ndarray:
    """Per identity, the epsilon of the pairs that folded onto nothing (each distinct pair counted once, with its
    largest epsilon); marks the current records among them whose pair an earlier release holds."""
    draws = np.concatenate([part[1] for part in parts])
    ordered = np.sort(draws)
    if not np.any(ordered[1:] == ordered[:-1]):  # no digest repeats: every record is a pair of its own
        total = np.zeros(nu)
        for index, _, epsilon, _ in parts:
            total += np.bincount(index, weights=epsilon, minlength=nu)
        return total
    index = np.concatenate([part[0] for part in parts])
    epsilon = np.concatenate([part[2] for part in parts])
    position = np.concatenate([np.full(len(part[0]), -1, dtype=np.intp) if part[3] is None else part[3]
                               for part in parts])
    group_index, group_epsilon, record_before = _distinct_pairs(index, draws, epsilon, position, nu, hash_bits)
    mine = position >= 0
    unchanged[position[mine]] = record_before[mine]
    return np.bincount(group_index, weights=group_epsilon, minlength=nu)


def _matched(unique: np.ndarray, release: ReleaseRecords) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The records of ``release`` whose identity is in ``unique`` (sorted): its index there (ascending), draws,
    epsilon. A release kept sorted by identity (:func:`by_identity`) skips the sort."""
    identities = release.identities
    if not len(unique) or not len(identities):
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=_U64), np.zeros(0)
    order = None if bool(np.all(identities[1:] >= identities[:-1])) else _nearly_sorting(identities)
    ordered = identities if order is None else identities[order]
    where = np.searchsorted(unique, ordered)
    np.minimum(where, len(unique) - 1, out=where)
    hit = unique[where] == ordered
    take = np.flatnonzero(hit) if order is None else order[hit]
    return where[hit].astype(np.intp), release.draws[take], release.epsilon[take]


def _nearly_sorting(words: np.ndarray) -> np.ndarray:
    """A permutation sorting ``words`` by their high bits (ties in order of position): one values-only sort of
    the words with their positions packed into the low bits, several times faster than ``argsort``. The
    searches that follow are exact whatever the order; they are just fastest when it is sorted."""
    bits = max(1, (len(words) - 1).bit_length())
    low = _U64((1 << bits) - 1)
    keys = (words & ~low) | np.arange(len(words), dtype=_U64)
    keys.sort()
    return (keys & low).astype(np.intp)


def by_identity(records: ReleaseRecords) -> ReleaseRecords:
    """``records`` sorted by identity: what the ledger should keep, so that each later release's cumulative
    guarantee matches them without sorting them again (the order of a release's records means nothing there)."""
    identities = records.identities
    if bool(np.all(identities[1:] >= identities[:-1])):
        return records
    order = np.argsort(identities, kind="stable")
    return ReleaseRecords(identities[order], records.draws[order], records.epsilon[order],
                          None if records.classes is None else records.classes[order])


def _pair_order(index: np.ndarray, draws: np.ndarray, nu: int, hash_bits: int | None) -> np.ndarray:
    """A permutation after which equal (index, draw) pairs are contiguous (and indices ascending)."""
    n = len(index)
    index_bits = max(1, (nu - 1).bit_length())
    position_bits = max(1, (n - 1).bit_length())
    bits = 64 - index_bits - position_bits
    if hash_bits is not None:
        bits = min(bits, hash_bits)
    if bits < 1:  # more than 2^63 pairs of identities and records: the exact two-key sort
        return np.lexsort((draws, index))
    keys = (index.astype(_U64) << _U64(bits + position_bits)) | (
        (spread(draws) >> _U64(64 - bits)) << _U64(position_bits)) | np.arange(n, dtype=_U64)
    keys.sort()
    low = _U64((1 << position_bits) - 1)
    order = (keys & low).astype(np.intp)
    prefix = keys >> _U64(position_bits)
    ordered = draws[order]
    same_prefix = prefix[1:] == prefix[:-1]
    collided = same_prefix & (ordered[1:] != ordered[:-1])
    if collided.any():  # runs of one hash holding different digests: sort those runs exactly by digest
        run = np.cumsum(np.concatenate(([0], ~same_prefix)))
        bad = np.zeros(int(run[-1]) + 1, dtype=bool)
        bad[run[1:][collided]] = True
        where = np.flatnonzero(bad[run])
        records = order[where]
        order[where] = records[np.lexsort((draws[records], run[where]))]
    return order


def _distinct_pairs(index: np.ndarray, draws: np.ndarray, epsilon: np.ndarray, position: np.ndarray, nu: int,
                    hash_bits: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (identity index, draw) pairs: each one's identity index and largest epsilon, and per record
    whether its pair holds a record of an earlier release (``position < 0``)."""
    order = _pair_order(index, draws, nu, hash_bits)
    ordered_index = index[order]
    ordered_draws = draws[order]
    start = np.ones(len(order), dtype=bool)
    start[1:] = (ordered_index[1:] != ordered_index[:-1]) | (ordered_draws[1:] != ordered_draws[:-1])
    starts = np.flatnonzero(start)
    group_epsilon = np.maximum.reduceat(epsilon[order], starts)
    group_before = np.logical_or.reduceat(position[order] < 0, starts)
    group = np.cumsum(start) - 1
    record_before = np.empty(len(order), dtype=bool)
    record_before[order] = group_before[group]
    return ordered_index[starts], group_epsilon, record_before
