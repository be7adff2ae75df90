// libmicrohttpd glue: reads the request (bounded), calls Collector::handle(), sends the answer. Every limit
// comes from Limits: libmicrohttpd enforces the connection counts (in all, and per client address) and the idle
// timeout itself; the time a request may take to arrive is enforced here (a watchdog over the connections that
// are receiving one), since a slow sender that never idles would otherwise hold its connection forever.
//
// Past --max-connections, a few reserve connections are kept for GET /health, so that a monitor still hears from a
// server that many clients fill: a request is known only after it is accepted, so a connection accepted into the
// reserve answers /health and nothing else (503 to other requests), closes after its answer, and has a short
// deadline, so that slow clients which land there free it at once.
//
// The console's pages (GET /ui/...) are made by PageWorkers while their connections are suspended, never on the
// polling threads, which also carry the uploads.
#include "collector/server.h"

#include "collector/console.h"  // Console::kMaxLoginBody
#include "collector/page_workers.h"
#include "sections/diagnostics.h"  // json_string

#include <arpa/inet.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace sampler::collector {
namespace {

constexpr unsigned kHealthReserve = 4;           // connections kept for GET /health past --max-connections
constexpr double kHealthReserveDeadline = 1.0;  // seconds a reserve connection's request may take to arrive
char reserve_tag;                               // a reserve connection's socket context points here

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// What one request accumulates between libmicrohttpd's calls.
struct Exchange {
  std::string body;
  bool too_large = false;
  bool unread = false;  // answered before its body was read (no known key)
  std::optional<Response> page;  // a console page a page worker made (then the connection was resumed)
};

// A console request as a page worker needs it: its own copies (the connection's strings stay libmicrohttpd's).
struct PageRequest {
  std::string method, path, authorization, cookie;
  bool secure = false;
  Request view() const {
    Request request;
    request.method = method;
    request.path = path;
    request.authorization = authorization;
    request.cookie = cookie;
    request.secure = secure;
    return request;
  }
};

constexpr unsigned kPageWorkers = 2;

class MhdServer : public Server {
 public:
  MhdServer(Collector& collector, std::function<void(const std::string&)> log, const TlsSettings* tls)
      : collector_(collector), log_(std::move(log)) {
    if (tls != nullptr) tls_ = *tls;
  }
  ~MhdServer() override { stop(); }

