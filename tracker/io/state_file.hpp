// The state file on disk (its content is registry_state.hpp's): read whole at start-up, replaced
// atomically at each save, and moved aside when it cannot be used.
//
// A save is common/durable_file's write_file_atomically: a temporary file in the same directory, fsync'ed and
// renamed over PATH, then the directory fsync'ed. A crash at any moment leaves either the previous file or
// the new one, never a part of one; a failed save leaves PATH as it was and no temporary file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/core/result.hpp"

namespace toast::tracker {

struct StateFileContent {
    bool exists = false;  // a missing file is no error: the first start, or no save yet
    std::string bytes;
};

// Errors name the file and the system's reason: "cannot read state file '/x': Permission denied".
Result<StateFileContent, std::string> read_state_file(const std::filesystem::path& path);

// nullopt on success; else what failed, naming the file and the system's reason.
std::optional<std::string> write_state_file(const std::filesystem::path& path, std::string_view bytes);

// Renames PATH to PATH.bad (replacing an earlier one), so that the next save does not overwrite a file
// that could not be read. Returns the new path, or what failed.
Result<std::filesystem::path, std::string> move_aside(const std::filesystem::path& path);

}  // namespace toast::tracker
