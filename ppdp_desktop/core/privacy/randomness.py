"""The randomness contract: what a method may draw from, and what simulations draw from.

A release's randomness
----------------------
A plan's ``apply`` (and ``bind``) receives a :class:`RandomSource` and nothing else. It exposes exactly two
things:

* :attr:`RandomSource.keyed`, the job's :class:`~ppdp_desktop.core.privacy.keyed.KeyedRandomness`: ChaCha20
  streams addressed by (column, draw) and read per record (``randomness.keyed.stream("diag", "keep")
  .bernoulli(start, stop, p)``), so a record's draws depend only on the secret seed, the stream's name and the
  record's index -- never on how many numbers were drawn before it, nor on how the file was cut into chunks;
* :meth:`RandomSource.shuffle_order`, the release's row order (each record's rank by its keyed sort key).

Nothing in it draws sequentially: there is no numpy Generator behind it, no attribute forwarding, and asking
it for anything else (``randomness.random(5)``, ``randomness.integers(...)``, ``randomness.generator``) raises
:class:`RandomnessContractError` (a :class:`~ppdp_desktop.core.errors.PrivacyError` and an ``AttributeError``)
naming the keyed streams as the way. A plan handed something that is not a :class:`RandomSource` (a bare numpy
Generator, as plans took before) refuses it with the same error through :func:`keyed_streams`. The seed itself is
not kept on the source: it goes to the sealed key file from the job (:func:`job_randomness` returns it).

Simulations that are never released
-----------------------------------
The Anatomy baseline of ``ppdp compare``, the report's bands and baselines, randomized response's estimates,
query workloads, model data samples, synthetic tables and reconstruction attacks draw from numpy's PCG64: fast,
reproducible, and fine for figures that describe a release rather than make one. They never come through a
plan's ``apply``: each takes its own generator, made where the comparison or evaluation runs, from
:func:`simulation_generator` (or ``np.random.default_rng`` with a public evaluation seed).
"""
from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from ppdp_desktop.core.errors import ParameterError, PrivacyError
from ppdp_desktop.core.privacy.keyed import KeyedRandomness, key_order

if TYPE_CHECKING:
    from ppdp_desktop.core.privacy.persistent import PersistentKeys

__all__ = [
    "ROW_ORDER_STREAM", "RandomSource", "RandomnessContractError", "job_randomness", "keyed_streams", "new_seed",
    "resolve_seed", "simulation_generator",
]

#: the stream of the release's row order (a name no method uses for a column's draws)
ROW_ORDER_STREAM = "(release rows)"

_THE_WAY = ("a plan draws only from the job's keyed per-record streams, e.g. "
            "randomness.keyed.stream(column, draw).uniforms(start, stop) (also .bernoulli, .integers, .sort_keys), "
            "so that each record's draws depend on its own index only; the release's row order is "
            "randomness.shuffle_order(n)")


class RandomnessContractError(PrivacyError, AttributeError):
    """A method reached for randomness other than the job's keyed streams (fail closed).

    It is an ``AttributeError`` too, so ``hasattr(randomness, "random")`` is simply False.
    """


def new_seed() -> int:
    """A fresh 128-bit seed from the operating system's secure source."""
    return secrets.randbits(128)


def resolve_seed(seed: int | None) -> int:
    """``seed`` checked (a non-negative integer), or a fresh one from :func:`new_seed` if ``None``.

    The seed goes into the sealed key file (never into the release).
    """
    if seed is None:
        return new_seed()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"The seed must be a non-negative integer; got {seed}.")
    return int(seed)


class RandomSource:
    """The only randomness a plan's ``apply`` receives: the job's keyed per-record streams.

    Parameters
    ----------
    seed : int
        The job's secret seed; the ChaCha20 key of :attr:`keyed` is derived from it.

    Examples
    --------
    >>> randomness = RandomSource(2024)
    >>> keep = randomness.keyed.stream("diag", "keep").bernoulli(0, 4, 0.7)
    >>> hasattr(randomness, "random")  # nothing draws sequentially
    False
    """

    __slots__ = ("keyed",)

    keyed: KeyedRandomness

    def __init__(self, seed: int) -> None:
        self.keyed = KeyedRandomness(resolve_seed(seed))

    def with_records(self, keys: PersistentKeys, identities: np.ndarray, start: int) -> RandomSource:
        """This source with its keyed streams bound to records ``start, ...`` and their keyed identity digests,
        so that a method's :meth:`~ppdp_desktop.core.privacy.keyed.KeyedRandomness.keep_or_draw` with a mechanism
        draws persistently (the same patient, value and mechanism draw the same in every release)."""
        bound = RandomSource.__new__(RandomSource)
        bound.keyed = self.keyed.with_records(keys, identities, start)
        return bound

    def shuffle_order(self, n: int) -> np.ndarray:
        """The release's row order: record ``i`` goes to its rank by (keyed sort key, index), wherever it was
        computed (``order[j]`` is the record at position ``j``)."""
        return key_order(self.keyed.stream(ROW_ORDER_STREAM, "order").sort_keys(0, n))

    def __repr__(self) -> str:  # never show the key
        return "RandomSource(<secret key>)"

    if not TYPE_CHECKING:  # hidden from type checkers, so that they flag ``randomness.random`` in a plug-in too

        def __getattr__(self, name: str) -> NoReturn:
            # only reached for what is not defined above: refuse it (no sequential generator behind this source)
            if name.startswith("__") or name == "keyed":  # protocol look-ups (pickle, copy), an unset slot
                raise AttributeError(name)
            raise RandomnessContractError(f"A method's randomness has no {name!r} (no sequential generator is "
                                          f"behind it): {_THE_WAY}. Nothing was drawn.")


def keyed_streams(randomness: Any) -> KeyedRandomness:
    """The keyed streams of ``randomness``, which must be the job's :class:`RandomSource`; anything else (a
    numpy Generator, a seed) is refused with :class:`RandomnessContractError` (fail closed)."""
    if not isinstance(randomness, RandomSource):
        _refuse(randomness)
    return randomness.keyed


def _refuse(randomness: Any) -> NoReturn:
    raise RandomnessContractError(
        f"A plan's apply takes the job's RandomSource, not a {type(randomness).__name__} (a sequential generator's "
        f"draws are not cryptographic and depend on the chunking): {_THE_WAY}. Nothing was drawn.")


def job_randomness(seed: int | None) -> tuple[RandomSource, int]:
    """The job's randomness and its seed: ``(source, seed)``, the seed drawn from the secure source if not given."""
    seed = resolve_seed(seed)
    return RandomSource(seed), seed


def simulation_generator(seed: int | None) -> np.random.Generator:
    """A numpy PCG64 generator for a simulation that is never released (``ppdp compare``'s Anatomy baseline,
    evaluation baselines); never a release's randomness (that is :class:`RandomSource`). ``seed=None`` draws one
    from the secure source."""
    return np.random.Generator(np.random.PCG64(resolve_seed(seed)))
