// This node's client side of its tier: relayed reads from the other nodes (GET /titles/NAME with a Range,
// answered only from the asked node's own disks) over a few keep-alive connections per node, and a status
// poll of every other node (GET /tier, every status_interval) for their load and their room for paced
// streams. What it hears feeds the TierView, whose decisions (which holder to ask, which node has room) it
// offers under a lock. Runs its own event loop thread; every callback comes from there.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/core/tier_config.hpp"
#include "server/core/tier_view.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server {

struct RelayRequest {
    std::string title;   // NAME
    std::string target;  // "/titles/NAME"
    std::string etag;    // the title's ETag (sent as If-Match: the node must hold the same bytes)
    std::uint64_t offset = 0;
    std::uint64_t length = 0;                                       // at least 1
    std::optional<std::chrono::steady_clock::time_point> deadline;  // sent as Toast-Deadline
    bool revalidate = false;                                        // sent as Cache-Control: no-cache
};

struct RelayAnswer {
    std::shared_ptr<const std::string> data;  // exactly the requested bytes; null when the relay failed
    std::string error;                        // why it failed
};

// What the HTTP layer has to say about this node in GET /tier.
using NodeStatusSource = std::function<NodeStatus()>;

class TierClient {
  public:
    using Clock = std::chrono::steady_clock;
    using Done = std::function<void(RelayAnswer)>;

    TierClient(const TierConfig& config, MetricsRegistry& metrics);
    ~TierClient();
    TierClient(const TierClient&) = delete;
    TierClient& operator=(const TierClient&) = delete;

    // The node at `url` (TierView index), known from then on.
    std::size_t node(std::string_view url);
    std::string url(std::size_t node);
    std::size_t self() const { return self_; }
    // TierView::choose and TierView::node_with_room at the current time.
    std::optional<std::size_t> choose(std::span<const std::size_t> holders,
                                      std::span<const std::size_t> tried, std::uint64_t tie_break);
    std::optional<std::size_t> node_with_room(std::span<const std::size_t> exclude);

    // Reads `request` from `node`; `done` runs once, on the client's thread. A failure (no answer within
    // relay_timeout, a status other than 206, a wrong Content-Range or length) backs the node off.
    void fetch(std::size_t node, RelayRequest request, Done done);
    // Stops every request in flight (they fail) and the status poll; later fetches fail at once.
    void stop();

    // The Authorization header value for a relayed read of a title (signed URLs: a token this node signs);
    // empty: none. Thread-safe; applies to requests started after the call.
    using Authorizer = std::function<std::string(std::string_view title)>;
    void set_authorizer(Authorizer authorizer);

  private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
    std::size_t self_;
};

}  // namespace toast::server
