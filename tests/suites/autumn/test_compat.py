"""The official interpreter's evaluation order (``discogym.suites.autumn.compat``).

Ground truth is a real ``std::unordered_map<std::string, ...>``: a tiny C++ program inserts each list of names with
``operator[]`` (as Autumn.cpp does) and prints the iteration order, compiled with g++ (libstdc++) and, where clang
and libc++ are installed, with clang++ -stdlib=libc++. The plain unit tests pin hash values and orders that were
measured that way (GCC 12 / libstdc++, clang 14 / libc++ 14 on x86_64), so they run without a compiler.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from discogym.suites.autumn.compat import (
    DEFAULT_FLAVOR,
    FLAVORS,
    Flavor,
    bucket_count_after_growth,
    libcxx_hash,
    libcxx_hash32,
    libstdcxx_hash,
    official_order,
)

# name, libstdc++ hash, libc++ 64-bit hash, libc++ 32-bit hash (measured with g++ 12 and clang 14 + libc++ 14)
KNOWN_HASHES = [
    ("", 6142509188972423790, 11160318154034397263, 0),
    ("a", 4993892634952068459, 2603192927274642682, 2456313694),
    ("ab", 5498234120169091963, 1725057946192985918, 446775395),
    ("abcdefgh", 8664279048047335611, 9783666229747886974, 69371878),
    ("abcdefghi", 13036955925923793583, 7406163328168016081, 4029782695),
    ("hello world!", 6594337730806245023, 9835112831561035123, 1685739664),
    ("particles", 10887622831143170890, 16044637912493317124, 2143297261),
    ("nextLiquidMoveClosestHole", 16700119350748299401, 16235563667970986480, 2940800302),
    ("isFreeRangeExceptObj_with_a_rather_long_name_42", 8282885914815319502, 11179481798560583331, 3518776561),
    (
        "a_state_variable_name_that_is_much_longer_than_sixty_four_bytes_in_all_1234567",
        7867238518801948687,
        4843937167158497007,
        3703772215,
    ),
]

ALPHABET = "abcdefghijklmnopqrstuvwxyz"
KNOWN_ORDERS: dict[str, dict[Flavor, str]] = {
    "a b c d e f g h i j k l m n o p": {
        "libstdc++": "o a b p h n d k c i f g e j l m",
        "libc++": "p l k o h m g f c d e j n b i a",
        "libc++-wasm32": "p n l i k g o f e j d h c m b a",
    },
    "particles time agent water clicks counter": {
        "libstdc++": "counter clicks water agent time particles",
        "libc++": "counter clicks agent time water particles",
        "libc++-wasm32": "agent clicks water time counter particles",
    },
    "v0 v1 v2 v3 v4 v5 v6 v7 v8 v9 v10 v11 v12 v13": {
        "libstdc++": "v0 v13 v5 v10 v2 v3 v1 v4 v6 v11 v7 v12 v8 v9",
        "libc++": "v12 v11 v9 v7 v6 v5 v3 v2 v1 v10 v4 v13 v8 v0",
        "libc++-wasm32": "v13 v12 v11 v10 v9 v7 v6 v5 v4 v2 v1 v3 v8 v0",
    },
}

HASHES = {"libstdc++": libstdcxx_hash, "libc++": libcxx_hash, "libc++-wasm32": libcxx_hash32}


@pytest.mark.parametrize(("name", "gnu", "llvm", "llvm32"), KNOWN_HASHES)
def test_hashes_match_the_values_measured_with_the_real_standard_libraries(name, gnu, llvm, llvm32):
    assert libstdcxx_hash(name) == gnu
    assert libcxx_hash(name) == llvm
    assert libcxx_hash32(name) == llvm32


def test_hashes_read_the_name_as_utf8():
    assert libstdcxx_hash("é") == libstdcxx_hash("\u00e9")
    assert libstdcxx_hash("é") != libstdcxx_hash("e")
    assert 0 <= libcxx_hash("ü" * 70) < 2**64
    assert 0 <= libcxx_hash32("ü" * 7) < 2**32


@pytest.mark.parametrize("names", sorted(KNOWN_ORDERS))
@pytest.mark.parametrize("flavor", FLAVORS)
def test_known_orders(names, flavor):
    assert official_order(names.split(), flavor) == KNOWN_ORDERS[names][flavor].split()


def test_the_default_flavor_is_libstdcxx():
    assert DEFAULT_FLAVOR == "libstdc++"
    names = list(ALPHABET)
    assert official_order(names) == official_order(names, "libstdc++")


def test_bucket_growth_sequences():
    counts = [1]
    for _ in range(8):
        counts.append(bucket_count_after_growth("libstdc++", counts[-1]))
    assert counts == [1, 13, 29, 59, 127, 257, 541, 1109, 2357]
    for flavor in ("libc++", "libc++-wasm32"):
        counts = [0]
        for _ in range(11):
            counts.append(bucket_count_after_growth(flavor, counts[-1]))
        assert counts == [0, 2, 5, 11, 23, 47, 97, 197, 397, 797, 1597, 3203]
    with pytest.raises(ValueError, match="not a bucket count"):
        bucket_count_after_growth("libstdc++", 14)
    with pytest.raises(ValueError, match="not tabulated"):
        bucket_count_after_growth("libstdc++", 5967347)


@pytest.mark.parametrize("flavor", FLAVORS)
def test_small_cases(flavor):
    assert official_order([], flavor) == []
    assert official_order(["x"], flavor) == ["x"]
    names = [f"n{i}" for i in range(100)]
    assert sorted(official_order(names, flavor)) == sorted(names)


@pytest.mark.parametrize("flavor", FLAVORS)
def test_a_repeated_name_is_inserted_once_at_its_first_position(flavor):
    names = ["ball", "wall", "ball", "score", "wall", "time"]
    assert official_order(names, flavor) == official_order(["ball", "wall", "score", "time"], flavor)


def test_libstdcxx_with_few_names_is_mostly_reverse_insertion_order():
    # 13 buckets and 2 names: the second goes to the front of the list unless it shares the first one's bucket.
    assert libstdcxx_hash("a") % 13 != libstdcxx_hash("b") % 13
    assert official_order(["a", "b"]) == ["b", "a"]


def test_unknown_flavor():
    with pytest.raises(ValueError, match="unknown flavor"):
        official_order(["a"], "msvc")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown flavor"):
        bucket_count_after_growth("msvc", 1)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------------
# Comparison with a real std::unordered_map
# ---------------------------------------------------------------------------------------------------------------

CXX_PROGRAM = r"""
#include <cstdint>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#ifdef AUTUMN_WASM32_HASH
// libc++'s string hash as it is with a 32-bit size_t (wasm32), on this 64-bit machine.
struct Hash32 {
  std::size_t operator()(const std::string &s) const noexcept {
    return std::__murmur2_or_cityhash<std::uint32_t, 32>()(s.data(), static_cast<std::uint32_t>(s.size()));
  }
};
using Map = std::unordered_map<std::string, std::shared_ptr<int>, Hash32>;
#else
using Map = std::unordered_map<std::string, std::shared_ptr<int>>;
#endif
int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    Map map;
    std::istringstream words(line);
    std::string name;
    while (words >> name) map[name] = nullptr;
    bool first = true;
    for (const auto &entry : map) {
      std::cout << (first ? "" : " ") << entry.first;
      first = false;
    }
    std::cout << "\n";
  }
}
"""

FIRST = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
REST = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"))


def identifier(rng: np.random.Generator, max_length: int = 16) -> str:
    """An identifier-like name: a letter, then letters, digits and underscores."""
    length = int(rng.integers(1, max_length + 1))
    return str(rng.choice(FIRST)) + "".join(rng.choice(REST, size=length - 1).tolist())


def random_lists(seed: int = 20240611, count: int = 200) -> list[list[str]]:
    """``count`` lists of 1-40 identifier-like names; about a third repeat some names."""
    rng = np.random.default_rng(seed)
    lists = []
    for _ in range(count):
        names = [identifier(rng) for _ in range(int(rng.integers(1, 41)))]
        if rng.random() < 0.3:
            repeats = rng.choice(len(names), size=int(rng.integers(1, 4)))
            for index in repeats.tolist():
                names.insert(int(rng.integers(0, len(names) + 1)), names[index])
        lists.append(names)
    return lists


def growth_points(flavor: Flavor, up_to: int) -> list[int]:
    """The bucket counts a growing map of ``flavor`` passes through, up to ``up_to``."""
    counts = [bucket_count_after_growth(flavor, 0 if flavor != "libstdc++" else 1)]
    while counts[-1] < up_to:
        counts.append(bucket_count_after_growth(flavor, counts[-1]))
    return counts


def edge_case_lists(flavor: Flavor) -> list[list[str]]:
    """Empty and one-name lists, lists just below, at and above each growth threshold, lists whose names share a
    bucket, and long names (each hash length class)."""
    rng = np.random.default_rng(7)
    hash_name = HASHES[flavor]
    lists: list[list[str]] = [[], ["x"], ["x", "x"]]
    for buckets in growth_points(flavor, 130):
        for size in (buckets - 1, buckets, buckets + 1):
            if size > 0:
                lists.append([f"v{i}" for i in range(size)])
                lists.append([identifier(rng) for _ in range(size)])
    pool = {identifier(rng, 10) for _ in range(6000)}
    for buckets in growth_points(flavor, 60)[:4]:
        by_bucket: dict[int, list[str]] = defaultdict(list)
        for name in sorted(pool):
            by_bucket[hash_name(name) % buckets].append(name)
        crowded = max(by_bucket.values(), key=len)
        lists.append(crowded[: buckets + 2])  # one bucket only, across the next growth
        mixed = crowded[:6] + sorted(pool)[:buckets] + crowded[6:12]
        lists.append(mixed)
    lists.append(["".join(rng.choice(REST, size=n).tolist()) + str(n) for n in range(1, 200, 3)])
    return lists


def run_cxx(compiler: list[str], tmp_path: Path, lists: list[list[str]]) -> list[list[str]]:
    """Compile the C++ program with ``compiler`` and return the iteration order it prints for each list."""
    source = tmp_path / "order.cpp"
    source.write_text(CXX_PROGRAM, encoding="utf-8")
    binary = tmp_path / "order"
    built = subprocess.run([*compiler, "-O0", "-std=c++17", str(source), "-o", str(binary)], capture_output=True)
    if built.returncode != 0:
        pytest.skip(f"{' '.join(compiler)} could not build the test program: {built.stderr.decode()[-500:]}")
    text = "".join(" ".join(names) + "\n" for names in lists)
    done = subprocess.run([str(binary)], input=text, capture_output=True, text=True, timeout=60, check=True)
    lines = done.stdout.split("\n")
    assert len(lines) == len(lists) + 1
    return [line.split() for line in lines[:-1]]


def compare(flavor: Flavor, compiler: list[str], tmp_path: Path) -> None:
    """Every random and edge-case list is visited in the same order by ``official_order`` and the real map."""
    lists = random_lists() + edge_case_lists(flavor)
    expected = run_cxx(compiler, tmp_path, lists)
    mismatches = [
        (names, want, got)
        for names, want in zip(lists, expected, strict=True)
        if (got := official_order(names, flavor)) != want
    ]
    assert not mismatches, f"{len(mismatches)} of {len(lists)} lists differ; first: {mismatches[0]}"
    assert len(lists) > 200


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed: no libstdc++ map to compare with")
def test_libstdcxx_order_matches_gxx(tmp_path):
    compare("libstdc++", ["g++"], tmp_path)


@pytest.mark.skipif(shutil.which("clang++") is None, reason="clang++ is not installed: no libc++ map to compare with")
def test_libcxx_order_matches_clang_libcxx(tmp_path):
    compare("libc++", ["clang++", "-stdlib=libc++"], tmp_path)


@pytest.mark.skipif(shutil.which("clang++") is None, reason="clang++ is not installed: no libc++ map to compare with")
def test_libcxx_wasm32_order_matches_clang_libcxx_with_the_32_bit_hash(tmp_path):
    compare("libc++-wasm32", ["clang++", "-stdlib=libc++", "-DAUTUMN_WASM32_HASH"], tmp_path)
