// Units for the objects behind handles (src/handle_storage.hpp) and for
// error codes with messages (src/errors.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "errors.hpp"
#include "handle_storage.hpp"

namespace {

struct Small : shmpi::HandleStorage {
    std::uint32_t magic = 0x534d4c4c;  // "SMLL"
    int payload = 7;
};

struct alignas(64) Wide : shmpi::HandleStorage {
    std::uint32_t magic = 0x57494445;  // "WIDE"
    char bytes[100] = {};
};

/// `p` with its history hidden from the compiler: reading a handle's memory
/// after delete is what these tests are about (-Wuse-after-free).
void* opaque(void* p) {
    asm volatile("" : "+r"(p));
    return p;
}

std::uint32_t magic_at(const void* p) {
    std::uint32_t m = 0;
    std::memcpy(&m, p, sizeof m);  // the bytes, whatever object lived there
    return m;
}

TEST(HandleStorage, FreedMemoryStaysReadableAndSaysFreed) {
    auto* s = new Small;
    void* where = opaque(s);
    ASSERT_EQ(magic_at(where), 0x534d4c4cu);
    delete s;
    // Not given back to the system (ASan would call this a use after free):
    // filled, so the magic reads "freed".
    EXPECT_EQ(magic_at(where), shmpi::kFreedMagic);
}

TEST(HandleStorage, FreedMemoryIsReusedForTheNextObjectOfThatSize) {
    auto* a = new Small;
    void* where = opaque(a);
    delete a;
    auto* b = new Small;
    EXPECT_EQ(static_cast<void*>(b), where);
    EXPECT_EQ(b->payload, 7);  // constructed afresh
    delete b;
}

TEST(HandleStorage, OverAlignedObjectsKeepTheirAlignment) {
    for (int i = 0; i < 4; ++i) {
        auto* w = new Wide;
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w) % 64, 0u);
        void* where = opaque(w);
        delete w;
        EXPECT_EQ(magic_at(where), shmpi::kFreedMagic);
    }
}

TEST(HandleStorage, MayReadOnlyWhatItGaveOut) {
    using shmpi::HandleStorage;
    auto* s = new Small;
    const auto v = reinterpret_cast<std::uintptr_t>(s);
    EXPECT_TRUE(HandleStorage::may_read_as<Small>(s));
    int on_the_stack = 0;
    EXPECT_FALSE(HandleStorage::may_read_as<Small>(&on_the_stack));
    EXPECT_FALSE(HandleStorage::may_read_as<Small>(nullptr));
    EXPECT_FALSE(HandleStorage::may_read_as<Small>(reinterpret_cast<void*>(v + 1)));  // misaligned
    EXPECT_FALSE(HandleStorage::may_read_as<Small>(reinterpret_cast<void*>(v & 0xffffffffu)));  // truncated
    EXPECT_FALSE(HandleStorage::may_read_as<Small>(reinterpret_cast<void*>(v + (std::uintptr_t{1} << 28))));
    EXPECT_FALSE(HandleStorage::may_read_as<Small>(reinterpret_cast<void*>(~std::uintptr_t{0} & ~std::uintptr_t{7})));
    void* where = opaque(s);
    delete s;
    EXPECT_TRUE(HandleStorage::may_read_as<Small>(where));  // kept, and says "freed"
}

TEST(HandleStorage, TheArenaGrowsAsObjectsAreMade) {
    // 4 MiB of objects: the readable part grows past its first MiB, and
    // every object, first to last, may be read.
    std::vector<Wide*> all;
    for (int i = 0; i < 32768; ++i) all.push_back(new Wide);
    for (Wide* w : all) ASSERT_TRUE(shmpi::HandleStorage::may_read_as<Wide>(w));
    for (Wide* w : all) delete w;
    for (Wide* w : all) ASSERT_TRUE(shmpi::HandleStorage::may_read_as<Wide>(opaque(w)));
}

TEST(ErrorCodes, CodeKeepsItsClassAndMessage) {
    const int code = shmpi::make_error_code(MPI_ERR_RANK, "MPI_Send: invalid rank 7 (communicator size 4)");
    EXPECT_NE(code, MPI_ERR_RANK);
    EXPECT_LE(code, MPI_ERR_LASTCODE);
    EXPECT_EQ(shmpi::error_class_of(code), MPI_ERR_RANK);
    EXPECT_EQ(shmpi::error_text(code), "MPI_Send: invalid rank 7 (communicator size 4)");
}

TEST(ErrorCodes, TheSameErrorAgainKeepsItsCode) {
    const int a = shmpi::make_error_code(MPI_ERR_TAG, "MPI_Recv: invalid tag -5");
    const int b = shmpi::make_error_code(MPI_ERR_TAG, "MPI_Recv: invalid tag -5");
    EXPECT_EQ(a, b);
    const int c = shmpi::make_error_code(MPI_ERR_TAG, "MPI_Recv: invalid tag -6");
    EXPECT_NE(a, c);
    EXPECT_EQ(shmpi::error_text(a), "MPI_Recv: invalid tag -5");
}

TEST(ErrorCodes, ErrorsOfOtherClassesLeaveACodesMessage) {
    const std::string message = "MPI_Send: invalid rank 11 (communicator size 2)";
    const int old = shmpi::make_error_code(MPI_ERR_RANK, message);
    for (int i = 0; i < 600; ++i) {
        shmpi::make_error_code(MPI_ERR_TAG, "MPI_Send: invalid tag -" + std::to_string(i));
        shmpi::make_error_code(MPI_ERR_COUNT, "MPI_Send: invalid count -" + std::to_string(i));
    }
    EXPECT_EQ(shmpi::error_text(old), message);
    // 252 more of its own class still leave it (254 slots, less slot 15,
    // where the MPI_T classes lie).
    for (int i = 0; i < 252; ++i) {
        shmpi::make_error_code(MPI_ERR_RANK, "MPI_Recv: invalid rank " + std::to_string(100 + i));
    }
    EXPECT_EQ(shmpi::error_text(old), message);
}

