/* Derived datatypes through every point-to-point call, on both sides, in
 * messages below and above the eager limit (16 or 32 KiB in shmpi), with types
 * freed while their requests are pending, and MPI_Get_count /
 * MPI_Get_elements on derived types.  Messages go around a ring of all
 * ranks; each receive is checked byte by byte against the type map,
 * written out here independently of the library. */
#include "typemap.h"

enum call {
    SEND_RECV,
    SSEND_RECV,
    ISEND_IRECV,
    ISSEND_IRECV,
    SENDRECV,
    SENDRECV_REPLACE,
    PROBE_RECV,
    NCALLS
};
static const char *call_names[NCALLS] = {"Send/Recv", "Ssend/Recv", "Isend/Irecv", "Issend/Irecv",
                                         "Sendrecv",  "Sendrecv_replace", "Probe/Recv"};

struct case_ {
    const char *name;
    MPI_Datatype type;
    struct tm_entry *map;
    int n;
    long extent;
    int count;
    int basic_per_elem;
};

/* Stores `stream` at the map's places of `count` elements at `base`. */
static void scatter(unsigned char *base, const struct case_ *c, const unsigned char *stream)
{
    for (int e = 0; e < c->count; ++e)
        for (int i = 0; i < c->n; ++i) {
            memcpy(base + e * c->extent + c->map[i].disp, stream, (size_t)c->map[i].len);
            stream += c->map[i].len;
        }
}

static void run(const struct case_ *c, enum call how)
{
    const int rank = world_rank(), size = world_size();
    const int to = (rank + 1) % size, from = (rank + size - 1) % size;
    long lo, hi;
    tm_span(c->map, c->n, c->extent, c->count, &lo, &hi);
    const long span = hi - lo;
    const long bytes = tm_size(c->map, c->n) * c->count;
    unsigned char *sarena = (unsigned char *)check_malloc((size_t)span);
    unsigned char *rarena = (unsigned char *)check_malloc((size_t)span);
    unsigned char *expect = (unsigned char *)check_malloc((size_t)bytes + 1);
    unsigned char *sbase = sarena - lo, *rbase = rarena - lo;
    const uint64_t seed = (uint64_t)how * 1000 + (uint64_t)c->count;
    char what[160];
    snprintf(what, sizeof what, "%s, %d elements, %s", c->name, c->count, call_names[how]);

    pattern_fill(sarena, (size_t)span, from, seed);
    tm_stream(sbase, c->map, c->n, c->extent, c->count, expect);
    pattern_fill(sarena, (size_t)span, rank, seed);
    memset(rarena, TM_SENTINEL, (size_t)span);

    MPI_Status st;
    MPI_Request rq[2];
    MPI_Datatype dup;
    const int first = rank % 2 == 0; /* blocking sends: evens send first */
    switch (how) {
    case SEND_RECV:
    case SSEND_RECV:
        if (size == 1) {
            CHECK_MPI(MPI_Isend(sbase, c->count, c->type, to, 7, MPI_COMM_WORLD, &rq[0]));
            CHECK_MPI(MPI_Recv(rbase, c->count, c->type, from, 7, MPI_COMM_WORLD, &st));
            CHECK_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
            break;
        }
        for (int phase = 0; phase < 2; ++phase) {
            if ((phase == 0) == first) {
                if (how == SEND_RECV)
                    CHECK_MPI(MPI_Send(sbase, c->count, c->type, to, 7, MPI_COMM_WORLD));
                else
                    CHECK_MPI(MPI_Ssend(sbase, c->count, c->type, to, 7, MPI_COMM_WORLD));
            } else {
                CHECK_MPI(MPI_Recv(rbase, c->count, c->type, from, 7, MPI_COMM_WORLD, &st));
            }
        }
        break;
    case ISEND_IRECV:
    case ISSEND_IRECV: {
        /* Post with a duplicate and free it at once: the requests keep it. */
        MPI_Status sts[2];
        CHECK_MPI(MPI_Type_dup(c->type, &dup));
        CHECK_MPI(MPI_Irecv(rbase, c->count, dup, from, 7, MPI_COMM_WORLD, &rq[0]));
        if (how == ISEND_IRECV)
            CHECK_MPI(MPI_Isend(sbase, c->count, dup, to, 7, MPI_COMM_WORLD, &rq[1]));
        else
            CHECK_MPI(MPI_Issend(sbase, c->count, dup, to, 7, MPI_COMM_WORLD, &rq[1]));
        CHECK_MPI(MPI_Type_free(&dup));
        CHECK(dup == MPI_DATATYPE_NULL);
        CHECK_MPI(MPI_Waitall(2, rq, sts));
        st = sts[0];
        break;
    }
    case SENDRECV:
        CHECK_MPI(MPI_Sendrecv(sbase, c->count, c->type, to, 7, rbase, c->count, c->type, from, 7,
                               MPI_COMM_WORLD, &st));
        break;
    case SENDRECV_REPLACE: {
#ifdef MPICH_VERSION
        /* MPICH 4.0.2 reports a truncated message for MPI_Sendrecv_replace
         * of about 1000 or more elements of a resized struct type (its own
         * bug; shmpi and Open MPI pass).  Skip that case there. */
        if (strcmp(c->name, "struct particle") == 0 && c->count >= 1000) {
            free(expect);
            free(rarena);
            free(sarena);
            return;
        }
#endif
        /* The buffer holds this rank's bytes at the map's places only. */
        unsigned char *mine = (unsigned char *)check_malloc((size_t)bytes + 1);
        tm_stream(sbase, c->map, c->n, c->extent, c->count, mine);
        scatter(rbase, c, mine);
        free(mine);
        CHECK_MPI(MPI_Sendrecv_replace(rbase, c->count, c->type, to, 7, from, 7, MPI_COMM_WORLD, &st));
        break;
    }
    case PROBE_RECV: {
        CHECK_MPI(MPI_Isend(sbase, c->count, c->type, to, 7, MPI_COMM_WORLD, &rq[0]));
        CHECK_MPI(MPI_Probe(from, 7, MPI_COMM_WORLD, &st));
        int k = -1;
        CHECK_MPI(MPI_Get_count(&st, c->type, &k));
        CHECKF(k == c->count, "%s: probe counts %d elements", what, k);
        CHECK_MPI(MPI_Recv(rbase, c->count, c->type, from, 7, MPI_COMM_WORLD, &st));
        CHECK_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        break;
    }
    case NCALLS:
        break;
    }

    int k = -1;
    CHECK_MPI(MPI_Get_count(&st, c->type, &k));
    CHECKF(k == c->count, "%s: MPI_Get_count says %d", what, k);
    CHECK_MPI(MPI_Get_elements(&st, c->type, &k));
    CHECKF(k == c->count * c->basic_per_elem, "%s: MPI_Get_elements says %d, expected %d", what, k,
           c->count * c->basic_per_elem);
    CHECKF(st.MPI_SOURCE == from && st.MPI_TAG == 7, "%s: status source %d tag %d", what, st.MPI_SOURCE,
           st.MPI_TAG);
    tm_check_placed(rbase, lo, hi, c->map, c->n, c->extent, c->count, expect, what);
    free(expect);
    free(rarena);
    free(sarena);
}

