#pragma once
// The web chat page's files, compiled into the binary (web/CMakeLists.txt generates the
// definition from web/index.html, chat.js, chat.css).
#include <span>
#include <string_view>

namespace ps {

struct WebAsset {
  std::string_view path;          // "/index.html"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view body;
};

std::span<const WebAsset> web_assets();

}  // namespace ps
