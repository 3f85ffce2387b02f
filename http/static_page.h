#pragma once
// The web chat page: GET / and its assets, served from the copy compiled into the binary
// (web/web_assets.h), so the page works wherever the binary is moved.
namespace httplib {
class Server;
}

namespace ps {

// Adds GET / (index.html) and GET /<file> for each embedded page file.
void add_static_routes(httplib::Server& server);

}  // namespace ps
