#pragma once
// What the `pagedserve bench` modes share (bench_command.cpp): flag checks, the workload flags
// and the --json report, so the in-process bench (bench_command.cpp) and the HTTP benches
// (bench_http_command.cpp) read the same flags the same way. Internal to app/.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/flags.h"
#include "bench/workload.h"

namespace ps::bench_cli {

using json = nlohmann::json;

// The integer flag --name in [lo, 100000], or `fallback` when absent.
int32_t count_flag(const Flags& flags, const char* name, int64_t fallback, int64_t lo = 1);
// Writes `report` to --json FILE when given.
void write_json(const Flags& flags, const json& report);
// The workload flags shared by offline and serve, so both modes can run the same requests.
Workload workload_from_flags(const Flags& flags, int32_t vocab_size, const TokenizeFn& tokenize);
void print_workload(const Workload& w);
// "a,b,c" -> {"a", "b", "c"}; empty items are errors naming the flag.
std::vector<std::string> name_list(const Flags& flags, const std::string& flag);

// `pagedserve bench serve` and `bench prefix` (bench_http_command.cpp).
int bench_serve(int argc, char** argv);
int bench_prefix(int argc, char** argv);
// `pagedserve bench accuracy` (bench_accuracy_command.cpp).
int bench_accuracy(int argc, char** argv);

}  // namespace ps::bench_cli
