// The copy relay (relay_copy.cc: macOS and Windows tunnels), run on Linux under the edge-triggered
// Poller: a leg must deliver every byte it read before it half-closes, also to a slow reader behind
// a source that closed early, and must never wait for an edge that already passed.
#include "proxy/relay_copy.h"

#include "socket_helpers.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "proxy/poller.h"

using namespace cage;
using namespace cage::proxy;
using cage::testing::read_all;

namespace {

struct Pair {
  UniqueFd a, b;
};

Pair stream_pair() {
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  return {UniqueFd(sv[0]), UniqueFd(sv[1])};
}

void nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Pumps the leg on poller edges until it is done; false if 10 s pass without an edge (a lost wake-up).
bool run_leg(Leg& leg) {
  Poller p;
  EXPECT_TRUE(p.ok());
  p.add(leg.src, 1);
  p.add(leg.dst, 2);
  std::vector<PollEvent> ev;
  pump_copy(leg);
  while (!leg.done) {
    if (p.wait(ev, 10'000) == 0) return false;
    pump_copy(leg);
  }
  return true;
}

std::string pattern(size_t size) {
  std::string big(size, 'x');
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>(i / 4096);
  return big;
}

}  // namespace

TEST(ProxyRelayCopy, SlowReaderBehindAnEarlyCloseGetsEverything) {
  Pair up = stream_pair(), client = stream_pair();  // up.a: the upstream server; client.a: the workload
  nonblocking(up.b.get());
  nonblocking(client.b.get());
  Leg down;
  ASSERT_EQ(open_copy_leg(down, up.b.get(), client.b.get(), 16 * 1024), 0);
  down.prefix = "HTTP/1.1 200 Connection established\r\n\r\n";
  const std::string big = pattern(8 << 20);
  std::thread upstream([&] {
    for (std::string_view s = big; !s.empty();) {
      ssize_t n = write(up.a.get(), s.data(), s.size());
      ASSERT_GT(n, 0);
      s.remove_prefix(static_cast<size_t>(n));
    }
    up.a.reset();  // a fast upstream that closes early ...
  });
  std::string got;
  std::thread reader([&] {
    usleep(300 * 1000);  // ... behind a slow reader
    got = read_all(client.a.get());
  });
  EXPECT_TRUE(run_leg(down)) << "no wake-up for 10 s: an edge was lost";
  upstream.join();
  reader.join();
  EXPECT_EQ(down.error, 0);
  EXPECT_EQ(down.bytes, big.size());
  ASSERT_EQ(got.size(), big.size() + 39);
  EXPECT_EQ(got.substr(0, 39), "HTTP/1.1 200 Connection established\r\n\r\n");
  EXPECT_TRUE(got.substr(39) == big) << "the relay corrupted the stream";
}

TEST(ProxyRelayCopy, HalfCloseLeavesTheOtherDirectionOpen) {
  Pair up = stream_pair(), client = stream_pair();
  nonblocking(up.b.get());
  nonblocking(client.b.get());
  Leg leg;
  ASSERT_EQ(open_copy_leg(leg, client.b.get(), up.b.get(), 0), 0);
  ASSERT_EQ(write(client.a.get(), "ping", 4), 4);
  shutdown(client.a.get(), SHUT_WR);  // the workload is done sending
  EXPECT_TRUE(run_leg(leg));
  EXPECT_EQ(read_all(up.a.get()), "ping");  // EOF reached the upstream after the bytes
  // The reverse direction still works: the upstream can answer after the client's half-close.
  ASSERT_EQ(write(up.a.get(), "pong", 4), 4);
  char buf[4];
  ASSERT_EQ(read(up.b.get(), buf, 4), 4);
  EXPECT_EQ(std::string(buf, 4), "pong");
}

TEST(ProxyRelayCopy, GoneDestinationEndsTheLeg) {
  Pair up = stream_pair(), client = stream_pair();
  nonblocking(up.b.get());
  nonblocking(client.b.get());
  Leg leg;
  ASSERT_EQ(open_copy_leg(leg, up.b.get(), client.b.get(), 0), 0);
  client.a.reset();  // the workload went away
  ASSERT_EQ(write(up.a.get(), "data", 4), 4);
  EXPECT_TRUE(run_leg(leg));
  EXPECT_NE(leg.error, 0);
}
