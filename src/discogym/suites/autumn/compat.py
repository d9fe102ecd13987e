"""The order in which the official Autumn interpreter (Autumn.cpp) visits a program's state variables.

Autumn.cpp keeps the INIT and NEXT expressions of the state variables (``(= name (initnext INIT NEXT))``) in two
``std::unordered_map<std::string, ...>`` keyed by the variable's name, filled in program order, and evaluates the
INIT expressions at start and the NEXT expressions of every step by iterating over those maps. The visiting order is
therefore the iteration order of a C++ hash map, which depends on the C++ standard library the interpreter was built
with. :func:`official_order` reproduces it from first principles for the three standard libraries the official
builds use:

- ``"libstdc++"`` (GCC; Linux builds, the Makefile's ``g++``): ``std::hash<std::string>`` is ``std::_Hash_bytes``
  (a 64-bit MurmurHash2 variant, seed ``0xc70f6907``), bucket counts come from libstdc++'s table of primes (1, then
  13, 29, 59, 127, ... as the map grows), and a rehash rebuilds the node list.
- ``"libc++"`` (clang; macOS builds, such as the prebuilt module shipped with the AutumnBench harness):
  ``std::hash<std::string>`` is libc++'s 64-bit CityHash, bucket counts are 2, 5, 11, 23, ... (the smallest prime
  >= twice the old count plus one), and a rehash splices nodes within the list.
- ``"libc++-wasm32"`` (Emscripten; the WebAssembly build): as ``"libc++"`` but with 32-bit ``size_t``, whose string
  hash is MurmurHash2 (32-bit, seeded with the length).

In every case a new key goes to the front of its bucket's run of nodes when the bucket already holds one, and to the
front of the whole list otherwise; the map grows (rehashes) just before its first insertion and before any insertion
that would make the number of elements exceed the number of buckets. docs/autumn-compat.md describes the derivation
and how it was checked against the real standard libraries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Literal, get_args

__all__ = [
    "DEFAULT_FLAVOR",
    "FLAVORS",
    "Flavor",
    "OfficialMap",
    "bucket_count_after_growth",
    "libcxx_hash",
    "libcxx_hash32",
    "libstdcxx_hash",
    "official_order",
]

Flavor = Literal["libstdc++", "libc++", "libc++-wasm32"]
"""The C++ standard library (and word size) an Autumn.cpp build was compiled with."""

FLAVORS: Final[tuple[Flavor, ...]] = get_args(Flavor)
"""Every supported flavour."""

DEFAULT_FLAVOR: Final[Flavor] = "libstdc++"
"""The flavour :func:`official_order` uses unless told otherwise: a Linux build with GCC."""

_MASK64: Final = (1 << 64) - 1
_MASK32: Final = (1 << 32) - 1

# ---------------------------------------------------------------------------------------------------------------
# libstdc++ (GCC, 64-bit): std::_Hash_bytes
# ---------------------------------------------------------------------------------------------------------------

_LIBSTDCXX_SEED: Final = 0xC70F6907
_LIBSTDCXX_MUL: Final = (0xC6A4A793 << 32) + 0x5BD1E995


def _shift_mix(value: int) -> int:
    """``v ^ (v >> 47)`` on a 64-bit word."""
    return value ^ (value >> 47)


def libstdcxx_hash(name: str, seed: int = _LIBSTDCXX_SEED) -> int:
    """``std::hash<std::string>`` of GCC's libstdc++ on a 64-bit little-endian machine, of ``name`` in UTF-8.

    libstdc++ hashes strings with ``std::_Hash_bytes(data, length, 0xc70f6907)``, a 64-bit MurmurHash2 variant: the
    state starts as ``seed ^ (length * mul)``; each whole 8-byte little-endian word ``w`` is mixed in as
    ``shift_mix(w * mul) * mul`` followed by a multiplication of the state by ``mul``; the 1-7 trailing bytes, read
    as a little-endian number, are xored in and multiplied once more; the result is ``shift_mix(shift_mix(h) *
    mul)``, where ``mul = 0xc6a4a7935bd1e995`` and ``shift_mix(v) = v ^ (v >> 47)`` (all arithmetic mod 2**64).
    """
    data = name.encode("utf-8")
    length = len(data)
    mul = _LIBSTDCXX_MUL
    value = (seed ^ (length * mul)) & _MASK64
    aligned = length & ~7
    for start in range(0, aligned, 8):
        word = int.from_bytes(data[start : start + 8], "little")
        value ^= (_shift_mix((word * mul) & _MASK64) * mul) & _MASK64
        value = (value * mul) & _MASK64
    if length & 7:
        value ^= int.from_bytes(data[aligned:], "little")
        value = (value * mul) & _MASK64
    value = (_shift_mix(value) * mul) & _MASK64
    return _shift_mix(value)


# The bucket counts a default-constructed libstdc++ unordered_map goes through when keys are inserted one at a time
# (max load factor 1.0). The map starts with 1 bucket; its first insertion asks the prime rehash policy for at least
# 11 + 1 buckets, and every later growth (when an insertion would make the size exceed the bucket count) for at least
# twice the current count; the policy answers with the smallest entry of libstdc++'s fixed table of primes that is
# at least that large. The table skips many primes (97 -> 103, 127 -> 137, ...), so these are the entries the growth
# reaches, measured with GCC 12 (libstdc++ 6.0.30).
_LIBSTDCXX_BUCKET_COUNTS: Final[tuple[int, ...]] = (
    1,
    13,
    29,
    59,
    127,
    257,
    541,
    1109,
    2357,
    5087,
    10273,
    20753,
    42043,
    85229,
    172933,
    351061,
    712697,
    1447153,
    2938679,
    5967347,
)

# ---------------------------------------------------------------------------------------------------------------
# libc++ (clang): std::__murmur2_or_cityhash
# ---------------------------------------------------------------------------------------------------------------

_K0: Final = 0xC3A5C85C97CB3127
_K1: Final = 0xB492B66FBE98F273
_K2: Final = 0x9AE16A3B2F90404F
_K3: Final = 0xC949D7C7509E6557
_KMUL: Final = 0x9DDFEA08EB382D69


def _word64(data: bytes, start: int) -> int:
    """The little-endian 64-bit word at ``data[start:start + 8]``."""
    return int.from_bytes(data[start : start + 8], "little")


def _word32(data: bytes, start: int) -> int:
    """The little-endian 32-bit word at ``data[start:start + 4]``."""
    return int.from_bytes(data[start : start + 4], "little")


def _rotate(value: int, shift: int) -> int:
    """Rotate a 64-bit word right by ``shift`` bits (``shift`` 0 leaves it unchanged)."""
    if shift == 0:
        return value
    return ((value >> shift) | (value << (64 - shift))) & _MASK64


def _hash_len_16(low: int, high: int) -> int:
    """CityHash's 128-to-64-bit mix (``Hash128to64``)."""
    a = ((low ^ high) * _KMUL) & _MASK64
    a ^= a >> 47
    b = ((high ^ a) * _KMUL) & _MASK64
    b ^= b >> 47
    return (b * _KMUL) & _MASK64


