// Reference counting: a type freed by the user stays valid inside the types
// built on it and in whatever holds a Ref (a pending request), and its
// handle is dead for the C boundary.
#include <gtest/gtest.h>

#include <vector>

#include "dtype/datatype.hpp"

namespace {

using namespace shmpi::dtype;

const Datatype& P(MPI_Datatype h) { return *predefined(h); }

std::vector<int> packed_ints(const Datatype& t, const void* buf, int count) {
    std::vector<int> out(static_cast<std::size_t>(count * t.size) / sizeof(int));
    pack(t, buf, count, reinterpret_cast<std::byte*>(out.data()));
    return out;
}

TEST(DtypeLifetime, FreedTypeLivesInsideTypesBuiltOnIt) {
    Datatype* pair = make_contiguous(2, P(MPI_INT), "t");
    Datatype* vec = make_vector(3, 1, 2, *pair, "t");
    const MPI_Datatype pair_handle = handle_of(*pair);
    free_handle(*pair, "MPI_Type_free");
    EXPECT_EQ(lookup(pair_handle), nullptr) << "the user's handle is dead";
    EXPECT_EQ(pair->refs.load(), 1) << "the vector holds the last reference";

    const int data[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    EXPECT_EQ(packed_ints(*vec, data, 1), (std::vector<int>{0, 1, 4, 5, 8, 9}));

    // MPI_Type_get_contents hands the old type out again: a live handle.
    add_handle(*pair);
    EXPECT_EQ(lookup(pair_handle), pair);
    free_handle(*pair, "MPI_Type_free");
    free_handle(*vec, "MPI_Type_free");  // deletes both
}

TEST(DtypeLifetime, ADeepChainIsDeletedWithoutRecursion) {
    // Each type holds the one below; freeing the top deletes the whole
    // chain.  Deleting it recursively overflowed the stack at 200,000.
    constexpr int kDepth = 300000;
    Datatype* top = make_contiguous(1, P(MPI_INT), "t");
    for (int i = 1; i < kDepth; ++i) {
        Datatype* next = make_contiguous(1, *top, "t");
        free_handle(*top, "MPI_Type_free");  // lives on inside `next`
        top = next;
    }
    EXPECT_EQ(top->size, static_cast<std::int64_t>(sizeof(int)));
    free_handle(*top, "MPI_Type_free");  // deletes all of them
}

TEST(DtypeLifetime, ARefKeepsATypeAliveLikeAPendingRequest) {
    Datatype* t = make_vector(2, 1, 3, P(MPI_INT), "t");
    commit(*t);
    Ref request_hold(t);
    free_handle(*t, "MPI_Type_free");
    EXPECT_EQ(lookup(handle_of(*t)), nullptr);
    EXPECT_EQ(t->refs.load(), 1);
    const int data[4] = {7, 8, 9, 10};
    EXPECT_EQ(packed_ints(*request_hold, data, 1), (std::vector<int>{7, 10}));
    EXPECT_TRUE(request_hold->committed);
}

TEST(DtypeLifetime, EnvelopeAndLayoutHoldTheirTypes) {
    Datatype* inner = make_contiguous(3, P(MPI_SHORT), "t");
    Datatype* r = make_resized(*inner, 0, 16, "t");
    Datatype* rr = make_resized(*r, 0, 8, "t");  // layout skips r, envelope names it
    free_handle(*inner, "t");
    free_handle(*r, "t");
    EXPECT_EQ(r->refs.load(), 1) << "held by rr's envelope";
    EXPECT_EQ(rr->types, std::vector<MPI_Datatype>({handle_of(*r)}));
    const short data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<short> out(6);
    pack(*rr, data, 2, reinterpret_cast<std::byte*>(out.data()));
    EXPECT_EQ(out, (std::vector<short>{1, 2, 3, 5, 6, 7}));
    free_handle(*rr, "t");
}

TEST(DtypeLifetime, PredefinedTypesAreNotCounted) {
    const std::int64_t before = P(MPI_INT).refs.load();
    {
        Ref a(&P(MPI_INT));
        Ref b = a;
    }
    Datatype* t = make_contiguous(4, P(MPI_INT), "t");
    free_handle(*t, "t");
    EXPECT_EQ(P(MPI_INT).refs.load(), before);
}

}  // namespace
