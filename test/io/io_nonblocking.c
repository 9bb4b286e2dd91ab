/*
 * Nonblocking and split collective data access (MPI-3.1 13.4.2-13.4.5):
 *  - MPI_File_iwrite_at / iread_at completed with MPI_Wait and with an
 *    MPI_Test loop; MPI_File_iwrite / iread (individual pointer, moved when
 *    the call is made, 13.4.3) two at a time, completed with MPI_Waitall;
 *    MPI_File_iwrite_shared / iread_shared (every record written once, read
 *    once by somebody);
 *  - the nonblocking collectives new in MPI-3.1: MPI_File_iwrite_at_all,
 *    iread_at_all, iwrite_all, iread_all;
 *  - split collectives (13.4.5): write_at_all_begin/_end,
 *    read_at_all_begin/_end, write_all_begin/_end, read_all_begin/_end,
 *    write_ordered_begin/_end, read_ordered_begin/_end;
 * each with its status count (MPI_Get_count) and its data checked element
 * by element; the buffers are not touched between start and completion.
 */
#include "io_common.h"

enum { N = 8, SLOT = 64 }; /* ints per access; bytes per rank per section */

static int val(int rank, int sec, int i) { return (sec + 1) * 100000 + rank * 100 + i; }

static void fill(int *buf, int rank, int sec)
{
    for (int i = 0; i < N; ++i)
        buf[i] = val(rank, sec, i);
}

static void expect(const int *buf, int rank, int sec, const char *what)
{
    for (int i = 0; i < N; ++i)
        CHECKF(buf[i] == val(rank, sec, i), "%s: int %d is %d, expected %d", what, i, buf[i],
               val(rank, sec, i));
}

static void expect_count(MPI_Status *st, int want, const char *what)
{
    const int c = io_count(st, MPI_INT);
    CHECKF(c == want, "%s: status count %d, expected %d", what, c, want);
}

static void wait_test_loop(MPI_Request *req, MPI_Status *st)
{
    int flag = 0;
    while (!flag)
        CHECK_MPI(MPI_Test(req, &flag, st));
    CHECK(*req == MPI_REQUEST_NULL);
}

