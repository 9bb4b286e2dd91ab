/*
 * Shared file pointers (MPI-3.1 13.4.4):
 *  - MPI_File_write_shared: each rank writes one record tagged with its
 *    rank; the records follow each other in some order (13.4.4: "the
 *    accesses are serialized in some order"); reading the whole file shows
 *    each rank's record exactly once, whole, and the shared pointer ends at
 *    the sum of the records;
 *  - MPI_File_read_shared from the start: the ranks together read each
 *    record exactly once (checked with MPI_Allgather);
 *  - MPI_File_write_ordered / read_ordered (13.4.4.2): rank-dependent
 *    lengths, in rank order at exact offsets after the current shared
 *    position, which moves past all of them;
 *  - MPI_File_seek_shared with MPI_SEEK_SET / CUR / END and
 *    MPI_File_get_position_shared; read_shared at the end of file reads 0;
 *  - after a read at the end of file, the shared pointer has moved past
 *    all that was asked, the individual pointer past what was read;
 *  - the shared pointer and the individual pointer are independent.
 * A collective call need not synchronise the ranks, so barriers separate the
 * calls that move the shared pointer from the ranks' looks at it.
 */
#include "io_common.h"

enum { REC = 5 }; /* ints per record of write_shared */

static int rval(int rank, int i) { return (rank + 1) * 100 + i; }

static MPI_Offset pos_shared(MPI_File fh)
{
    MPI_Offset p = -1;
    CHECK_MPI(MPI_File_get_position_shared(fh, &p));
    return p;
}

/* seek_shared, then the position is `want` on every rank; the barrier
 * keeps the next call that moves the shared pointer (on a rank that left
 * the collective first) from running before every rank has looked. */