def _hash_len_0_to_16(data: bytes) -> int:
    """libc++'s CityHash64 of 0-16 bytes."""
    length = len(data)
    if length > 8:
        a = _word64(data, 0)
        b = _word64(data, length - 8)
        return _hash_len_16(a, _rotate((b + length) & _MASK64, length)) ^ b
    if length >= 4:
        a = _word32(data, 0)
        b = _word32(data, length - 4)
        # libc++ shifts the 32-bit word in 32-bit arithmetic before widening it (CityHash widens first).
        return _hash_len_16(length + ((a << 3) & _MASK32), b)
    if length > 0:
        y = data[0] + (data[length >> 1] << 8)
        z = length + (data[length - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K3)) & _MASK64) * _K2) & _MASK64
    return _K2


def _hash_len_17_to_32(data: bytes) -> int:
    """libc++'s CityHash64 of 17-32 bytes."""
    length = len(data)
    a = (_word64(data, 0) * _K1) & _MASK64
    b = _word64(data, 8)
    c = (_word64(data, length - 8) * _K2) & _MASK64
    d = (_word64(data, length - 16) * _K0) & _MASK64
    return _hash_len_16(
        (_rotate((a - b) & _MASK64, 43) + _rotate(c, 30) + d) & _MASK64,
        (a + _rotate(b ^ _K3, 20) - c + length) & _MASK64,
    )