/* A column of an nrows x ncols matrix of doubles. */
static struct case_ column(int nrows, int ncols, int count)
{
    struct case_ c = {"column of doubles", MPI_DATATYPE_NULL, NULL, nrows, 0, count, nrows};
    CHECK_MPI(MPI_Type_vector(nrows, 1, ncols, MPI_DOUBLE, &c.type));
    CHECK_MPI(MPI_Type_commit(&c.type));
    c.map = (struct tm_entry *)check_malloc(sizeof *c.map * (size_t)nrows);
    for (int i = 0; i < nrows; ++i)
        c.map[i] = (struct tm_entry){(long)i * ncols * 8, 8};
    c.extent = (long)(nrows - 1) * ncols * 8 + 8;
    return c;
}

/* Blocks of i % 5 + 1 ints, 7 ints apart, in reverse order. */
static struct case_ indexed(int nblocks, int count)
{
    struct case_ c = {"indexed ints", MPI_DATATYPE_NULL, NULL, nblocks, 0, count, 0};
    int *len = (int *)check_malloc(sizeof(int) * (size_t)nblocks);
    int *disp = (int *)check_malloc(sizeof(int) * (size_t)nblocks);
    c.map = (struct tm_entry *)check_malloc(sizeof *c.map * (size_t)nblocks);
    long hi = 0;
    for (int i = 0; i < nblocks; ++i) {
        len[i] = i % 5 + 1;
        disp[i] = 7 * (nblocks - 1 - i);
        c.map[i] = (struct tm_entry){4L * disp[i], 4L * len[i]};
        c.basic_per_elem += len[i];
        if (4L * (disp[i] + len[i]) > hi)
            hi = 4L * (disp[i] + len[i]);
    }
    CHECK_MPI(MPI_Type_indexed(nblocks, len, disp, MPI_INT, &c.type));
    CHECK_MPI(MPI_Type_commit(&c.type));
    c.extent = hi;
    free(len);
    free(disp);
    return c;
}

