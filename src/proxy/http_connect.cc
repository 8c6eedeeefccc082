// Parses what a client sends an HTTP proxy: "CONNECT host:port" (the tunnel carries TLS untouched)
// and absolute-form "GET http://host/path" requests, which are checked one by one and forwarded in
// origin form without hop-by-hop or Proxy-* headers. Bounded in line and head size (slow-loris and
// memory). Pure; fuzzed by tests/fuzz/http_fuzz.cc, unit-tested by tests/unit/proxy_http_test.cc.
#include <algorithm>
#include <optional>
#include <vector>

#include "policy/host_pattern.h"
#include "proxy/allowlist.h"
#include "proxy/http.h"
#include "proxy/http_text.h"

namespace cage::proxy {
namespace {

using namespace http_text;

bool parse_port(std::string_view s, uint16_t& port) {
  if (s.empty() || s.size() > 5) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  if (v == 0 || v > 65535) return false;
  port = static_cast<uint16_t>(v);
  return true;
}

// "host", "host:port", "[v6]", "[v6]:port" -> lower-case host without brackets and a port.
bool parse_authority(std::string_view a, uint16_t default_port, std::string& host, uint16_t& port) {
  std::string_view h, p;
  if (!a.empty() && a.front() == '[') {
    size_t close = a.find(']');
    if (close == std::string_view::npos) return false;
    h = a.substr(1, close - 1);
    std::string_view rest = a.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return false;
    p = rest.empty() ? std::string_view{} : rest.substr(1);
    std::array<uint8_t, 16> addr;
    bool v4 = false;
    if (!policy::parse_ip_literal(h, addr, v4)) return false;
    if (!rest.empty() && p.empty()) return false;
  } else {
    size_t colon = a.find(':');
    h = a.substr(0, colon);
    if (colon != std::string_view::npos) {
      p = a.substr(colon + 1);
      if (p.empty()) return false;
    }
    if (h.empty() || h.size() > 253) return false;
    for (char c : h)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
            c == '_'))
        return false;
  }
  if (p.empty()) {
    if (default_port == 0) return false;
    port = default_port;
  } else if (!parse_port(p, port)) {
    return false;
  }
  host = lower(h);
  if (host.size() > 1 && host.back() == '.') host.pop_back();
  return !host.empty();
}

HttpParse fail(int status, std::string msg) {
  HttpParse r;
  r.status = ParseStatus::error;
  r.error_status = status;
  r.error = "cage: " + std::move(msg);
  return r;
}

struct Header {
  std::string_view name, value;
};

// Splits the head into lines; need_more until the blank line, errors on size limits.
HttpParse split_head(std::string_view buf, const HeadLimits& lim, std::vector<std::string_view>& lines) {
  size_t pos = 0;
  while (true) {
    size_t nl = buf.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (buf.size() - pos > lim.max_line)
        return lines.empty() ? fail(414, "request line longer than the proxy's limit")
                             : fail(431, "header line longer than the proxy's limit");
      if (buf.size() > lim.max_head) return fail(431, "request head larger than the proxy's limit");
      return HttpParse{};
    }
    if (nl - pos > lim.max_line)
      return lines.empty() ? fail(414, "request line longer than the proxy's limit")
                           : fail(431, "header line longer than the proxy's limit");
    if (nl + 1 > lim.max_head) return fail(431, "request head larger than the proxy's limit");
    std::string_view line = buf.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // A lone CR (a line end to some servers) or a NUL would let the upstream read a header or
    // request line the proxy never checked (RFC 9112 2.2: reject).
    if (line.find_first_of(std::string_view("\r\0", 2)) != std::string_view::npos)
      return fail(400, "a bare CR or a NUL in the request head");
    pos = nl + 1;
    if (line.empty()) {
      if (lines.empty()) continue;  // tolerate blank lines before a request (RFC 9112 2.2)
      HttpParse r;
      r.status = ParseStatus::ok;
      r.req.head_len = pos;
      return r;
    }
    lines.push_back(line);
  }
}

bool connection_has(const std::vector<std::string>& tokens, std::string_view t) {
  return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
}

