#include "launcher_args.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <memory>
#include <optional>

namespace shmpi::launcher {
namespace {

constexpr const char* kPrefix = "shmpi: mpirun: ";

/// The error message, kept to one line: control characters the user typed
/// (a newline inside a quoted word) are shown as \n, \t or \xNN.
ParsedCommandLine error(std::string text) {
    ParsedCommandLine p;
    p.action = ParsedCommandLine::Action::kError;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    std::string line = kPrefix;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\n') {
            line += "\\n";
        } else if (c == '\t') {
            line += "\\t";
        } else if (u < 0x20 || u == 0x7f) {
            line += fmt::format("\\x{:02x}", u);
        } else {
            line += c;
        }
    }
    p.message = std::move(line);
    return p;
}

/// The values of the options that need checking, as CLI11 stored them.
struct RawOptions {
    std::string nranks;
    std::vector<std::string> env;
    std::string timeout;
    std::string bind_to;
    std::string map_by;
    std::string cpu_list;
    bool report_bindings = false;
    bool oversubscribe = false;
    bool tag_output = false;
    bool ignored = false;
    bool version = false;
};

/// CLI11's help, with a usage line that shows the program and its arguments
/// (CLI11 only knows about the options: mpirun finds the program itself).
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_usage(const CLI::App*, std::string) const override {
        return "Usage: mpirun [OPTIONS] PROGRAM [ARGS...]\n";
    }
};

/// Declares mpirun's options on `app`.  This is the only table of options:
/// the argv walk below asks it which names exist and which take a value.
void declare_options(CLI::App& app, RawOptions& raw) {
    app.add_option("-n,-c,--np,--n", raw.nranks, "Number of ranks to start (default 1)")
        ->type_name("N")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("-x", raw.env,
                   "Set VAR=VALUE for every rank, or forward VAR (the whole environment is "
                   "forwarded anyway); may be repeated")
        ->type_name("VAR[=VALUE]")
        ->allow_extra_args(false);
    app.add_option("--timeout", raw.timeout, "End the job after S seconds (exit status 124)")
        ->type_name("S")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--bind-to", raw.bind_to,
                   "none, hwthread, core, l3cache, numa or package: what each rank may run on "
                   "(default: core when the ranks fit the cores, else none)")
        ->type_name("WHAT")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--map-by", raw.map_by,
                   "core, l3cache, numa or package, with :compact (fill one before the next) or "
                   ":spread (round-robin over them); default core (compact), the others spread")
        ->type_name("LEVEL[:compact|:spread]")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--cpu-list", raw.cpu_list,
                   "Use only these CPUs (OS indexes, as taskset: 0,2,4-7)")
        ->type_name("LIST")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_flag("--report-bindings", raw.report_bindings,
                 "Print each rank's cores, L3 cache, NUMA node and package on stderr before "
                 "starting");
    app.add_flag("--oversubscribe", raw.oversubscribe,
                 "Allow more ranks than cores with --bind-to core (more than PUs with hwthread): "
                 "ranks then share them");
    app.add_flag("--tag-output,--prepend-rank,-l", raw.tag_output,
                 "Prefix every output line with \"[R] \", R being the rank that wrote it");
    app.add_flag("--allow-run-as-root", raw.ignored,
                 "Accepted for Open MPI scripts; has no effect");
    app.add_flag("--version", raw.version, "Print the version and exit");
    app.formatter(std::make_shared<HelpFormatter>());
    app.footer(
        "Runs PROGRAM as N ranks of one MPI job on this machine.  Options end at the first word\n"
        "that is not an option (or at --); everything after it is passed to PROGRAM.\n"
        "Open MPI and MPICH spellings with one dash (-np, -prepend-rank, -timeout) work too.\n"
        "Rank 0 reads mpirun's standard input; the other ranks read /dev/null.\n"
        "SHMPI_TOPOLOGY (an hwloc synthetic description such as \"pack:2 numa:2 core:8 pu:1\",\n"
        "or an XML file) replaces this machine's topology for mapping and the report; ranks\n"
        "are then not bound.  shmpi-topo prints a map without running anything.");
}

/// A number of ranks, or nothing if `text` is not an integer in 1..kMaxRanks.
std::optional<std::uint32_t> to_nranks(const std::string& text) {
    std::uint64_t n = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, n);
    if (ec != std::errc{} || p != end || n == 0 || n > kMaxRanks) return std::nullopt;
    return static_cast<std::uint32_t>(n);
}

/// Seconds, or nothing if `text` is not a finite positive number.
std::optional<double> to_seconds(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    const double s = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !std::isfinite(s) || s <= 0 || s > 1e9) return std::nullopt;
    return s;
}

}  // namespace

