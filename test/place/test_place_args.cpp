// mpirun's placement options as the parser reads them (tools/launcher/
// launcher_args.hpp): --bind-to, --map-by, --cpu-list, --report-bindings,
// --oversubscribe, every spelling and every bad value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launcher_args.hpp"

namespace {

using namespace shmpi::launcher;
using shmpi::place::Bind;
using shmpi::place::Level;
using shmpi::place::MapBy;

ParsedCommandLine parse(std::vector<std::string> args) {
    args.insert(args.begin(), "mpirun");
    return parse_launcher_args(args, "test");
}

LaunchArgs run_args(std::vector<std::string> args) {
    const ParsedCommandLine p = parse(std::move(args));
    EXPECT_EQ(p.action, ParsedCommandLine::Action::kRun) << p.message;
    return p.args;
}

std::string error_of(std::vector<std::string> args) {
    const ParsedCommandLine p = parse(std::move(args));
    EXPECT_EQ(p.action, ParsedCommandLine::Action::kError);
    return p.message;
}

TEST(PlaceArgs, Defaults) {
    const LaunchArgs a = run_args({"./a"});
    EXPECT_EQ(a.bind_to, Bind::kAuto);
    EXPECT_EQ(a.map_by, (MapBy{Level::kCore, false}));
    EXPECT_TRUE(a.cpu_list.empty());
    EXPECT_FALSE(a.report_bindings);
    EXPECT_FALSE(a.oversubscribe);
}

TEST(PlaceArgs, EveryBinding) {
    EXPECT_EQ(run_args({"--bind-to", "hwthread", "./a"}).bind_to, Bind::kHwthread);
    EXPECT_EQ(run_args({"--bind-to=l3cache", "./a"}).bind_to, Bind::kL3);
    EXPECT_EQ(run_args({"-bind-to", "numa", "./a"}).bind_to, Bind::kNuma);
    EXPECT_EQ(run_args({"--bind-to", "package", "./a"}).bind_to, Bind::kPackage);
    EXPECT_EQ(run_args({"--bind-to", "socket", "./a"}).bind_to, Bind::kPackage);
    EXPECT_EQ(error_of({"--bind-to", "board", "./a"}),
              "shmpi: mpirun: --bind-to 'board': expected none, hwthread, core, l3cache, numa or "
              "package");
}

TEST(PlaceArgs, MapBy) {
    EXPECT_EQ(run_args({"--map-by", "numa", "./a"}).map_by, (MapBy{Level::kNuma, true}));
    EXPECT_EQ(run_args({"-map-by", "package:compact", "./a"}).map_by, (MapBy{Level::kPackage, false}));
    EXPECT_EQ(run_args({"--map-by=l3cache:spread", "--map-by", "core", "./a"}).map_by,
              (MapBy{Level::kCore, false}));
    EXPECT_EQ(error_of({"--map-by", "slot", "./a"}),
              "shmpi: mpirun: --map-by 'slot': expected core, l3cache, numa or package, optionally "
              "followed by :compact or :spread");
}

TEST(PlaceArgs, CpuList) {
    EXPECT_EQ(run_args({"--cpu-list", "4-5,0", "./a"}).cpu_list, (std::vector<int>{0, 4, 5}));
    EXPECT_EQ(error_of({"--cpu-list", "0,,1", "./a"}),
              "shmpi: mpirun: --cpu-list '0,,1': expected CPU numbers and ranges such as 0,2,4-7");
    EXPECT_EQ(error_of({"--cpu-list", "", "./a"}), "shmpi: mpirun: --cpu-list '': the value is empty");
    // Before, these were "expected CPU numbers and ranges": the value was
    // well formed, only too large.
    EXPECT_EQ(error_of({"--cpu-list", "0-70000", "./a"}),
              "shmpi: mpirun: --cpu-list '0-70000': 70001 CPUs, but a CPU list may name at most 65536");
    EXPECT_EQ(error_of({"--cpu-list", "0,99999999999", "./a"}),
              "shmpi: mpirun: --cpu-list '0,99999999999': 99999999999 is too large for a CPU number");
}

TEST(PlaceArgs, Flags) {
    const LaunchArgs a = run_args({"--report-bindings", "-oversubscribe", "-n", "4", "./a", "--report-bindings"});
    EXPECT_TRUE(a.report_bindings);
    EXPECT_TRUE(a.oversubscribe);
    EXPECT_EQ(a.command, (std::vector<std::string>{"./a", "--report-bindings"}));
    EXPECT_FALSE(run_args({"--allow-run-as-root", "./a"}).oversubscribe);
}

}  // namespace
