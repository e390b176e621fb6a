#include <unistd.h>

#include "server/io/title_store.hpp"

namespace toast::server {

OpenFile::~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace toast::server
