// `pagedserve-train export`: a checkpoint -> a torch.save state_dict. Writing .pth runs
// libtorch's pickler, so it lives in the training binary, not in the serving one.
#include <cstdio>
#include <set>
#include <string>

#include "app/commands.h"
#include "app/engine_flags.h"
#include "app/flags.h"
#include "pth_export/export_pth.h"

namespace ps {
int export_command(int argc, char** argv) {
  std::set<std::string> valued = {"model", "to", "names", "dtype", "lora"};
  Flags flags(argc, argv, 2, valued, {"help"});
  if (flags.on("help")) {
    std::fprintf(
        stderr,
        "usage: pagedserve-train export --model DIR --to MODEL.pth [--names hf|minimind] "
        "[--dtype f32|bf16|f16] [--lora ADAPTER]\n"
        "Writes a state_dict that torch.load reads (model.load_state_dict(torch.load(p))).\n");
    return 0;
  }
  const std::string to = flags.required("to");
  ExportOptions o;
  const std::string names = flags.str("names", "hf");
  if (names != "hf" && names != "minimind") {
    throw UsageError("flag --names must be hf or minimind, got '" + names + "'");
  }
  o.minimind_names = names == "minimind";
  o.dtype = flags.str("dtype", "f32");
  const LoadedModel m = load_model_with_lora(flags, flags.required("model"));
  const int n = export_pth(m, to, o);
  std::printf("wrote %s: %d tensors (%s names, %s)\n", to.c_str(), n, names.c_str(),
              o.dtype.c_str());
  return 0;
}

}  // namespace ps
