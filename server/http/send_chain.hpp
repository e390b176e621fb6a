// Bytes waiting for a socket, in order: memory buffers and regions of open files (nginx's chain of buffers).
// send_chain() gathers consecutive memory buffers into one sendmsg(2), sends file regions with sendfile(2),
// stops when the socket would block, and leaves in the chain what it could not send. Independent of Beast
// and asio: it takes a non-blocking socket descriptor, so it is tested over a socketpair.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>

namespace toast::server {

class SendChain {
  public:
    // `fd` < 0 for memory. `keeper` keeps the memory or the open file alive until the buffer is sent.
    struct Buffer {
        const char* data = nullptr;
        int fd = -1;
        std::uint64_t offset = 0;  // file offset (file buffers)
        std::uint64_t size = 0;
        std::shared_ptr<const void> keeper;
    };

    void push_memory(const char* data, std::uint64_t size, std::shared_ptr<const void> keeper = {});
    void push_file(int fd, std::uint64_t offset, std::uint64_t size, std::shared_ptr<const void> keeper);
    // Drops the first `n` bytes (they were sent).
    void consume(std::uint64_t n);
    void clear() { buffers_.clear(); }

    bool empty() const { return buffers_.empty(); }
    std::uint64_t bytes() const;
    const std::deque<Buffer>& buffers() const { return buffers_; }

  private:
    std::deque<Buffer> buffers_;
};

enum class SendStatus {
    done,         // the chain is empty
    would_block,  // the socket's buffer is full; wait until it is writable and call again
    failed,       // the socket or a file failed (`error` holds errno); close the connection
    file_short,   // a file ended before its buffer did (truncated under us); close the connection
};

struct SendOutcome {
    SendStatus status = SendStatus::done;
    std::uint64_t sent = 0;  // bytes taken by the socket in this call (already consumed from the chain)
    int error = 0;
};

// `socket` must be non-blocking, and the process must ignore SIGPIPE (sendfile(2), unlike sendmsg(2), has no
// MSG_NOSIGNAL; HttpService ignores it). Memory followed by file data goes out with MSG_MORE so that a
// response head and the first body bytes share packets.
SendOutcome send_chain(int socket, SendChain& chain);

}  // namespace toast::server
