// mpirun's command-line parser: every spelling that scripts use, where the
// options end, and a clear message for each kind of bad input.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "copy_probe.hpp"
#include "launcher_args.hpp"

namespace shmpi::launcher {
namespace {

using Action = ParsedCommandLine::Action;
using Strings = std::vector<std::string>;

ParsedCommandLine parse(Strings words) {
    words.insert(words.begin(), "mpirun");
    return parse_launcher_args(words, "9.8.7");
}

/// Parses a command line that must be valid and returns the job.
LaunchArgs run_args(const Strings& words) {
    const ParsedCommandLine p = parse(words);
    EXPECT_EQ(p.action, Action::kRun) << p.message;
    return p.args;
}

/// Parses a command line that must be rejected and returns the message.
std::string error_of(const Strings& words) {
    const ParsedCommandLine p = parse(words);
    EXPECT_EQ(p.action, Action::kError);
    EXPECT_EQ(p.message.rfind("shmpi: mpirun: ", 0), 0u) << p.message;
    EXPECT_EQ(p.message.find('\n'), std::string::npos) << "one line: " << p.message;
    return p.message;
}

// ---- the number of ranks, in every spelling ----

TEST(LauncherArgs, RankCountSpellings) {
    for (const Strings& words : {Strings{"-n", "4", "./a"}, Strings{"-np", "4", "./a"},
                                 Strings{"--np", "4", "./a"}, Strings{"-c", "4", "./a"},
                                 Strings{"--n", "4", "./a"}, Strings{"-n4", "./a"},
                                 Strings{"-n=4", "./a"}, Strings{"--np=4", "./a"},
                                 Strings{"-np=4", "./a"}}) {
        const LaunchArgs a = run_args(words);
        EXPECT_EQ(a.nranks, 4u) << words[0];
        EXPECT_EQ(a.command, Strings{"./a"}) << words[0];
    }
}

TEST(LauncherArgs, DefaultsToOneRank) {
    const LaunchArgs a = run_args({"./a"});
    EXPECT_EQ(a.nranks, 1u);
    EXPECT_FALSE(a.tag_output);
    EXPECT_EQ(a.timeout_s, 0);
    EXPECT_TRUE(a.env.empty());
}

TEST(LauncherArgs, LastRankCountWins) {
    EXPECT_EQ(run_args({"-n", "2", "-np", "3", "./a"}).nranks, 3u);
}

// ---- where the options end ----

TEST(LauncherArgs, ProgramArgumentsAreNotParsed) {
    const LaunchArgs a = run_args({"-n", "2", "./app", "-n", "5", "--foo", "-x", "Y"});
    EXPECT_EQ(a.nranks, 2u);
    EXPECT_EQ(a.command, (Strings{"./app", "-n", "5", "--foo", "-x", "Y"}));
    EXPECT_TRUE(a.env.empty());
}

TEST(LauncherArgs, DoubleDashEndsOptions) {
    const LaunchArgs a = run_args({"-n", "2", "--", "-weird-name", "--help"});
    EXPECT_EQ(a.command, (Strings{"-weird-name", "--help"}));
}

TEST(LauncherArgs, ProgramAfterFlags) {
    const LaunchArgs a = run_args({"--tag-output", "hostname"});
    EXPECT_TRUE(a.tag_output);
    EXPECT_EQ(a.command, Strings{"hostname"});
}

TEST(LauncherArgs, ProgramHelpIsTheProgramsBusiness) {
    const LaunchArgs a = run_args({"./a", "--help"});
    EXPECT_EQ(a.command, (Strings{"./a", "--help"}));
}

TEST(LauncherArgs, SingleDashProgramIsAProgram) {
    EXPECT_EQ(run_args({"-"}).command, Strings{"-"});
}

// ---- the other options ----

// ---- several programs in one job (MPMD) ----

TEST(LauncherArgs, ColonStartsAnotherProgram) {
    const LaunchArgs a = run_args(
        {"-n", "2", "--tag-output", "./master", "m1", ":", "-np", "3", "./worker", "-n", "5", ":", "./last"});
    EXPECT_EQ(a.nranks, 6u) << "2 + 3 + 1 (a program without -n has one rank)";
    EXPECT_EQ(a.command, (Strings{"./master", "m1"}));
    ASSERT_EQ(a.more_apps.size(), 2u);
    EXPECT_EQ(a.more_apps[0].nranks, 3u);
    EXPECT_EQ(a.more_apps[0].command, (Strings{"./worker", "-n", "5"})) << "the program's own -n";
    EXPECT_EQ(a.more_apps[1].nranks, 1u);
    EXPECT_EQ(a.more_apps[1].command, (Strings{"./last"}));
    EXPECT_TRUE(a.tag_output) << "options before the first program are the job's";
    const std::uint32_t want[] = {0, 0, 1, 1, 1, 2};
    for (std::uint32_t r = 0; r < 6; ++r) EXPECT_EQ(a.appnum_of(r), want[r]) << "rank " << r;
    EXPECT_EQ(a.command_of(1)[0], "./master");
    EXPECT_EQ(a.command_of(4)[0], "./worker");
    EXPECT_EQ(a.command_of(5)[0], "./last");
}

TEST(LauncherArgs, ColonSpellingsOfTheRankCount) {
    for (const Strings& later : {Strings{"-n", "4"}, Strings{"-np", "4"}, Strings{"--np", "4"},
                                 Strings{"-c", "4"}, Strings{"-n=4"}, Strings{"--np=4"}, Strings{"-n4"},
                                 Strings{"-c4"}, Strings{"--n", "4"}, Strings{"--n=4"}}) {
        Strings words = {"./a", ":"};
        words.insert(words.end(), later.begin(), later.end());
        words.push_back("./b");
        const LaunchArgs a = run_args(words);
        ASSERT_EQ(a.more_apps.size(), 1u) << later[0];
        EXPECT_EQ(a.more_apps[0].nranks, 4u) << later[0];
        EXPECT_EQ(a.nranks, 5u) << later[0];
    }
    const LaunchArgs a = run_args({"./a", ":", "-n", "2", "--", "-weird-name"});
    EXPECT_EQ(a.more_apps[0].command, (Strings{"-weird-name"})) << "-- ends the -n part";
}

TEST(LauncherArgs, ColonJobsTakeNoRankCountFromHosts) {
    const LaunchArgs a = run_args({"--host", "localhost:4", "./a", ":", "-n", "2", "./b"});
    EXPECT_EQ(a.nranks, 3u) << "1 for ./a (no -n) and 2 for ./b; the host's 4 slots set nothing";
    EXPECT_TRUE(a.nranks_given) << "so a host file read later sets nothing either";
    EXPECT_EQ(a.appnum_of(0), 0u);
    EXPECT_EQ(a.appnum_of(2), 1u);
}

TEST(LauncherArgs, ColonMistakesAreNamed) {
    EXPECT_NE(error_of({"-n", "2", "./a", ":"}).find("':' must be followed by a program"), std::string::npos);
    EXPECT_NE(error_of({"./a", ":", ":", "./b"}).find("':' must be followed by a program"),
              std::string::npos);
    EXPECT_NE(error_of({"-n", "2", ":", "./b"}).find("':' must follow a program"), std::string::npos);
    EXPECT_NE(error_of({"./a", ":", "-x", "FOO", "./b"}).find("'-x' after ':'"), std::string::npos);
    EXPECT_NE(error_of({"./a", ":", "-n", "0", "./b"}).find("-n '0' after ':'"), std::string::npos);
    EXPECT_NE(error_of({"./a", ":", "-np"}).find("'-np' after ':' needs a value"), std::string::npos);
    EXPECT_NE(error_of({"./a", ":", "-n0", "./b"}).find("-n '0' after ':'"), std::string::npos);
    EXPECT_NE(error_of({"-n", "1048576", "./a", ":", "./b"}).find("more than the 1048576"),
              std::string::npos);
}

TEST(LauncherArgs, WorkingDirectorySpellings) {
    for (const Strings& words : {Strings{"-wdir", "/tmp", "./a"}, Strings{"--wdir", "/tmp", "./a"},
                                 Strings{"-wd", "/tmp", "./a"}, Strings{"--wd=/tmp", "./a"}}) {
        const LaunchArgs a = run_args(words);
        EXPECT_EQ(a.wdir, "/tmp") << words[0];
        EXPECT_EQ(a.wdir_option, words[0].substr(0, words[0].find('='))) << "named as typed in messages";
        EXPECT_EQ(a.command, (Strings{"./a"})) << words[0];
    }
    EXPECT_EQ(run_args({"./a"}).wdir, "") << "mpirun's own directory by default";
}

TEST(LauncherArgs, TagOutputSpellings) {
    for (const char* flag : {"--tag-output", "-tag-output", "--prepend-rank", "-prepend-rank", "-l"}) {
        EXPECT_TRUE(run_args({flag, "./a"}).tag_output) << flag;
    }
}

TEST(LauncherArgs, EnvironmentForwarding) {
    const LaunchArgs a = run_args({"-x", "FOO", "-x", "BAR=1", "-xBAZ=a=b", "-x", "Q=", "./a"});
    ASSERT_EQ(a.env.size(), 4u);
    EXPECT_EQ(a.env[0], (EnvSetting{"FOO", "", false}));
    EXPECT_EQ(a.env[1], (EnvSetting{"BAR", "1", true}));
    EXPECT_EQ(a.env[2], (EnvSetting{"BAZ", "a=b", true}));
    EXPECT_EQ(a.env[3], (EnvSetting{"Q", "", true}));
}

TEST(LauncherArgs, EnvironmentValueMayStartWithDash) {
    const LaunchArgs a = run_args({"-x", "OPTS=-O2 -g", "./a"});
    ASSERT_EQ(a.env.size(), 1u);
    EXPECT_EQ(a.env[0].value, "-O2 -g");
}

TEST(LauncherArgs, Timeout) {
    EXPECT_EQ(run_args({"--timeout", "5", "./a"}).timeout_s, 5.0);
    EXPECT_EQ(run_args({"-timeout", "0.25", "./a"}).timeout_s, 0.25);
    EXPECT_EQ(run_args({"--timeout=2", "./a"}).timeout_s, 2.0);
}

TEST(LauncherArgs, DeadlockAfter) {
    EXPECT_EQ(run_args({"./a"}).deadlock_after_s, 3.0) << "on by default";
    EXPECT_EQ(run_args({"--deadlock-after", "0.5", "./a"}).deadlock_after_s, 0.5);
    EXPECT_EQ(run_args({"-deadlock-after=10", "./a"}).deadlock_after_s, 10.0);
    EXPECT_EQ(run_args({"--deadlock-after", "0", "./a"}).deadlock_after_s, 0.0) << "0 turns it off";
    EXPECT_EQ(run_args({"--deadlock-after", "0.0", "./a"}).deadlock_after_s, 0.0) << "0 written another way";
    EXPECT_EQ(run_args({"--deadlock-after", "00", "./a"}).deadlock_after_s, 0.0) << "0 written another way";
}

TEST(LauncherArgs, BadDeadlockAfter) {
    for (const char* v : {"-1", "abc", "", "inf", "nan", "3s", "0x", "1e10"}) {
        const std::string m = error_of({"--deadlock-after", v, "./a"});
        EXPECT_NE(m.find(std::string("--deadlock-after '") + v + "'"), std::string::npos) << m;
        if (*v != '\0') {
            EXPECT_NE(m.find("from 0 (never) to 1e+09"), std::string::npos) << m;
        }
    }
}

TEST(LauncherArgs, BindTo) {
    EXPECT_EQ(run_args({"./a"}).bind_to, BindTo::kAuto);
    EXPECT_EQ(run_args({"--bind-to", "none", "./a"}).bind_to, BindTo::kNone);
    EXPECT_EQ(run_args({"-bind-to", "core", "./a"}).bind_to, BindTo::kCore);
    EXPECT_EQ(run_args({"--bind-to=core", "--bind-to", "none", "./a"}).bind_to, BindTo::kNone);
    const std::string err = error_of({"--bind-to", "board", "./a"});
    EXPECT_NE(err.find("--bind-to 'board'"), std::string::npos) << err;
}

TEST(LauncherArgs, OpenMpiFlagsAreAcceptedAndIgnored) {
    const LaunchArgs a = run_args(
        {"--oversubscribe", "--allow-run-as-root", "-oversubscribe", "-n", "3", "./a"});
    EXPECT_EQ(a.nranks, 3u);
    EXPECT_EQ(a.command, Strings{"./a"});
}

TEST(LauncherArgs, Version) {
    const ParsedCommandLine p = parse({"--version"});
    EXPECT_EQ(p.action, Action::kVersion);
    EXPECT_EQ(p.message, "shmpi mpirun 9.8.7");
}

TEST(LauncherArgs, Help) {
    for (const char* flag : {"-h", "--help"}) {
        const ParsedCommandLine p = parse({flag});
        EXPECT_EQ(p.action, Action::kHelp) << flag;
        EXPECT_NE(p.message.find("--tag-output"), std::string::npos) << p.message;
        EXPECT_NE(p.message.find("-np"), std::string::npos) << p.message;
    }
}

// ---- MPICH's -genv and Open MPI's --mca: two words each ----

TEST(LauncherArgs, GenvSetsVariables) {
    const LaunchArgs a =
        run_args({"-genv", "OMP_NUM_THREADS", "2", "-env", "X", "-3", "-genvall", "-n", "2", "./a", "-genv"});
    EXPECT_EQ(a.env, (std::vector<EnvSetting>{{"OMP_NUM_THREADS", "2", true}, {"X", "-3", true}}));
    EXPECT_EQ(a.nranks, 2u);
    EXPECT_EQ(a.command, (Strings{"./a", "-genv"}));
    // An empty value is a value.
    EXPECT_EQ(run_args({"--genv", "E", "", "./a"}).env, (std::vector<EnvSetting>{{"E", "", true}}));
    // As MPICH's hydra does, one word NAME=VALUE is a setting too; the word
    // after it is the program.
    const LaunchArgs one = run_args({"-genv", "A=1", "-env", "B=x=y", "-genv", "C=", "2", "./a"});
    EXPECT_EQ(one.env, (std::vector<EnvSetting>{{"A", "1", true}, {"B", "x=y", true}, {"C", "", true}}));
    EXPECT_EQ(one.command, (Strings{"2", "./a"}));
}

// The settings mpirun reads itself take their -x/-genv values (the last one
// given wins); other variables and forwarded names leave mpirun's alone.
TEST(LauncherArgs, LauncherSettingsFromCommandLine) {
    for (const char* name : {"SHMPI_RING_CELLS", "SHMPI_TOPOLOGY", "SHMPI_OUTPUT_WAIT", "X_NOT_READ"}) unsetenv(name);
    setenv("SHMPI_KERNEL_COPIES", "slow", 1);
    apply_launcher_settings(run_args({"-x", "SHMPI_RING_CELLS=3", "-x", "SHMPI_RING_CELLS=4", "-x",
                                      "SHMPI_KERNEL_COPIES", "-x", "X_NOT_READ=1", "--genv", "SHMPI_TOPOLOGY",
                                      "pu:2", "-genv", "SHMPI_OUTPUT_WAIT", "", "./a"}));
    EXPECT_STREQ(std::getenv("SHMPI_RING_CELLS"), "4");
    EXPECT_STREQ(std::getenv("SHMPI_TOPOLOGY"), "pu:2");
    EXPECT_STREQ(std::getenv("SHMPI_OUTPUT_WAIT"), "");
    EXPECT_STREQ(std::getenv("SHMPI_KERNEL_COPIES"), "slow");
    EXPECT_EQ(std::getenv("X_NOT_READ"), nullptr);
    for (const char* name : {"SHMPI_RING_CELLS", "SHMPI_TOPOLOGY", "SHMPI_OUTPUT_WAIT", "SHMPI_KERNEL_COPIES"}) {
        unsetenv(name);
    }
}

TEST(LauncherArgs, McaIsRecordedAndIgnored) {
    const LaunchArgs a = run_args({"--mca", "btl", "self,vader", "-mca", "pml", "ob1", "-n", "2", "./a"});
    EXPECT_EQ(a.ignored_mca, (Strings{"btl self,vader", "pml ob1"}));
    EXPECT_EQ(a.nranks, 2u);
    EXPECT_TRUE(a.env.empty());
}

TEST(LauncherArgs, TwoWordOptionsNeedTwoWords) {
    std::string m = error_of({"-genv", "X"});
    EXPECT_NE(m.find("'-genv' takes two words"), std::string::npos) << m;
    m = error_of({"--mca", "btl", "./a"});  // ./a is the value: no program is left
    EXPECT_NE(m.find("no program"), std::string::npos) << m;
    m = error_of({"-genv", "=1", "./a"});
    EXPECT_NE(m.find("-genv '=1': the variable's name is empty"), std::string::npos) << m;
    m = error_of({"--genv=A", "1", "./a"});
    EXPECT_NE(m.find("takes two words"), std::string::npos) << m;
}

// ---- hosts: scripts written for a cluster name this machine ----

TEST(LauncherArgs, HostsOfThisMachineSetTheRankCount) {
    LaunchArgs a = run_args({"--host", "localhost:3", "./a"});
    EXPECT_EQ(a.nranks, 3u);
    EXPECT_EQ(a.hosts, (std::vector<HostSlots>{{"localhost", 3}}));
    // A host without a count counts one slot; repeated hosts add up; the
    // name compares without case.
    EXPECT_EQ(run_args({"-H", "localhost,LOCALHOST", "./a"}).nranks, 2u);
    EXPECT_EQ(run_args({"-host", "localhost:2", "--host", "localhost", "./a"}).nranks, 3u);
    // -n wins over the slots, wherever it stands.
    EXPECT_EQ(run_args({"-hosts", "localhost:8", "-n", "5", "./a"}).nranks, 5u);
    EXPECT_EQ(run_args({"-n", "2", "--host", "localhost:8", "./a"}).nranks, 2u);
    // The caller says which names are this machine.
    const ParsedCommandLine p = parse_launcher_args({"mpirun", "--host", "box:2,127.0.0.1", "./a"}, "1",
                                                    {"localhost", "box", "127.0.0.1"});
    ASSERT_EQ(p.action, Action::kRun) << p.message;
    EXPECT_EQ(p.args.nranks, 3u);
}

TEST(LauncherArgs, RanksPerNodeOnTheOneNode) {
    // MPICH's and Open MPI's spellings; without -n they set the rank count.
    EXPECT_EQ(run_args({"-ppn", "4", "./a"}).nranks, 4u);
    EXPECT_EQ(run_args({"--ppn=3", "./a"}).nranks, 3u);
    EXPECT_EQ(run_args({"-perhost", "2", "./a"}).nranks, 2u);
    EXPECT_EQ(run_args({"-N", "5", "./a"}).nranks, 5u);
    EXPECT_EQ(run_args({"--npernode", "6", "./a"}).nranks, 6u);
    // -n decides, before or after it; a host list is then only checked.
    EXPECT_EQ(run_args({"-n", "8", "-ppn", "4", "./a"}).nranks, 8u);
    EXPECT_EQ(run_args({"-ppn", "4", "-np", "2", "./a"}).nranks, 2u);
    EXPECT_EQ(run_args({"-ppn", "4", "--host", "localhost:2", "./a"}).nranks, 4u);
    EXPECT_EQ(run_args({"-ppn", "5", "./a", ":", "-n", "2", "./b"}).nranks, 3u)
        << "MPMD: the programs' own -n";
    for (const char* v : {"0", "-2", "x", "99999999999"}) {
        const std::string m = error_of({"-ppn", v, "./a"});
        EXPECT_NE(m.find(std::string("-ppn '") + v + "'"), std::string::npos) << m;
    }
    EXPECT_NE(error_of({"-N", "0", "./a"}).find("-N '0'"), std::string::npos);
}

TEST(LauncherArgs, OtherHostsAreRefused) {
    const std::string m = error_of({"--host", "localhost,node7:4", "./a"});
    EXPECT_NE(m.find("--host 'localhost,node7:4'"), std::string::npos) << m;
    EXPECT_NE(m.find("host 'node7' is not this machine"), std::string::npos) << m;
    EXPECT_NE(error_of({"-H", "node1", "-n", "2", "./a"}).find("-H 'node1'"), std::string::npos);
}

TEST(LauncherArgs, BadHostLists) {
    for (const char* v : {"a,,b", "x:0", "x:abc", ":3", "a b", "x:99999999999", ","}) {
        const std::string m = error_of({"--host", v, "./a"});
        EXPECT_NE(m.find(std::string("--host '") + v + "'"), std::string::npos) << m;
    }
    // A control character the user typed stays on the one line.
    EXPECT_NE(error_of({"--host", "no\nde", "./a"}).find("no\\nde"), std::string::npos);
}

TEST(LauncherArgs, HostfileIsNamedForTheCaller) {
    const LaunchArgs a = run_args({"-machinefile", "/tmp/hosts", "./a"});
    EXPECT_EQ(a.hostfile, "/tmp/hosts");
    EXPECT_EQ(a.hostfile_option, "-machinefile");
    EXPECT_EQ(run_args({"-f", "h", "./a"}).hostfile, "h");
    EXPECT_EQ(run_args({"--hostfile=h2", "./a"}).hostfile, "h2");
    EXPECT_TRUE(run_args({"./a"}).hostfile.empty());
}

TEST(Hostfile, OpenMpiAndMpichLines) {
    std::string problem;
    const auto h = parse_hostfile(
        "localhost slots=2\n# a comment\nbox:3\n\n  host2 slots=1 max_slots=4  # trailing\r\nhost3\n",
        problem);
    ASSERT_TRUE(h.has_value()) << problem;
    EXPECT_EQ(*h, (std::vector<HostSlots>{{"localhost", 2}, {"box", 3}, {"host2", 1}, {"host3", 0}}));
    EXPECT_TRUE(parse_hostfile("", problem).value().empty());
}

TEST(Hostfile, BadLinesNameTheLine) {
    std::string problem;
    EXPECT_FALSE(parse_hostfile("localhost\nbox slots=x\n", problem).has_value());
    EXPECT_NE(problem.find("line 2"), std::string::npos) << problem;
    EXPECT_NE(problem.find("slots=x"), std::string::npos) << problem;
    EXPECT_FALSE(parse_hostfile("box color=red\n", problem).has_value());
    EXPECT_NE(problem.find("line 1: 'color=red'"), std::string::npos) << problem;
    EXPECT_FALSE(parse_hostfile("box:0\n", problem).has_value());
    EXPECT_NE(problem.find("'box:0'"), std::string::npos) << problem;
}

TEST(Hostfile, ApplyChecksAndCountsOnce) {
    LaunchArgs a;
    EXPECT_EQ(apply_hosts(a, {{"localhost", 2}, {"box", 0}}, "--hostfile 'f'", {"localhost", "box"}), "");
    EXPECT_EQ(a.nranks, 3u);
    // The rank count is set once: a second list is only checked.
    EXPECT_EQ(apply_hosts(a, {{"localhost", 7}}, "--hostfile 'g'", {"localhost"}), "");
    EXPECT_EQ(a.nranks, 3u);
    const std::string m = apply_hosts(a, {{"far", 1}}, "--hostfile 'g'", {"localhost"});
    EXPECT_EQ(m.rfind("shmpi: mpirun: --hostfile 'g': host 'far'", 0), 0u) << m;
}

// ---- bad input: every message names the option and the value ----

TEST(LauncherArgs, ZeroRanks) {
    const std::string m = error_of({"-n", "0", "./a"});
    EXPECT_NE(m.find("-n '0'"), std::string::npos) << m;
}

TEST(LauncherArgs, NegativeRanks) {
    const std::string m = error_of({"-n", "-3", "./a"});
    EXPECT_NE(m.find("-n '-3'"), std::string::npos) << m;
}

TEST(LauncherArgs, NonNumericRanks) {
    const std::string m = error_of({"-np", "abc", "./a"});
    EXPECT_NE(m.find("-np 'abc'"), std::string::npos) << m;
    EXPECT_NE(error_of({"-n", "2x", "./a"}).find("'2x'"), std::string::npos);
    EXPECT_NE(error_of({"-n", "", "./a"}).find("-n ''"), std::string::npos);
    EXPECT_NE(error_of({"-n", "1.5", "./a"}).find("'1.5'"), std::string::npos);
}

TEST(LauncherArgs, TooManyRanks) {
    const std::string m = error_of({"--np", "99999999999999999999", "./a"});
    EXPECT_NE(m.find("--np '99999999999999999999'"), std::string::npos) << m;
}

TEST(LauncherArgs, MissingProgram) {
    EXPECT_NE(error_of({"-n", "2"}).find("no program"), std::string::npos);
    EXPECT_NE(error_of({}).find("no program"), std::string::npos);
    EXPECT_NE(error_of({"-n", "2", "--"}).find("no program"), std::string::npos);
}

TEST(LauncherArgs, MissingValue) {
    const std::string m = error_of({"-n"});
    EXPECT_NE(m.find("'-n'"), std::string::npos) << m;
    EXPECT_NE(m.find("needs a value"), std::string::npos) << m;
    // After the program, the same word is the program's argument.
    EXPECT_EQ(run_args({"./a", "-n"}).command, (Strings{"./a", "-n"}));
}

TEST(LauncherArgs, MissingTimeoutValue) {
    const std::string m = error_of({"--timeout"});
    EXPECT_NE(m.find("'--timeout'"), std::string::npos) << m;
}

TEST(LauncherArgs, UnknownOption) {
    std::string m = error_of({"--bogus", "./a"});
    EXPECT_NE(m.find("unknown option '--bogus'"), std::string::npos) << m;
    m = error_of({"--bogus=3", "-n", "2", "./a"});
    EXPECT_NE(m.find("'--bogus=3'"), std::string::npos) << m;
    m = error_of({"-q", "./a"});
    EXPECT_NE(m.find("'-q'"), std::string::npos) << m;
    // Other MPIs' one-dash words are not split into a short option and an
    // attached value (-hostlist was -h, the help, and ran nothing).
    for (const char* word : {"-hostlist", "-hetero-nodes", "-hxyz", "-configfile", "-file", "-nolocal",
                             "-nameserver", "-np2", "-cpus-per-proc", "-launcher", "-lx", "-xterm", "-Hlocal",
                             "-fhosts", "-n-3"}) {
        m = error_of({word, "x", "./a"});
        EXPECT_NE(m.find(std::string("unknown option '") + word + "'"), std::string::npos) << m;
    }
    EXPECT_NE(error_of({"-configfile", "cfg"}).find("separated by ':'"), std::string::npos);
    // What may be attached still is.
    EXPECT_EQ(run_args({"-c3", "./a"}).nranks, 3u);
    EXPECT_EQ(run_args({"-N=2", "./a"}).nranks, 2u);
    EXPECT_EQ(run_args({"-H=localhost", "./a"}).nranks, 1u);
}

TEST(LauncherArgs, BadTimeout) {
    for (const char* v : {"0", "-1", "abc", "", "inf", "nan", "3s", "1e10"}) {
        const std::string m = error_of({"--timeout", v, "./a"});
        EXPECT_NE(m.find(std::string("--timeout '") + v + "'"), std::string::npos) << m;
        if (*v != '\0') {
            EXPECT_NE(m.find("at most 1e+09"), std::string::npos) << m << ": the limit is named";
        }
    }
}

TEST(LauncherArgs, BadEnvironmentSetting) {
    const std::string m = error_of({"-x", "=foo", "./a"});
    EXPECT_NE(m.find("-x '=foo'"), std::string::npos) << m;
}

TEST(LauncherArgs, JobVariablesAreMpirunsOwn) {
    // A -x SHMPI_RANK would come first in each rank's environment: every
    // rank would take the same rank and the job hang.
    for (const char* setting : {"SHMPI_RANK=1", "SHMPI_SIZE", "SHMPI_SEGMENT_FD=3"}) {
        const std::string m = error_of({"-x", setting, "./a"});
        EXPECT_NE(m.find("mpirun sets SHMPI_RANK, SHMPI_SIZE and SHMPI_SEGMENT_FD"), std::string::npos) << m;
    }
    const std::string g = error_of({"-genv", "SHMPI_RANK", "0", "./a"});
    EXPECT_NE(g.find("-genv SHMPI_RANK"), std::string::npos) << g;
    // So are the rank numbers Open MPI's and MPICH's launchers give: mpirun
    // would replace a -x one without a word.
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                             "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK", "OMPI_UNIVERSE_SIZE",
                             "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"}) {
        const std::string m = error_of({"-x", std::string(name) + "=1", "./a"});
        EXPECT_NE(m.find(std::string("-x ") + name + ": mpirun sets " + name + " for each rank itself"),
                  std::string::npos)
            << m;
        const std::string gm = error_of({"-genv", name, "1", "./a"});
        EXPECT_NE(gm.find(std::string("-genv ") + name + ": mpirun sets"), std::string::npos) << gm;
    }
    // Names that only begin like them pass.
    EXPECT_EQ(run_args({"-x", "PMI_RANKS=1", "-x", "OMPI_COMM_WORLD", "./a"}).env.size(), 2u);
    // Other SHMPI_ variables pass.
    const LaunchArgs a = run_args({"-x", "SHMPI_SPIN_US=5", "./a"});
    ASSERT_EQ(a.env.size(), 1u);
    EXPECT_EQ(a.env[0].name, "SHMPI_SPIN_US");
}

