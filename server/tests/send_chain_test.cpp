// The send chain over a socketpair: memory and file buffers arrive in order and byte-exact, a full socket
// leaves exactly the unsent rest in the chain, and failures are reported instead of raising SIGPIPE.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "server/http/send_chain.hpp"
#include "test_support.hpp"

using namespace toast::server;
namespace tt = toast::testing;

namespace {

struct SocketPair {
    int fds[2] = {-1, -1};
    explicit SocketPair(int sndbuf = 0) {
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
        if (sndbuf > 0) ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
        REQUIRE(::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK) == 0);
    }
    ~SocketPair() {
        for (int fd : fds)
            if (fd >= 0) ::close(fd);
    }
    int sender() const { return fds[0]; }
    void close_receiver() {
        ::close(fds[1]);
        fds[1] = -1;
    }
    // Reads what is available now (bounded wait for the first byte).
    std::string drain() {
        std::string out;
        char buf[65536];
        ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK);
        for (int idle = 0; idle < 50;) {
            auto n = ::read(fds[1], buf, sizeof buf);
            if (n > 0) {
                out.append(buf, static_cast<std::size_t>(n));
                idle = 0;
            } else {
                ++idle;
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
        return out;
    }
};

struct File {
    tt::TempDir dir;
    std::string bytes;
    int fd = -1;
    explicit File(std::uint64_t size) {
        tt::write_random_file(dir / "f", size, 9);
        bytes = tt::read_file(dir / "f");
        fd = ::open((dir / "f").c_str(), O_RDONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
    }
    ~File() { ::close(fd); }
};

}  // namespace

TEST_CASE("send_chain writes memory and file buffers in order, byte-exact", "[server][http][send]") {
    SocketPair sp;
    File file(100'000);
    auto head = std::make_shared<std::string>("HTTP/1.1 200 OK\r\n\r\n");
    std::string prefix = "--prefix--";
    SendChain chain;
    chain.push_memory(head->data(), head->size(), head);
    chain.push_file(file.fd, 10, 20'000, nullptr);
    chain.push_memory(prefix.data(), prefix.size());
    chain.push_file(file.fd, 50'000, 30'000, nullptr);
    chain.push_memory("", 0);  // empty buffers are not kept
    CHECK(chain.buffers().size() == 4);
    const auto total = chain.bytes();
    CHECK(total == head->size() + 20'000 + prefix.size() + 30'000);

    std::string received;
    std::uint64_t sent = 0;
    for (int i = 0; i < 1000 && !chain.empty(); ++i) {
        auto r = send_chain(sp.sender(), chain);
        REQUIRE(r.status != SendStatus::failed);
        REQUIRE(r.status != SendStatus::file_short);
        sent += r.sent;
        received += sp.drain();
    }
    received += sp.drain();
    CHECK(chain.empty());
    CHECK(sent == total);
    CHECK(received == *head + file.bytes.substr(10, 20'000) + prefix + file.bytes.substr(50'000, 30'000));
}

TEST_CASE("a full socket leaves exactly the unsent rest in the chain", "[server][http][send]") {
    SocketPair sp(4096);
    File file(2'000'000);
    std::vector<std::string> memory;
    for (int i = 0; i < 100; ++i)
        memory.push_back("part " + std::to_string(i) + ";");  // more memory buffers than one sendmsg gathers
    SendChain chain;
    std::string expected;
    for (const auto& m : memory) {
        chain.push_memory(m.data(), m.size());
        expected += m;
    }
    chain.push_file(file.fd, 0, file.bytes.size(), nullptr);
    expected += file.bytes;

    auto first = send_chain(sp.sender(), chain);
    CHECK(first.status == SendStatus::would_block);
    CHECK(first.sent > 0);
    CHECK(first.sent < expected.size());
    CHECK(chain.bytes() == expected.size() - first.sent);
    // Nobody reads: asking again sends nothing more and still reports a full socket.
    auto again = send_chain(sp.sender(), chain);
    CHECK(again.status == SendStatus::would_block);
    CHECK(again.sent == 0);

    std::string received = sp.drain();
    for (int i = 0; i < 10'000 && !chain.empty(); ++i) {
        auto r = send_chain(sp.sender(), chain);
        REQUIRE((r.status == SendStatus::done || r.status == SendStatus::would_block));
        received += sp.drain();
    }
    received += sp.drain();
    CHECK(chain.empty());
    CHECK(received.size() == expected.size());
    CHECK(received == expected);
}

TEST_CASE("a file shorter than its buffer and a closed peer are reported as such", "[server][http][send]") {
    // sendfile(2) has no MSG_NOSIGNAL: like the HTTP service, the test ignores SIGPIPE and expects EPIPE.
    auto* previous = std::signal(SIGPIPE, SIG_IGN);
    {
        SocketPair sp;
        File file(1000);
        SendChain chain;
        chain.push_file(file.fd, 500, 1000, nullptr);  // the file ends 500 bytes early
        auto r = send_chain(sp.sender(), chain);
        CHECK(r.status == SendStatus::file_short);
        CHECK(r.sent == 500);
        CHECK(chain.bytes() == 500);
    }
    {
        SocketPair sp;
        sp.close_receiver();
        SendChain chain;
        std::string text = "hello";
        chain.push_memory(text.data(), text.size());
        auto r = send_chain(sp.sender(), chain);
        CHECK(r.status == SendStatus::failed);
        CHECK(r.error == EPIPE);
        CHECK(chain.bytes() == 5);
    }
    {
        SocketPair sp;
        File file(1000);
        sp.close_receiver();
        SendChain chain;
        chain.push_file(file.fd, 0, 1000, nullptr);
        auto r = send_chain(sp.sender(), chain);
        CHECK(r.status == SendStatus::failed);
        CHECK(r.error == EPIPE);
    }
    std::signal(SIGPIPE, previous);
}

TEST_CASE("consume drops bytes across buffer boundaries", "[server][http][send]") {
    std::string a = "abc", b = "defg";
    SendChain chain;
    chain.push_memory(a.data(), a.size());
    chain.push_file(3, 100, 10, nullptr);
    chain.push_memory(b.data(), b.size());
    chain.consume(5);
    REQUIRE(chain.buffers().size() == 2);
    CHECK(chain.buffers()[0].fd == 3);
    CHECK(chain.buffers()[0].offset == 102);
    CHECK(chain.buffers()[0].size == 8);
    chain.consume(9);
    REQUIRE(chain.buffers().size() == 1);
    CHECK(std::string(chain.buffers()[0].data, chain.buffers()[0].size) == "efg");
    chain.consume(100);
    CHECK(chain.empty());
}
