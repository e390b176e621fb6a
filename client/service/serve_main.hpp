// `toast-client serve ARGS`: parses the service's command line, runs the TitleService until SIGINT/SIGTERM
// and returns the exit code (2 for a usage error, 1 when the service cannot start).
#pragma once

#include <string>
#include <vector>

namespace toast::client {

// `args` excludes the program name and "serve".
int serve_main(const std::vector<std::string>& args);

}  // namespace toast::client
