#include "toast/common/metrics.hpp"

#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace toast {
namespace {

void atomic_add(std::atomic<double>& a, double d) {
    double cur = a.load(std::memory_order_relaxed);
    while (!a.compare_exchange_weak(cur, cur + d, std::memory_order_relaxed)) {
    }
}

std::string escape_label(const std::string& v) {
    std::string out;
    for (char c : v) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '"') {
            out += "\\\"";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

std::string label_text(const Labels& labels, const std::pair<std::string, std::string>* extra = nullptr) {
    if (labels.empty() && !extra) return "";
    std::string out = "{";
    bool first = true;
    auto add = [&](const std::pair<std::string, std::string>& kv) {
        if (!first) out += ",";
        first = false;
        out += kv.first + "=\"" + escape_label(kv.second) + "\"";
    };
    for (const auto& kv : labels)
        add(kv);
    if (extra) add(*extra);
    return out + "}";
}

std::string number(double v) {
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest form that round-trips
    return ec == std::errc() ? std::string(buf, end) : std::string("NaN");
}

}  // namespace

void Gauge::add(double d) {
    atomic_add(value_, d);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<std::uint64_t>[bounds_.size() + 1]) {
    for (std::size_t i = 0; i + 1 < bounds_.size(); ++i) {
        if (!(bounds_[i] < bounds_[i + 1])) throw std::invalid_argument("histogram bounds must increase");
    }
    for (std::size_t i = 0; i <= bounds_.size(); ++i)
        buckets_[i].store(0);
}

void Histogram::observe(double v) {
    std::size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i])
        ++i;
    buckets_[i].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    atomic_add(sum_, v);
}

std::vector<std::uint64_t> Histogram::counts() const {
    std::vector<std::uint64_t> out(bounds_.size() + 1);
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = buckets_[i].load(std::memory_order_relaxed);
    return out;
}

MetricsRegistry::Family& MetricsRegistry::family(const std::string& name, const std::string& help,
                                                 Kind kind) {
    auto [it, inserted] = families_.try_emplace(name, Family{.kind = kind, .help = help});
    if (!inserted && it->second.kind != kind) {
        throw std::logic_error("metric '" + name + "' registered with two different types");
    }
    return it->second;
}

Counter& MetricsRegistry::counter(const std::string& name, const std::string& help, const Labels& labels) {
    std::lock_guard lock(mutex_);
    auto& f = family(name, help, Kind::counter);
    auto& slot = f.counters[labels];
    if (!slot) slot = &counter_store_.emplace_back();
    return *slot;
}

Gauge& MetricsRegistry::gauge(const std::string& name, const std::string& help, const Labels& labels) {
    std::lock_guard lock(mutex_);
    auto& f = family(name, help, Kind::gauge);
    auto& slot = f.gauges[labels];
    if (!slot) slot = &gauge_store_.emplace_back();
    return *slot;
}

Histogram& MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                      const std::vector<double>& bounds, const Labels& labels) {
    std::lock_guard lock(mutex_);
    auto& f = family(name, help, Kind::histogram);
    auto& slot = f.histograms[labels];
    if (!slot) slot = &histogram_store_.emplace_back(bounds);
    return *slot;
}

std::string MetricsRegistry::render() const {
    std::lock_guard lock(mutex_);
    std::ostringstream out;
    for (const auto& [name, f] : families_) {
        out << "# HELP " << name << " " << f.help << "\n";
        switch (f.kind) {
            case Kind::counter:
                out << "# TYPE " << name << " counter\n";
                for (const auto& [labels, c] : f.counters) {
                    out << name << label_text(labels) << " " << c->value() << "\n";
                }
                break;
            case Kind::gauge:
                out << "# TYPE " << name << " gauge\n";
                for (const auto& [labels, g] : f.gauges) {
                    out << name << label_text(labels) << " " << number(g->value()) << "\n";
                }
                break;
            case Kind::histogram:
                out << "# TYPE " << name << " histogram\n";
                for (const auto& [labels, h] : f.histograms) {
                    auto counts = h->counts();
                    std::uint64_t cumulative = 0;
                    for (std::size_t i = 0; i < counts.size(); ++i) {
                        cumulative += counts[i];
                        std::pair<std::string, std::string> le{
                            "le", i < h->bounds().size() ? number(h->bounds()[i]) : "+Inf"};
                        out << name << "_bucket" << label_text(labels, &le) << " " << cumulative << "\n";
                    }
                    out << name << "_sum" << label_text(labels) << " " << number(h->sum()) << "\n";
                    out << name << "_count" << label_text(labels) << " " << cumulative << "\n";
                }
                break;
        }
    }
    return out.str();
}

std::vector<double> latency_buckets() {
    return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

}  // namespace toast
