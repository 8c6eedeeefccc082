// Upstream response heads (http_response.cc): where each body ends (RFC 9112 6.3), the head the
// client gets, and the ambiguous framings refused rather than guessed at.
#include <gtest/gtest.h>

#include "proxy/http.h"

using namespace cage::proxy;

namespace {

HttpRequest get(bool close = false, bool http10 = false) {
  HttpRequest r;
  r.method = "GET";
  r.client_close = close;
  r.http10 = http10;
  return r;
}

ResponseHead parse(std::string_view head, const HttpRequest& req = get()) { return parse_response_head(head, req); }

TEST(ProxyHttpResponse, FramingByRfc9112) {
  auto cl = parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
  ASSERT_EQ(cl.status, ParseStatus::ok) << cl.error;
  EXPECT_EQ(cl.framing, BodyFraming::length);
  EXPECT_EQ(cl.length, 5u);
  EXPECT_EQ(cl.head_len, 38u);
  EXPECT_FALSE(cl.close_client);
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n").framing, BodyFraming::chunked);
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n").framing, BodyFraming::until_close);
  auto eof = parse("HTTP/1.1 200 OK\r\nServer: x\r\n\r\n");
  EXPECT_EQ(eof.framing, BodyFraming::until_close);
  EXPECT_TRUE(eof.close_client);  // the client can only find the end by the close
  // No body whatever the fields say: HEAD, 204, 304, 1xx.
  HttpRequest head = get();
  head.is_head = true;
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", head).framing, BodyFraming::none);
  EXPECT_EQ(parse("HTTP/1.1 204 No Content\r\n\r\n").framing, BodyFraming::none);
  EXPECT_EQ(parse("HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n").framing, BodyFraming::none);
  auto cont = parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n");
  EXPECT_TRUE(cont.interim);
  EXPECT_EQ(cont.framing, BodyFraming::none);
  EXPECT_EQ(cont.forward_head, "HTTP/1.1 100 Continue\r\n\r\n");
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n").status, ParseStatus::need_more);
  EXPECT_EQ(parse("HTTP/1.1 200 OK\nContent-Length: 0\n\n").framing, BodyFraming::length);  // bare LF lines
}

TEST(ProxyHttpResponse, ClientGetsWhatTheProxyParsed) {
  auto r = parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive, X-Hop\r\nKeep-Alive: timeout=5\r\n"
                 "X-Hop: 1\r\ncontent-length: 5\r\nUpgrade: h2c\r\nSet-Cookie: a=b\r\n\r\n");
  ASSERT_EQ(r.status, ParseStatus::ok) << r.error;
  EXPECT_EQ(r.forward_head, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nSet-Cookie: a=b\r\n\r\n");
  // Closing after: said to the client; an HTTP/1.0 peer is told when the connection persists.
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", get(true)).forward_head,
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", get(true)).close_client);
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", get(false, true)).forward_head,
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_EQ(parse("HTTP/1.0 200 OK\r\n\r\n").forward_head, "HTTP/1.0 200 OK\r\nConnection: close\r\n\r\n");
  // A Connection token never removes the framing field the proxy used.
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: transfer-encoding\r\n\r\n").forward_head,
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: content-length\r\n\r\n").forward_head,
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n");
}

// A field named "close" (a reserved name: the connection option's) is not passed on; once the
// proxy's own "Connection: close" named it, the client would read it as hop-by-hop and the head it
// got would parse differently (found by the http fuzz target). Other fields pass as before.
TEST(ProxyHttpResponse, AFieldNamedCloseIsNotPassedOn) {
  auto r = parse("HTTP/1.0 307 Moved\r\nLocation: /x\r\nclose: 1\r\nX-Close: 2\r\n\r\n");
  ASSERT_EQ(r.status, ParseStatus::ok) << r.error;
  EXPECT_EQ(r.forward_head, "HTTP/1.0 307 Moved\r\nLocation: /x\r\nX-Close: 2\r\nConnection: close\r\n\r\n");
  auto again = parse(r.forward_head);
  ASSERT_EQ(again.status, ParseStatus::ok) << again.error;
  EXPECT_EQ(again.forward_head, r.forward_head);
}

TEST(ProxyHttpResponse, AmbiguousFramingIsRefused) {
  const char* refused[] = {
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",  // which one ends it?
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length :5\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: \r\n\r\n",
      "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
      "HTTP/1.1 200 OK\r\nX: a\rContent-Length: 0\r\n\r\n",  // a bare CR: a line end to some clients
      "HTTP/1.1 200 OK\r\nX: a\r\n Content-Length: 0\r\n\r\n",  // folded
      "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
      "HTTP/2 200\r\n\r\n",
      "HTTP/1.1 20 OK\r\n\r\n",
      "HTTP/1.1 200OK\r\n\r\n",
      "\r\nHTTP/1.1 200 OK\r\n\r\n",
      "garbage\r\n\r\n",
  };
  for (const char* h : refused) {
    auto r = parse(h);
    EXPECT_EQ(r.status, ParseStatus::error) << h;
    EXPECT_NE(r.error.find("cage: "), std::string::npos) << h;
  }
  EXPECT_EQ(parse(std::string("HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", 27)).status, ParseStatus::error);
  // Identical duplicates are one length (RFC 9112 6.3 item 5), sent on once.
  auto dup = parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n");
  ASSERT_EQ(dup.status, ParseStatus::ok);
  EXPECT_EQ(dup.forward_head, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n");
}

TEST(ProxyHttpResponse, Limits) {
  std::string head = "HTTP/1.1 200 OK\r\n";
  while (head.size() < 70000) head += "X-Pad: " + std::string(1000, 'p') + "\r\n";
  EXPECT_EQ(parse(head).status, ParseStatus::error);
  EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nX: " + std::string(9000, 'x')).status, ParseStatus::error);
}

}  // namespace
