// The parser of numeric SHMPI_* settings (shm/settings.hpp): unset and empty
// mean "not set", anything but a decimal integer in range fails with a
// message that names who reads it, the setting, its value and the range.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "shm/settings.hpp"

namespace {

namespace shm = shmpi::shm;

constexpr const char* kName = "SHMPI_TEST_SETTING";

/// The message integer_setting() fails with for `value`, or "" when it
/// does not fail.
std::string failure(const char* value, long long lo, long long hi, std::string_view who = shm::kReadInInit) {
    setenv(kName, value, 1);
    try {
        (void)shm::integer_setting(kName, lo, hi, who);
    } catch (const shm::SegmentError& e) {
        return e.what();
    }
    return "";
}

class Settings : public ::testing::Test {
protected:
    void TearDown() override { unsetenv(kName); }
};

TEST_F(Settings, UnsetAndEmptyAreNotSet) {
    unsetenv(kName);
    EXPECT_EQ(shm::integer_setting(kName, 0, 10), std::nullopt);
    setenv(kName, "", 1);
    EXPECT_EQ(shm::integer_setting(kName, 0, 10), std::nullopt);
    EXPECT_EQ(shm::integer_setting(kName, 0, 10).value_or(7), 7);
}

TEST_F(Settings, NumbersInRangeIncludingBothEnds) {
    for (const auto& [text, want] : {std::pair{"0", 0LL}, {"10", 10LL}, {"5", 5LL}, {"007", 7LL}}) {
        setenv(kName, text, 1);
        EXPECT_EQ(shm::integer_setting(kName, 0, 10), want) << text;
    }
    setenv(kName, "-1", 1);
    EXPECT_EQ(shm::integer_setting(kName, -1, 1), -1);
    setenv(kName, "1099511627776", 1);
    EXPECT_EQ(shm::integer_setting(kName, 0, 1LL << 40), 1LL << 40) << "beyond 32 bits";
}

TEST_F(Settings, AnythingElseFailsNamingSettingValueAndRange) {
    EXPECT_EQ(failure("11", 0, 10), "shmpi: MPI_Init: SHMPI_TEST_SETTING='11' is not a number in 0..10");
    EXPECT_EQ(failure("-1", 0, 10), "shmpi: MPI_Init: SHMPI_TEST_SETTING='-1' is not a number in 0..10");
    EXPECT_EQ(failure("0", 1, 30), "shmpi: MPI_Init: SHMPI_TEST_SETTING='0' is not a number in 1..30");
    // Only '-' and digits: blanks and '+' too are refused, and the message
    // quotes the value, so that blanks show.
    for (const char* bad : {"abc", "4k", "1.5", "0x10", "5 ", " 5", "+5", " ", "- 1", "--1", "-", "99999999999999999999"}) {
        const std::string got = failure(bad, 0, 1LL << 40);
        EXPECT_EQ(got,
                  std::string("shmpi: MPI_Init: SHMPI_TEST_SETTING='") + bad + "' is not a number in 0..1099511627776")
            << "value '" << bad << "'";
    }
}

TEST_F(Settings, TheLauncherSaysNoMpiInit) {
    EXPECT_EQ(failure("x", 1, 4, shm::kReadByLauncher), "shmpi: SHMPI_TEST_SETTING='x' is not a number in 1..4");
}

TEST_F(Settings, AValueGivenDirectlyIsCheckedTheSameWay) {
    EXPECT_EQ(shm::integer_setting_value("SHMPI_RANK", "3", 0, 1 << 20), 3);
    EXPECT_THROW(shm::integer_setting_value("SHMPI_RANK", "", 0, 1 << 20), shm::SegmentError);
    EXPECT_THROW(shm::integer_setting_value("SHMPI_RANK", "2097153", 0, 1 << 20), shm::SegmentError);
}

}  // namespace
