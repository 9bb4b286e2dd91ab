/*
 * p2p_sendrecv: MPI_Sendrecv and MPI_Sendrecv_replace as ring shifts.
 *
 * For every shift k (1 .. size-1; a 1-rank job shifts to itself) each rank
 * sends to rank+k and receives from rank-k in one call, with sizes from 0 B
 * to 16 MiB (the largest only with at most 4 ranks, and only for k = 1).
 *   1. Sendrecv: separate buffers, the receive buffer larger than the
 *      message, send and receive tags different per direction so a wrong
 *      match shows; status source, tag and count are checked.
 *   2. Sendrecv_replace: the buffer ends up holding the left partner's data.
 *   3. Sendrecv where each rank's outgoing size differs from its incoming
 *      size (rank r sends a size depending on r).
 */
#include "check.h"

static uint64_t seed_of(int k, int n, int variant)
{
    return ((uint64_t)k * 1000003u + (uint64_t)n) * 4u + (uint64_t)variant;
}

/* 1. */
static void shift_sendrecv(int rank, int size, int k, int n)
{
    int dest = (rank + k) % size;
    int src = (rank - k % size + size) % size;
    unsigned char *out = check_malloc((size_t)n);
    unsigned char *in = check_malloc((size_t)n + 32);
    pattern_fill(out, (size_t)n, rank, seed_of(k, n, 0));
    memset(in, 0, (size_t)n + 32);
    MPI_Status st;
    /* The send tag names the sender; the receive asks for the source's. */
    CHECK_MPI(MPI_Sendrecv(out, n, MPI_BYTE, dest, 100 + rank, in, n + 32, MPI_BYTE, src,
                           100 + src, MPI_COMM_WORLD, &st));
    CHECKF(st.MPI_SOURCE == src && st.MPI_TAG == 100 + src,
           "shift %d, %d bytes: status source %d tag %d, expected %d and %d", k, n,
           st.MPI_SOURCE, st.MPI_TAG, src, 100 + src);
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECKF(count == n, "shift %d: %d-byte message arrived as %d bytes", k, n, count);
    CHECK_PATTERN(in, n, src, seed_of(k, n, 0));
    free(out);
    free(in);
}

/* 2. */
static void shift_replace(int rank, int size, int k, int n)
{
    int dest = (rank + k) % size;
    int src = (rank - k % size + size) % size;
    unsigned char *buf = check_malloc((size_t)n);
    pattern_fill(buf, (size_t)n, rank, seed_of(k, n, 1));
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv_replace(buf, n, MPI_BYTE, dest, 7, src, 7, MPI_COMM_WORLD, &st));
    CHECKF(st.MPI_SOURCE == src && st.MPI_TAG == 7, "replace shift %d: status source %d tag %d",
           k, st.MPI_SOURCE, st.MPI_TAG);
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECKF(count == n, "replace shift %d: %d bytes arrived as %d", k, n, count);
    CHECK_PATTERN(buf, n, src, seed_of(k, n, 1));
    free(buf);
}

/* 3. Rank r sends (r + 1) * unit ints; it receives from src (src+1)*unit. */
static void shift_uneven(int rank, int size, int k, int unit)
{
    int dest = (rank + k) % size;
    int src = (rank - k % size + size) % size;
    int nout = (rank + 1) * unit;
    int nin = (src + 1) * unit;
    int *out = check_malloc(sizeof(int) * (size_t)nout);
    int *in = check_malloc(sizeof(int) * (size_t)(size * unit));
    for (int i = 0; i < nout; ++i)
        out[i] = rank * 100000 + i;
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(out, nout, MPI_INT, dest, 8, in, size * unit, MPI_INT, src, 8,
                           MPI_COMM_WORLD, &st));
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
    CHECKF(count == nin, "uneven shift %d: got %d ints from rank %d, expected %d", k, count,
           src, nin);
    for (int i = 0; i < nin; ++i)
        CHECKF(in[i] == src * 100000 + i, "uneven shift %d: int %d is %d", k, i, in[i]);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();

    const int sizes[] = {0, 1, 1 << 10, 1 << 16, 1 << 20, 1 << 24};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int kmax = size > 1 ? size - 1 : 1;
    for (int k = 1; k <= kmax; ++k) {
        for (int i = 0; i < nsizes; ++i) {
            int n = sizes[i];
            if (n > (1 << 20) && (k > 1 || size > 4))
                continue;
            shift_sendrecv(rank, size, k, n);
            shift_replace(rank, size, k, n);
        }
        shift_uneven(rank, size, k, 1);
        shift_uneven(rank, size, k, 20000);
    }

    CHECK_MPI(MPI_Finalize());
    return 0;
}
