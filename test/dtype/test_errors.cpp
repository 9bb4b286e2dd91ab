// Bad input to the constructors: the right error class and a message that
// names the function, the argument and the bad value; never undefined
// behaviour (overflowing extents and sizes are caught).
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>

#include "dtype/datatype.hpp"
#include "errors.hpp"

namespace {

using namespace shmpi::dtype;

const Datatype& P(MPI_Datatype h) { return *predefined(h); }

/// The error `f` throws: its class and message.  Class -1 when it throws
/// nothing (then the type it made is freed).
template <class F>
std::pair<int, std::string> error_of(F&& f) {
    try {
        Datatype* t = f();
        free_handle(*t, "test");
        return {-1, ""};
    } catch (const shmpi::MpiError& e) {
        return {e.error_class(), e.what()};
    }
}

#define EXPECT_ERROR(call, cls, text)                                             \
    do {                                                                          \
        const auto got = error_of([&] { return call; });                          \
        EXPECT_EQ(got.first, cls) << #call << ": " << got.second;                 \
        EXPECT_NE(got.second.find(text), std::string::npos)                       \
            << #call << ": message \"" << got.second << "\" lacks \"" << text << "\""; \
    } while (0)

TEST(DtypeErrors, NegativeCountsAndBlockLengths) {
    EXPECT_ERROR(make_contiguous(-1, P(MPI_INT), "MPI_Type_contiguous"), MPI_ERR_COUNT,
                 "MPI_Type_contiguous: count -1 is negative");
    EXPECT_ERROR(make_vector(-3, 1, 1, P(MPI_INT), "MPI_Type_vector"), MPI_ERR_COUNT, "count -3");
    EXPECT_ERROR(make_vector(2, -1, 1, P(MPI_INT), "MPI_Type_vector"), MPI_ERR_ARG, "blocklength -1");
    const int bl[2] = {1, -2};
    const int d[2] = {0, 4};
    EXPECT_ERROR(make_indexed(2, bl, d, P(MPI_INT), "MPI_Type_indexed"), MPI_ERR_ARG,
                 "array_of_blocklengths[1] = -2");
    EXPECT_ERROR(make_indexed(-1, bl, d, P(MPI_INT), "MPI_Type_indexed"), MPI_ERR_COUNT, "count -1");
    EXPECT_ERROR(make_hindexed_block(1, -5, nullptr, P(MPI_INT), "MPI_Type_create_hindexed_block"),
                 MPI_ERR_ARG, "");
}

TEST(DtypeErrors, NullArrays) {
    EXPECT_ERROR(make_indexed(2, nullptr, nullptr, P(MPI_INT), "MPI_Type_indexed"), MPI_ERR_ARG,
                 "array_of_blocklengths is NULL but count is 2");
    const int bl[1] = {1};
    const MPI_Aint d[1] = {0};
    const Datatype* none[1] = {nullptr};
    EXPECT_ERROR(make_struct(1, bl, d, none, "MPI_Type_create_struct"), MPI_ERR_TYPE, "array_of_types[0]");
    // count 0 with NULL arrays is fine.
    EXPECT_EQ(error_of([] { return make_struct(0, nullptr, nullptr, nullptr, "t"); }).first, -1);
}

TEST(DtypeErrors, ExtentsThatOverflowMpiAint) {
    EXPECT_ERROR(make_hvector(3, 1, INT64_MAX / 2, P(MPI_DOUBLE), "MPI_Type_create_hvector"), MPI_ERR_ARG,
                 "overflows MPI_Aint");
    const int bl[2] = {1, 1};
    const MPI_Aint d[2] = {0, INT64_MAX - 4};
    EXPECT_ERROR(make_hindexed(2, bl, d, P(MPI_DOUBLE), "MPI_Type_create_hindexed"), MPI_ERR_ARG,
                 "MPI_Type_create_hindexed: displacement + ub");
    EXPECT_ERROR(make_resized(P(MPI_INT), INT64_MAX, 10, "MPI_Type_create_resized"), MPI_ERR_ARG,
                 "lb + extent");
    // Sizes too: 2^31 * 2^20 * 2^31 doubles.
    Datatype* a = make_contiguous(INT_MAX, P(MPI_DOUBLE), "t");
    Datatype* b = make_contiguous(1 << 20, *a, "t");
    EXPECT_ERROR(make_contiguous(INT_MAX, *b, "MPI_Type_contiguous"), MPI_ERR_ARG, "overflows MPI_Aint");
    // Strides in units of a huge extent.
    EXPECT_ERROR(make_vector(2, 1, INT_MAX, *b, "MPI_Type_vector"), MPI_ERR_ARG, "stride * extent");
    const int di[1] = {INT_MAX};
    EXPECT_ERROR(make_indexed(1, bl, di, *b, "MPI_Type_indexed"), MPI_ERR_ARG, "overflows MPI_Aint");
    free_handle(*b, "t");
    free_handle(*a, "t");
}

TEST(DtypeErrors, MarkersAreNotOldTypes) {
    EXPECT_ERROR(make_contiguous(1, P(MPI_UB), "MPI_Type_contiguous"), MPI_ERR_TYPE, "MPI_UB");
    EXPECT_ERROR(make_resized(P(MPI_LB), 0, 4, "MPI_Type_create_resized"), MPI_ERR_TYPE, "MPI_LB");
    EXPECT_ERROR(make_dup(P(MPI_UB), "MPI_Type_dup"), MPI_ERR_TYPE, "bound marker");
}

TEST(DtypeErrors, BadArrayTypes) {
    const int sizes[2] = {4, 6}, sub[2] = {2, 7}, starts[2] = {0, 0}, okstarts[2] = {3, 0}, oksub[2] = {2, 3};
    EXPECT_ERROR(make_subarray(2, sizes, sub, starts, MPI_ORDER_C, P(MPI_INT), "MPI_Type_create_subarray"),
                 MPI_ERR_ARG, "array_of_subsizes[1] = 7");
    EXPECT_ERROR(make_subarray(2, sizes, oksub, okstarts, MPI_ORDER_C, P(MPI_INT), "MPI_Type_create_subarray"),
                 MPI_ERR_ARG, "array_of_starts[0] = 3");
    EXPECT_ERROR(make_subarray(0, sizes, oksub, starts, MPI_ORDER_C, P(MPI_INT), "MPI_Type_create_subarray"),
                 MPI_ERR_ARG, "ndims 0");
    EXPECT_ERROR(make_subarray(2, sizes, oksub, starts, 7, P(MPI_INT), "MPI_Type_create_subarray"), MPI_ERR_ARG,
                 "order 7");
    const int gs[1] = {10}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {2}, ps[1] = {2};
    EXPECT_ERROR(make_darray(2, 0, 1, gs, dist, darg, ps, MPI_ORDER_C, P(MPI_INT), "MPI_Type_create_darray"),
                 MPI_ERR_ARG, "does not cover");
    const int ps3[1] = {3};
    EXPECT_ERROR(make_darray(2, 0, 1, gs, dist, darg, ps3, MPI_ORDER_C, P(MPI_INT), "MPI_Type_create_darray"),
                 MPI_ERR_ARG, "process grid");
    EXPECT_ERROR(make_darray(2, 5, 1, gs, dist, darg, ps, MPI_ORDER_C, P(MPI_INT), "MPI_Type_create_darray"),
                 MPI_ERR_RANK, "rank 5");
}

TEST(DtypeErrors, PredefinedTypesCannotBeFreed) {
    try {
        free_handle(P(MPI_INT), "MPI_Type_free");
        FAIL() << "freeing MPI_INT must fail";
    } catch (const shmpi::MpiError& e) {
        EXPECT_EQ(e.error_class(), MPI_ERR_TYPE);
        EXPECT_NE(std::string(e.what()).find("MPI_INT is predefined"), std::string::npos) << e.what();
    }
}

TEST(DtypeErrors, NestingDepthIsBounded) {
    // Structs do not flatten into their old types, so each one nests deeper
    // (contiguous(1, contiguous(1, ...)) would normalise to one level).
    std::vector<Datatype*> chain{make_contiguous(1, P(MPI_INT), "t")};
    std::pair<int, std::string> err{-1, ""};
    const int bl[2] = {1, 1};
    const MPI_Aint d[2] = {0, 0};
    for (int i = 0; i < 1100 && err.first == -1; ++i) {
        try {
            const Datatype* ty[2] = {chain.back(), &P(MPI_CHAR)};
            chain.push_back(make_struct(2, bl, d, ty, "MPI_Type_create_struct"));
        } catch (const shmpi::MpiError& e) {
            err = {e.error_class(), e.what()};
        }
    }
    EXPECT_EQ(err.first, MPI_ERR_ARG);
    EXPECT_NE(err.second.find("nest"), std::string::npos) << err.second;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) free_handle(**it, "t");
}

}  // namespace
