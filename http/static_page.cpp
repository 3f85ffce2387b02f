#include "http/static_page.h"

#include <httplib.h>

#include <string>

#include "web/web_assets.h"

namespace ps {
namespace {

void serve_asset(const WebAsset& asset, httplib::Response& res) {
  res.status = 200;
  // The page is small and changes with the binary; no-cache makes a rebuilt server's page
  // show up on reload instead of a stale script talking to a newer API.
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_content(std::string(asset.body), std::string(asset.content_type));
}

}  // namespace

void add_static_routes(httplib::Server& server) {
  for (const WebAsset& asset : web_assets()) {
    server.Get(std::string(asset.path), [&asset](const httplib::Request&, httplib::Response& res) {
      serve_asset(asset, res);
    });
    if (asset.path == "/index.html") {
      server.Get("/", [&asset](const httplib::Request&, httplib::Response& res) {
        serve_asset(asset, res);
      });
    }
  }
}

}  // namespace ps