ParsedCommandLine parse_launcher_args(const std::vector<std::string>& argv,
                                      const std::string& version) {
    CLI::App app{"mpirun (shmpi): start an MPI job on this machine", "mpirun"};
    RawOptions raw;
    declare_options(app, raw);

    // 1. Walk argv to find where the options end and to rewrite each option
    //    into a form CLI11 reads the same way whatever the user's spelling:
    //    single-dash long names get their second dash, and every value is
    //    attached (`--np=-3`, `-xFOO=1`) so that a value starting with '-' is
    //    never mistaken for an option.  `spelled` remembers how the user wrote
    //    the options whose values are checked after parsing.
    std::vector<std::string> options;
    ParsedCommandLine result;
    std::string n_spelled = "-n";
    std::string timeout_spelled = "--timeout";
    std::size_t i = 1;
    for (; i < argv.size(); ++i) {
        const std::string& tok = argv[i];
        if (tok == "--") {
            ++i;
            break;
        }
        if (tok.size() < 2 || tok[0] != '-') break;  // the program

        std::string name;        // canonical name, "--long" or "-s"
        std::string shown;       // the option as typed, for messages
        std::optional<std::string> value;  // attached value, if any
        const bool double_dash = tok[1] == '-';
        const std::string body = tok.substr(double_dash ? 2 : 1);
        const std::size_t eq = body.find('=');
        const std::string long_name = body.substr(0, eq);
        if (double_dash ||
            (long_name.size() > 1 && app.get_option_no_throw("--" + long_name) != nullptr)) {
            name = "--" + long_name;
            shown = tok.substr(0, tok.size() - (eq == std::string::npos ? 0 : body.size() - eq));
            if (eq != std::string::npos) value = body.substr(eq + 1);
        } else {
            name = std::string{'-', body[0]};
            shown = name;
            if (body.size() > 1) value = body.substr(body[1] == '=' ? 2 : 1);
        }

        const CLI::Option* opt = app.get_option_no_throw(name);
        if (opt == nullptr) {
            return error(fmt::format("unknown option '{}' (see mpirun --help)", tok));
        }
        if (opt->get_expected_max() == 0) {  // a flag
            options.push_back(value ? name + "=" + *value : name);
            continue;
        }
        if (!value) {
            if (i + 1 >= argv.size()) {
                return error(fmt::format("option '{}' needs a value", shown));
            }
            value = argv[++i];
        }
        if (value->empty()) {  // CLI11 would call it missing
            return error(fmt::format("{} '': the value is empty", shown));
        }
        if (opt->check_name("-n")) n_spelled = shown;
        if (opt->check_name("--timeout")) timeout_spelled = shown;
        options.push_back(name.size() == 2 ? name + *value : name + "=" + *value);
    }
    result.args.command.assign(argv.begin() + static_cast<std::ptrdiff_t>(std::min(i, argv.size())),
                               argv.end());

    // 2. Let CLI11 read the options (it wants them in reverse order).
    std::reverse(options.begin(), options.end());
    try {
        app.parse(options);
    } catch (const CLI::CallForHelp&) {
        result.action = ParsedCommandLine::Action::kHelp;
        result.message = app.help();
        return result;
    } catch (const CLI::ParseError& e) {
        return error(e.what());
    }
    if (raw.version) {
        result.action = ParsedCommandLine::Action::kVersion;
        result.message = "shmpi mpirun " + version;
        return result;
    }

    // 3. Check the values.
    LaunchArgs& args = result.args;
    if (app.count("-n") > 0) {
        const auto n = to_nranks(raw.nranks);
        if (!n) {
            return error(fmt::format(
                "{} '{}': the number of ranks must be a whole number from 1 to {}", n_spelled,
                raw.nranks, kMaxRanks));
        }
        args.nranks = *n;
    }
    if (app.count("--timeout") > 0) {
        const auto s = to_seconds(raw.timeout);
        if (!s) {
            return error(fmt::format("{} '{}': expected a positive number of seconds",
                                     timeout_spelled, raw.timeout));
        }
        args.timeout_s = *s;
    }
    for (const std::string& x : raw.env) {
        const std::size_t eq = x.find('=');
        EnvSetting e;
        e.name = x.substr(0, eq);
        if (eq != std::string::npos) {
            e.value = x.substr(eq + 1);
            e.has_value = true;
        }
        if (e.name.empty()) {
            return error(fmt::format("-x '{}': expected VAR or VAR=VALUE", x));
        }
        args.env.push_back(std::move(e));
    }
    if (app.count("--bind-to") > 0) {
        const auto b = place::parse_bind(raw.bind_to);
        if (!b) {
            return error(fmt::format("--bind-to '{}': expected {}", raw.bind_to, place::kBindWords));
        }
        args.bind_to = *b;
    }
    if (app.count("--map-by") > 0) {
        const auto m = place::parse_map_by(raw.map_by);
        if (!m) {
            return error(fmt::format("--map-by '{}': expected {}", raw.map_by, place::kMapWords));
        }
        args.map_by = *m;
    }
    if (app.count("--cpu-list") > 0) {
        const auto c = place::parse_cpu_list(raw.cpu_list);
        if (!c) {
            return error(fmt::format(
                "--cpu-list '{}': expected CPU numbers and ranges such as 0,2,4-7", raw.cpu_list));
        }
        args.cpu_list = *c;
    }
    args.report_bindings = raw.report_bindings;
    args.oversubscribe = raw.oversubscribe;
    args.tag_output = raw.tag_output;
    if (args.command.empty()) {
        return error("no program to run (usage: mpirun -n N PROGRAM [ARGS...]; see mpirun --help)");
    }
    result.action = ParsedCommandLine::Action::kRun;
    return result;
}

}  // namespace shmpi::launcher