static void seek_shared_to(MPI_File fh, MPI_Offset off, int whence, MPI_Offset want)
{
    CHECK_MPI(MPI_File_seek_shared(fh, off, whence));
    CHECKF(pos_shared(fh) == want, "seek_shared(%lld, %d): position %lld, expected %lld",
           (long long)off, whence, (long long)pos_shared(fh), (long long)want);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static MPI_Offset pos_indiv(MPI_File fh)
{
    MPI_Offset p = -1;
    CHECK_MPI(MPI_File_get_position(fh, &p));
    return p;
}

/* The rank whose whole record is `rec`, or -1. */
static int record_owner(const int *rec, int n)
{
    const int r = rec[0] / 100 - 1;
    if (r < 0 || r >= n)
        return -1;
    for (int i = 0; i < REC; ++i)
        if (rec[i] != rval(r, i))
            return -1;
    return r;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank(), n = world_size();
    char path[IO_PATH_MAX];
    MPI_File fh;
    MPI_Status st;
    io_open_scratch(MPI_COMM_WORLD, "io_shared", path, &fh);
    CHECK(pos_shared(fh) == 0);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* all have looked before anyone writes */

    /* ---- write_shared: one record each, in any order ---- */
    int rec[REC];
    for (int i = 0; i < REC; ++i)
        rec[i] = rval(rank, i);
    CHECK_MPI(MPI_File_write_shared(fh, rec, REC, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == REC);
    CHECK(pos_indiv(fh) == 0); /* the individual pointer did not move */
    io_sync_barrier(fh, MPI_COMM_WORLD);
    const MPI_Offset recs_end = (MPI_Offset)n * REC * 4;
    CHECKF(pos_shared(fh) == recs_end, "shared pointer %lld after the records, expected %lld",
           (long long)pos_shared(fh), (long long)recs_end);
    {
        int *all = check_malloc((size_t)n * REC * sizeof(int));
        int *seen = check_malloc((size_t)n * sizeof(int));
        CHECK_MPI(MPI_File_read_at(fh, 0, all, n * REC, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == n * REC);
        for (int r = 0; r < n; ++r)
            seen[r] = 0;
        for (int k = 0; k < n; ++k) {
            const int owner = record_owner(all + k * REC, n);
            CHECKF(owner >= 0, "record slot %d is not one whole record (starts %d)", k,
                   all[k * REC]);
            ++seen[owner];
        }
        for (int r = 0; r < n; ++r)
            CHECKF(seen[r] == 1, "rank %d's record appears %d times", r, seen[r]);
        free(seen);
        free(all);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- read_shared from the start: each record read exactly once ---- */
    seek_shared_to(fh, 0, MPI_SEEK_SET, 0);
    {
        int got[REC];
        CHECK_MPI(MPI_File_read_shared(fh, got, REC, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == REC);
        const int owner = record_owner(got, n);
        CHECKF(owner >= 0, "read_shared got no whole record (starts %d)", got[0]);
        int *owners = check_malloc((size_t)n * sizeof(int));
        CHECK_MPI(MPI_Allgather(&owner, 1, MPI_INT, owners, 1, MPI_INT, MPI_COMM_WORLD));
        for (int r = 0; r < n; ++r)
            for (int q = r + 1; q < n; ++q)
                CHECKF(owners[r] != owners[q], "ranks %d and %d both read record of rank %d", r,
                       q, owners[r]);
        free(owners);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(pos_shared(fh) == recs_end);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        /* at the end of file: nothing */
        CHECK_MPI(MPI_File_read_shared(fh, got, REC, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == 0);
        /* 13.4.4 moves the pointer past "the last [etype] that will be
         * accessed": none here, so it stays; MPICH moves it by the request
         * (it updates the pointer before the access), which is accepted */
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        const MPI_Offset p = pos_shared(fh);
        CHECKF(p == recs_end || p == recs_end + (MPI_Offset)n * REC * 4,
               "shared pointer %lld after reads at the end of file", (long long)p);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* ---- seek_shared ---- */
    seek_shared_to(fh, 8, MPI_SEEK_SET, 8);
    seek_shared_to(fh, 4, MPI_SEEK_CUR, 12);
    seek_shared_to(fh, -8, MPI_SEEK_CUR, 4);
    seek_shared_to(fh, -4, MPI_SEEK_END, recs_end - 4);
    seek_shared_to(fh, 0, MPI_SEEK_END, recs_end);

    /* ---- independence of the two pointers ---- */
    CHECK_MPI(MPI_File_seek(fh, 4 * rank + 4, MPI_SEEK_SET));
    CHECK(pos_indiv(fh) == 4 * rank + 4);
    CHECK(pos_shared(fh) == recs_end);
    {
        int v = 0;
        CHECK_MPI(MPI_File_read(fh, &v, 1, MPI_INT, &st)); /* the individual one */
        CHECK(io_count(&st, MPI_INT) == 1);
        CHECK(pos_indiv(fh) == 4 * rank + 8);
        CHECK(pos_shared(fh) == recs_end);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- write_ordered: rank r writes r + 1 ints after the records ---- */
    const int mylen = rank + 1;
    MPI_Offset before = 0; /* ints of the ranks before this one */
    for (int r = 0; r < rank; ++r)
        before += r + 1;
    const MPI_Offset total = (MPI_Offset)n * (n + 1) / 2;
    int *ow = check_malloc((size_t)mylen * sizeof(int));
    int *orr = check_malloc((size_t)(mylen + 1) * sizeof(int));
    for (int i = 0; i < mylen; ++i)
        ow[i] = -(rank * 1000 + i + 1);
    CHECK_MPI(MPI_File_write_ordered(fh, ow, mylen, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == mylen);
    CHECK(pos_indiv(fh) == 4 * rank + 8);
    /* (every rank's part done before the shared pointer is looked at) */
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECKF(pos_shared(fh) == recs_end + total * 4,
           "shared pointer %lld after write_ordered, expected %lld", (long long)pos_shared(fh),
           (long long)(recs_end + total * 4));
    /* each piece at its exact offset, read by another rank */
    {
        const int other = (rank + 1) % n;
        MPI_Offset obefore = 0;
        for (int r = 0; r < other; ++r)
            obefore += r + 1;
        int *buf = check_malloc((size_t)(other + 1) * sizeof(int));
        CHECK_MPI(MPI_File_read_at(fh, recs_end + obefore * 4, buf, other + 1, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == other + 1);
        for (int i = 0; i < other + 1; ++i)
            CHECKF(buf[i] == -(other * 1000 + i + 1), "ordered piece of rank %d int %d is %d",
                   other, i, buf[i]);
        free(buf);
        MPI_Offset size = -1;
        CHECK_MPI(MPI_File_get_size(fh, &size));
        CHECK(size == recs_end + total * 4);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- read_ordered the same pieces back ---- */
    seek_shared_to(fh, recs_end, MPI_SEEK_SET, recs_end);
    for (int i = 0; i < mylen + 1; ++i)
        orr[i] = 0;
    CHECK_MPI(MPI_File_read_ordered(fh, orr, mylen, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == mylen);
    for (int i = 0; i < mylen; ++i)
        CHECKF(orr[i] == ow[i], "read_ordered int %d is %d, expected %d", i, orr[i], ow[i]);
    CHECK(orr[mylen] == 0);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(pos_shared(fh) == recs_end + total * 4);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* read_ordered at the end of file: 0 items */
    CHECK_MPI(MPI_File_read_ordered(fh, orr, 1, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 0);
    /* The shared pointer moved past all that was asked: it is claimed
     * before the read (MPICH and Open MPI do the same; 13.4.4 says "the
     * last [etype] that will be accessed"). */
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECKF(pos_shared(fh) == recs_end + total * 4 + (MPI_Offset)n * 4,
           "shared pointer %lld after read_ordered at the end of file, expected %lld", (long long)pos_shared(fh),
           (long long)(recs_end + total * 4 + (MPI_Offset)n * 4));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* The individual pointer moves past what a read at the end of file
     * read, not past all it asked for (13.4.3: "the next etype after the
     * last one that will be accessed"; MPICH does so on this contiguous
     * view, Open MPI moves it by the count asked). */
    CHECK_MPI(MPI_File_seek(fh, recs_end + total * 4 - 4, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_read(fh, orr, 3, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 1);
    CHECKF(pos_indiv(fh) == recs_end + total * 4, "individual pointer %lld after a read at the end of file, expected %lld",
           (long long)pos_indiv(fh), (long long)(recs_end + total * 4));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- the ordered pieces go after the current shared position ---- */
    seek_shared_to(fh, 4, MPI_SEEK_SET, 4);
    int one = 9000 + rank;
    CHECK_MPI(MPI_File_write_ordered(fh, &one, 1, MPI_INT, &st));
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK(pos_shared(fh) == 4 + (MPI_Offset)n * 4);
    {
        int v = -1;
        CHECK_MPI(MPI_File_read_at(fh, 4 + (MPI_Offset)((rank + 1) % n) * 4, &v, 1, MPI_INT, &st));
        CHECK(v == 9000 + (rank + 1) % n);
    }
    free(ow);
    free(orr);

    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        EXPECT_CLASS(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