bool is_hop_by_hop(const std::string& name, const std::vector<std::string>& conn_tokens) {
  static constexpr std::string_view kHop[] = {"connection", "keep-alive", "te", "trailer", "upgrade", "host"};
  if (std::find(std::begin(kHop), std::end(kHop), name) != std::end(kHop)) return true;
  if (name.rfind("proxy-", 0) == 0) return true;  // Proxy-Authorization, Proxy-Connection...
  return connection_has(conn_tokens, name);
}

// A step that either fails the request (the HttpParse to return) or lets parsing go on.
using Failure = std::optional<HttpParse>;

struct RequestLine {
  std::string_view method, target, version;
};

// "METHOD target HTTP/1.x", one space apart: exactly two spaces, so no field can hide another.
Failure parse_request_line(std::string_view rl, RequestLine& out, HttpRequest& q) {
  size_t s1 = rl.find(' '), s2 = s1 == std::string_view::npos ? s1 : rl.find(' ', s1 + 1);
  if (s2 == std::string_view::npos || rl.find(' ', s2 + 1) != std::string_view::npos)
    return fail(400, "malformed request line");
  out = {rl.substr(0, s1), rl.substr(s1 + 1, s2 - s1 - 1), rl.substr(s2 + 1)};
  if (!is_token(out.method) || out.target.empty()) return fail(400, "malformed request line");
  if (out.version != "HTTP/1.1" && out.version != "HTTP/1.0")
    return fail(505, "only HTTP/1.0 and HTTP/1.1 are proxied");
  q.method = std::string(out.method);
  q.is_connect = out.method == "CONNECT";
  q.is_head = out.method == "HEAD";
  return std::nullopt;
}

// What the header fields decide: the body's framing, the Host, the connection's fate.
struct HeaderScan {
  std::vector<Header> headers;
  std::vector<std::string> conn_tokens;
  std::string_view host_header;
  int host_count = 0, cl_count = 0;
  bool has_te = false;
};

// One Content-Length: repeated only with the same value, or the body's end is ambiguous.
Failure read_content_length(std::string_view value, HeaderScan& s, HttpRequest& q) {
  uint64_t v = 0;
  if (!parse_length(value, v)) return fail(400, "invalid Content-Length");
  if (s.cl_count++ && static_cast<int64_t>(v) != q.content_length)
    return fail(400, "conflicting Content-Length");
  q.content_length = static_cast<int64_t>(v);
  return std::nullopt;
}

Failure read_header_line(std::string_view l, HeaderScan& s, HttpRequest& q) {
  if (l.front() == ' ' || l.front() == '\t') return fail(400, "folded header lines are not accepted");
  size_t colon = l.find(':');
  if (colon == std::string_view::npos || !is_token(l.substr(0, colon)))
    return fail(400, "malformed header line");
  Header h{l.substr(0, colon), trim(l.substr(colon + 1))};
  std::string name = lower(h.name);
  if (name == "host") {
    s.host_header = h.value;
    ++s.host_count;
  } else if (name == "proxy-authorization") {
    q.proxy_authorization = std::string(h.value);
  } else if (name == "connection" || name == "proxy-connection") {
    for (auto& t : comma_tokens(h.value)) s.conn_tokens.push_back(t);
  } else if (name == "content-length") {
    if (auto f = read_content_length(h.value, s, q)) return f;
  } else if (name == "transfer-encoding") {
    // Anything but a lone "chunked" leaves the body's end ambiguous between us and the server.
    if (s.has_te || lower(h.value) != "chunked")
      return fail(501, "only 'Transfer-Encoding: chunked' is proxied");
    s.has_te = q.chunked = true;
  }
  s.headers.push_back(h);
  return std::nullopt;
}

Failure read_headers(const std::vector<std::string_view>& lines, HeaderScan& s, HttpRequest& q) {
  for (size_t i = 1; i < lines.size(); ++i)
    if (auto f = read_header_line(lines[i], s, q)) return f;
  if (s.has_te && s.cl_count) return fail(400, "both Content-Length and Transfer-Encoding");
  if (s.host_count > 1) return fail(400, "more than one Host header");
  return std::nullopt;
}

