// toast-client's player endpoint: raw bytes -> Beast's parser (the endpoint's limits) ->
// refuse_request_head (Host, framing) and decide_player_response, for a title of several sizes. Checks: a
// refusal is 400 or 421 with a printable reason, the bytes promised lie inside the title, a 206 says which,
// and error answers promise no bytes.
#include <string>

#include "client/http/player_request.hpp"
#include "fuzz_support.hpp"
#include "toast/common/beast_request_head.hpp"

namespace {
namespace http = boost::beast::http;
using namespace toast::client;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = title_path("movie .mp4");
    toast::fuzz::for_each_request<http::empty_body>(
        toast::fuzz::as_text(data, size), 8 * 1024, 0, 8, [&](const http::request<http::empty_body>& req) {
            const PlayerRequestHead head = toast::request_head_of(req);
            for (const char* bound : {"127.0.0.1", "::1", "0.0.0.0"}) {
                if (auto refused = refuse_request_head(head, EndpointIdentity{bound, 8080})) {
                    TOAST_FUZZ_CHECK(refused->status == 400 || refused->status == 421);
                    TOAST_FUZZ_CHECK(!refused->reason.empty() &&
                                     !toast::fuzz::breaks_header_line(refused->reason));
                }
            }
            for (std::uint64_t title_size :
                 {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{10'000'000}, std::uint64_t{UINT64_MAX}}) {
                PlayerRequest pr{req.method_string(), req.target(), req[http::field::range]};
                auto r = decide_player_response(pr, path, title_size);
                if (r.body_from_title()) {
                    TOAST_FUZZ_CHECK(r.first <= title_size && r.length <= title_size - r.first);
                    TOAST_FUZZ_CHECK((r.status == 206) == !r.content_range.empty());
                } else {
                    TOAST_FUZZ_CHECK(r.status >= 400 && !r.reason.empty());
                }
                TOAST_FUZZ_CHECK(!toast::fuzz::breaks_header_line(r.content_range));
            }
        });
    return 0;
}
