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
