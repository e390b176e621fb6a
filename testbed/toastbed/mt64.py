"""The 64-bit Mersenne Twister (std::mt19937_64), so that the testbed and the C++ simulator draw the same
numbers from the same seed. Python's `random` is the 32-bit MT19937 with its own seeding and float
conversion, and C++'s standard distributions differ between libraries: both sides draw raw 64-bit outputs
and convert them with u01 (catalogue-workload spec in testbed/README.md, "Catalogue scenarios").
"""

from __future__ import annotations

_N, _M = 312, 156
_MASK = (1 << 64) - 1
_MATRIX_A = 0xB5026F5AA96619E9
_UPPER = _MASK & ~((1 << 31) - 1)  # the most significant 33 bits
_LOWER = (1 << 31) - 1             # the least significant 31 bits
DEFAULT_SEED = 5489                # std::mt19937_64::default_seed


class MT19937_64:
    """std::mt19937_64: seeded like its one-integer constructor, next() is operator()()."""

    def __init__(self, seed: int = DEFAULT_SEED):
        mt = [0] * _N
        mt[0] = seed & _MASK
        for i in range(1, _N):
            mt[i] = (6364136223846793005 * (mt[i - 1] ^ (mt[i - 1] >> 62)) + i) & _MASK
        self._mt = mt
        self._i = _N

    def _twist(self) -> None:
        mt = self._mt
        for i in range(_N):
            x = (mt[i] & _UPPER) | (mt[(i + 1) % _N] & _LOWER)
            xa = x >> 1
            if x & 1:
                xa ^= _MATRIX_A
            mt[i] = mt[(i + _M) % _N] ^ xa
        self._i = 0

    def next(self) -> int:
        if self._i >= _N:
            self._twist()
        x = self._mt[self._i]
        self._i += 1
        x ^= (x >> 29) & 0x5555555555555555
        x ^= (x << 17) & 0x71D67FFFEDA60000
        x ^= (x << 37) & 0xFFF7EEE000000000
        x ^= x >> 43
        return x & _MASK

    def u01(self) -> float:
        """A draw in [0, 1): the top 53 bits of the next output over 2^53 (exact in a double)."""
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)
