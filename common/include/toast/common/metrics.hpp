// Operator-facing metrics in the Prometheus text exposition format (version 0.0.4).
// Metrics are created once at start-up and updated lock-free from any thread; render() takes a snapshot.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace toast {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
  public:
    void inc(std::uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
    std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

  private:
    std::atomic<std::uint64_t> value_{0};
};

class Gauge {
  public:
    void set(double v) { value_.store(v, std::memory_order_relaxed); }
    void add(double d);
    double value() const { return value_.load(std::memory_order_relaxed); }

  private:
    std::atomic<double> value_{0};
};

// Cumulative histogram with fixed upper bounds (an implicit +Inf bucket follows the last).
class Histogram {
  public:
    explicit Histogram(std::vector<double> bounds);
    void observe(double v);
    const std::vector<double>& bounds() const { return bounds_; }
    // Per-bucket (non-cumulative) counts, the +Inf bucket last.
    std::vector<std::uint64_t> counts() const;
    std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }
    double sum() const { return sum_.load(std::memory_order_relaxed); }

  private:
    std::vector<double> bounds_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;
    std::atomic<std::uint64_t> count_{0};
    std::atomic<double> sum_{0};
};

// Owns metric families; returned references stay valid for the registry's lifetime.
class MetricsRegistry {
  public:
    Counter& counter(const std::string& name, const std::string& help, const Labels& labels = {});
    Gauge& gauge(const std::string& name, const std::string& help, const Labels& labels = {});
    Histogram& histogram(const std::string& name, const std::string& help, const std::vector<double>& bounds,
                         const Labels& labels = {});
    std::string render() const;

  private:
    enum class Kind { counter, gauge, histogram };
    struct Family {
        Kind kind;
        std::string help;
        std::map<Labels, Counter*> counters{};
        std::map<Labels, Gauge*> gauges{};
        std::map<Labels, Histogram*> histograms{};
    };
    Family& family(const std::string& name, const std::string& help, Kind kind);

    mutable std::mutex mutex_;
    std::map<std::string, Family> families_;
    std::deque<Counter> counter_store_;
    std::deque<Gauge> gauge_store_;
    std::deque<Histogram> histogram_store_;
};

// Default latency buckets in seconds, 100 us to 10 s.
std::vector<double> latency_buckets();

}  // namespace toast
