// CRC-32C (Castagnoli), the per-chunk checksum of stored blocks. Uses the SSE4.2 crc32 instruction when the
// CPU has it (checked once at run time) and a table otherwise; both give identical results.
#pragma once

#include <cstddef>
#include <cstdint>

namespace toast::server {

// CRC-32C of data[0, size), continuing from `crc` (0 to start). crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0);
// The portable path, exposed so tests can compare it with the hardware path.
std::uint32_t crc32c_portable(const void* data, std::size_t size, std::uint32_t crc = 0);
bool crc32c_hardware_available();

}  // namespace toast::server
