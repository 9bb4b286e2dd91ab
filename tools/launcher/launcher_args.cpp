#include "launcher_args.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iterator>
#include <memory>
#include <optional>
#include <string_view>

#include "shm/segment.hpp"  // the job variables mpirun sets (kEnvRank, ...), kGeometrySettings

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
    std::string ppn;
    std::vector<std::string> env;
    std::string timeout;
    std::string deadlock_after;
    std::string bind_to;
    std::string map_by;
    std::string cpu_list;
    std::string wdir;
    bool report_bindings = false;
    bool oversubscribe = false;
    bool tag_output = false;
    bool ignored = false;
    bool version = false;
    std::vector<std::string> hosts;
    std::string hostfile;
    std::vector<std::string> genv;  ///< -genv/-env NAME VALUE, joined as NAME=VALUE by the walk
    std::vector<std::string> mca;   ///< --mca KEY VALUE, joined as KEY=VALUE by the walk
    bool genvall = false;
};

/// Whether `name` is one of the portable rank numbers (launcher_args.hpp).
bool is_portable_variable(std::string_view name) {
    for (const char* v : kPortableRankVariables)
        if (name == v) return true;
    for (const char* v : kPortableSizeVariables)
        if (name == v) return true;
    return false;
}

std::string job_variable_message(std::string_view option, std::string_view name) {
    if (is_portable_variable(name)) {
        return fmt::format(
            "{} {}: mpirun sets {} for each rank itself (the rank numbers Open MPI's and MPICH's "
            "launchers give: {}, {})",
            option, name, name, fmt::join(kPortableRankVariables, ", "), fmt::join(kPortableSizeVariables, ", "));
    }
    return fmt::format("{} {}: mpirun sets {}, {} and {} for each rank itself", option, name, shm::kEnvRank,
                       shm::kEnvSize, shm::kEnvFd);
}

/// The options that take two words (NAME VALUE), as MPICH's -genv and Open
/// MPI's --mca do.  CLI11 declares them with one value; the argv walk joins
/// the two words with '=' (a NAME holds none).
bool takes_two_words(const CLI::Option& opt) { return opt.check_name("--genv") || opt.check_name("--mca"); }

/// CLI11's help, with a usage line that shows the program and its arguments
/// (CLI11 only knows about the options: mpirun finds the program itself).
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_usage(const CLI::App*, std::string) const override {
        return "Usage: mpirun [OPTIONS] PROGRAM [ARGS...] [: -n N PROGRAM [ARGS...]]...\n";
    }
};