TEST(LauncherArgs, FlagWithBadValue) {
    // CLI11 rejects it; the message still names the option.
    const std::string m = error_of({"--tag-output=maybe", "./a"});
    EXPECT_NE(m.find("tag-output"), std::string::npos) << m;
}

// SHMPI_OUTPUT_WAIT (job.hpp): seconds from 0, as --deadlock-after takes them.
TEST(OutputWait, Seconds) {
    EXPECT_EQ(parse_output_wait(nullptr), kDefaultOutputWait_s);
    EXPECT_EQ(parse_output_wait(""), kDefaultOutputWait_s);  // empty: unset, as for every setting
    EXPECT_EQ(parse_output_wait("0"), 0.0);
    EXPECT_EQ(parse_output_wait("0.0"), 0.0);
    EXPECT_EQ(parse_output_wait("2.5"), 2.5);
    EXPECT_EQ(parse_output_wait("1000000000"), 1e9);
    // Only digits with an optional fraction: no exponent, hex, sign or blanks.
    for (const char* bad : {"-1", "1e10", "1e0", "0x10", "+1", " 12", "12 ", ".5", "2.", "1000000001", "inf", "nan",
                            "10s", "1 s"}) {
        EXPECT_FALSE(parse_output_wait(bad).has_value()) << bad;
    }
}

