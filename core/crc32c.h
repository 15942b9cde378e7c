// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78; RFC 3720 section 12.1), the checksum of
// TFRecord framing, and TFRecord's masked form of it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace hamgan {

uint32_t crc32c(const void* data, size_t n);

// TFRecord stores a CRC rotated right by 15 bits plus a constant
// (tensorflow/core/lib/hash/crc32c.h, Mask): a CRC of data that itself holds CRCs is then no
// longer a CRC of the same shape.
inline uint32_t mask_crc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace hamgan
