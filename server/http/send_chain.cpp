#include "server/http/send_chain.hpp"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

namespace toast::server {

namespace {

// Memory buffers gathered into one sendmsg(2); a response head, multipart framing and a few memory segments
// fit easily.
constexpr std::size_t kMaxIov = 64;
// sendfile(2) moves at most this much per call on Linux.
constexpr std::uint64_t kMaxSendfile = 0x7ffff000;

}  // namespace

void SendChain::push_memory(const char* data, std::uint64_t size, std::shared_ptr<const void> keeper) {
    if (size == 0) return;
    buffers_.push_back(Buffer{.data = data, .size = size, .keeper = std::move(keeper)});
}

void SendChain::push_file(int fd, std::uint64_t offset, std::uint64_t size,
                          std::shared_ptr<const void> keeper) {
    if (size == 0) return;
    buffers_.push_back(Buffer{.fd = fd, .offset = offset, .size = size, .keeper = std::move(keeper)});
}

void SendChain::consume(std::uint64_t n) {
    while (n > 0 && !buffers_.empty()) {
        auto& b = buffers_.front();
        const auto used = std::min(n, b.size);
        b.size -= used;
        n -= used;
        if (b.fd < 0) {
            b.data += used;
        } else {
            b.offset += used;
        }
        if (b.size == 0) buffers_.pop_front();
    }
}

std::uint64_t SendChain::bytes() const {
    std::uint64_t n = 0;
    for (const auto& b : buffers_)
        n += b.size;
    return n;
}

SendOutcome send_chain(int socket, SendChain& chain) {
    SendOutcome out;
    const auto& buffers = chain.buffers();
    while (!buffers.empty()) {
        const auto& front = buffers.front();
        ssize_t n;
        std::uint64_t attempted;
        const bool memory = front.fd < 0;
        if (memory) {
            iovec iov[kMaxIov];
            std::size_t count = 0;
            attempted = 0;
            for (; count < buffers.size() && count < kMaxIov && buffers[count].fd < 0; ++count) {
                iov[count].iov_base = const_cast<char*>(buffers[count].data);
                iov[count].iov_len = buffers[count].size;
                attempted += buffers[count].size;
            }
            msghdr msg{};
            msg.msg_iov = iov;
            msg.msg_iovlen = count;
            const bool more = count < buffers.size();
            n = ::sendmsg(socket, &msg, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
        } else {
            auto offset = static_cast<off_t>(front.offset);
            attempted = std::min(front.size, kMaxSendfile);
            n = ::sendfile(socket, front.fd, &offset, attempted);
            if (n == 0) {
                out.status = SendStatus::file_short;
                return out;
            }
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                out.status = SendStatus::would_block;
            } else {
                out.status = SendStatus::failed;
                out.error = errno;
            }
            return out;
        }
        const auto sent = static_cast<std::uint64_t>(n);
        chain.consume(sent);
        out.sent += sent;
        // A short sendmsg means the socket buffer is full: asking again would only return EAGAIN. A short
        // sendfile may also mean the file ended, which the next call tells.
        if (memory && sent < attempted) {
            out.status = chain.empty() ? SendStatus::done : SendStatus::would_block;
            return out;
        }
    }
    out.status = SendStatus::done;
    return out;
}

}  // namespace toast::server