// MPIEXEC_TIMEOUT (MPICH's --timeout): unset, empty or 0 is no limit.
TEST(MpiexecTimeout, Seconds) {
    EXPECT_EQ(parse_mpiexec_timeout(nullptr), 0.0);
    EXPECT_EQ(parse_mpiexec_timeout(""), 0.0);
    EXPECT_EQ(parse_mpiexec_timeout("0"), 0.0);
    EXPECT_EQ(parse_mpiexec_timeout("30"), 30.0);
    EXPECT_EQ(parse_mpiexec_timeout("0.5"), 0.5);
    for (const char* bad : {"-1", "1e10", "inf", "10s", "ten"}) {
        EXPECT_FALSE(parse_mpiexec_timeout(bad).has_value()) << bad;
    }
}

}  // namespace
}  // namespace shmpi::launcher

// ---- copy_probe.hpp: the ranks' GLIBC_TUNABLES ----

TEST(CopyProbe, SettingModes) {
    using namespace shmpi::launcher;
    EXPECT_EQ(parse_rep_movsb(nullptr), RepMovsb::Auto);
    EXPECT_EQ(parse_rep_movsb("auto"), RepMovsb::Auto);
    EXPECT_EQ(parse_rep_movsb("keep"), RepMovsb::Keep);
    EXPECT_EQ(parse_rep_movsb("avoid"), RepMovsb::Avoid);
    EXPECT_EQ(parse_kernel_copies(nullptr), KernelCopies::Auto);
    EXPECT_EQ(parse_kernel_copies("auto"), KernelCopies::Auto);
    EXPECT_EQ(parse_kernel_copies("fast"), KernelCopies::Fast);
    EXPECT_EQ(parse_kernel_copies("slow"), KernelCopies::Slow);
    // Empty: unset, as for every setting.
    EXPECT_EQ(parse_rep_movsb(""), RepMovsb::Auto);
    EXPECT_EQ(parse_kernel_copies(""), KernelCopies::Auto);
    // Differently spelled or another setting's values: refused.
    for (const char* bad : {"Avoid", "fast", "never"}) EXPECT_FALSE(parse_rep_movsb(bad).has_value()) << bad;
    for (const char* bad : {"Slow", "keep", "never"}) EXPECT_FALSE(parse_kernel_copies(bad).has_value()) << bad;
}

