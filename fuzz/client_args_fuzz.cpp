// toast-client's command line: the input split at NUL bytes into arguments -> parse_client_args. Checks:
// exactly one of options, help and an error; an error names what is wrong; accepted durations and rates are
// inside their bounds.
#include <string>
#include <vector>

#include "client/core/client_options.hpp"
#include "fuzz_support.hpp"

using namespace toast;
using namespace toast::client;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> args;
    std::string current;
    for (std::size_t i = 0; i < size; ++i) {
        if (data[i] == 0) {
            args.push_back(std::move(current));
            current.clear();
        } else {
            current += static_cast<char>(data[i]);
        }
    }
    if (!current.empty()) args.push_back(std::move(current));
    if (args.size() > 64) return 0;

    auto r = parse_client_args(args);
    TOAST_FUZZ_CHECK(static_cast<int>(r.options.has_value()) + static_cast<int>(r.help) +
                         static_cast<int>(!r.error.empty()) ==
                     1);
    if (r.options) {
        TOAST_FUZZ_CHECK(r.options->inorder_window.count() > 0);
        TOAST_FUZZ_CHECK(r.options->startup_buffer.count() >= 0);
        TOAST_FUZZ_CHECK(!r.options->bitrate || r.options->bitrate->value() > 0);
        TOAST_FUZZ_CHECK(unchoke_slots_of(*r.options) >= 1);
    }
    return 0;
}
