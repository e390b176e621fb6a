// toast-tracker's HTTP path: raw bytes -> Beast's parser (the session's limits) -> check_request_head (Host,
// Transfer-Encoding) -> TrackerService::handle_http, for up to 8 pipelined requests against one service, so
// announces build swarms that later scrapes and /stats read. Checks: no answer breaks a header line, every
// status is one the tracker documents.
#include <chrono>
#include <set>

#include "fuzz_support.hpp"
#include "tracker/io/http_request_rules.hpp"
#include "tracker/io/tracker_service.hpp"

namespace {

using namespace toast;
using namespace toast::tracker;
namespace http = boost::beast::http;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::set<int> documented{200, 400, 403, 404, 405, 414, 429, 431, 503};
    TrackerConfig config;
    config.rate_limit.burst = 4;  // the fifth request in a row meets the limiter
    MetricsRegistry metrics;
    TrackerService service(config, ServiceSecrets{{1, 2}, {3, 4}}, metrics);
    const auto source = *IpAddress::parse("192.0.2.7");
    auto now = TimePoint(std::chrono::hours(1000));

    fuzz::for_each_request<http::empty_body>(
        fuzz::as_text(data, size), static_cast<std::uint32_t>(config.http.header_limit), 0, 8,
        [&](const http::request<http::empty_body>& req) {
            // The session's order: the framing rules on the head, then the service.
            if (auto refusal = check_request_head(req.base())) {
                TOAST_FUZZ_CHECK(refusal->status == 400 && !fuzz::breaks_header_line(refusal->reason));
                return;
            }
            auto answer = service.handle_http(req.method_string(), req.target(), source, now);
            TOAST_FUZZ_CHECK(documented.count(answer.status) == 1);
            TOAST_FUZZ_CHECK(!fuzz::breaks_header_line(answer.reason));
            TOAST_FUZZ_CHECK(!fuzz::breaks_header_line(answer.content_type));
            for (const auto& [name, value] : answer.headers) {
                TOAST_FUZZ_CHECK(!fuzz::breaks_header_line(name) && !fuzz::breaks_header_line(value));
            }
            now += std::chrono::milliseconds(100);
        });
    service.tick(now + std::chrono::hours(1));  // expiry over whatever the requests left behind
    return 0;
}
