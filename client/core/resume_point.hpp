// Where a viewer left a title, kept in the save directory so that playing it again resumes there instead
// of at byte 0. One small JSON object: the title's size (a different title of the same name must
// not resume at a stranger's position) and the playhead's byte offset. Pure: text in, text out.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "client/core/piece_types.hpp"

namespace toast::client {

struct ResumePoint {
    Bytes title_size{0};
    ByteOffset offset{0};
    bool operator==(const ResumePoint&) const = default;
};

// {"title_size":N,"offset":M} and a newline.
std::string format_resume_point(const ResumePoint& p);

// Reads a saved point for a title of `title_size` bytes. nullopt with `error` naming the problem when the
// text is not such an object, the size differs or the offset is past the end. A point at the very end (the
// title was watched to the end) resumes at 0.
std::optional<ResumePoint> parse_resume_point(std::string_view text, Bytes title_size,
                                              std::string* error = nullptr);

// The file name of a title's resume point inside the save directory.
std::string resume_point_file_name(std::string_view title_file_name);

}  // namespace toast::client
