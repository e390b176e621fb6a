// The error of the store's write side: an ingest, and the upkeep that prepares and cleans the store for it.
// Its message names the bad argument or the failed operation and its path.
#pragma once

#include <stdexcept>

namespace toast::server {

class IngestError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

}  // namespace toast::server