def _hash_len_33_to_64(data: bytes) -> int:
    """libc++'s CityHash64 of 33-64 bytes."""
    length = len(data)
    z = _word64(data, 24)
    a = (_word64(data, 0) + (length + _word64(data, length - 16)) * _K0) & _MASK64
    b = _rotate((a + z) & _MASK64, 52)
    c = _rotate(a, 37)
    a = (a + _word64(data, 8)) & _MASK64
    c = (c + _rotate(a, 7)) & _MASK64
    a = (a + _word64(data, 16)) & _MASK64
    vf = (a + z) & _MASK64
    vs = (b + _rotate(a, 31) + c) & _MASK64
    a = (_word64(data, 16) + _word64(data, length - 32)) & _MASK64
    z = (z + _word64(data, length - 8)) & _MASK64
    b = _rotate((a + z) & _MASK64, 52)
    c = _rotate(a, 37)
    a = (a + _word64(data, length - 24)) & _MASK64
    c = (c + _rotate(a, 7)) & _MASK64
    a = (a + _word64(data, length - 16)) & _MASK64
    wf = (a + z) & _MASK64
    ws = (b + _rotate(a, 31) + c) & _MASK64
    r = _shift_mix(((vf + ws) * _K2 + (wf + vs) * _K0) & _MASK64)
    return (_shift_mix((r * _K0 + vs) & _MASK64) * _K2) & _MASK64


def _weak_hash_len_32_with_seeds(data: bytes, start: int, a: int, b: int) -> tuple[int, int]:
    """CityHash's 128-bit mix of the 32 bytes at ``data[start:]`` with seeds ``a`` and ``b``."""
    w = _word64(data, start)
    x = _word64(data, start + 8)
    y = _word64(data, start + 16)
    z = _word64(data, start + 24)
    a = (a + w) & _MASK64
    b = _rotate((b + a + z) & _MASK64, 21)
    c = a
    a = (a + x + y) & _MASK64
    b = (b + _rotate(a, 44)) & _MASK64
    return (a + z) & _MASK64, (b + c) & _MASK64


def _hash_len_over_64(data: bytes) -> int:
    """libc++'s CityHash64 of more than 64 bytes: the tail first, then 64-byte blocks from the start."""
    length = len(data)
    x = _word64(data, length - 40)
    y = (_word64(data, length - 16) + _word64(data, length - 56)) & _MASK64
    z = _hash_len_16((_word64(data, length - 48) + length) & _MASK64, _word64(data, length - 24))
    v = _weak_hash_len_32_with_seeds(data, length - 64, length, z)
    w = _weak_hash_len_32_with_seeds(data, length - 32, (y + _K1) & _MASK64, x)
    x = (x * _K1 + _word64(data, 0)) & _MASK64
    remaining = (length - 1) & ~63
    start = 0
    while True:
        x = (_rotate((x + y + v[0] + _word64(data, start + 8)) & _MASK64, 37) * _K1) & _MASK64
        y = (_rotate((y + v[1] + _word64(data, start + 48)) & _MASK64, 42) * _K1) & _MASK64
        x ^= w[1]
        y = (y + v[0] + _word64(data, start + 40)) & _MASK64
        z = (_rotate((z + w[0]) & _MASK64, 33) * _K1) & _MASK64
        v = _weak_hash_len_32_with_seeds(data, start, (v[1] * _K1) & _MASK64, (x + w[0]) & _MASK64)
        w = _weak_hash_len_32_with_seeds(
            data, start + 32, (z + w[1]) & _MASK64, (y + _word64(data, start + 16)) & _MASK64
        )
        z, x = x, z
        start += 64
        remaining -= 64
        if remaining == 0:
            break
    return _hash_len_16(
        (_hash_len_16(v[0], w[0]) + _shift_mix(y) * _K1 + z) & _MASK64,
        (_hash_len_16(v[1], w[1]) + x) & _MASK64,
    )


def libcxx_hash(name: str) -> int:
    """``std::hash<std::string>`` of LLVM's libc++ with a 64-bit ``size_t``, of ``name`` in UTF-8.

    libc++ hashes strings with its 64-bit ``__murmur2_or_cityhash``, which is CityHash64 (version 1.0): separate
    mixes for lengths 0-16, 17-32 and 33-64 bytes and a 64-byte block loop beyond. One detail differs from Google's
    CityHash64: for 4-8 bytes libc++ shifts the first 32-bit word left by 3 in 32-bit arithmetic (dropping the
    carried-out bits) before adding the length.
    """
    data = name.encode("utf-8")
    length = len(data)
    if length <= 16:
        return _hash_len_0_to_16(data)
    if length <= 32:
        return _hash_len_17_to_32(data)
    if length <= 64:
        return _hash_len_33_to_64(data)
    return _hash_len_over_64(data)