/// Declares mpirun's options on `app`.  This is the only table of options:
/// the argv walk below asks it which names exist and which take a value.
void declare_options(CLI::App& app, RawOptions& raw) {
    app.add_option("-n,-c,--np,--n", raw.nranks, "Number of ranks to start (default 1)")
        ->type_name("N")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("-N,--ppn,--perhost,--npernode", raw.ppn,
                   "Ranks per node (MPICH's -ppn, Open MPI's -N): this machine is the one node, so "
                   "without -n the job has N ranks; with -n, -n decides")
        ->type_name("N")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("-x", raw.env,
                   "Set VAR=VALUE for every rank, or forward VAR (the whole environment is "
                   "forwarded anyway); may be repeated")
        ->type_name("VAR[=VALUE]")
        ->allow_extra_args(false);
    app.add_option("--timeout", raw.timeout, "End the job after S seconds (exit status 124); MPICH's MPIEXEC_TIMEOUT=S does the same")
        ->type_name("S")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--deadlock-after", raw.deadlock_after,
                   "End the job (exit status 1) once every rank has waited S seconds in an MPI "
                   "call with nothing moving, naming the call each rank waits in (default 3; "
                   "0: never)")
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
    app.add_option("--wdir,--wd", raw.wdir,
                   "Start every rank in directory DIR (also -wdir, -wd); a relative PROGRAM is "
                   "looked for there")
        ->type_name("DIR")
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
    app.add_option("-H,--host,--hosts", raw.hosts,
                   "HOST[:SLOTS],...: accepted when every host is this machine (shmpi runs every rank "
                   "here); without -n the job gets one rank per slot; may be repeated")
        ->type_name("HOSTS")
        ->allow_extra_args(false);
    app.add_option("--hostfile,--machinefile,-f", raw.hostfile,
                   "A file of hosts, one per line (\"host slots=N\" or \"host:N\"), all of them this "
                   "machine, as for --host")
        ->type_name("FILE")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--genv,--env", raw.genv,
                   "MPICH's spelling of -x NAME=VALUE (two words, NAME VALUE, or one, NAME=VALUE); may be repeated")
        ->type_name("NAME VALUE")
        ->allow_extra_args(false);
    app.add_flag("--genvall", raw.genvall,
                 "Accepted for MPICH scripts; the whole environment is forwarded anyway");
    app.add_option("--mca,--gmca", raw.mca,
                   "Open MPI's MCA parameters (two words: KEY VALUE) mean nothing to shmpi: each is "
                   "named in a note and ignored")
        ->type_name("KEY VALUE")
        ->allow_extra_args(false);
    app.add_flag("--allow-run-as-root", raw.ignored,
                 "Accepted for Open MPI scripts; has no effect");
    app.add_flag("--version", raw.version, "Print the version and exit");
    app.formatter(std::make_shared<HelpFormatter>());
    app.footer(
        "Runs PROGRAM as N ranks of one MPI job on this machine.  Options end at the first word\n"
        "that is not an option (or at --); everything after it is passed to PROGRAM.\n"
        "Open MPI and MPICH spellings with one dash (-np, -prepend-rank, -timeout) work too.\n"
        "A lone ':' starts another program of the same job (MPMD): its ranks follow, only -n N\n"
        "may come before it, and MPI_APPNUM tells the programs apart (0, 1, ...).\n"
        "Rank 0 reads mpirun's standard input; the other ranks read /dev/null.\n"
        "SHMPI_TOPOLOGY (an hwloc synthetic description such as \"pack:2 numa:2 core:8 pu:1\",\n"
        "or an XML file) replaces this machine's topology for mapping and the report; ranks\n"
        "are then not bound.  shmpi-topo prints a map without running anything.");
}

/// Lower case (host names compare without case).
std::string lower(std::string s) {
    for (char& c : s) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return s;
}

/// A number of ranks (-n, or a host's slots), or nothing if `text` is not an
/// integer in 1..kMaxRanks.
std::optional<std::uint32_t> to_nranks(std::string_view text) {
    std::uint64_t n = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, n);
    if (ec != std::errc{} || p != end || n == 0 || n > kMaxRanks) return std::nullopt;
    return static_cast<std::uint32_t>(n);
}

/// One HOST or HOST:SLOTS.  A name holds no blank, comma or '='; an IPv6
/// address ("::1") has colons of its own, so only a trailing ":digits"
/// after a name without other colons is a count.
std::optional<HostSlots> parse_host(std::string_view word) {
    HostSlots h;
    const std::size_t colon = word.rfind(':');
    const bool counted = colon != std::string_view::npos && colon > 0 &&
                         word.find(':') == colon;  // exactly one colon: NAME:SLOTS
    std::string_view name = counted ? word.substr(0, colon) : word;
    if (counted) {
        const auto n = to_nranks(word.substr(colon + 1));
        if (!n) return std::nullopt;
        h.slots = *n;
    }
    if (name.empty() || name.find_first_of(" \t,=") != std::string_view::npos) return std::nullopt;
    h.name = std::string(name);
    return h;
}

/// The most seconds --timeout and --deadlock-after take (about 31 years).
constexpr double kMaxSeconds = 1e9;

/// Seconds, or nothing if `text` is not a number in (0, kMaxSeconds], or
/// [0, kMaxSeconds] with `zero_ok` (written any way: 0, 0.0, 00).
std::optional<double> to_seconds(const std::string& text, bool zero_ok = false) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    const double s = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !std::isfinite(s) || s < 0 || (s == 0 && !zero_ok) || s > kMaxSeconds) {
        return std::nullopt;
    }
    return s;
}

