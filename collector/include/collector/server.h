// The HTTP side of the collector: libmicrohttpd in thread-pool mode in front of Collector::handle().
// docs/decisions.md says why libmicrohttpd.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "collector/request.h"

namespace sampler::collector {

/// TLS served directly (libmicrohttpd with GnuTLS): the PEM texts of the certificate (chain) and its key.
struct TlsSettings {
  std::string certificate_pem;
  std::string key_pem;
};

class Server {
 public:
  /// Binds HOST:PORT (port 0: an ephemeral port) and starts serving on limits().threads threads. `log`
  /// receives each failure's line (from several threads; it must be thread-safe). Returns nullptr and sets
  /// `error` when the address is bad or cannot be bound. With `tls`, the server speaks HTTPS only.
  static std::unique_ptr<Server> start(Collector& collector, const std::string& listen,
                                       std::function<void(const std::string&)> log, std::string& error,
                                       const TlsSettings* tls = nullptr);
  virtual ~Server() = default;
  /// The address actually bound, "HOST:PORT".
  virtual std::string address() const = 0;
  /// Stops accepting, finishes the requests under way, returns.
  virtual void stop() = 0;
};

}  // namespace sampler::collector