  bool start(const std::string& listen, std::string& error) {
    size_t colon = listen.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
      error = "--listen wants HOST:PORT, not '" + listen + "'";
      return false;
    }
    std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(host == "*" ? nullptr : host.c_str(), port.c_str(), &hints, &found); rc != 0) {
      error = "cannot resolve '" + listen + "': " + gai_strerror(rc);
      return false;
    }
    int fd = -1;
    std::string last_error = "no address";
    for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
      fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
        last_error = std::strerror(errno);
        close(fd);
        fd = -1;
      }
    }
    freeaddrinfo(found);
    if (fd < 0) {
      error = "cannot listen on '" + listen + "': " + last_error;
      return false;
    }
    sockaddr_storage bound{};
    socklen_t size = sizeof bound;
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &size);
    char name[INET6_ADDRSTRLEN] = "?";
    int bound_port = 0;
    if (bound.ss_family == AF_INET6) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&bound);
      inet_ntop(AF_INET6, &in6->sin6_addr, name, sizeof name);
      bound_port = ntohs(in6->sin6_port);
      address_ = "[" + std::string(name) + "]:" + std::to_string(bound_port);
    } else {
      auto* in4 = reinterpret_cast<sockaddr_in*>(&bound);
      inet_ntop(AF_INET, &in4->sin_addr, name, sizeof name);
      bound_port = ntohs(in4->sin_port);
      address_ = std::string(name) + ":" + std::to_string(bound_port);
    }
    const Limits& limits = collector_.limits();
    // TLS options, when asked for; the PEM texts live in tls_ as long as the daemon.
    std::vector<MHD_OptionItem> tls_options;
    // ITC: stopping wakes the workers through their own channel; without it libmicrohttpd wakes them through the
    // listening socket, which a worker at its connection limit no longer watches, and stopping hangs.
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_USE_ITC |
                     MHD_ALLOW_SUSPEND_RESUME;  // the console's pages (PageWorkers)
    if (tls_) {
      if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        close(fd);
        error = "this libmicrohttpd has no TLS support: put a reverse proxy in front (docs/collection.md)";
        return false;
      }
      flags |= MHD_USE_TLS;
      tls_options.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, tls_->certificate_pem.data()});
      tls_options.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, tls_->key_pem.data()});
    }
    tls_options.push_back({MHD_OPTION_END, 0, nullptr});
    daemon_ = MHD_start_daemon(
        flags, 0, nullptr, nullptr, &MhdServer::access,
        this, MHD_OPTION_EXTERNAL_LOGGER, &MhdServer::mhd_log, this, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, static_cast<unsigned>(limits.threads),
        MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(limits.max_connections) + kHealthReserve, MHD_OPTION_CONNECTION_TIMEOUT,
        static_cast<unsigned>(limits.timeout_seconds), MHD_OPTION_NOTIFY_COMPLETED, &MhdServer::completed, this,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, static_cast<unsigned>(limits.max_connections_per_client),
        MHD_OPTION_NOTIFY_CONNECTION, &MhdServer::connection_event, this,
        MHD_OPTION_ARRAY, tls_options.data(), MHD_OPTION_END);
    if (daemon_ == nullptr) {
      close(fd);
      error = std::string("cannot start the ") + (tls_ ? "HTTPS" : "HTTP") + " server on '" + address_ + "'" +
              (tls_ ? " (is the certificate or the key malformed?)" : "");
      return false;
    }
    watchdog_ = std::thread([this] { drop_slow_requests(); });
    return true;
  }

  std::string address() const override { return address_; }

  void stop() override {
    if (watchdog_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(receiving_mutex_);
        stopping_ = true;
      }
      stop_.notify_all();
      watchdog_.join();
    }
    // Every suspended connection must be resumed before the daemon stops: the workers finish their pages first.
    pages_.stop();
    if (daemon_ != nullptr) {
      MHD_stop_daemon(daemon_);
      daemon_ = nullptr;
    }
  }

 private:
  // ---- The request deadline: each connection that is receiving a request, since when.
  struct Receiving {
    int fd;
    double deadline;
  };

  static bool in_reserve(MHD_Connection* connection) {
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info != nullptr && info->socket_context == &reserve_tag;
  }

  void start_receiving(MHD_Connection* connection, bool reserve) {
    std::lock_guard<std::mutex> lock(receiving_mutex_);
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    double allowed = reserve ? kHealthReserveDeadline : collector_.limits().request_seconds;
    if (info != nullptr) receiving_[connection] = {info->connect_fd, monotonic_seconds() + allowed};
  }

  void stop_receiving(MHD_Connection* connection) {
    std::lock_guard<std::mutex> lock(receiving_mutex_);
    receiving_.erase(connection);
  }

  // A connection starts receiving when it opens and again after each answer (keep-alive); it stops once its
  // request has arrived, and when it closes. libmicrohttpd says it closed before it closes the socket, so the
  // watchdog never touches a descriptor that may already be another connection's. One that opens while
  // --max-connections are open is a reserve connection.
  static void connection_event(void* self_pointer, MHD_Connection* connection, void** socket_context,
                               MHD_ConnectionNotificationCode code) {
    auto* self = static_cast<MhdServer*>(self_pointer);
    bool started = code == MHD_CONNECTION_NOTIFY_STARTED;
    bool reserve = false;
    {
      std::lock_guard<std::mutex> lock(self->receiving_mutex_);
      if (started) {
        reserve = ++self->open_connections_ > self->collector_.limits().max_connections;
        *socket_context = reserve ? &reserve_tag : nullptr;
      } else {
        --self->open_connections_;
      }
    }
    if (started) {
      self->start_receiving(connection, reserve);
    } else {
      self->stop_receiving(connection);
    }
  }

  // Every half second: a connection whose request has not arrived by its deadline is shut down (its socket reads
  // end of file, and libmicrohttpd closes it as it would a client's close).
  void drop_slow_requests() {
    std::unique_lock<std::mutex> lock(receiving_mutex_);
    while (!stop_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stopping_; })) {
      double now = monotonic_seconds();
      for (auto entry = receiving_.begin(); entry != receiving_.end();) {
        if (now <= entry->second.deadline) {
          ++entry;
          continue;
        }
        shutdown(entry->second.fd, SHUT_RDWR);
        entry = receiving_.erase(entry);
        ++dropped_;
      }
      if (dropped_ > 0) {
        log_("dropped " + std::to_string(dropped_) + " connection(s) whose request took over " +
             std::to_string(collector_.limits().request_seconds) + " s to arrive (--request-timeout)");
        dropped_ = 0;
      }
    }
  }

  static MHD_Result access(void* self_pointer, MHD_Connection* connection, const char* url, const char* method,
                           const char*, const char* upload_data, size_t* upload_data_size, void** context) {
    auto* self = static_cast<MhdServer*>(self_pointer);
    // The console's login form is the one body read without a key: a key and no more.
    const bool login = std::string_view(url) == "/ui/login";
    const size_t limit = login ? Console::kMaxLoginBody : self->collector_.limits().max_body_bytes;
    if (*context == nullptr) {
      auto* exchange = new Exchange;
      *context = exchange;
      // A declared length over the limit is refused before the body is read at all.
      const char* length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
      if (length != nullptr) {
        errno = 0;
        char* end = nullptr;
        unsigned long long declared = std::strtoull(length, &end, 10);
        if (errno != 0 || declared > limit) exchange->too_large = true;
      }
      // Without a known key, the answer (401) needs no body: give it now instead of holding the body.
      const char* key = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
      if (std::string_view(method) == "POST" && !login && !self->collector_.knows_key(key ? key : "")) {
        exchange->unread = true;
      }
      if (!exchange->too_large && !exchange->unread) return MHD_YES;
    }
    auto* exchange = static_cast<Exchange*>(*context);
    if (*upload_data_size != 0) {
      if (exchange->unread) {
        *upload_data_size = 0;
        return MHD_YES;
      }
      if (!exchange->too_large && exchange->body.size() + *upload_data_size <= limit) {
        exchange->body.append(upload_data, *upload_data_size);
      } else {
        exchange->too_large = true;
        exchange->body.clear();
        exchange->body.shrink_to_fit();
      }
      *upload_data_size = 0;
      return MHD_YES;
    }
    self->stop_receiving(connection);  // the whole request is here: answering is the idle timeout's
    const bool reserve = in_reserve(connection);
    if (reserve && !(std::string_view(method) == "GET" && std::string_view(url) == "/health")) {
      return self->answer(connection, self->collector_.failure(503, "busy", "every connection is taken: try again"), true);
    }
    auto header = [connection](const char* name) {
      const char* value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
      return value ? std::string_view(value) : std::string_view();
    };
    const bool secure = self->tls_.has_value() || header("X-Forwarded-Proto") == "https";
    // A console page: made by a page worker while the connection is suspended; answered when it is resumed.
    if (exchange->page) return self->answer(connection, *exchange->page, false);
    if (std::string_view(method) == "GET" && std::string_view(url).starts_with("/ui/")) {
      auto request = std::make_shared<PageRequest>(PageRequest{method, url, std::string(header(MHD_HTTP_HEADER_AUTHORIZATION)),
                                                               std::string(header(MHD_HTTP_HEADER_COOKIE)), secure});
      MHD_suspend_connection(connection);
      // The same path with the same credentials is the same page: the key's access is checked by the making.
      std::string key = request->path + '\n' + request->authorization + '\n' + request->cookie +
                        (secure ? "\ns" : "\n");
      self->flights_.request(
          key, [self, request] { return self->collector_.handle(request->view(), monotonic_seconds()); },
          [connection, exchange](const Response& page) {
            exchange->page = page;
            MHD_resume_connection(connection);
          });
      return MHD_YES;
    }
    Request request;
    request.method = method;
    request.path = url;
    request.authorization = header(MHD_HTTP_HEADER_AUTHORIZATION);
    request.content_type = header(MHD_HTTP_HEADER_CONTENT_TYPE);
    request.content_encoding = header(MHD_HTTP_HEADER_CONTENT_ENCODING);
    request.body = exchange->body;
    request.body_too_large = exchange->too_large;
    request.file_id = header("FileID");
    request.file_part = header("FilePart");
    request.file_parts = header("FileParts");
    request.cookie = header(MHD_HTTP_HEADER_COOKIE);
    request.secure = secure;
    // libmicrohttpd decodes the query's arguments; one given without '=' has no value, as if absent.
    if (const char* version = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "version")) {
      request.version = version;
    }
    // A body left unread (too large) cannot be skipped on a kept-alive connection: close it; and a reserve
    // connection is free again only once closed.
    return self->answer(connection, self->collector_.handle(request, monotonic_seconds()),
                        exchange->too_large || exchange->unread || reserve);
  }

  MHD_Result answer(MHD_Connection* connection, const Response& answer, bool close_after) {
    if (!answer.log.empty()) log_(answer.log);
    MHD_Response* response =
        MHD_create_response_from_buffer(answer.body.size(), const_cast<char*>(answer.body.data()),
                                        MHD_RESPMEM_MUST_COPY);
    if (response == nullptr) return MHD_NO;
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, answer.content_type.c_str());
    if (answer.status == 503) MHD_add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    for (const auto& [name, value] : answer.headers) MHD_add_response_header(response, name.c_str(), value.c_str());
    if (close_after) MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
    MHD_Result result = MHD_queue_response(connection, static_cast<unsigned>(answer.status), response);
    MHD_destroy_response(response);
    return result;
  }

  static void completed(void* self_pointer, MHD_Connection* connection, void** context,
                        MHD_RequestTerminationCode code) {
    delete static_cast<Exchange*>(*context);
    *context = nullptr;
    // Kept alive: the next request's time starts now.
    if (code == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
      static_cast<MhdServer*>(self_pointer)->start_receiving(connection, in_reserve(connection));
    }
  }

  static void mhd_log(void* self_pointer, const char* format, va_list arguments) {
    char line[512];
    std::vsnprintf(line, sizeof line, format, arguments);
    std::string text(line);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    static_cast<MhdServer*>(self_pointer)->log_("libmicrohttpd: " + json_string(text));
  }

  Collector& collector_;
  std::function<void(const std::string&)> log_;
  std::mutex receiving_mutex_;
  std::unordered_map<MHD_Connection*, Receiving> receiving_;
  unsigned open_connections_ = 0;
  std::condition_variable stop_;
  bool stopping_ = false;
  size_t dropped_ = 0;
  std::thread watchdog_;
  MHD_Daemon* daemon_ = nullptr;
  std::string address_;
  std::optional<TlsSettings> tls_;
  PageWorkers pages_{kPageWorkers};
  PageFlights flights_{pages_};
};

}  // namespace

std::unique_ptr<Server> Server::start(Collector& collector, const std::string& listen,
                                      std::function<void(const std::string&)> log, std::string& error,
                                      const TlsSettings* tls) {
  // glibc's default trim threshold, pinned: left alone, glibc raises it to twice the largest block it ever
  // mapped and freed (up to 64 MB), and each thread's arena then keeps that much of what a page freed, resident
  // for good (docs/decisions.md, "The console").
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
  auto server = std::make_unique<MhdServer>(collector, std::move(log), tls);
  if (!server->start(listen, error)) return nullptr;
  return server;
}

}  // namespace sampler::collector
