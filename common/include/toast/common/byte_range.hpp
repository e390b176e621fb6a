// RFC 9110 §14 byte ranges: parsing a Range header against a representation length, and the Content-Range
// values that answer it. Pure; shared by the VoD server and the client's local player endpoint.
//
// Decisions this parser makes (all allowed by RFC 9110):
//  - A Range header that is not in the bytes unit, or that is syntactically invalid (including a range-spec
//    whose last-pos is below its first-pos), is ignored: the caller answers 200 with the whole
//    representation.
//  - More range-specs than `max_ranges` (counted before coalescing) ignores the header, which also bounds the
//    parser's work on a hostile header.
//  - Numerals longer than 64 bits saturate: a huge last-pos means "to the end", a huge first-pos is past the
//    end (unsatisfiable), a huge suffix-length means the whole representation.
//  - Unsatisfiable range-specs are dropped when at least one is satisfiable; if none is, the answer is 416.
//  - Ranges that overlap or lie within `coalesce_gap` bytes of each other are coalesced (§14.3 permits it),
//  so
//    a client cannot make the server send the same bytes many times. Ranges that are not coalesced keep the
//    order in which the client listed them (§15.3.7.2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toast {

// An inclusive byte range [first, last] inside a representation, always with first <= last.
struct ByteRange {
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    std::uint64_t length() const { return last - first + 1; }
    bool operator==(const ByteRange&) const = default;
};

enum class RangeStatus {
    absent,            // empty header value: no range requested
    unsupported_unit,  // not "bytes=": ignored
    invalid,           // syntactically invalid: ignored
    too_many_ranges,   // more than max_ranges range-specs: ignored
    satisfiable,       // `ranges` holds at least one range, inside the representation
    unsatisfiable,     // answer 416 with unsatisfied_content_range(length)
};

struct RangeLimits {
    std::size_t max_ranges = 16;
    std::uint64_t coalesce_gap = 80;  // roughly the overhead of one multipart part
};

struct RangeSet {
    RangeStatus status = RangeStatus::absent;
    std::vector<ByteRange> ranges;  // non-empty exactly when status == satisfiable
    // True when the caller should answer as if no Range header had been sent.
    bool ignored() const {
        return status != RangeStatus::satisfiable && status != RangeStatus::unsatisfiable;
    }
};

// Parses the value of a Range header against a representation of `length` bytes.
RangeSet parse_range_header(std::string_view value, std::uint64_t length, const RangeLimits& limits = {});

// "bytes FIRST-LAST/LENGTH" for a 206 response or a multipart part.
std::string content_range(const ByteRange& range, std::uint64_t length);
// "bytes */LENGTH" for a 416 response.
std::string unsatisfied_content_range(std::uint64_t length);

std::string_view to_string(RangeStatus status);

}  // namespace toast