def libcxx_hash32(name: str) -> int:
    """``std::hash<std::string>`` of LLVM's libc++ with a 32-bit ``size_t`` (Emscripten's wasm32), of ``name`` in
    UTF-8.

    With a 32-bit ``size_t`` libc++'s ``__murmur2_or_cityhash`` is MurmurHash2 (``m = 0x5bd1e995``, ``r = 24``)
    seeded with the length: each 4-byte little-endian word ``k`` becomes ``k * m; k ^= k >> 24; k *= m`` and is
    folded in as ``h = (h * m) ^ k``; the 1-3 trailing bytes are xored in (the last at bit 0, then 8, then 16) and
    the state multiplied by ``m``; the result is finished with ``h ^= h >> 13; h *= m; h ^= h >> 15`` (mod 2**32).
    """
    data = name.encode("utf-8")
    length = len(data)
    m = 0x5BD1E995
    value = length & _MASK32
    aligned = length & ~3
    for start in range(0, aligned, 4):
        k = (_word32(data, start) * m) & _MASK32
        k ^= k >> 24
        k = (k * m) & _MASK32
        value = ((value * m) & _MASK32) ^ k
    tail = data[aligned:]
    if tail:
        for index in range(len(tail) - 1, -1, -1):
            value ^= tail[index] << (8 * index)
        value = (value * m) & _MASK32
    value ^= value >> 13
    value = (value * m) & _MASK32
    return value ^ (value >> 15)


def _is_prime(number: int) -> bool:
    """Whether ``number`` is prime (trial division; bucket counts stay small)."""
    if number < 2:
        return False
    if number % 2 == 0:
        return number == 2
    divisor = 3
    while divisor * divisor <= number:
        if number % divisor == 0:
            return False
        divisor += 2
    return True


def _next_prime(number: int) -> int:
    """The smallest prime >= ``number`` (libc++'s ``__next_prime``)."""
    while not _is_prime(number):
        number += 1
    return number


def bucket_count_after_growth(flavor: Flavor, bucket_count: int) -> int:
    """The bucket count a default-constructed ``std::unordered_map`` of ``flavor`` moves to when an insertion finds
    it full (size equal to ``bucket_count``, or no buckets yet), with the default max load factor of 1.0.

    - libstdc++ starts with 1 bucket and grows to the smallest entry of its prime table that is at least twice the
      count (at least 12 on the first insertion): 1 -> 13 -> 29 -> 59 -> 127 -> ...
    - libc++ starts with 0 buckets and grows to ``2 * count + 1`` rounded up to a prime (a request for 1 bucket
      gives 2): 0 -> 2 -> 5 -> 11 -> 23 -> 47 -> ...

    Raises ValueError for a libstdc++ count beyond the measured part of its table (a map of millions of names).
    """
    if flavor == "libstdc++":
        try:
            index = _LIBSTDCXX_BUCKET_COUNTS.index(bucket_count)
        except ValueError:
            raise ValueError(f"{bucket_count} is not a bucket count a growing libstdc++ map reaches") from None
        if index + 1 == len(_LIBSTDCXX_BUCKET_COUNTS):
            raise ValueError(f"libstdc++ growth beyond {bucket_count} buckets is not tabulated")
        return _LIBSTDCXX_BUCKET_COUNTS[index + 1]
    if flavor in ("libc++", "libc++-wasm32"):
        wanted = 2 * bucket_count + 1
        return 2 if wanted == 1 else _next_prime(wanted)
    raise ValueError(f"unknown flavor {flavor!r}; expected one of {FLAVORS}")


_HASHES: Final[dict[Flavor, Callable[[str], int]]] = {
    "libstdc++": libstdcxx_hash,
    "libc++": libcxx_hash,
    "libc++-wasm32": libcxx_hash32,
}

_INITIAL_BUCKET_COUNT: Final[dict[Flavor, int]] = {"libstdc++": 1, "libc++": 0, "libc++-wasm32": 0}


