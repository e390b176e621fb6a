#include <unistd.h>

#include "server/io/open_file.hpp"

namespace toast::server {

OpenFile::~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace toast::server