/// Whether `text` is decimal digits with an optional fraction ("10", "2.5").
bool plain_decimal(std::string_view text) {
    auto digits = [](std::string_view d) { return !d.empty() && d.find_first_not_of("0123456789") == d.npos; };
    const std::size_t dot = text.find('.');
    return digits(text.substr(0, dot)) && (dot == text.npos || digits(text.substr(dot + 1)));
}

}  // namespace

std::string usage_error(std::string text) { return error(std::move(text)).message; }

std::optional<double> parse_output_wait(const char* value) {
    if (value == nullptr || *value == '\0') return kDefaultOutputWait_s;
    if (!plain_decimal(value)) return std::nullopt;
    return to_seconds(value, true);
}

std::optional<double> parse_mpiexec_timeout(const char* value) {
    if (value == nullptr || *value == '\0') return 0.0;
    return to_seconds(value, true);
}

std::uint32_t LaunchArgs::appnum_of(std::uint32_t rank) const {
    std::uint32_t first = nranks;
    for (const AppContext& a : more_apps) first -= a.nranks;  // the first program's ranks
    if (rank < first) return 0;
    rank -= first;
    for (std::size_t k = 0; k < more_apps.size(); ++k) {
        if (rank < more_apps[k].nranks) return static_cast<std::uint32_t>(k + 1);
        rank -= more_apps[k].nranks;
    }
    return static_cast<std::uint32_t>(more_apps.size());  // (not a rank of the job)
}

const std::vector<std::string>& LaunchArgs::command_of(std::uint32_t rank) const {
    const std::uint32_t k = appnum_of(rank);
    return k == 0 ? command : more_apps[k - 1].command;
}

std::optional<std::vector<HostSlots>> parse_host_list(const std::string& text) {
    std::vector<HostSlots> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string_view word = std::string_view(text).substr(
            start, comma == std::string::npos ? std::string::npos : comma - start);
        const auto h = parse_host(word);
        if (!h) return std::nullopt;
        out.push_back(*h);
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

std::optional<std::vector<HostSlots>> parse_hostfile(const std::string& text, std::string& problem) {
    std::vector<HostSlots> out;
    std::size_t start = 0;
    for (int line_no = 1; start <= text.size(); ++line_no) {
        const std::size_t nl = text.find('\n', start);
        std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        start = nl == std::string::npos ? text.size() + 1 : nl + 1;
        if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
        // The words of the line: the host, then Open MPI's key=value pairs.
        std::vector<std::string> words;
        std::size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
            const std::size_t b = i;
            while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
            if (i > b) words.push_back(line.substr(b, i - b));
        }
        if (words.empty()) continue;
        auto h = parse_host(words[0]);
        if (!h) {
            problem = fmt::format("line {}: '{}' is not HOST or HOST:SLOTS", line_no, words[0]);
            return std::nullopt;
        }
        for (std::size_t w = 1; w < words.size(); ++w) {
            const std::string& kv = words[w];
            const std::size_t eq = kv.find('=');
            const std::string key = kv.substr(0, eq);
            const auto n =
                eq == std::string::npos ? std::nullopt : to_nranks(std::string_view(kv).substr(eq + 1));
            if ((key != "slots" && key != "max_slots" && key != "max-slots") || !n) {
                problem = fmt::format("line {}: '{}': expected slots=N or max_slots=N", line_no, kv);
                return std::nullopt;
            }
            if (key == "slots") h->slots = *n;
        }
        out.push_back(std::move(*h));
    }
    return out;
}