TEST(CopyProbe, TunablesGainTheThreshold) {
    using shmpi::launcher::tunables_avoiding_rep_movsb;
    const std::string setting = "glibc.cpu.x86_rep_movsb_threshold=2147483647";
    EXPECT_EQ(tunables_avoiding_rep_movsb(std::nullopt), setting);
    EXPECT_EQ(tunables_avoiding_rep_movsb(""), setting);
    EXPECT_EQ(tunables_avoiding_rep_movsb("glibc.malloc.arena_max=2"), "glibc.malloc.arena_max=2:" + setting);
    EXPECT_EQ(tunables_avoiding_rep_movsb("a=1:b=2"), "a=1:b=2:" + setting);
}

TEST(CopyProbe, TheUsersThresholdStands) {
    using shmpi::launcher::tunables_avoiding_rep_movsb;
    EXPECT_FALSE(tunables_avoiding_rep_movsb("glibc.cpu.x86_rep_movsb_threshold=4096").has_value());
    EXPECT_FALSE(tunables_avoiding_rep_movsb("a=1:glibc.cpu.x86_rep_movsb_threshold=0:b=2").has_value());
    // A longer name that starts like it is another tunable.
    EXPECT_TRUE(tunables_avoiding_rep_movsb("glibc.cpu.x86_rep_movsb_threshold_x=1").has_value());
}