// "http://authority/path?query#fragment" -> q.host, q.port and the origin-form path (fragment dropped).
Failure parse_absolute_target(std::string_view target, HttpRequest& q, std::string& path) {
  std::string scheme = lower(target.substr(0, std::min<size_t>(target.size(), 8)));
  if (scheme.rfind("https://", 0) == 0) return fail(400, "https:// URLs must be tunneled with CONNECT");
  if (scheme.rfind("http://", 0) != 0) {
    if (target.front() == '/')
      return fail(400, "the proxy needs absolute-form requests (http://host/path); is HTTP_PROXY set?");
    return fail(400, "only http:// URLs are proxied (use CONNECT for anything else)");
  }
  std::string_view rest = target.substr(7);
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  path = std::string(end == std::string_view::npos ? "/" : rest.substr(end));
  if (size_t hash = path.find('#'); hash != std::string::npos) path.resize(hash);
  if (path.empty() || path.front() == '?') path.insert(0, "/");
  if (authority.find('@') != std::string_view::npos)
    return fail(400, "credentials in the URL are not forwarded");
  if (!parse_authority(authority, 80, q.host, q.port)) return fail(400, "invalid host in request target");
  return std::nullopt;
}

// A Host header naming another server than the target would be checked against the allowlist by
// one and routed by the other: it must agree.
Failure check_host_header(const HeaderScan& s, const HttpRequest& q) {
  if (!s.host_count) return std::nullopt;
  std::string hh;
  uint16_t hp = 0;
  if (!parse_authority(s.host_header, 80, hh, hp) || hh != q.host || hp != q.port)
    return fail(400, "Host header '" + std::string(s.host_header.substr(0, 200)) +
                         "' disagrees with the request target " + host_port_text(q.host, q.port));
  return std::nullopt;
}

// The origin-form head for the upstream: our own Host and Connection, no hop-by-hop field.
void build_forward_head(const RequestLine& rl, const std::string& path, const HeaderScan& s, HttpRequest& q) {
  std::string& f = q.forward_head;
  f.reserve(q.head_len + 64);
  f.append(rl.method).append(" ").append(path).append(" ").append(rl.version).append("\r\n");
  bool v6 = q.host.find(':') != std::string::npos;
  f.append("Host: ").append(v6 ? "[" : "").append(q.host).append(v6 ? "]" : "");
  if (q.port != 80) f.append(":").append(std::to_string(q.port));
  f.append("\r\n");
  for (const auto& h : s.headers) {
    if (is_hop_by_hop(lower(h.name), s.conn_tokens)) continue;
    f.append(h.name).append(": ").append(h.value).append("\r\n");
  }
  f.append("Connection: close\r\n\r\n");
}

}  // namespace

