#pragma once
/// The HTTP/1.1 request and response the client sends and reads (http_client.hpp,
/// http_connection.hpp), and the error for a server that breaks the protocol.
#include <map>
#include <stdexcept>
#include <string>

namespace meshperf::transport {

class tls_context;

/// Response head and (for non-streaming calls) body. Header names are lower-case.
struct http_response {
    int status = 0;
    std::string reason;
    int version_minor = 1;  ///< HTTP/1.x of the status line
    std::map<std::string, std::string> headers;
    std::string body;
};

/// A request. Headers are sent as given; Host, Content-Length and Connection are added.
struct http_request {
    std::string method = "GET";
    std::string target = "/";
    std::map<std::string, std::string> headers;
    std::string body;
};

/// Thrown when the other end does not speak HTTP (garbage, or a non-HTTP service on the
/// port), or breaks the protocol. what() says what was seen.
class http_protocol_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace meshperf::transport
