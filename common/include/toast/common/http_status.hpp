// Reason phrases for the status codes Toast's HTTP endpoints send (server, tracker, the client's player
// endpoint and control API).
#pragma once

#include <string_view>

namespace toast {

// RFC 9110 §15's reason phrase for `status`; "Unknown" for a code no Toast endpoint sends (clients ignore the
// phrase, RFC 9112 §4, so it only has to be printable).
std::string_view reason_phrase(unsigned status);

}  // namespace toast
