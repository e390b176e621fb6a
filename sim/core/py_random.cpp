#include "sim/core/py_random.hpp"

#include <array>
#include <cmath>
#include <vector>

namespace toast::sim {

namespace {

constexpr std::size_t N = 624;

// CPython's init_by_array (Modules/_randommodule.c): the state MT19937 starts from for an integer seed.
std::array<std::uint32_t, N> init_by_array(const std::vector<std::uint32_t>& key) {
    std::array<std::uint32_t, N> mt{};
    mt[0] = 19650218u;
    for (std::size_t i = 1; i < N; ++i)
        mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
    std::size_t i = 1, j = 0;
    for (std::size_t k = std::max(N, key.size()); k > 0; --k) {
        mt[i] =
            (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] + static_cast<std::uint32_t>(j);
        ++i;
        ++j;
        if (i >= N) {
            mt[0] = mt[N - 1];
            i = 1;
        }
        if (j >= key.size()) j = 0;
    }
    for (std::size_t k = N - 1; k > 0; --k) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - static_cast<std::uint32_t>(i);
        ++i;
        if (i >= N) {
            mt[0] = mt[N - 1];
            i = 1;
        }
    }
    mt[0] = 0x80000000u;
    return mt;
}

// Hands a ready state to std::mt19937::seed, which copies it word for word (its top word is non-zero).
struct StateSeq {
    const std::array<std::uint32_t, N>* state;
    using result_type = std::uint32_t;
    template <class It>
    void generate(It begin, It end) const {
        std::size_t k = 0;
        for (auto it = begin; it != end; ++it, ++k)
            *it = (*state)[k % N];
    }
};

}  // namespace

PyRandom::PyRandom(std::uint64_t seed) {
    std::vector<std::uint32_t> key;
    for (auto s = seed; s != 0; s >>= 32)
        key.push_back(static_cast<std::uint32_t>(s & 0xffffffffu));
    if (key.empty()) key.push_back(0);
    const auto state = init_by_array(key);
    StateSeq seq{&state};
    engine_.seed(seq);
}

double PyRandom::random() {
    const std::uint32_t a = next_u32() >> 5;
    const std::uint32_t b = next_u32() >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

double PyRandom::expovariate(double lambd) {
    return -std::log(1.0 - random()) / lambd;
}

}  // namespace toast::sim
