// Renders a chat template with pagedserve's Jinja engine, for e2e/chat_template_corpus.sh:
//
//   render_template TEMPLATE.jinja CONTEXT.json
//
// prints the rendering to stdout (exit 0), or "error: <message>" to stderr (exit 1; 2 for bad
// usage or unreadable files).
#include <fstream>
#include <iostream>
#include <sstream>

#include "chat/jinja_template.h"

static bool read_file(const char* path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: render_template TEMPLATE.jinja CONTEXT.json\n";
    return 2;
  }
  std::string source, context_text;
  if (!read_file(argv[1], source) || !read_file(argv[2], context_text)) {
    std::cerr << "render_template: cannot read " << argv[1] << " or " << argv[2] << "\n";
    return 2;
  }
  nlohmann::ordered_json context;
  try {
    context = nlohmann::ordered_json::parse(context_text);
  } catch (const std::exception& e) {
    std::cerr << "render_template: " << argv[2] << " is not JSON: " << e.what() << "\n";
    return 2;
  }
  try {
    auto tpl = ps::jinja::Template::parse(source);
    std::cout << tpl.render(context);
  } catch (const ps::jinja::TemplateError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
