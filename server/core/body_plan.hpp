// The steps of a response body made of title bytes, in wire order: literal framing (a multipart part's
// prefix, the closing trailer) and windows of title bytes. Windows are at most `window` bytes, so a
// whole-title GET neither waits for nor holds the whole title; when the body is paced they are also cut at
// slice boundaries (slice k holds the k-th `slices` entry's bytes of body data; a variable-bit-rate title's
// slices follow its demand trace), so each slice is a transmission of its own.
// Pure: the plan depends only on the response's parts, the window and the slices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "server/core/request_handler.hpp"

namespace toast::server {

struct BodyItem {
    static constexpr std::size_t kTrailer = static_cast<std::size_t>(-1);

    bool literal = false;
    std::size_t part = 0;      // literal: the part whose prefix this is, or kTrailer; title: the part
    std::uint64_t offset = 0;  // title bytes: position in the title
    std::uint64_t length = 0;
    bool slice_start = false;  // paced: wait for the pacer before sending this
    bool slice_end = false;    // paced: a transmission ends after this
    // paced, at a slice start: rounds of the schedule with no bytes just before this slice; each is one more
    // time slice to wait, so the slices after them keep their rounds
    std::uint32_t idle_before = 0;
    bool operator==(const BodyItem&) const = default;
};

// `slices` empty: not paced. Body bytes past the slices' sum (there are none when the slices come from
// paced_rounds for the whole title) form one last slice. A zero-byte slice has no item: the next slice's
// idle_before counts it. Preconditions:
// window > 0; the response has a title.
std::vector<BodyItem> plan_body(const HttpResponse& response, std::uint64_t window,
                                std::span<const std::uint64_t> slices = {});

}  // namespace toast::server