HttpParse parse_request_head(std::string_view buf, const HeadLimits& limits) {
  std::vector<std::string_view> lines;
  HttpParse r = split_head(buf, limits, lines);
  if (r.status != ParseStatus::ok) return r;
  HttpRequest& q = r.req;
  RequestLine rl;
  if (auto f = parse_request_line(lines[0], rl, q)) return *f;
  HeaderScan s;
  if (auto f = read_headers(lines, s, q)) return *f;
  bool http10 = q.http10 = rl.version == "HTTP/1.0";
  q.client_close =
      connection_has(s.conn_tokens, "close") || (http10 && !connection_has(s.conn_tokens, "keep-alive"));
  if (q.is_connect) {
    if (!parse_authority(rl.target, 0, q.host, q.port))
      return fail(400, "CONNECT needs host:port, got '" + std::string(rl.target.substr(0, 200)) + "'");
    return r;
  }
  std::string path;
  if (auto f = parse_absolute_target(rl.target, q, path)) return *f;
  if (auto f = check_host_header(s, q)) return *f;
  build_forward_head(rl, path, s, q);
  return r;
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// The chunk-size line is over: its data follows, or the last chunk's trailer.
void ChunkScanner::end_size_line() {
  line_ = 0;
  state_ = remaining_ ? State::data : State::trailer_start;
}

// "1a2f[;ext]\r\n": at most 15 hex digits (the size must fit in 60 bits), at least one.
void ChunkScanner::on_size(char c) {
  if (hex_digit(c) >= 0 && digits_ < 15) {
    remaining_ = remaining_ * 16 + static_cast<uint64_t>(hex_digit(c));
    ++digits_;
  } else if (digits_ > 0 && (c == ';' || c == ' ' || c == '\t')) {
    state_ = State::ext;
  } else if (digits_ > 0 && c == '\r') {
    state_ = State::size_lf;
  } else if (digits_ > 0 && c == '\n') {
    end_size_line();
  } else {
    state_ = State::failed;
  }
}

// A CR ends a line only before LF: a lone one is a line end to some peers and not to others,
// which would frame the body differently on each side of the proxy.
void ChunkScanner::on_extension(char c) {
  if (c == '\r')
    state_ = State::size_lf;
  else if (c == '\n')
    end_size_line();
}

// The CRLF after a chunk's data; then the next chunk's size line starts afresh.
void ChunkScanner::on_data_end(char c) {
  if (state_ == State::data_cr) {
    state_ = c == '\r' ? State::data_lf : State::failed;
    return;
  }
  state_ = c == '\n' ? State::size : State::failed;
  line_ = 0;
  digits_ = 0;
  remaining_ = 0;
}

// Trailer fields after the last chunk, each skipped to its line end; an empty line ends the body.
void ChunkScanner::on_trailer(char c) {
  if (state_ == State::trailer_start) {
    state_ = c == '\r' ? State::final_lf : c == '\n' ? State::done : State::trailer;
  } else if (state_ == State::trailer) {
    if (c == '\r') {
      state_ = State::trailer_lf;
    } else if (c == '\n') {
      line_ = 0;
      state_ = State::trailer_start;
    }
  } else if (state_ == State::trailer_lf) {
    line_ = 0;
    state_ = c == '\n' ? State::trailer_start : State::failed;
  } else {  // final_lf
    state_ = c == '\n' ? State::done : State::failed;
  }
}

void ChunkScanner::step(char c) {
  switch (state_) {
    case State::size: return on_size(c);
    case State::ext: return on_extension(c);
    case State::size_lf:
      if (c == '\n') return end_size_line();
      line_ = 0;
      state_ = State::failed;
      return;
    case State::data_cr:
    case State::data_lf: return on_data_end(c);
    case State::trailer_start:
    case State::trailer:
    case State::trailer_lf:
    case State::final_lf: return on_trailer(c);
    case State::data:
    case State::done:
    case State::failed: return;
  }
}

size_t ChunkScanner::feed(std::string_view data) {
  size_t i = 0;
  while (i < data.size() && state_ != State::done && state_ != State::failed) {
    if (state_ == State::data) {  // the data itself is passed through whole, not byte by byte
      size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size() - i));
      remaining_ -= n;
      i += n;
      if (remaining_ == 0) state_ = State::data_cr;
      continue;
    }
    // No line of the framing (size, extension, trailer) may grow without bound.
    if (++line_ > 4096) {
      ++i;
      state_ = State::failed;
      break;
    }
    step(data[i++]);
  }
  return i;
}

std::string http_error_response(int status, std::string_view message) {
  std::string_view text = status == 403   ? "Forbidden"
                          : status == 400 ? "Bad Request"
                          : status == 407 ? "Proxy Authentication Required"
                          : status == 414 ? "URI Too Long"
                          : status == 431 ? "Request Header Fields Too Large"
                          : status == 501 ? "Not Implemented"
                          : status == 502 ? "Bad Gateway"
                          : status == 504 ? "Gateway Timeout"
                          : status == 505 ? "HTTP Version Not Supported"
                                          : "Error";
  std::string body = std::string(message) + "\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(text) +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\nProxy-Agent: cage\r\n" +
         (status == 407 ? "Proxy-Authenticate: Basic realm=\"cage\"\r\n" : "") + "\r\n" + body;
}

std::string base64(std::string_view data) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < data.size(); i += 3) {
    uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(data[i])) << 16;
    if (i + 1 < data.size()) v |= static_cast<uint32_t>(static_cast<uint8_t>(data[i + 1])) << 8;
    if (i + 2 < data.size()) v |= static_cast<uint8_t>(data[i + 2]);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += i + 1 < data.size() ? kAlphabet[v >> 6 & 63] : '=';
    out += i + 2 < data.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool basic_credentials_match(std::string_view header, std::string_view user, std::string_view password) {
  size_t sp = header.find(' ');
  if (sp == std::string_view::npos || lower(header.substr(0, sp)) != "basic") return false;
  return equal_constant_time(trim(header.substr(sp + 1)), base64(std::string(user) + ":" + std::string(password)));
}

}  // namespace cage::proxy