struct particle {
    char tag;
    double x[3];
    int id;
};

/* An array of C structs, described with MPI_Get_address. */
static struct case_ particles(int count)
{
    struct particle p = {0, {0, 0, 0}, 0};
    MPI_Aint base, a[3];
    CHECK_MPI(MPI_Get_address(&p, &base));
    CHECK_MPI(MPI_Get_address(&p.tag, &a[0]));
    CHECK_MPI(MPI_Get_address(&p.x[0], &a[1]));
    CHECK_MPI(MPI_Get_address(&p.id, &a[2]));
    for (int i = 0; i < 3; ++i)
        a[i] = MPI_Aint_diff(a[i], base);
    int bl[3] = {1, 3, 1};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, t;
    CHECK_MPI(MPI_Type_create_struct(3, bl, a, ty, &t));
    struct case_ c = {"struct particle", MPI_DATATYPE_NULL, NULL, 3, (long)sizeof p, count, 5};
    CHECK_MPI(MPI_Type_create_resized(t, 0, (MPI_Aint)sizeof p, &c.type));
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_commit(&c.type));
    c.map = (struct tm_entry *)check_malloc(sizeof *c.map * 3);
    c.map[0] = (struct tm_entry){(long)a[0], 1};
    c.map[1] = (struct tm_entry){(long)a[1], 24};
    c.map[2] = (struct tm_entry){(long)a[2], 4};
    return c;
}

/* The interior (rows 1..R-2, columns 1..C-2) of an R x C grid of ints. */
static struct case_ interior(int R, int C, int count)
{
    int sizes[2] = {R, C}, sub[2] = {R - 2, C - 2}, starts[2] = {1, 1};
    struct case_ c = {"subarray interior", MPI_DATATYPE_NULL, NULL, R - 2, 4L * R * C, count, (R - 2) * (C - 2)};
    CHECK_MPI(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &c.type));
    CHECK_MPI(MPI_Type_commit(&c.type));
    c.map = (struct tm_entry *)check_malloc(sizeof *c.map * (size_t)(R - 2));
    for (int i = 1; i < R - 1; ++i)
        c.map[i - 1] = (struct tm_entry){4L * (i * C + 1), 4L * (C - 2)};
    return c;
}

static void run_all(struct case_ c)
{
    for (int how = 0; how < NCALLS; ++how)
        run(&c, (enum call)how);
    CHECK_MPI(MPI_Type_free(&c.type));
    free(c.map);
}

/* A message of k doubles received as columns: not a whole number of
 * elements (MPI_Get_count: MPI_UNDEFINED), but k basic elements. */
static void partial(void)
{
    const int rank = world_rank(), size = world_size();
    const int to = (rank + 1) % size, from = (rank + size - 1) % size;
    struct case_ c = column(10, 3, 2);
    double src[15], dst[60];
    for (int i = 0; i < 15; ++i)
        src[i] = rank + i / 100.0;
    for (int i = 0; i < 60; ++i)
        dst[i] = -1;
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(src, 15, MPI_DOUBLE, to, 9, dst, 2, c.type, from, 9, MPI_COMM_WORLD, &st));
    int k = 0;
    CHECK_MPI(MPI_Get_count(&st, c.type, &k));
    CHECKF(k == MPI_UNDEFINED, "MPI_Get_count of 1.5 columns is %d", k);
    CHECK_MPI(MPI_Get_elements(&st, c.type, &k));
    CHECKF(k == 15, "MPI_Get_elements of 15 doubles is %d", k);
    for (int i = 0; i < 15; ++i) {
        const int at = i < 10 ? 3 * i : 28 + 3 * (i - 10);
        CHECKF(dst[at] == from + i / 100.0, "double %d landed wrong: dst[%d] = %g", i, at, dst[at]);
    }
    CHECK_MPI(MPI_Type_free(&c.type));
    free(c.map);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    run_all(column(100, 7, 3));    /* 2.4 KB: eager */
    run_all(column(3000, 8, 2));   /* 48 KB: rendezvous */
    run_all(column(2000, 4, 40));  /* 640 KB: rendezvous, several pieces */
    run_all(indexed(40, 2));
    run_all(indexed(900, 4));
    run_all(particles(10));
    run_all(particles(3000));
    run_all(interior(20, 30, 1));
    run_all(interior(200, 130, 2));
    partial();
    MPI_Finalize();
    return 0;
}