std::string apply_hosts(LaunchArgs& args, const std::vector<HostSlots>& hosts, const std::string& option,
                        const std::vector<std::string>& local_names) {
    std::uint64_t slots = 0;
    for (const HostSlots& h : hosts) {
        const std::string name = lower(h.name);
        const bool local = std::any_of(local_names.begin(), local_names.end(),
                                       [&](const std::string& l) { return lower(l) == name; });
        if (!local) {
            return error(fmt::format("{}: host '{}' is not this machine; shmpi runs every rank here (this "
                                     "machine is {})",
                                     option, h.name, fmt::join(local_names, ", ")))
                .message;
        }
        slots += h.slots > 0 ? h.slots : 1;
    }
    if (!args.nranks_given && !hosts.empty()) {
        if (slots > kMaxRanks) {
            return error(fmt::format("{}: {} slots in all, more than the {} ranks a job may have", option,
                                     slots, kMaxRanks))
                .message;
        }
        args.nranks = static_cast<std::uint32_t>(slots);
        args.nranks_given = true;  // a second list (the hostfile after --host) is only checked
    }
    return "";
}

namespace {

/// One program after a ':' at argv[at]: `[-n N] [--] PROGRAM [ARGS...]` up to
/// the next lone ':' or the end, where `at` is left.  Nothing, with `why`
/// set, when it is not one.
std::optional<AppContext> parse_app_context(const std::vector<std::string>& argv, std::size_t& at,
                                            std::string& why) {
    ++at;  // the ':'
    AppContext app;
    if (at < argv.size() && argv[at] != ":") {
        const std::string& tok = argv[at];
        std::optional<std::string> count;  // -n's value, as typed
        std::string shown = tok;
        for (const char* n : {"-n", "-np", "--np", "--n", "-c"}) {
            const std::string name = n;
            if (tok == name) {
                if (at + 1 >= argv.size() || argv[at + 1] == ":") {
                    why = fmt::format("option '{}' after ':' needs a value", tok);
                    return std::nullopt;
                }
                count = argv[at + 1];
                at += 2;
                break;
            }
            if (tok.starts_with(name + "=")) {
                shown = name;
                count = tok.substr(name.size() + 1);
                ++at;
                break;
            }
        }
        // An attached value, as before the first program: -n4, -c4.
        if (!count && tok.size() > 2 && tok[0] == '-' && (tok[1] == 'n' || tok[1] == 'c') && tok[2] != '-') {
            shown = tok.substr(0, 2);
            count = tok.substr(2);
            ++at;
        }
        if (count) {
            const auto n = to_nranks(*count);
            if (!n) {
                why =
                    fmt::format("{} '{}' after ':': the number of ranks must be a whole number from 1 to {}",
                                shown, *count, kMaxRanks);
                return std::nullopt;
            }
            app.nranks = *n;
        }
    }
    const bool dashes = at < argv.size() && argv[at] == "--";
    if (dashes) ++at;
    const std::size_t first = at;
    while (at < argv.size() && argv[at] != ":") ++at;
    if (first == at) {
        why =
            "':' must be followed by a program (usage: mpirun -n N PROGRAM [ARGS...] : -n M PROGRAM2 "
            "[ARGS...])";
        return std::nullopt;
    }
    if (!dashes && argv[first].size() > 1 && argv[first][0] == '-') {
        why = fmt::format(
            "'{}' after ':': only -n N may come before the program there (options for the "
            "whole job go before the first program)",
            argv[first]);
        return std::nullopt;
    }
    app.command.assign(argv.begin() + static_cast<std::ptrdiff_t>(first),
                       argv.begin() + static_cast<std::ptrdiff_t>(at));
    return app;
}

/// Whether `body`, a one-dash word's text after the dash that is no long
/// option, reads as its first letter's short option with the rest attached:
/// `-n4`, `-n=4`, `-xNAME=VALUE`, `-H=host`.  Other MPIs' one-dash words
/// (`-hostlist`, `-configfile`, `-np2`, `-xterm`) must not be split into a
/// letter and a value; they are unknown options here.
bool attached_value_fits(const CLI::Option& opt, const std::string& body) {
    if (body[1] == '=') return opt.get_expected_max() != 0;
    if (opt.get_expected_max() == 0) return false;  // a flag takes no value
    if (opt.check_name("-n") || opt.check_name("-N")) {
        return std::isdigit(static_cast<unsigned char>(body[1])) != 0;
    }
    if (opt.check_name("-x")) return body.find('=') != std::string::npos;
    return false;
}

/// The message for a word before the program that is no option of ours.
std::string unknown_option(const std::string& tok) {
    std::string text = fmt::format("unknown option '{}' (see mpirun --help)", tok);
    const std::string word = tok.substr(0, tok.find('='));
    if (word == "-configfile" || word == "--configfile" || word == "-file" || word == "--file") {
        text += "; shmpi reads no file of programs: give them on the command line, separated by ':' "
                "(mpirun -n 1 ./a : -n 3 ./b)";
    }
    return text;
}

}  // namespace

