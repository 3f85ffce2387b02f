#pragma once
// One function per `pagedserve` subcommand. Each parses its own flags (app/flags.h), prints a
// clear message naming the flag or file on bad input, and returns the process exit code.
namespace ps {

int make_tiny_model_command(int argc, char** argv);  // pagedserve make-tiny-model DIR [...]
int generate_command(int argc, char** argv);         // pagedserve generate --model DIR ...
int serve_command(int argc, char** argv);            // pagedserve serve --model DIR ...
int bench_command(int argc, char** argv);            // pagedserve bench offline ...
int train_tiny_command(int argc, char** argv);       // pagedserve train-tiny --data F --out DIR
int eval_command(int argc, char** argv);             // pagedserve eval --model DIR --data F
int chat_command(int argc, char** argv);             // pagedserve chat --model DIR | --url URL
int convert_command(int argc, char** argv);          // pagedserve convert --from X.pth --to DIR
int merge_lora_command(int argc, char** argv);       // pagedserve merge-lora --base DIR ...
int export_command(int argc, char** argv);           // pagedserve export --model DIR --to X.pth

}  // namespace ps
