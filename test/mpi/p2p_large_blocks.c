/*
 * p2p_large_blocks.c: messages of several MiB whose datatypes have blocks of
 * 1 to 4 KiB, sent between every pair of layouts below, with the bytes
 * checked one by one, the gaps untouched and nothing written past the
 * receive's data.
 *
 * In shmpi a streamed message of 4 MiB or more packs such blocks
 * prefetching ahead, past the end of each piece (from 1 KiB blocks); the
 * smaller messages of the other tests do not take that path.  The layouts:
 *
 *   v4k    vector of 4 KiB blocks, a gap of one block between them
 *   v2kneg hvector of 2 KiB blocks with a negative stride of 3 blocks
 *          (the message runs from the end of the buffer to its start)
 *   v1k    vector of 1 KiB blocks, a gap of one block
 *   odd    hvector of 2560-byte blocks at a stride of 4100 bytes (unaligned)
 *   contig the same number of bytes, contiguous
 *
 * Rank 0 sends each layout to rank 1, which receives it as each layout;
 * with 3 ranks or more rank 2 sends the last round the other way.
 * Standard MPI only; passes with MPICH too.
 */
#include "check.h"

#define MSG_BYTES ((long)5 << 20) /* 5 MiB of data per message */

enum { kLayouts = 5 };

struct layout {
    const char *name;
    long block;  /* bytes per block */
    long stride; /* bytes from the start of one block to the next */
    MPI_Datatype type;
    long span;  /* bytes of the buffer the layout covers */
    long first; /* offset of the first block in the buffer */
};

static struct layout layouts[kLayouts] = {
    {"v4k", 4096, 8192, MPI_DATATYPE_NULL, 0, 0},
    {"v2kneg", 2048, -6144, MPI_DATATYPE_NULL, 0, 0},
    {"v1k", 1024, 2048, MPI_DATATYPE_NULL, 0, 0},
    {"odd", 2560, 4100, MPI_DATATYPE_NULL, 0, 0},
    {"contig", MSG_BYTES, MSG_BYTES, MPI_DATATYPE_NULL, 0, 0},
};

static void build(struct layout *l)
{
    const long nblocks = MSG_BYTES / l->block;
    CHECKF(nblocks * l->block == MSG_BYTES, "layout %s: blocks do not divide the message", l->name);
    const long step = l->stride < 0 ? -l->stride : l->stride;
    l->span = (nblocks - 1) * step + l->block;
    /* A negative stride starts at the last block of the buffer. */
    l->first = l->stride < 0 ? (nblocks - 1) * step : 0;
    CHECK_MPI(MPI_Type_create_hvector((int)nblocks, (int)l->block, l->stride, MPI_BYTE, &l->type));
    CHECK_MPI(MPI_Type_commit(&l->type));
}

/* Byte k of the data stream of round `round`: varies with both. */
static unsigned char value(int round, long k)
{
    return (unsigned char)((k * 131 + k / 4096 * 7 + round * 17) & 0xff);
}

/* Walks the data bytes of layout `l` in stream order: for each block its
 * offset in the buffer and its first stream index. */
#define FOR_EACH_BLOCK(l, off, k0) \
    for (long off = (l)->first, k0 = 0; k0 < MSG_BYTES; off += (l)->stride, k0 += (l)->block)

static void fill(unsigned char *buf, const struct layout *l, int round)
{
    memset(buf, 0xee, (size_t)l->span);
    FOR_EACH_BLOCK(l, off, k0) {
        for (long i = 0; i < l->block; ++i)
            buf[off + i] = value(round, k0 + i);
    }
}

/* The data in place, every gap byte and the guard after the span still
 * 0x5a. */
static void verify(const unsigned char *buf, const struct layout *l, int round, const char *from)
{
    unsigned char *want = malloc((size_t)l->span);
    CHECKF(want != NULL, "out of memory");
    memset(want, 0x5a, (size_t)l->span);
    FOR_EACH_BLOCK(l, off, k0) {
        for (long i = 0; i < l->block; ++i)
            want[off + i] = value(round, k0 + i);
    }
    for (long i = 0; i < l->span; ++i) {
        if (buf[i] != want[i]) {
            CHECKF(0, "%s -> %s, round %d: byte %ld of the buffer is %d, expected %d", from, l->name, round, i, buf[i],
                   want[i]);
        }
    }
    for (long i = l->span; i < l->span + 64; ++i)
        CHECKF(buf[i] == 0x5a, "%s -> %s: byte %ld past the span was written", from, l->name, i - l->span);
    free(want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long most = 0;
    for (int i = 0; i < kLayouts; ++i) {
        build(&layouts[i]);
        if (layouts[i].span > most) most = layouts[i].span;
    }
    unsigned char *buf = malloc((size_t)most + 64);
    CHECKF(buf != NULL, "out of memory");

    if (size >= 2 && rank <= 1) {
        int round = 0;
        for (int s = 0; s < kLayouts; ++s) {
            for (int r = 0; r < kLayouts; ++r, ++round) {
                const struct layout *ls = &layouts[s], *lr = &layouts[r];
                if (rank == 0) {
                    fill(buf, ls, round);
                    CHECK_MPI(MPI_Send(buf + ls->first, 1, ls->type, 1, round, MPI_COMM_WORLD));
                } else {
                    memset(buf, 0x5a, (size_t)most + 64);
                    MPI_Status st;
                    CHECK_MPI(MPI_Recv(buf + lr->first, 1, lr->type, 0, round, MPI_COMM_WORLD, &st));
                    int got = 0;
                    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
                    CHECKF(got == MSG_BYTES, "%s -> %s: %d bytes arrived", ls->name, lr->name, got);
                    verify(buf, lr, round, ls->name);
                }
            }
        }
    }
    /* With a third rank: 4 KiB blocks from rank 2 into 2 KiB blocks on rank 0. */
    if (size >= 3 && (rank == 0 || rank == 2)) {
        const struct layout *ls = &layouts[0], *lr = &layouts[1];
        if (rank == 2) {
            fill(buf, ls, kLayouts * kLayouts);
            CHECK_MPI(MPI_Send(buf + ls->first, 1, ls->type, 0, 99, MPI_COMM_WORLD));
        } else {
            memset(buf, 0x5a, (size_t)most + 64);
            CHECK_MPI(MPI_Recv(buf + lr->first, 1, lr->type, 2, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            verify(buf, lr, kLayouts * kLayouts, "rank 2's v4k");
        }
    }
    for (int i = 0; i < kLayouts; ++i) MPI_Type_free(&layouts[i].type);
    free(buf);
    MPI_Finalize();
    return 0;
}