TEST(CopyProbe, CopyRaceLeavesTheAffinityAlone) {
    cpu_set_t before;
    ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
    // (mpirun gives it 50 ms; a loaded machine may need longer.)
    const std::optional<shmpi::launcher::CopyRace> race = shmpi::launcher::copy_race(10000);
    cpu_set_t after;
    ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "the probe must give mpirun its CPUs back, for the ranks";
    if (CPU_COUNT(&before) < 2) {
        EXPECT_FALSE(race.has_value()) << "one CPU: nothing to race to";
    } else {
        // An answer means both ways brought the helper's bytes.
        ASSERT_TRUE(race.has_value()) << "a copy brought the wrong bytes, or 10 s were not enough";
        // 1 MiB takes more than a microsecond (1 TB/s), and less than the
        // limit (or the kernel refused: the process_vm_readv test's
        // skip).
        std::printf("copy_race: cells %.1f us, process_vm_readv %.1f us\n", race->cells_ns / 1e3,
                    race->kernel_ns / 1e3);
        EXPECT_GT(race->cells_ns, 1e3);
        EXPECT_LT(race->cells_ns, 1e10);
        EXPECT_GT(race->kernel_ns, 1e3);
        if (race->kernel_ns != std::numeric_limits<double>::infinity()) {
            EXPECT_LT(race->kernel_ns, 1e10);
        }
    }
}