class _NodeList:
    """A hash table's singly linked node list, modelled as its runs: the nodes of one bucket are always adjacent, so
    the list is a sequence of runs, one per non-empty bucket."""

    def __init__(self) -> None:
        self.runs: list[list[str]] = []
        self.run_of: dict[int, list[str]] = {}

    def insert(self, name: str, bucket: int) -> None:
        """Insert a new node as both libraries do: at the front of its bucket's run if the bucket is not empty,
        else at the front of the whole list (as a run of its own)."""
        run = self.run_of.get(bucket)
        if run is not None:
            run.insert(0, name)
        else:
            run = [name]
            self.runs.insert(0, run)
            self.run_of[bucket] = run

    def names(self) -> list[str]:
        """The nodes in iteration order."""
        return [name for run in self.runs for name in run]

    def remove(self, name: str, bucket: int) -> None:
        """Unlink a node (both libraries leave the other nodes in their order; an emptied bucket's run goes)."""
        run = self.run_of[bucket]
        run.remove(name)
        if not run:
            del self.run_of[bucket]
            self.runs.remove(run)


def _rehash_libstdcxx(nodes: _NodeList, hashes: dict[str, int], buckets: int) -> _NodeList:
    """libstdc++'s rehash: take the nodes in list order and insert each into the new, empty bucket array by the
    ordinary insertion rule."""
    rebuilt = _NodeList()
    for name in nodes.names():
        rebuilt.insert(name, hashes[name] % buckets)
    return rebuilt


def _rehash_libcxx(nodes: _NodeList, hashes: dict[str, int], buckets: int) -> _NodeList:
    """libc++'s rehash: walk the list once, in place. A node whose new bucket equals that of the last node left in
    place stays (extending that run); a node whose bucket has no run yet stays and starts a new run; a node whose
    bucket already has a run earlier in the list is unlinked and spliced at the front of that run."""
    rebuilt = _NodeList()
    current: int | None = None
    for name in nodes.names():
        bucket = hashes[name] % buckets
        run = rebuilt.run_of.get(bucket)
        if bucket == current and run is not None:
            run.append(name)
        elif run is None:
            run = [name]
            rebuilt.runs.append(run)
            rebuilt.run_of[bucket] = run
            current = bucket
        else:
            run.insert(0, name)
    return rebuilt


def official_order(names: Sequence[str], flavor: Flavor = DEFAULT_FLAVOR) -> list[str]:
    """The order in which Autumn.cpp evaluates the INIT and NEXT expressions of state variables ``names``.

    ``names`` are the state variables in the order their ``(= name (initnext ...))`` statements appear in the
    program, which is the order Autumn.cpp inserts them (with ``operator[]``) into its
    ``std::unordered_map<std::string, ...>`` of INIT and of NEXT expressions. The result is the order a range-for
    over such a default-constructed map visits them, for the standard library ``flavor`` (see the module docstring).
    A name given twice is inserted once, at its first position (a second ``operator[]`` only overwrites the value),
    so the result lists each distinct name once.
    """
    table = OfficialMap(flavor)
    for name in names:
        table.insert(name)
    return table.names()


class OfficialMap:
    """The iteration order of a default-constructed ``std::unordered_map<std::string, T>`` of ``flavor`` through
    insertions (``operator[]``: a name already present keeps its place) and erasures."""

    def __init__(self, flavor: Flavor = DEFAULT_FLAVOR) -> None:
        try:
            self._hash = _HASHES[flavor]
        except KeyError:
            raise ValueError(f"unknown flavor {flavor!r}; expected one of {FLAVORS}") from None
        self.flavor = flavor
        self._rehash = _rehash_libstdcxx if flavor == "libstdc++" else _rehash_libcxx
        self._buckets = _INITIAL_BUCKET_COUNT[flavor]
        self._nodes = _NodeList()
        self._hashes: dict[str, int] = {}

    def insert(self, name: str) -> None:
        """Insert ``name`` unless present; the map grows first when it never has, or when it would be fuller
        than its bucket count."""
        if name in self._hashes:
            return
        if self._buckets == _INITIAL_BUCKET_COUNT[self.flavor] or len(self._hashes) + 1 > self._buckets:
            self._buckets = bucket_count_after_growth(self.flavor, self._buckets)
            self._nodes = self._rehash(self._nodes, self._hashes, self._buckets)
        self._hashes[name] = self._hash(name)
        self._nodes.insert(name, self._hashes[name] % self._buckets)

    def erase(self, name: str) -> None:
        """Erase ``name`` if present (the bucket count never shrinks)."""
        if name in self._hashes:
            self._nodes.remove(name, self._hashes.pop(name) % self._buckets)

    def names(self) -> list[str]:
        """The names in iteration order."""
        return self._nodes.names()
