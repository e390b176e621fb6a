#include <catch2/catch.hpp>

#include "toast/common/metrics.hpp"

using namespace toast;
using Catch::Matchers::Contains;

TEST_CASE("counters and gauges render in Prometheus text format", "[common][metrics]") {
    MetricsRegistry reg;
    reg.counter("toast_requests_total", "Requests.", {{"status", "200"}}).inc(3);
    reg.counter("toast_requests_total", "Requests.", {{"status", "404"}}).inc();
    reg.gauge("toast_queue_depth", "Depth.", {{"disk", "0"}}).set(2);
    auto text = reg.render();
    CHECK_THAT(text, Contains("# TYPE toast_requests_total counter\n"));
    CHECK_THAT(text, Contains("toast_requests_total{status=\"200\"} 3\n"));
    CHECK_THAT(text, Contains("toast_requests_total{status=\"404\"} 1\n"));
    CHECK_THAT(text, Contains("toast_queue_depth{disk=\"0\"} 2\n"));
}

TEST_CASE("the same name and labels return the same counter", "[common][metrics]") {
    MetricsRegistry reg;
    auto& a = reg.counter("c", "h", {{"k", "v"}});
    auto& b = reg.counter("c", "h", {{"k", "v"}});
    CHECK(&a == &b);
    CHECK_THROWS(reg.gauge("c", "h"));
}

TEST_CASE("histograms are cumulative with a +Inf bucket", "[common][metrics]") {
    MetricsRegistry reg;
    auto& h = reg.histogram("lat", "Latency.", {0.1, 1.0});
    h.observe(0.05);
    h.observe(0.5);
    h.observe(7);
    auto text = reg.render();
    CHECK_THAT(text, Contains("lat_bucket{le=\"0.1\"} 1\n"));
    CHECK_THAT(text, Contains("lat_bucket{le=\"1\"} 2\n"));
    CHECK_THAT(text, Contains("lat_bucket{le=\"+Inf\"} 3\n"));
    CHECK_THAT(text, Contains("lat_count 3\n"));
}

TEST_CASE("label values are escaped", "[common][metrics]") {
    MetricsRegistry reg;
    reg.counter("c", "h", {{"title", "a\"b\\c"}}).inc();
    CHECK_THAT(reg.render(), Contains("c{title=\"a\\\"b\\\\c\"} 1"));
}