// ---- copy_probe.hpp: the kernel-copy verdict kept between launches ----

TEST(CopyProbe, KeptVerdictTextRoundTrips) {
    using namespace shmpi::launcher;
    const std::string key = "0b5e-boot/0-1,4";
    for (const bool slow : {false, true}) {
        const std::string text = format_verdict(key, 1000, slow);
        EXPECT_EQ(parse_verdict(text, key, 1000), slow) << text;
        EXPECT_EQ(parse_verdict(text, key, 1000 + kVerdictKeepSeconds), slow) << "at the last second it holds";
    }
    EXPECT_EQ(format_verdict(key, 1000, true), "shmpi-copies 1 0b5e-boot/0-1,4 1000 1\n");
}

TEST(CopyProbe, KeptVerdictOnlyForItsKeyAndMinute) {
    using namespace shmpi::launcher;
    const std::string key = "boot/0-1";
    const std::string text = format_verdict(key, 1000, true);
    EXPECT_FALSE(parse_verdict(text, key, 1001 + kVerdictKeepSeconds)) << "stale";
    EXPECT_FALSE(parse_verdict(text, key, 999)) << "taken after now (another boot's clock)";
    EXPECT_FALSE(parse_verdict(text, "boot/0-3", 1000)) << "other CPUs";
    EXPECT_FALSE(parse_verdict(text, "other/0-1", 1000)) << "another boot";
    for (const char* bad : {"", "\n", "shmpi-copies 1 boot/0-1 1000 1", "shmpi-copies 1 boot/0-1 1000 2\n",
                            "shmpi-copies 1 boot/0-1 -5 1\n", "shmpi-copies 1 boot/0-1 1000\n",
                            "shmpi-copies 2 boot/0-1 1000 1\n", "shmpi-copies 1 boot/0-1 1000 1 x\n",
                            "shmpi-copies 1 boot/0-1 99999999999999999999 1\n"}) {
        EXPECT_FALSE(parse_verdict(bad, key, 1000)) << '"' << bad << '"';
    }
}

