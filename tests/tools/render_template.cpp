// Renders chat templates with pagedserve's Jinja engine, for e2e/chat_template_corpus.sh:
//
//   render_template TEMPLATE.jinja CONTEXT.json
//   render_template --batch PAIRS.tsv OUT
//
// The first prints the rendering to stdout (exit 0), or "error: <message>" to stderr (exit 1;
// 2 for bad usage or unreadable files). The second renders each "name<TAB>template<TAB>context"
// line into OUT/name.out or OUT/name.err.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "chat/chat_prompt.h"
#include "chat/jinja_template.h"

namespace {

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

// Renders one pair; false with `error` set when the template or its context fails.
bool render(const std::string& template_path, const std::string& context_path, std::string& out,
            std::string& error) {
  std::string source, context_text;
  if (!read_file(template_path, source) || !read_file(context_path, context_text)) {
    error = "cannot read " + template_path + " or " + context_path;
    return false;
  }
  try {
    auto context = nlohmann::ordered_json::parse(context_text);
    // Not a template variable: like transformers, applied to the rendered text.
    bool cont = context.value("continue_final_message", false);
    context.erase("continue_final_message");
    out = ps::jinja::Template::parse(source).render(context);
    if (cont) out = ps::chat::cut_after_final_message(out, context["messages"]);
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

int batch(const std::string& pairs_path, const std::string& out_dir) {
  std::ifstream pairs(pairs_path);
  if (!pairs) {
    std::cerr << "render_template: cannot read " << pairs_path << "\n";
    return 2;
  }
  std::string line;
  while (std::getline(pairs, line)) {
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, '\t');) fields.push_back(f);
    if (fields.size() != 3) {
      std::cerr << "render_template: bad line in " << pairs_path << ": " << line << "\n";
      return 2;
    }
    std::string out, error;
    bool ok = render(fields[1], fields[2], out, error);
    if (!write_file(out_dir + "/" + fields[0] + (ok ? ".out" : ".err"),
                    ok ? out : "error: " + error + "\n")) {
      std::cerr << "render_template: cannot write into " << out_dir << "\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--batch") return batch(argv[2], argv[3]);
  if (argc != 3) {
    std::cerr << "usage: render_template TEMPLATE.jinja CONTEXT.json | --batch PAIRS.tsv OUT\n";
    return 2;
  }
  std::string out, error;
  if (!render(argv[1], argv[2], out, error)) {
    std::cerr << "error: " << error << "\n";
    return 1;
  }
  std::cout << out;
  return 0;
}
