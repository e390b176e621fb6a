// The one place the fields RFC 9112's framing rules look at (http_request_rules.hpp) are gathered from a
// request Beast parsed. Header-only: the components that parse HTTP link Beast; toast_common does not.
#pragma once

#include <boost/beast/http/message.hpp>

#include "toast/common/http_request_rules.hpp"

namespace toast {

// Every Host and Transfer-Encoding field line of `message`, in order, and its version. Views into `message`:
// valid while it lives and is not modified.
template <class Fields>
RequestHead request_head_of(const boost::beast::http::header<true, Fields>& message) {
    namespace http = boost::beast::http;
    RequestHead head;
    head.version = message.version();
    for (auto [it, end] = message.equal_range(http::field::host); it != end; ++it)
        head.hosts.push_back(it->value());
    for (auto [it, end] = message.equal_range(http::field::transfer_encoding); it != end; ++it)
        head.transfer_encodings.push_back(it->value());
    return head;
}

}  // namespace toast
