"""Seeds derived from names, independent of PYTHONHASHSEED and of the process."""

import hashlib
import json

import numpy as np


def derive_seed(*parts: object) -> int:
    """Return a 63-bit seed determined only by ``parts`` (which must be JSON-serialisable).

    Uses SHA-256 of a canonical JSON encoding, never ``hash()``, so the seed is the same in every
    process and under every PYTHONHASHSEED.
    """
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    digest = hashlib.sha256(canonical.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def make_rng(*parts: object) -> np.random.Generator:
    """A numpy Generator seeded from ``parts`` via :func:`derive_seed`."""
    return np.random.default_rng(derive_seed(*parts))