ParsedCommandLine parse_launcher_args(const std::vector<std::string>& argv, const std::string& version,
                                      const std::vector<std::string>& local_names) {
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
    std::string ppn_spelled = "-ppn";
    std::string timeout_spelled = "--timeout";
    std::string host_spelled = "--host";
    std::string hostfile_spelled = "--hostfile";
    std::string wdir_spelled = "--wdir";
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
        if (opt == nullptr || (name.size() == 2 && body.size() > 1 && !attached_value_fits(*opt, body))) {
            return error(unknown_option(tok));
        }
        if (opt->get_expected_max() == 0) {  // a flag
            options.push_back(value ? name + "=" + *value : name);
            continue;
        }
        // MPICH's -genv also takes NAME=VALUE as one word (hydra does).
        if (opt->check_name("--genv") && !value && i + 1 < argv.size() && argv[i + 1].find('=') != std::string::npos) {
            const std::string& setting = argv[i + 1];
            if (setting.front() == '=') {
                return error(fmt::format("{} '{}': the variable's name is empty", shown, setting));
            }
            options.push_back(name + "=" + setting);
            i += 1;
            continue;
        }
        if (takes_two_words(*opt)) {
            if (value || i + 2 >= argv.size()) {
                return error(fmt::format("option '{}' takes two words, {} (as in {} NAME VALUE)", shown,
                                         opt->get_type_name(), shown));
            }
            const std::string& key = argv[i + 1];
            if (key.empty() || key.find('=') != std::string::npos) {
                return error(
                    fmt::format("{} '{}': expected a name without '=' before the value", shown, key));
            }
            options.push_back(name + "=" + key + "=" + argv[i + 2]);
            i += 2;
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
        if (opt->check_name("--ppn")) ppn_spelled = shown;
        if (opt->check_name("--timeout")) timeout_spelled = shown;
        if (opt->check_name("--host")) host_spelled = shown;
        if (opt->check_name("--hostfile")) hostfile_spelled = shown;
        if (opt->check_name("--wdir")) wdir_spelled = shown;
        options.push_back(name.size() == 2 ? name + *value : name + "=" + *value);
    }
    // The first program runs up to a lone ':' (MPMD); the others follow.
    std::size_t end = std::min(i, argv.size());
    while (end < argv.size() && argv[end] != ":") ++end;
    result.args.command.assign(argv.begin() + static_cast<std::ptrdiff_t>(std::min(i, argv.size())),
                               argv.begin() + static_cast<std::ptrdiff_t>(end));
    if (end < argv.size() && result.args.command.empty()) {
        return error(
            "':' must follow a program (usage: mpirun -n N PROGRAM [ARGS...] : -n M PROGRAM2 "
            "[ARGS...])");
    }
    while (end < argv.size()) {
        std::string why;
        const auto app = parse_app_context(argv, end, why);  // moves `end` to the next ':' or the end
        if (!app) return error(why);
        result.args.more_apps.push_back(*app);
    }

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
    if (app.count("--deadlock-after") > 0) {
        const auto s = to_seconds(raw.deadlock_after, true);
        if (!s) {
            return error(fmt::format("--deadlock-after '{}': expected a number of seconds from 0 (never) to {:g}",
                                     raw.deadlock_after, kMaxSeconds));
        }
        args.deadlock_after_s = *s;
    }
    if (app.count("--timeout") > 0) {
        const auto s = to_seconds(raw.timeout);
        if (!s) {
            return error(fmt::format("{} '{}': expected a positive number of seconds, at most {:g}",
                                     timeout_spelled, raw.timeout, kMaxSeconds));
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
        if (is_job_variable(e.name)) return error(job_variable_message("-x", e.name));
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
        std::string why;
        const auto c = place::parse_cpu_list(raw.cpu_list, &why);
        if (!c) return error(fmt::format("--cpu-list '{}': {}", raw.cpu_list, why));
        args.cpu_list = *c;
    }
    for (const std::string& g : raw.genv) {  // NAME=VALUE, NAME non-empty (the walk checked)
        const std::size_t eq = g.find('=');
        if (is_job_variable(g.substr(0, eq))) return error(job_variable_message("-genv", g.substr(0, eq)));
        args.env.push_back(EnvSetting{g.substr(0, eq), g.substr(eq + 1), true});
    }
    for (const std::string& m : raw.mca) {
        const std::size_t eq = m.find('=');
        args.ignored_mca.push_back(m.substr(0, eq) + " " + m.substr(eq + 1));
    }
    // In an MPMD job the programs' own -n decide (1 when not given): hosts
    // and host files are only checked, they do not set the first one's.
    args.nranks_given = app.count("-n") > 0 || !args.more_apps.empty();
    if (app.count("--ppn") > 0) {
        const auto n = to_nranks(raw.ppn);
        if (!n) {
            return error(
                fmt::format("{} '{}': the number of ranks per node must be a whole number from 1 to {}",
                            ppn_spelled, raw.ppn, kMaxRanks));
        }
        // One node: N ranks per node is N ranks, unless -n (or MPMD) says
        // how many; host lists after it are only checked.
        if (!args.nranks_given) {
            args.nranks = *n;
            args.nranks_given = true;
        }
    }
    for (const std::string& h : raw.hosts) {
        const auto list = parse_host_list(h);
        if (!list) {
            return error(
                fmt::format("{} '{}': expected HOST or HOST:SLOTS, separated by commas", host_spelled, h));
        }
        args.hosts.insert(args.hosts.end(), list->begin(), list->end());
    }
    const std::string host_option = fmt::format("{} '{}'", host_spelled, fmt::join(raw.hosts, ","));
    if (std::string m = apply_hosts(args, args.hosts, host_option, local_names); !m.empty()) {
        ParsedCommandLine bad;
        bad.action = ParsedCommandLine::Action::kError;
        bad.message = std::move(m);
        return bad;
    }
    if (app.count("--hostfile") > 0) {
        args.hostfile = raw.hostfile;
        args.hostfile_option = hostfile_spelled;
    }
    args.wdir = raw.wdir;
    if (app.count("--wdir") > 0) args.wdir_option = wdir_spelled;
    args.report_bindings = raw.report_bindings;
    args.oversubscribe = raw.oversubscribe;
    args.tag_output = raw.tag_output;
    if (args.command.empty()) {
        return error("no program to run (usage: mpirun -n N PROGRAM [ARGS...]; see mpirun --help)");
    }
    std::uint64_t total = args.nranks;
    for (const AppContext& a : args.more_apps) total += a.nranks;
    if (total > kMaxRanks) {
        return error(
            fmt::format("the programs separated by ':' have {} ranks in all, more than the {} a job "
                        "may have",
                        total, kMaxRanks));
    }
    args.nranks = static_cast<std::uint32_t>(total);
    result.action = ParsedCommandLine::Action::kRun;
    return result;
}

void apply_launcher_settings(const LaunchArgs& args) {
    for (const EnvSetting& x : args.env) {
        if (!x.has_value) continue;  // forwarded: mpirun's own value
        const auto named = [&x](const char* name) { return x.name == name; };
        if (std::any_of(std::begin(shm::kGeometrySettings), std::end(shm::kGeometrySettings), named) ||
            std::any_of(std::begin(kLauncherSettings), std::end(kLauncherSettings), named)) {
            setenv(x.name.c_str(), x.value.c_str(), 1);
        }
    }
}

bool is_job_variable(std::string_view name) {
    return name == shm::kEnvRank || name == shm::kEnvSize || name == shm::kEnvFd || is_portable_variable(name);
}

}  // namespace shmpi::launcher
