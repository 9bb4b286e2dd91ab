// libFuzzer target for mpirun's command line (tools/launcher/launcher_args.*).
//
// The input is a list of words separated by NUL bytes; "mpirun" is put in
// front of them as argv[0].  Whatever the words, parse_launcher_args() must
// keep its contract (launcher_args.hpp):
//   1. it returns (an exception escaping it is a crash the fuzzer reports);
//   2. an error starts with "shmpi: mpirun: " and is one line, even when
//      the user's words carry newlines (the parser shows control characters
//      escaped);
//   3. a job to run has a program, which is one of the input words, and a
//      rank count in 1..kMaxRanks, and a finite, non-negative timeout;
//   4. help and version have text;
//   5. parsing the same words again gives the same answer (no hidden state).
// Built with AddressSanitizer and UBSan, so bad reads and undefined
// arithmetic on the numbers fail too.  launcher_args.dict lists the option
// spellings, so the fuzzer reaches the options' values quickly.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "launcher_args.hpp"

namespace {

using shmpi::launcher::kMaxRanks;
using shmpi::launcher::parse_launcher_args;
using shmpi::launcher::ParsedCommandLine;
using Action = ParsedCommandLine::Action;

/// Reports a broken contract with the words that broke it, then aborts, so
/// libFuzzer saves the input.
[[noreturn]] void broken(const char* what, const std::vector<std::string>& argv,
                         const std::string& message) {
    std::fprintf(stderr, "launcher_args_fuzz: %s\n  argv:", what);
    for (const std::string& w : argv) std::fprintf(stderr, " [%s]", w.c_str());
    std::fprintf(stderr, "\n  message: [%s]\n", message.c_str());
    std::abort();
}

std::vector<std::string> words_of(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> argv{"mpirun"};
    std::string word;
    for (std::size_t i = 0; i < size; ++i) {
        if (data[i] == 0) {
            argv.push_back(word);
            word.clear();
        } else {
            word.push_back(static_cast<char>(data[i]));
        }
    }
    if (!word.empty() || size == 0 || data[size - 1] == 0) argv.push_back(word);
    return argv;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) return 0;  // long command lines teach nothing new
    const std::vector<std::string> argv = words_of(data, size);
    const ParsedCommandLine p = parse_launcher_args(argv, "0.0.0-fuzz");  // 1.

    switch (p.action) {
    case Action::kError: {  // 2.
        const std::string prefix = "shmpi: mpirun: ";
        if (p.message.compare(0, prefix.size(), prefix) != 0) {
            broken("an error message does not start with 'shmpi: mpirun: '", argv, p.message);
        }
        // One line, whatever the user typed (control characters are shown
        // escaped).
        if (std::count(p.message.begin(), p.message.end(), '\n') != 0) {
            broken("an error message has more than one line", argv, p.message);
        }
        break;
    }
    case Action::kRun: {  // 3.
        const auto& a = p.args;
        if (a.command.empty()) broken("a job to run has no program", argv, p.message);
        bool found = false;
        for (std::size_t i = 1; i < argv.size() && !found; ++i) found = argv[i] == a.command[0];
        if (!found) broken("the program is none of the words given", argv, a.command[0]);
        if (a.nranks < 1 || a.nranks > kMaxRanks) {
            broken("the rank count is out of range", argv, std::to_string(a.nranks));
        }
        if (!std::isfinite(a.timeout_s) || a.timeout_s < 0) {
            broken("the timeout is negative or not finite", argv, std::to_string(a.timeout_s));
        }
        break;
    }
    case Action::kHelp:
    case Action::kVersion:  // 4.
        if (p.message.empty()) broken("help or version without text", argv, p.message);
        break;
    default:
        broken("an action outside the enum", argv, p.message);
    }

    const ParsedCommandLine again = parse_launcher_args(argv, "0.0.0-fuzz");  // 5.
    if (again.action != p.action || again.message != p.message ||
        again.args.command != p.args.command || again.args.nranks != p.args.nranks) {
        broken("a second parse of the same words answered differently", argv, again.message);
    }
    return 0;
}
