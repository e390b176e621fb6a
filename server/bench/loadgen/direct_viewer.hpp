// A viewer that fetches a title on a tier as toast-client's server fallback does (docs/client-rules.md):
// block by block with Range requests carrying Toast-Direct, each asked of one of the block's holders
// (rendezvous placement over the nodes' ids, toast/common/tier.hpp), chosen as a box chooses
// (toast::choose_holder: the Toast-Load of its own last answers weighed by their age, drawn by the viewer's
// own `salt`; tie-break 0 with TrialSpec::ties_to_first, every load as just heard with
// TrialSpec::loads_fresh), and of the other holder when the first fails or refuses. Paced as the server paces
// /stream: blocks 0 and 1 at once, then block j one time slice after block j - 1 was due, each asked when due
// or when the previous one arrived, whichever is later; one keep-alive connection per node. Judged by the
// same Playback as a /stream viewer, over the title's bytes in order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "server/bench/loadgen/viewer_shared.hpp"
#include "toast/common/tier.hpp"

namespace toast::loadgen {

std::shared_ptr<TrialViewer> make_direct_viewer(boost::asio::io_context& io, Shared& shared,
                                                const TierLayout& tier,
                                                const std::vector<boost::asio::ip::tcp::endpoint>& nodes,
                                                std::string title, std::uint64_t salt);

}  // namespace toast::loadgen
