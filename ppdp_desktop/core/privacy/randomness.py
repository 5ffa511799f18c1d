"""Random generators: seeded from the OS's secure source unless the user fixes a seed."""
from __future__ import annotations

import secrets

import numpy as np


def new_seed() -> int:
    """A fresh 128-bit seed from the operating system's secure source."""
    return secrets.randbits(128)


def make_rng(seed: int | None) -> tuple[np.random.Generator, int]:
    """Return ``(generator, seed)``; ``seed=None`` draws one from :func:`new_seed`.

    The seed is returned so that it can go into the sealed key file (never into the release).
    """
    if seed is None:
        seed = new_seed()
    if seed < 0:
        from ppdp_desktop.core.errors import ParameterError

        raise ParameterError(f"The seed must be a non-negative integer; got {seed}.")
    return np.random.Generator(np.random.PCG64(seed)), seed


class RandomSource:
    """The job's randomness. Privacy draws come from :attr:`keyed`, ChaCha20 streams addressed by (record,
    column, draw) (:mod:`~ppdp_desktop.core.privacy.keyed`), so a record's draws never depend on how many
    numbers were drawn before it. Every draw of a release is keyed (every method, the row order, the pseudonym
    key); :attr:`generator` (numpy's PCG64) remains for simulations that are never released (the Anatomy
    baseline of ``ppdp compare``, tests), and every other attribute is handed on to it (``source.random(...)``
    works as on a Generator)."""

    def __init__(self, seed: int, generator: np.random.Generator | None = None) -> None:
        from ppdp_desktop.core.privacy.keyed import KeyedRandomness

        self.seed = seed
        self.generator = generator if generator is not None else np.random.Generator(np.random.PCG64(seed))
        self.keyed = KeyedRandomness(seed)

    def __getattr__(self, name: str):  # only for what is not defined here: the sequential generator's draws
        try:
            generator = self.__dict__["generator"]
        except KeyError:  # not yet set (unpickling looks attributes up first): nothing to hand on
            raise AttributeError(name) from None
        return getattr(generator, name)

    def shuffle_order(self, n: int) -> np.ndarray:
        """The release's row order: record ``i`` goes to its rank by (keyed sort key, index), wherever it was
        computed (``order[j]`` is the record at position ``j``)."""
        keys = self.keyed.stream(ROW_ORDER_STREAM, "order").sort_keys(0, n)
        return np.argsort(keys, kind="stable")


#: the stream of the release's row order (a name no method uses for a column's draws)
ROW_ORDER_STREAM = "(release rows)"


def job_randomness(seed: int | None) -> tuple[RandomSource, int]:
    """:func:`make_rng`'s job-wide counterpart: ``(source, seed)``, the seed drawn if not given."""
    generator, seed = make_rng(seed)
    return RandomSource(seed, generator), seed


def as_source(rng: "np.random.Generator | RandomSource") -> RandomSource:
    """``rng`` as a :class:`RandomSource`; a bare Generator (tests, simulations) is keyed by a seed drawn from it,
    so the same Generator state gives the same draws."""
    if isinstance(rng, RandomSource):
        return rng
    return RandomSource(int(rng.integers(0, 2**63)), rng)
