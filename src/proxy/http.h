// HTTP/1.x proxy request heads (CONNECT authority-form and absolute-form http:// requests), the
// head we forward upstream, response heads and their framing (http_response.cc) and a chunked-body
// scanner. Pure and bounded; fuzzed by tests/fuzz/http_fuzz.cc, unit-tested by
// tests/unit/proxy_http_test.cc.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace cage::proxy {

struct HeadLimits {
  size_t max_line = 8 * 1024;    // request line and each header line
  size_t max_head = 64 * 1024;   // the whole head
};

enum class ParseStatus { need_more, ok, error };

struct HttpRequest {
  std::string method;
  bool is_connect = false;
  std::string host;          // lower-case, IPv6 without brackets
  uint16_t port = 0;
  size_t head_len = 0;       // bytes of the client's buffer the head used
  std::string forward_head;  // absolute-form only: origin-form head for the upstream, hop-by-hop removed
  int64_t content_length = 0;
  bool chunked = false;      // request body uses chunked transfer coding
  bool is_head = false;      // HEAD: the response has no body whatever its headers say
  bool client_close = false; // the client asked to close after this exchange (or spoke HTTP/1.0)
  bool http10 = false;       // the request line said HTTP/1.0
  std::string proxy_authorization;  // the Proxy-Authorization value (never forwarded)
};

struct HttpParse {
  ParseStatus status = ParseStatus::need_more;
  HttpRequest req;
  int error_status = 0;  // 400, 405, 414, 431, 501
  std::string error;
};

HttpParse parse_request_head(std::string_view buf, const HeadLimits& limits = {});

// Whether a Proxy-Authorization value is "Basic base64(user:password)" for exactly this pair
// (scheme case-insensitive, the credentials compared in constant time).
bool basic_credentials_match(std::string_view header, std::string_view user, std::string_view password);
bool equal_constant_time(std::string_view a, std::string_view b);  // length may leak, content not
std::string base64(std::string_view data);

// How the end of a response body is found (RFC 9112 6.3): none (HEAD, 1xx, 204, 304), a
// Content-Length, the chunked coding, or the server's close (then the client connection closes too).
enum class BodyFraming { none, length, chunked, until_close };

struct ResponseHead {
  ParseStatus status = ParseStatus::need_more;
  int code = 0;
  bool interim = false;      // 1xx (not 101): forwarded, then the real response head follows
  size_t head_len = 0;       // bytes of the upstream's buffer the head used
  BodyFraming framing = BodyFraming::until_close;
  uint64_t length = 0;       // BodyFraming::length
  bool close_client = false; // the client connection ends after this response
  std::string forward_head;  // what the client gets: CRLF lines, hop-by-hop fields removed, one
                             // Content-Length, and a Connection field saying what the proxy will do
  std::string error;         // status error: why (the proxy answers 502)
};

// Parses the upstream's response head to `req`. Strict where the framing is at stake: Content-Length
// with Transfer-Encoding, differing or malformed Content-Lengths, chunked not last, a folded or
// malformed line, a bare CR or NUL are errors (the exchange ends with 502), never guessed at.
ResponseHead parse_response_head(std::string_view buf, const HttpRequest& req, const HeadLimits& limits = {});

// Finds the end of a chunked body fed piecewise. feed() returns how many bytes of `data` belong to
// the body; done() once the last chunk and trailers are through; failed() on malformed framing.
class ChunkScanner {
 public:
  size_t feed(std::string_view data);
  bool done() const { return state_ == State::done; }
  bool failed() const { return state_ == State::failed; }

 private:
  enum class State { size, ext, size_lf, data, data_cr, data_lf, trailer_start, trailer, trailer_lf,
                     final_lf, done, failed };
  void step(char c);  // one byte of the framing (never of the data)
  void on_size(char c);
  void on_extension(char c);
  void end_size_line();
  void on_data_end(char c);
  void on_trailer(char c);
  State state_ = State::size;
  uint64_t remaining_ = 0;
  int digits_ = 0;
  size_t line_ = 0;
};

// A complete HTTP response the proxy itself sends (403/502/504...), with Connection: close.
std::string http_error_response(int status, std::string_view message);

}  // namespace cage::proxy