TEST(ErrorCodes, TheToolInterfaceClassesAreNoClassesCode) {
    // MPI_T_ERR_* (1001..1018, MPI-5 ABI) are classes of their own, and no
    // code of another class takes their values, however many are made.
    EXPECT_EQ(shmpi::error_class_of(MPI_T_ERR_INVALID_NAME), MPI_T_ERR_INVALID_NAME);
    EXPECT_EQ(shmpi::error_class_of(MPI_T_ERR_CANNOT_INIT), MPI_T_ERR_CANNOT_INIT);
    EXPECT_EQ(shmpi::error_class_of(MPI_T_ERR_PVAR_NO_ATOMIC), MPI_T_ERR_PVAR_NO_ATOMIC);
    EXPECT_NE(shmpi::error_text(MPI_T_ERR_INVALID_NAME).find("MPI_T_ERR_INVALID_NAME"), std::string::npos);
    for (int i = 0; i < 300; ++i) {
        const int code = shmpi::make_error_code(MPI_ERR_NO_SPACE, "disk full " + std::to_string(i));
        EXPECT_FALSE(code >= MPI_T_ERR_CANNOT_INIT && code <= MPI_T_ERR_PVAR_NO_ATOMIC) << code;
        EXPECT_EQ(shmpi::error_class_of(code), MPI_ERR_NO_SPACE);
    }
}

TEST(ErrorCodes, OnlyCodesOfTheIssuedFormHaveAClass) {
    // A class with a slot from 1 to 254 is a code, from this process or
    // another; MPI_SUCCESS has no codes, and no slot lies past 254.
    EXPECT_EQ(shmpi::error_class_of(MPI_ERR_TAG + 64), MPI_ERR_TAG);
    EXPECT_EQ(shmpi::error_class_of(MPI_ERR_TAG + 64 * 254), MPI_ERR_TAG);
    EXPECT_EQ(shmpi::error_class_of(MPI_ERR_TAG + 64 * 255), -1);
    EXPECT_EQ(shmpi::error_class_of(64), -1);
    EXPECT_EQ(shmpi::error_class_of(64 * 250), -1);
    EXPECT_EQ(shmpi::error_class_of(MPI_ERR_ERRHANDLER + 1), -1);
    EXPECT_EQ(shmpi::error_class_of(MPI_ERR_LASTCODE - 1), -1);
    EXPECT_EQ(shmpi::error_class_of(-1), -1);
    EXPECT_EQ(shmpi::error_text(64 * 250), "");
    // Every code make_error_code() gives has the form accepted above.
    for (int i = 0; i < 300; ++i) {
        const int code = shmpi::make_error_code(MPI_ERR_COUNT, "MPI_Send: invalid count -" + std::to_string(i));
        ASSERT_EQ(shmpi::error_class_of(code), MPI_ERR_COUNT) << code;
    }
}

TEST(ErrorCodes, EveryPredefinedClassHasADescription) {
    for (int cls = MPI_SUCCESS; cls <= MPI_ERR_ERRHANDLER; ++cls) {
        const std::string text = shmpi::error_text(cls);
        EXPECT_EQ(text.rfind(cls == MPI_SUCCESS ? "MPI_SUCCESS: " : "MPI_ERR_", 0), 0u)
            << cls << ": " << text;
        EXPECT_GT(text.find(": "), 0u) << text;
    }
    EXPECT_EQ(shmpi::error_text(MPI_ERR_INFO_KEY).rfind("MPI_ERR_INFO_KEY: ", 0), 0u);
    EXPECT_EQ(shmpi::error_text(MPI_ERR_WIN).rfind("MPI_ERR_WIN: ", 0), 0u);
}

TEST(ErrorCodes, AddedClassesAndCodesHaveTheirClassAndText) {
    const int cls = shmpi::add_error_class();
    EXPECT_GT(cls, MPI_ERR_LASTCODE);
    EXPECT_EQ(shmpi::error_class_of(cls), cls);
    EXPECT_GE(shmpi::last_used_code(), cls);
    const int code = shmpi::add_error_code(cls);
    const int arg_code = shmpi::add_error_code(MPI_ERR_ARG);
    EXPECT_NE(code, cls);
    EXPECT_NE(arg_code, code);
    EXPECT_EQ(shmpi::error_class_of(code), cls);
    EXPECT_EQ(shmpi::error_class_of(arg_code), MPI_ERR_ARG);
    EXPECT_EQ(shmpi::error_text(code), "");  // no string set yet
    EXPECT_TRUE(shmpi::set_error_string(arg_code, "rejected by the application"));
    EXPECT_EQ(shmpi::error_text(arg_code), "rejected by the application");
    // Not classes: MPI_SUCCESS, a code, a value nobody made.
    EXPECT_EQ(shmpi::add_error_code(MPI_SUCCESS), -1);
    EXPECT_EQ(shmpi::add_error_code(code), -1);
    EXPECT_EQ(shmpi::add_error_code(arg_code + 1000), -1);
    // Predefined classes and codes keep their own texts.
    EXPECT_FALSE(shmpi::set_error_string(MPI_ERR_ARG, "x"));
    EXPECT_EQ(shmpi::error_class_of(arg_code + 1000), -1);
}

}  // namespace