TEST(CopyProbe, ThisProcessKeyNamesTheBootAndTheCpus) {
    const std::string key = shmpi::launcher::verdict_key();
    const std::size_t slash = key.find('/');
    ASSERT_NE(slash, std::string::npos) << key;
    EXPECT_GT(slash, 0u) << key;
    EXPECT_EQ(key.find(' '), std::string::npos) << key;
    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int first = 0;
    while (!CPU_ISSET(first, &allowed)) ++first;
    EXPECT_EQ(key.substr(slash + 1, std::to_string(first).size()), std::to_string(first)) << key;
}

TEST(CopyProbe, KeptVerdictFileIsOursOnly) {
    using namespace shmpi::launcher;
    char dir_tmpl[] = "/tmp/shmpi-verdict-XXXXXX";
    ASSERT_NE(mkdtemp(dir_tmpl), nullptr);
    const std::string dir = dir_tmpl, path = dir + "/copies", key = "boot/0-1";
    EXPECT_FALSE(load_verdict(path, key, 1000)) << "no file yet";
    ASSERT_TRUE(store_verdict(path, key, 1000, true));
    EXPECT_EQ(load_verdict(path, key, 1010), true);
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << "a private file";
    ASSERT_TRUE(store_verdict(path, key, 1020, false));
    EXPECT_EQ(load_verdict(path, key, 1020), false) << "the later verdict replaces it";
    EXPECT_FALSE(load_verdict(path, key, 1021 + kVerdictKeepSeconds));
    // A link in its place is not followed, on reading or on writing.
    const std::string target = dir + "/target";
    FILE* f = std::fopen(target.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(format_verdict(key, 1000, true).c_str(), f);
    std::fclose(f);
    ASSERT_EQ(std::remove(path.c_str()), 0);
    ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0);
    EXPECT_FALSE(load_verdict(path, key, 1000)) << "read through a link";
    ASSERT_TRUE(store_verdict(path, key, 1000, false));
    EXPECT_EQ(load_verdict(path, key, 1000), false);
    EXPECT_EQ(load_verdict(target, key, 1000), true) << "the link's target was written";
    // Nothing else is left in the directory (the private file was renamed).
    std::remove(path.c_str());
    std::remove(target.c_str());
    EXPECT_EQ(rmdir(dir.c_str()), 0) << "a file was left behind";
}
