// A second user cannot reach a job's segment (issue 7, point 4).
//
// The segment is a POSIX shared memory object created exclusively, mode
// 0600, under a name with the creator's uid and 64 random bits.  These tests
// switch uid in forked children, so they need root; without it they skip.
//   - another uid cannot open the object by its name, for reading or writing;
//   - another uid that is handed the descriptor (a leaked fd) is refused by
//     attach(), which checks the owner and the mode;
//   - the same holds between two unprivileged users, not only against root's
//     objects;
//   - the name carries the uid and a random part, so names do not repeat.
#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "shm/segment.hpp"

namespace {

namespace shm = shmpi::shm;

constexpr uid_t kOtherUid = 65534;   // "nobody" on Debian
constexpr uid_t kThirdUid = 65533;

/// Child exit statuses, so the parent can say what went wrong.
enum ChildResult : int {
    kOk = 0,
    kCannotDropPrivileges = 10,
    kOpenedByName = 11,
    kWrongErrno = 12,
    kAttachAccepted = 13,
    kAttachWrongMessage = 14,
    kCreateFailed = 15,
};

/// Drops to `uid` (and the same gid, no supplementary groups) for good.
bool become(uid_t uid) {
    return setgroups(0, nullptr) == 0 && setgid(uid) == 0 && setuid(uid) == 0 &&
           getuid() == uid && geteuid() == uid;
}

/// Runs `body` in a forked child and returns its exit status (-1 when it
/// did not exit normally).
template <typename F>
int in_child(F body) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) _exit(body());
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

/// The checks a second user makes against segment `name` (and against `fd`,
/// inherited across fork).  Returns a ChildResult.
int try_as_other_user(const std::string& name, int fd, uid_t uid) {
    if (!become(uid)) return kCannotDropPrivileges;
    for (int flags : {O_RDWR, O_RDONLY}) {
        const int got = shm_open(("/" + name).c_str(), flags, 0);
        if (got >= 0) return kOpenedByName;
        if (errno != EACCES) return kWrongErrno;
    }
    const int got = open(("/dev/shm/" + name).c_str(), O_RDONLY);
    if (got >= 0) return kOpenedByName;
    if (fd >= 0) {
        try {
            shm::Segment s = shm::Segment::attach(dup(fd), 2);
            return kAttachAccepted;
        } catch (const shm::SegmentError& e) {
            if (std::strstr(e.what(), "refusing") == nullptr) return kAttachWrongMessage;
        }
    }
    return kOk;
}

std::string describe(int result) {
    switch (result) {
    case kOk: return "ok";
    case kCannotDropPrivileges: return "could not switch uid";
    case kOpenedByName: return "another uid opened the segment by its name";
    case kWrongErrno: return "shm_open failed, but not with EACCES";
    case kAttachAccepted: return "attach() accepted another uid's segment";
    case kAttachWrongMessage: return "attach() refused, but without saying so";
    case kCreateFailed: return "the unprivileged user could not create a segment";
    default: return "child status " + std::to_string(result);
    }
}

class SecondUid : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "switching uid needs root";
        if (access("/dev/shm", W_OK) != 0) GTEST_SKIP() << "no writable /dev/shm";
    }
};

TEST_F(SecondUid, CannotOpenRootsSegment) {
    shm::Segment seg = shm::Segment::create(shm::Geometry::for_ranks(2), getpid());
    // The name stays in /dev/shm for this test (mpirun unlinks at once,
    // which only shortens the window this test looks into).
    struct stat st {};
    ASSERT_EQ(fstat(seg.fd(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(st.st_uid, 0u);
    const int result = in_child([&] { return try_as_other_user(seg.name(), seg.fd(), kOtherUid); });
    EXPECT_EQ(result, kOk) << describe(result);
}

TEST_F(SecondUid, CannotOpenAnotherUsersSegment) {
    // User A (65534) creates a segment and keeps it; user B (65533) tries.
    int to_parent[2], to_a[2];
    ASSERT_EQ(pipe(to_parent), 0);
    ASSERT_EQ(pipe(to_a), 0);
    std::fflush(nullptr);
    const pid_t a = fork();
    ASSERT_GE(a, 0);
    if (a == 0) {
        close(to_parent[0]);
        close(to_a[1]);
        if (!become(kOtherUid)) _exit(kCannotDropPrivileges);
        try {
            shm::Segment seg = shm::Segment::create(shm::Geometry::for_ranks(2), getpid());
            const std::string line = seg.name() + "\n";
            if (write(to_parent[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
                _exit(kCreateFailed);
            }
            char c;
            (void)!read(to_a[0], &c, 1);  // until the parent is done
        } catch (const shm::SegmentError&) {
            _exit(kCreateFailed);
        }
        _exit(kOk);
    }
    close(to_parent[1]);
    close(to_a[0]);
    char buf[256] = {};
    ssize_t n = 0, got;
    while (n < static_cast<ssize_t>(sizeof buf) - 1 &&
           (got = read(to_parent[0], buf + n, sizeof buf - 1 - n)) > 0) {
        n += got;
        if (std::memchr(buf, '\n', n) != nullptr) break;
    }
    std::string name(buf, n);
    if (!name.empty() && name.back() == '\n') name.pop_back();
    close(to_parent[0]);

    int b_result = -1;
    if (!name.empty()) {
        EXPECT_EQ(name.rfind("shmpi-" + std::to_string(kOtherUid) + "-", 0), 0u)
            << "the name does not start with the creator's uid: " << name;
        b_result = in_child([&] { return try_as_other_user(name, -1, kThirdUid); });
    }
    close(to_a[1]);  // lets A remove its segment and exit
    int status = 0;
    ASSERT_EQ(waitpid(a, &status, 0), a);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), kOk) << "user A: " << describe(WEXITSTATUS(status));
    ASSERT_FALSE(name.empty()) << "user A sent no segment name";
    EXPECT_EQ(b_result, kOk) << "user B: " << describe(b_result);
}

TEST_F(SecondUid, NamesCarryTheUidAndARandomPart) {
    std::set<std::string> names;
    for (int i = 0; i < 8; ++i) {
        shm::Segment seg = shm::Segment::create(shm::Geometry::for_ranks(1), getpid());
        const std::string prefix = "shmpi-" + std::to_string(getuid()) + "-" +
                                   std::to_string(getpid()) + "-";
        ASSERT_EQ(seg.name().rfind(prefix, 0), 0u) << seg.name();
        const std::string random = seg.name().substr(prefix.size());
        EXPECT_EQ(random.size(), 16u) << "64 random bits in hex: " << seg.name();
        EXPECT_EQ(random.find_first_not_of("0123456789abcdef"), std::string::npos) << seg.name();
        names.insert(seg.name());
    }
    EXPECT_EQ(names.size(), 8u) << "the same pid got the same name twice";
}

}  // namespace
