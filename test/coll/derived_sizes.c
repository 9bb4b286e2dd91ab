/*
 * derived_sizes.c: Bcast, Gather, Scatter, Allgather, Alltoall and Alltoallv
 * of strided types at every size class the algorithms tell apart: inline (up to
 * 64 bytes), through the cells (one chunk, several chunks), and by single
 * copies or streams (hundreds of KiB).  Two strided types: blocks of one
 * double (shorter than a vectored read is worth) and blocks of 128 doubles
 * (1 KiB).  Each call has the type on both sides, on the receive side only,
 * and on the send side only (plain doubles on the other), with and without
 * MPI_IN_PLACE at the root, from every root (Allgather and the all-to-alls
 * once per type pair; Alltoallv receives the blocks in reverse rank order).
 * Every element lands where the type map says and the gaps between the
 * blocks keep their marker.
 */
#include "coll_test.h"

enum { GAP = 2 }; /* a block every GAP * block doubles */
static const double kHole = -7.25;

/* The value of element i of root/owner r's data in call c. */
static double value(int c, int r, long i) { return (double)(c * 1000003L + r * 7919L + i); }

/* A vector of `blocks` blocks of `block` doubles, GAP * block apart. */
static MPI_Datatype make_vector(long blocks, int block) {
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_vector((int)blocks, block, GAP * block, MPI_DOUBLE, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    return t;
}

/* Strided storage of `elems` doubles in blocks of `block` (with holes), or
 * plain storage; `at` gives the index of element i. */
typedef struct {
    int strided;
    int block;
} layout;

static long at(layout l, long i) { return l.strided ? (i / l.block) * GAP * l.block + i % l.block : i; }
static long span(layout l, long elems) { return l.strided ? elems * GAP : elems; }

static void fill(double *buf, layout l, long elems, int c, int r) {
    for (long i = 0; i < span(l, elems); ++i) buf[i] = kHole;
    for (long i = 0; i < elems; ++i) buf[at(l, i)] = value(c, r, i);
}

/* Checks elements [0, elems) of `buf` against owner r's data of call c and
 * every hole; `what` names the check. */
static void check(const double *buf, layout l, long elems, int c, int r, const char *what) {
    for (long i = 0; i < elems; ++i) {
        const double got = buf[at(l, i)];
        CHECKF(got == value(c, r, i), "%s: element %ld from rank %d is %g, expected %g", what, i, r, got,
               value(c, r, i));
    }
    if (l.strided) {
        for (long i = 0; i < span(l, elems); ++i) {
            if ((i / l.block) % GAP != 0) CHECKF(buf[i] == kHole, "%s: hole at %ld is %g", what, i, buf[i]);
        }
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    /* Doubles per rank: 64 B, 1 KiB, 40 KiB (chunks of the cells), 320 KiB. */
    static const long kElems[] = {8, 128, 5120, 40960};
    static const int kBlocks[] = {1, 128};
    int c = 0;
    for (size_t e = 0; e < sizeof kElems / sizeof kElems[0]; ++e) {
        const long elems = kElems[e];
        for (size_t b = 0; b < sizeof kBlocks / sizeof kBlocks[0]; ++b) {
            const int block = kBlocks[b];
            if (elems % block != 0) continue;
            MPI_Datatype vec = make_vector(elems / block, block);
            /* Whole blocks of `size` ranks side by side: the type's extent
             * ends at its last block, so resize it to GAP * elems doubles. */
            MPI_Datatype rvec;
            CHECK_MPI(MPI_Type_create_resized(vec, 0, (MPI_Aint)(GAP * elems * sizeof(double)), &rvec));
            CHECK_MPI(MPI_Type_commit(&rvec));
            const layout strided = {1, block};
            const layout plain = {0, block};
            double *one = check_malloc(sizeof(double) * (size_t)span(strided, elems));
            double *all = check_malloc(sizeof(double) * (size_t)span(strided, elems) * (size_t)size);
            double *many = check_malloc(sizeof(double) * (size_t)span(strided, elems) * (size_t)size);
            int *scounts = check_malloc(sizeof(int) * (size_t)size);
            int *rcounts = check_malloc(sizeof(int) * (size_t)size);
            int *sdispls = check_malloc(sizeof(int) * (size_t)size);
            int *rdispls = check_malloc(sizeof(int) * (size_t)size);
            /* sides: 0 both typed, 1 receive typed, 2 send typed. */
            for (int sides = 0; sides < 3; ++sides) {
                const layout sl = sides == 1 ? plain : strided;
                const layout rl = sides == 2 ? plain : strided;
                const MPI_Datatype st = sides == 1 ? MPI_DOUBLE : rvec;
                const MPI_Datatype rt = sides == 2 ? MPI_DOUBLE : rvec;
                const int scount = sides == 1 ? (int)elems : 1;
                const int rcount = sides == 2 ? (int)elems : 1;
                for (int root = 0; root < size; ++root) {
                    /* Bcast: the root's layout is the send side's. */
                    ++c;
                    const layout bl = rank == root ? sl : rl;
                    fill(one, bl, elems, rank == root ? c : -1, root);
                    CHECK_MPI(MPI_Bcast(one, rank == root ? scount : rcount, rank == root ? st : rt, root,
                                        MPI_COMM_WORLD));
                    check(one, bl, elems, c, root, "bcast");

                    /* Gather, then in place at the root. */
                    for (int in_place = 0; in_place < 2; ++in_place) {
                        ++c;
                        fill(one, sl, elems, c, rank);
                        if (rank == root) {
                            for (int r = 0; r < size; ++r)
                                fill(all + r * span(rl, elems), rl, elems, r == root && in_place ? c : -1, r);
                        }
                        CHECK_MPI(MPI_Gather(rank == root && in_place ? MPI_IN_PLACE : one, scount, st, all,
                                             rcount, rt, root, MPI_COMM_WORLD));
                        if (rank == root) {
                            for (int r = 0; r < size; ++r)
                                check(all + r * span(rl, elems), rl, elems, c, r, "gather");
                        }
                    }

                    /* Allgather (once per type pair), then in place. */
                    for (int in_place = 0; in_place < 2 && root == 0; ++in_place) {
                        ++c;
                        fill(one, sl, elems, c, rank);
                        for (int r = 0; r < size; ++r)
                            fill(all + r * span(rl, elems), rl, elems, r == rank && in_place ? c : -1, r);
                        CHECK_MPI(MPI_Allgather(in_place ? MPI_IN_PLACE : one, scount, st, all, rcount, rt,
                                                MPI_COMM_WORLD));
                        for (int r = 0; r < size; ++r)
                            check(all + r * span(rl, elems), rl, elems, c, r, "allgather");
                    }

                    /* Alltoall, then Alltoallv (once per type pair), each
                     * then in place: rank s's block for rank d carries
                     * owner s * size + d.  Alltoallv takes rank s's block
                     * into block slot(s) = size - 1 - s. */
                    for (int v = 0; v < 2 && root == 0; ++v) {
                        for (int in_place = 0; in_place < 2; ++in_place) {
                            ++c;
                            for (int r = 0; r < size; ++r) {
                                const int slot = v ? size - 1 - r : r;
                                scounts[r] = scount;
                                rcounts[r] = rcount;
                                /* In units of each type's extent: a whole
                                 * block for rvec, one double for MPI_DOUBLE. */
                                sdispls[r] = r * (scount == 1 ? 1 : (int)elems);
                                rdispls[r] = slot * (rcount == 1 ? 1 : (int)elems);
                                fill(many + r * span(sl, elems), sl, elems, c, rank * size + r);
                                /* In place the data to send is in the receive buffer. */
                                fill(all + slot * span(rl, elems), rl, elems, in_place ? c : -1,
                                     rank * size + r);
                            }
                            const void *from = in_place ? MPI_IN_PLACE : many;
                            if (v) {
                                CHECK_MPI(MPI_Alltoallv(from, scounts, sdispls, st, all, rcounts, rdispls, rt,
                                                        MPI_COMM_WORLD));
                            } else {
                                CHECK_MPI(MPI_Alltoall(from, scount, st, all, rcount, rt, MPI_COMM_WORLD));
                            }
                            for (int r = 0; r < size; ++r) {
                                const int slot = v ? size - 1 - r : r;
                                check(all + slot * span(rl, elems), rl, elems, c, r * size + rank,
                                      v ? "alltoallv" : "alltoall");
                            }
                        }
                    }

                    /* Scatter, then in place at the root. */
                    for (int in_place = 0; in_place < 2; ++in_place) {
                        ++c;
                        fill(one, rl, elems, -1, rank);
                        if (rank == root) {
                            for (int r = 0; r < size; ++r) fill(all + r * span(sl, elems), sl, elems, c, r);
                        }
                        CHECK_MPI(MPI_Scatter(all, scount, st, rank == root && in_place ? MPI_IN_PLACE : one,
                                              rcount, rt, root, MPI_COMM_WORLD));
                        if (rank == root && in_place) {
                            check(all + root * span(sl, elems), sl, elems, c, root, "scatter in place");
                        } else {
                            check(one, rl, elems, c, rank, "scatter");
                        }
                    }
                }
            }
            free(one);
            free(all);
            free(many);
            free(scounts);
            free(rcounts);
            free(sdispls);
            free(rdispls);
            CHECK_MPI(MPI_Type_free(&rvec));
            CHECK_MPI(MPI_Type_free(&vec));
        }
    }
    MPI_Finalize();
    return 0;
}