static MPI_Offset position(MPI_File fh)
{
    MPI_Offset p = -1;
    CHECK_MPI(MPI_File_get_position(fh, &p));
    return p;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank(), n = world_size();
    char path[IO_PATH_MAX];
    MPI_File fh;
    io_open_scratch(MPI_COMM_WORLD, "io_nonblocking", path, &fh);
    /* section s of rank r: bytes [(s * n + r) * SLOT, + N * 4) */
#define AT(sec) ((MPI_Offset)((sec) * n + rank) * SLOT)
    int w[N], r[N], w2[N], r2[N];
    MPI_Request req, reqs[2];
    MPI_Status st, sts[2];

    /* ---- iwrite_at + Wait, iread_at + Test loop (section 0) ---- */
    fill(w, rank, 0);
    CHECK_MPI(MPI_File_iwrite_at(fh, AT(0), w, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL);
    expect_count(&st, N, "iwrite_at");
    memset(r, 0, sizeof r);
    CHECK_MPI(MPI_File_iread_at(fh, AT(0), r, N, MPI_INT, &req));
    wait_test_loop(&req, &st);
    expect_count(&st, N, "iread_at");
    expect(r, rank, 0, "iread_at");
    CHECK(position(fh) == 0);

    /* ---- iwrite / iread with the individual pointer (sections 1, 2) ---- */
    fill(w, rank, 1);
    fill(w2, rank, 2);
    CHECK_MPI(MPI_File_seek(fh, AT(1), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iwrite(fh, w, N, MPI_INT, &reqs[0]));
    CHECK(position(fh) == AT(1) + N * 4); /* moved when the call was made */
    CHECK_MPI(MPI_File_seek(fh, AT(2), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iwrite(fh, w2, N, MPI_INT, &reqs[1]));
    CHECK_MPI(MPI_Waitall(2, reqs, sts));
    expect_count(&sts[0], N, "iwrite 1");
    expect_count(&sts[1], N, "iwrite 2");
    CHECK(position(fh) == AT(2) + N * 4);
    memset(r, 0, sizeof r);
    memset(r2, 0, sizeof r2);
    CHECK_MPI(MPI_File_seek(fh, AT(2), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iread(fh, r2, N, MPI_INT, &reqs[1]));
    CHECK_MPI(MPI_File_seek(fh, AT(1), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iread(fh, r, N, MPI_INT, &reqs[0]));
    CHECK(position(fh) == AT(1) + N * 4);
    CHECK_MPI(MPI_Waitall(2, reqs, sts));
    expect_count(&sts[0], N, "iread 1");
    expect_count(&sts[1], N, "iread 2");
    expect(r, rank, 1, "iread 1");
    expect(r2, rank, 2, "iread 2");
    /* an iread that the end of file cuts short: nothing beyond section 2 yet */
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_iread_at(fh, (MPI_Offset)3 * n * SLOT, r, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    expect_count(&st, 0, "iread_at past the end of file");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- MPI-3.1 nonblocking collectives (sections 3 to 6) ---- */
    fill(w, rank, 3);
    CHECK_MPI(MPI_File_iwrite_at_all(fh, AT(3), w, N, MPI_INT, &req));
    wait_test_loop(&req, &st);
    expect_count(&st, N, "iwrite_at_all");
    memset(r, 0, sizeof r);
    CHECK_MPI(MPI_File_iread_at_all(fh, AT(3), r, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    expect_count(&st, N, "iread_at_all");
    expect(r, rank, 3, "iread_at_all");

    fill(w, rank, 4);
    CHECK_MPI(MPI_File_seek(fh, AT(4), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iwrite_all(fh, w, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    expect_count(&st, N, "iwrite_all");
    CHECK(position(fh) == AT(4) + N * 4);
    memset(r, 0, sizeof r);
    CHECK_MPI(MPI_File_seek(fh, AT(4), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iread_all(fh, r, N, MPI_INT, &req));
    wait_test_loop(&req, &st);
    expect_count(&st, N, "iread_all");
    expect(r, rank, 4, "iread_all");
    CHECK(position(fh) == AT(4) + N * 4);

    /* ---- split collectives (sections 5 to 7) ---- */
    fill(w, rank, 5);
    CHECK_MPI(MPI_File_write_at_all_begin(fh, AT(5), w, N, MPI_INT));
    CHECK_MPI(MPI_File_write_at_all_end(fh, w, &st));
    expect_count(&st, N, "write_at_all_end");
    memset(r, 0, sizeof r);
    CHECK_MPI(MPI_File_read_at_all_begin(fh, AT(5), r, N, MPI_INT));
    CHECK_MPI(MPI_File_read_at_all_end(fh, r, &st));
    expect_count(&st, N, "read_at_all_end");
    expect(r, rank, 5, "read_at_all_begin/end");

    fill(w, rank, 6);
    CHECK_MPI(MPI_File_seek(fh, AT(6), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_write_all_begin(fh, w, N, MPI_INT));
    CHECK_MPI(MPI_File_write_all_end(fh, w, &st));
    expect_count(&st, N, "write_all_end");
    CHECK(position(fh) == AT(6) + N * 4);
    memset(r, 0, sizeof r);
    CHECK_MPI(MPI_File_seek(fh, AT(6), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_read_all_begin(fh, r, N, MPI_INT));
    CHECK_MPI(MPI_File_read_all_end(fh, r, &st));
    expect_count(&st, N, "read_all_end");
    expect(r, rank, 6, "read_all_begin/end");
    CHECK(position(fh) == AT(6) + N * 4);

    /* everybody's sections 0 to 6, read by the next rank */
    io_sync_barrier(fh, MPI_COMM_WORLD);
    {
        const int other = (rank + 1) % n;
        for (int sec = 0; sec < 7; ++sec) {
            CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)(sec * n + other) * SLOT, r, N, MPI_INT,
                                       &st));
            expect(r, other, sec, "another rank's section");
        }
    }

    /* ---- ordered split collectives after 7 sections: rank order, exact
     * offsets, N ints each ---- */
    const MPI_Offset ord = (MPI_Offset)7 * n * SLOT;
    CHECK_MPI(MPI_File_seek_shared(fh, ord, MPI_SEEK_SET));
    fill(w, rank, 7);
    CHECK_MPI(MPI_File_write_ordered_begin(fh, w, N, MPI_INT));
    CHECK_MPI(MPI_File_write_ordered_end(fh, w, &st));
    expect_count(&st, N, "write_ordered_end");
    io_sync_barrier(fh, MPI_COMM_WORLD);
    {
        const int other = (rank + n - 1) % n;
        CHECK_MPI(MPI_File_read_at(fh, ord + (MPI_Offset)other * N * 4, r, N, MPI_INT, &st));
        expect(r, other, 7, "write_ordered_begin/end piece");
    }
    CHECK_MPI(MPI_File_seek_shared(fh, ord, MPI_SEEK_SET));
    memset(r, 0, sizeof r);
    CHECK_MPI(MPI_File_read_ordered_begin(fh, r, N, MPI_INT));
    CHECK_MPI(MPI_File_read_ordered_end(fh, r, &st));
    expect_count(&st, N, "read_ordered_end");
    expect(r, rank, 7, "read_ordered_begin/end");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- iwrite_shared / iread_shared after the ordered pieces ---- */
    const MPI_Offset shr = ord + (MPI_Offset)n * N * 4;
    CHECK_MPI(MPI_File_seek_shared(fh, shr, MPI_SEEK_SET));
    fill(w, rank, 8);
    CHECK_MPI(MPI_File_iwrite_shared(fh, w, N, MPI_INT, &req));
    wait_test_loop(&req, &st);
    expect_count(&st, N, "iwrite_shared");
    io_sync_barrier(fh, MPI_COMM_WORLD);
    {
        MPI_Offset p = -1;
        CHECK_MPI(MPI_File_get_position_shared(fh, &p));
        CHECKF(p == shr + (MPI_Offset)n * N * 4, "shared pointer %lld after iwrite_shared",
               (long long)p);
        /* each rank's record once, in some order */
        int *all = check_malloc((size_t)n * N * sizeof(int));
        CHECK_MPI(MPI_File_read_at(fh, shr, all, n * N, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == n * N);
        int *seen = check_malloc((size_t)n * sizeof(int));
        for (int q = 0; q < n; ++q)
            seen[q] = 0;
        for (int k = 0; k < n; ++k) {
            const int owner = (all[k * N] - val(0, 8, 0)) / 100;
            CHECKF(owner >= 0 && owner < n, "iwrite_shared slot %d starts %d", k, all[k * N]);
            expect(all + k * N, owner, 8, "iwrite_shared record");
            ++seen[owner];
        }
        for (int q = 0; q < n; ++q)
            CHECKF(seen[q] == 1, "rank %d's iwrite_shared record appears %d times", q, seen[q]);
        free(seen);
        free(all);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_File_seek_shared(fh, shr, MPI_SEEK_SET));
    memset(r, 0, sizeof r);
    CHECK_MPI(MPI_File_iread_shared(fh, r, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    expect_count(&st, N, "iread_shared");
    {
        const int owner = (r[0] - val(0, 8, 0)) / 100;
        CHECKF(owner >= 0 && owner < n, "iread_shared got a record starting %d", r[0]);
        expect(r, owner, 8, "iread_shared record");
        int *owners = check_malloc((size_t)n * sizeof(int));
        CHECK_MPI(MPI_Allgather(&owner, 1, MPI_INT, owners, 1, MPI_INT, MPI_COMM_WORLD));
        for (int a = 0; a < n; ++a)
            for (int b = a + 1; b < n; ++b)
                CHECKF(owners[a] != owners[b], "ranks %d and %d both read rank %d's record", a, b,
                       owners[a]);
        free(owners);
    }

    /* ---- count 0 and a mix of requests completed together ---- */
    {
        MPI_Request mix[3];
        MPI_Status mst[3];
        fill(w, rank, 9);
        CHECK_MPI(MPI_File_iwrite_at(fh, AT(9), w, N, MPI_INT, &mix[0]));
        CHECK_MPI(MPI_File_iwrite_at(fh, AT(9), w, 0, MPI_INT, &mix[1]));
        CHECK_MPI(MPI_File_iread_at(fh, AT(0), r2, N, MPI_INT, &mix[2]));
        CHECK_MPI(MPI_Waitall(3, mix, mst));
        expect_count(&mst[0], N, "iwrite_at in a Waitall");
        expect_count(&mst[1], 0, "iwrite_at of count 0");
        expect_count(&mst[2], N, "iread_at in a Waitall");
        expect(r2, rank, 0, "iread_at in a Waitall");
        memset(r, 0, sizeof r);
        CHECK_MPI(MPI_File_read_at(fh, AT(9), r, N, MPI_INT, &st));
        expect(r, rank, 9, "after the Waitall");
    }
#undef AT

    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        EXPECT_CLASS(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
