// The upstream's response heads, read so the proxy knows where each response ends (RFC 9112 6.3)
// and a kept-alive client connection goes on to its next request as soon as the response is
// complete, not when the server closes (issue 19 item 3: a server that ignores "Connection: close"
// held each client for its idle timeout). The client gets the head re-written from what was parsed,
// so it frames the body exactly as the proxy did; anything ambiguous is an error (502), never a guess.
// Pure; fuzzed by tests/fuzz/http_fuzz.cc, unit-tested by tests/unit/proxy_http_test.cc.
#include <algorithm>
#include <optional>
#include <vector>

#include "proxy/http.h"
#include "proxy/http_text.h"

namespace cage::proxy {
namespace {

using namespace http_text;

ResponseHead bad(std::string why) {
  ResponseHead r;
  r.status = ParseStatus::error;
  r.error = "cage: the upstream's response was refused: " + std::move(why);
  return r;
}

// The head's lines without line ends, up to the blank line. need_more until it is in.
ResponseHead split_lines(std::string_view buf, const HeadLimits& lim, std::vector<std::string_view>& lines) {
  size_t pos = 0;
  while (true) {
    size_t nl = buf.find('\n', pos);
    size_t line_len = (nl == std::string_view::npos ? buf.size() : nl) - pos;
    if (line_len > lim.max_line || (nl == std::string_view::npos ? buf.size() : nl + 1) > lim.max_head)
      return bad("its head is larger than the proxy's limit");
    if (nl == std::string_view::npos) return ResponseHead{};
    std::string_view line = buf.substr(pos, line_len);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // A lone CR ends a line for some clients and not for others: the client and the proxy would
    // frame the body differently (response splitting). RFC 9112 2.2.
    if (line.find_first_of(std::string_view("\r\0", 2)) != std::string_view::npos)
      return bad("a bare CR or a NUL in its head");
    pos = nl + 1;
    if (line.empty()) {
      if (lines.empty()) return bad("no status line");
      ResponseHead r;
      r.status = ParseStatus::ok;
      r.head_len = pos;
      return r;
    }
    lines.push_back(line);
  }
}

// "HTTP/1.x NNN[ reason]" -> the code, or 0.
int status_code(std::string_view l) {
  if (l.size() < 12 || (l.substr(0, 9) != "HTTP/1.1 " && l.substr(0, 9) != "HTTP/1.0 ")) return 0;
  if (l.size() > 12 && l[12] != ' ') return 0;
  if (l[9] < '1' || l[9] > '9' || l[10] < '0' || l[10] > '9' || l[11] < '0' || l[11] > '9') return 0;
  return (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
}

// Fields that describe one connection, not the message (RFC 9110 7.6.1); the proxy's own
// Connection field replaces them. Transfer-Encoding stays: the chunked body is passed on as it is.
// "close" too: the name is reserved (RFC 9110 16.3.2.2) because it is a connection option, and once
// the proxy's own "Connection: close" names it, the client would take a field of that name for a
// hop-by-hop one (the head the client got then framed differently when parsed again; found by
// the http fuzz target, tests/fuzz/corpus/http/reserved-close-field).
bool is_hop_by_hop(const std::string& name) {
  return name == "connection" || name == "keep-alive" || name == "proxy-connection" || name == "te" ||
         name == "upgrade" || name == "close";
}

// A step that either refuses the response (the ResponseHead to return) or lets parsing go on.
using Failure = std::optional<ResponseHead>;

struct Field {
  std::string name;  // lower-case
  std::string_view raw_name, value;
};

// What the header fields decide: the framing fields and the connection's own.
struct FieldScan {
  std::vector<Field> fields;
  std::vector<std::string> conn_tokens, codings;
  int cl_count = 0;
  bool has_te = false;
};

Failure read_field(std::string_view l, FieldScan& s, ResponseHead& r) {
  if (l.front() == ' ' || l.front() == '\t') return bad("a folded header line");
  size_t colon = l.find(':');
  // No space before the colon either (RFC 9112 5.1): "Content-Length :" is a different field to some.
  if (colon == std::string_view::npos || !is_token(l.substr(0, colon))) return bad("a malformed header line");
  Field f{lower(l.substr(0, colon)), l.substr(0, colon), trim(l.substr(colon + 1))};
  if (f.name == "connection") {
    for (auto& t : comma_tokens(f.value)) s.conn_tokens.push_back(t);
  } else if (f.name == "content-length") {
    uint64_t v = 0;
    if (!parse_length(f.value, v)) return bad("an invalid Content-Length");
    if (s.cl_count++ && v != r.length) return bad("differing Content-Length values");
    r.length = v;
  } else if (f.name == "transfer-encoding") {
    s.has_te = true;
    for (auto& t : comma_tokens(f.value)) s.codings.push_back(t);
  }
  s.fields.push_back(std::move(f));
  return std::nullopt;
}

// Exactly one way to find the body's end, or the response is refused.
Failure check_framing_fields(const FieldScan& s, bool http10) {
  // Both length fields: which one ends the body is exactly what a smuggling attack plays on
  // (RFC 9112 6.3 item 3: "ought to be handled as an error").
  if (s.has_te && s.cl_count) return bad("both Content-Length and Transfer-Encoding");
  if (!s.has_te) return std::nullopt;
  if (http10) return bad("Transfer-Encoding in an HTTP/1.0 response");
  long chunked = std::count(s.codings.begin(), s.codings.end(), "chunked");
  if (s.codings.empty() || chunked > 1 || (chunked == 1 && s.codings.back() != "chunked"))
    return bad("chunked missing as the last transfer coding, or applied twice");
  return std::nullopt;
}

Failure read_fields(const std::vector<std::string_view>& lines, bool http10, FieldScan& s, ResponseHead& r) {
  for (size_t i = 1; i < lines.size(); ++i)
    if (auto f = read_field(lines[i], s, r)) return f;
  return check_framing_fields(s, http10);
}

// RFC 9112 6.3, in its order: no body, chunked, a length, or the server's close.
void decide_framing(const FieldScan& s, const HttpRequest& req, ResponseHead& r) {
  r.interim = r.code < 200;
  if (r.interim || req.is_head || r.code == 204 || r.code == 304)
    r.framing = BodyFraming::none;
  else if (s.has_te)
    r.framing = s.codings.back() == "chunked" ? BodyFraming::chunked : BodyFraming::until_close;
  else if (s.cl_count)
    r.framing = BodyFraming::length;
  else
    r.framing = BodyFraming::until_close;
  r.close_client = !r.interim && (r.framing == BodyFraming::until_close || req.client_close);
}

// The head the client gets: the fields as parsed, one Content-Length, no hop-by-hop field, and a
// Connection field saying what the proxy will do.
void build_client_head(std::string_view status_line, const FieldScan& s, const HttpRequest& req, bool http10,
                       ResponseHead& r) {
  std::string& out = r.forward_head;
  out.reserve(r.head_len + 32);
  out.append(status_line).append("\r\n");
  bool cl_written = false;
  for (const auto& f : s.fields) {
    if (is_hop_by_hop(f.name)) continue;
    if (f.name == "content-length") {
      if (!cl_written) out.append("Content-Length: ").append(std::to_string(r.length)).append("\r\n");
      cl_written = true;
      continue;
    }
    // A field the server named in Connection is hop-by-hop too, but never the framing one.
    if (f.name != "transfer-encoding" &&
        std::find(s.conn_tokens.begin(), s.conn_tokens.end(), f.name) != s.conn_tokens.end())
      continue;
    out.append(f.raw_name).append(": ").append(f.value).append("\r\n");
  }
  if (!r.interim && r.close_client)
    out.append("Connection: close\r\n");
  else if (!r.interim && (req.http10 || http10))  // HTTP/1.0 persists only when told (RFC 9112 9.3)
    out.append("Connection: keep-alive\r\n");
  out.append("\r\n");
}

}  // namespace

ResponseHead parse_response_head(std::string_view buf, const HttpRequest& req, const HeadLimits& limits) {
  std::vector<std::string_view> lines;
  ResponseHead r = split_lines(buf, limits, lines);
  if (r.status != ParseStatus::ok) return r;
  r.code = status_code(lines[0]);
  if (r.code == 0) return bad("malformed status line '" + std::string(lines[0].substr(0, 100)) + "'");
  // The proxy strips Upgrade from requests, so a 101 answers a question nobody asked.
  if (r.code == 101) return bad("101 Switching Protocols without an Upgrade request");
  bool http10 = lines[0][7] == '0';
  FieldScan s;
  if (auto f = read_fields(lines, http10, s, r)) return *f;
  decide_framing(s, req, r);
  build_client_head(lines[0], s, req, http10, r);
  return r;
}

}  // namespace cage::proxy
