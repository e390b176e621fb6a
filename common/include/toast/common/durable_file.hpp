// Crash-safe file writing: write under a temporary name in the target's directory, fsync, rename over the
// target, fsync the directory. A reader sees the old file or the new one, never a partial one. Failures throw
// std::system_error (a std::runtime_error) naming the step and the path, with the system's error as its code,
// and leave no temporary file behind.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace toast {

// Temporary names start with '.' and contain ".tmp.", so scanners skip them and cleanup can find them.
std::filesystem::path temporary_name_for(const std::filesystem::path& target);
bool is_temporary_name(std::string_view file_name);

void fsync_directory(const std::filesystem::path& dir);

// Writes `data` to `target` atomically and durably (see above), a new file getting `mode` (less the umask).
void write_file_atomically(const std::filesystem::path& target, std::string_view data, unsigned mode = 0644);

// A file written and fsync'ed under a temporary name now, renamed over its target later by commit(); dropped
// (the temporary removed) if never committed. Lets a multi-file update do all the slow, failure-prone writing
// before the first rename.
class StagedFile {
  public:
    StagedFile(std::filesystem::path target, std::string_view data);
    ~StagedFile();
    StagedFile(StagedFile&& other) noexcept;
    StagedFile& operator=(StagedFile&&) = delete;
    StagedFile(const StagedFile&) = delete;
    StagedFile& operator=(const StagedFile&) = delete;
    // Renames into place and fsyncs the directory.
    void commit();

  private:
    std::filesystem::path target_;
    std::filesystem::path temp_;
};

// An exclusive advisory lock (flock) on a lock file, held until destruction: serialises ingests and cleanup
// of one store across processes. The kernel drops it if the process dies, so a killed ingest never wedges.
class FileLock {
  public:
    explicit FileLock(const std::filesystem::path& path);
    ~FileLock();
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;

  private:
    int fd_ = -1;
};

}  // namespace toast
