/*
 * mixed_types.c: collectives where even ranks send and receive contiguous
 * doubles and odd ranks a vector of them (one double in every two), and
 * every rank overwrites its send buffer the moment its call returns, as it
 * may: a rank whose buffer another rank still read after it returned would
 * hand out the overwritten values.
 *
 * Blocks of 4100 doubles (just over 32 KiB), 32 Ki and 128 Ki doubles,
 * Allgather, Alltoall, Gather, Scatter and Bcast with every root, a few
 * times each.  (A 2-rank MPI_Allgather of a contiguous and a strided send
 * once returned on the contiguous side while the other still read its
 * buffer, above 32 KiB.)
 */
#include "coll_test.h"

enum { kRounds = 3 };
static const int kCounts[] = {4100, 32768, 131072};

static double value(int from, int to, int i, int round)
{
    return from * 1e6 + to * 1e3 + i + 0.25 * round;
}

/* Our layout of `count` doubles: dense on even ranks, every other double
 * on odd ones (`type` then describes one block of them). */
typedef struct {
    int strided;
    MPI_Datatype type;  /* one block */
    int per;            /* elements of `type` a block */
    int span;           /* doubles a block spans in memory */
} Layout;

static Layout layout_of(int rank, int count)
{
    Layout l = {rank % 2, MPI_DOUBLE, count, count};
    if (l.strided) {
        MPI_Datatype vec;
        CHECK_MPI(MPI_Type_vector(count, 1, 2, MPI_DOUBLE, &vec));
        CHECK_MPI(MPI_Type_create_resized(vec, 0, 2 * (MPI_Aint)count * (MPI_Aint)sizeof(double), &l.type));
        CHECK_MPI(MPI_Type_commit(&l.type));
        CHECK_MPI(MPI_Type_free(&vec));
        l.per = 1;
        l.span = 2 * count;
    }
    return l;
}

static double *at(double *buf, const Layout *l, int block, int i)
{
    return buf + (size_t)block * (size_t)l->span + (size_t)(l->strided ? 2 * i : i);
}

static void fill(double *buf, const Layout *l, int blocks, int count, int from, int to, int round)
{
    for (int b = 0; b < blocks; ++b)
        for (int i = 0; i < count; ++i)
            *at(buf, l, b, i) = value(from, to < 0 ? b : to, i, round);
}

/* Block b of `buf` must hold what `from` (or member b, when from < 0)
 * sent to `to` (or to member b, when to < 0). */
static void expect(double *buf, const Layout *l, int b, int count, int from, int to, int round, const char *what)
{
    const int f = from < 0 ? b : from, t = to < 0 ? b : to;
    for (int i = 0; i < count; ++i) {
        const double got = *at(buf, l, b, i);
        CHECKF(got == value(f, t, i, round), "%s, %d doubles, round %d: block %d element %d is %.2f, not %.2f",
               what, count, round, b, i, got, value(f, t, i, round));
    }
}

static void poison(double *buf, size_t doubles)
{
    for (size_t i = 0; i < doubles; ++i)
        buf[i] = -7.0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    const size_t most = 2 * (size_t)kCounts[sizeof kCounts / sizeof kCounts[0] - 1] * (size_t)size;
    double *send = check_malloc(sizeof(double) * most);
    double *recv = check_malloc(sizeof(double) * most);
    for (size_t c = 0; c < sizeof kCounts / sizeof kCounts[0]; ++c) {
        const int count = kCounts[c];
        Layout l = layout_of(rank, count);
        const size_t all = (size_t)l.span * (size_t)size;
        for (int round = 0; round < kRounds; ++round) {
            /* Allgather: our block to everyone. */
            fill(send, &l, 1, count, rank, 0, round);
            CHECK_MPI(MPI_Allgather(send, l.per, l.type, recv, l.per, l.type, MPI_COMM_WORLD));
            poison(send, (size_t)l.span);
            for (int b = 0; b < size; ++b)
                expect(recv, &l, b, count, -1, 0, round, "Allgather");

            /* Alltoall: block b of ours to member b. */
            fill(send, &l, size, count, rank, -1, round);
            CHECK_MPI(MPI_Alltoall(send, l.per, l.type, recv, l.per, l.type, MPI_COMM_WORLD));
            poison(send, all);
            for (int b = 0; b < size; ++b)
                expect(recv, &l, b, count, -1, rank, round, "Alltoall");

            for (int root = 0; root < size; ++root) {
                /* Gather to root. */
                fill(send, &l, 1, count, rank, 0, round);
                CHECK_MPI(MPI_Gather(send, l.per, l.type, recv, l.per, l.type, root, MPI_COMM_WORLD));
                poison(send, (size_t)l.span);
                if (rank == root)
                    for (int b = 0; b < size; ++b)
                        expect(recv, &l, b, count, -1, 0, round, "Gather");

                /* Scatter from root: its block b to member b. */
                if (rank == root)
                    fill(send, &l, size, count, rank, -1, round);
                CHECK_MPI(MPI_Scatter(send, l.per, l.type, recv, l.per, l.type, root, MPI_COMM_WORLD));
                if (rank == root)
                    poison(send, all);
                expect(recv, &l, 0, count, root, rank, round, "Scatter");

                /* Bcast from root. */
                if (rank == root)
                    fill(recv, &l, 1, count, root, 0, round);
                CHECK_MPI(MPI_Bcast(recv, l.per, l.type, root, MPI_COMM_WORLD));
                if (rank == root) {
                    /* (The root's buffer is its own again: overwrite it
                     * after a copy of the message stays in `send`.) */
                    memcpy(send, recv, sizeof(double) * (size_t)l.span);
                    poison(recv, (size_t)l.span);
                    memcpy(recv, send, sizeof(double) * (size_t)l.span);
                }
                expect(recv, &l, 0, count, root, 0, round, "Bcast");
            }
        }
        if (l.strided)
            CHECK_MPI(MPI_Type_free(&l.type));
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
