#include "server/core/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace toast::server {

namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78;  // reflected Castagnoli polynomial

constexpr std::array<std::uint32_t, 256> make_table() {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
        t[i] = c;
    }
    return t;
}

constexpr auto kTable = make_table();

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(const void* data, std::size_t size,
                                                             std::uint32_t crc) {
    auto p = static_cast<const unsigned char*>(data);
    std::uint64_t c = ~crc;
    while (size >= 8) {
        std::uint64_t word;
        std::memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        size -= 8;
    }
    auto c32 = static_cast<std::uint32_t>(c);
    while (size > 0) {
        c32 = _mm_crc32_u8(c32, *p++);
        --size;
    }
    return ~c32;
}
#endif

}  // namespace

bool crc32c_hardware_available() {
#if defined(__x86_64__)
    static const bool available = __builtin_cpu_supports("sse4.2");
    return available;
#else
    return false;
#endif
}

std::uint32_t crc32c_portable(const void* data, std::size_t size, std::uint32_t crc) {
    auto p = static_cast<const unsigned char*>(data);
    std::uint32_t c = ~crc;
    for (std::size_t i = 0; i < size; ++i)
        c = kTable[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return ~c;
}

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc) {
#if defined(__x86_64__)
    if (crc32c_hardware_available()) return crc32c_sse42(data, size, crc);
#endif
    return crc32c_portable(data, size, crc);
}

}  // namespace toast::server
