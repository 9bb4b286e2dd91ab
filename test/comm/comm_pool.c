/*
 * Many communicators, made and freed: more than any pool of collective
 * regions holds (shmpi keeps a few regions in its segment for communicators
 * other than MPI_COMM_WORLD and falls back to point-to-point collectives
 * when they are all taken), some alive together and freed in a scrambled
 * order, so that regions are reused by communicators of other sizes.  Every
 * communicator runs bcast, reduce, allreduce (MPI_SUM and a non-commutative
 * user operation, checked against a fold in rank order), gather, allgather
 * and barrier, with small and (now and then) large messages.  Results are
 * computed by hand from the communicator rank.
 *
 *   A. 40 dups and splits, each freed three iterations after it was made;
 *   B. 12 dups of the world alive together, used in turn, then freed in a
 *      scrambled order while the others keep working;
 *   C. 100 create/free cycles (dup of a dup, split, MPI_Comm_create).
 *
 * Other MPIs run 16 rounds of A and 24 cycles of C: the counts are there
 * to exhaust and recycle shmpi's pool (8 regions by default), and other
 * MPIs' busy-polling ranks are slow when they outnumber the cores (MPICH
 * took 85 s for the full counts at 8 ranks on 2 cores).
 */
#include "check.h"

#if defined(SHMPI)
enum { PHASE_A_ROUNDS = 40, PHASE_C_CYCLES = 100 };
#else
enum { PHASE_A_ROUNDS = 16, PHASE_C_CYCLES = 24 };
#endif

/* An affine map x -> a*x + b (mod 2^32).  (f op g) applies f, then g:
 * associative, not commutative. */
typedef struct {
    unsigned a;
    unsigned b;
} affine;

static void affine_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const affine *f = in;
    affine *g = inout;
    for (int i = 0; i < *len; ++i) {
        affine h;
        h.a = f[i].a * g[i].a;
        h.b = f[i].b * g[i].a + g[i].b;
        g[i] = h;
    }
}

static affine contribution(int rank, int i, int salt)
{
    affine f;
    f.a = 2u * (unsigned)(rank + i + salt) + 3u;
    f.b = 7u * (unsigned)rank + (unsigned)i + (unsigned)salt;
    return f;
}

/* The fold of every rank's contribution for element i, in rank order. */
static affine reference(int n, int i, int salt)
{
    affine acc = contribution(0, i, salt);
    for (int r = 1; r < n; ++r) {
        affine g = contribution(r, i, salt);
        int one = 1;
        affine_op(&acc, &g, &one, NULL);
        acc = g;
    }
    return acc;
}

static MPI_Datatype affine_type;
static MPI_Op affine_mpi_op;

/* Every collective on `comm`; `salt` varies the data between calls, `big`
 * adds messages beyond the inline and cell sizes. */
static void run_collectives(MPI_Comm comm, int salt, int big, const char *what)
{
    int r = -1, n = -1;
    CHECK_MPI(MPI_Comm_rank(comm, &r));
    CHECK_MPI(MPI_Comm_size(comm, &n));
    const int root = salt % n;
    const int counts[2] = {5, 40000};
    for (int k = 0; k < (big ? 2 : 1); ++k) {
        const int count = counts[k];
        int *v = check_malloc(sizeof(int) * (size_t)count);
        int *w = check_malloc(sizeof(int) * (size_t)count);
        affine *x = check_malloc(sizeof(affine) * (size_t)count);
        affine *y = check_malloc(sizeof(affine) * (size_t)count);

        /* Bcast */
        for (int i = 0; i < count; ++i)
            v[i] = r == root ? salt * 31 + i : -1;
        CHECK_MPI(MPI_Bcast(v, count, MPI_INT, root, comm));
        for (int i = 0; i < count; ++i)
            CHECKF(v[i] == salt * 31 + i, "%s: bcast of %d ints from %d: [%d] = %d", what, count, root, i,
                   v[i]);

        /* Reduce and Allreduce with MPI_SUM */
        for (int i = 0; i < count; ++i) {
            v[i] = r + i + salt;
            w[i] = -1;
        }
        CHECK_MPI(MPI_Reduce(v, w, count, MPI_INT, MPI_SUM, root, comm));
        if (r == root) {
            for (int i = 0; i < count; ++i)
                CHECKF(w[i] == n * (n - 1) / 2 + n * (i + salt), "%s: reduce of %d ints to %d: [%d] = %d",
                       what, count, root, i, w[i]);
        }
        CHECK_MPI(MPI_Allreduce(v, w, count, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < count; ++i)
            CHECKF(w[i] == n * (n - 1) / 2 + n * (i + salt), "%s: allreduce of %d ints: [%d] = %d", what,
                   count, i, w[i]);

        /* Reduce and Allreduce with a non-commutative operation */
        for (int i = 0; i < count; ++i) {
            x[i] = contribution(r, i, salt);
            y[i].a = y[i].b = 0;
        }
        CHECK_MPI(MPI_Reduce(x, y, count, affine_type, affine_mpi_op, root, comm));
        if (r == root) {
            for (int i = 0; i < count; ++i) {
                const affine e = reference(n, i, salt);
                CHECKF(y[i].a == e.a && y[i].b == e.b,
                       "%s: non-commutative reduce of %d to %d: [%d] = (%u, %u), expected (%u, %u)", what,
                       count, root, i, y[i].a, y[i].b, e.a, e.b);
            }
        }
        CHECK_MPI(MPI_Allreduce(x, y, count, affine_type, affine_mpi_op, comm));
        for (int i = 0; i < count; ++i) {
            const affine e = reference(n, i, salt);
            CHECKF(y[i].a == e.a && y[i].b == e.b, "%s: non-commutative allreduce of %d: [%d] = (%u, %u), "
                   "expected (%u, %u)", what, count, i, y[i].a, y[i].b, e.a, e.b);
        }
        free(v);
        free(w);
        free(x);
        free(y);
    }

    /* Gather and Allgather: three ints per rank */
    int mine[3] = {r, salt, 100 * r + salt};
    int *all = check_malloc(sizeof(int) * 3 * (size_t)n);
    for (int i = 0; i < 3 * n; ++i)
        all[i] = -1;
    CHECK_MPI(MPI_Gather(mine, 3, MPI_INT, all, 3, MPI_INT, root, comm));
    if (r == root) {
        for (int q = 0; q < n; ++q)
            CHECKF(all[3 * q] == q && all[3 * q + 1] == salt && all[3 * q + 2] == 100 * q + salt,
                   "%s: gather to %d: block %d is %d %d %d", what, root, q, all[3 * q], all[3 * q + 1],
                   all[3 * q + 2]);
    }
    CHECK_MPI(MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, comm));
    for (int q = 0; q < n; ++q)
        CHECKF(all[3 * q] == q && all[3 * q + 1] == salt && all[3 * q + 2] == 100 * q + salt,
               "%s: allgather: block %d is %d %d %d", what, q, all[3 * q], all[3 * q + 1], all[3 * q + 2]);
    free(all);

    CHECK_MPI(MPI_Barrier(comm));
}

/* A: dups and splits, three alive at a time. */
static void phase_a(int me, int size)
{
    enum { kRounds = PHASE_A_ROUNDS, kAlive = 3 };
    MPI_Comm alive[kAlive];
    for (int i = 0; i < kAlive; ++i)
        alive[i] = MPI_COMM_NULL;
    for (int it = 0; it < kRounds; ++it) {
        MPI_Comm *slot = &alive[it % kAlive];
        if (*slot != MPI_COMM_NULL)
            CHECK_MPI(MPI_Comm_free(slot));
        if (it % 2 == 0) {
            CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, slot));
        } else {
            /* Colors of uneven sizes, ranks reversed. */
            const int colors = 1 + it % 3;
            CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, me % colors, size - me, slot));
        }
        run_collectives(*slot, it, it % 8 == 1, "phase A");
        /* The older ones still work. */
        for (int i = 0; i < kAlive; ++i) {
            if (alive[i] != MPI_COMM_NULL && &alive[i] != slot)
                run_collectives(alive[i], it + i, 0, "phase A (older)");
        }
    }
    for (int i = 0; i < kAlive; ++i) {
        if (alive[i] != MPI_COMM_NULL)
            CHECK_MPI(MPI_Comm_free(&alive[i]));
    }
}

/* B: twelve dups alive together, freed in a scrambled order. */
static void phase_b(void)
{
    enum { kDups = 12 };
    MPI_Comm dups[kDups];
    for (int i = 0; i < kDups; ++i) {
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dups[i]));
        run_collectives(dups[i], i, i == 0 || i == kDups - 1, "phase B (made)");
    }
    for (int i = 0; i < kDups; ++i)
        run_collectives(dups[(i * 7) % kDups], 100 + i, 0, "phase B (all alive)");
    for (int i = 0; i < kDups; ++i) {
        const int victim = (i * 5 + 3) % kDups;  /* 5 is coprime to 12: a permutation */
        CHECK_MPI(MPI_Comm_free(&dups[victim]));
        CHECK(dups[victim] == MPI_COMM_NULL);
        for (int j = 0; j < kDups; ++j) {
            if (dups[j] != MPI_COMM_NULL && (j + i) % 4 == 0)
                run_collectives(dups[j], 200 + i, 0, "phase B (freeing)");
        }
        /* A freshly made communicator may take the region just freed. */
        if (i % 3 == 0) {
            MPI_Comm fresh;
            CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &fresh));
            run_collectives(fresh, 300 + i, i == 6, "phase B (fresh)");
            CHECK_MPI(MPI_Comm_free(&fresh));
        }
    }
}

/* C: many create/free cycles of several kinds. */
static void phase_c(int me, int size)
{
    MPI_Group world_group;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    for (int it = 0; it < PHASE_C_CYCLES; ++it) {
        MPI_Comm a, b;
        switch (it % 3) {
        case 0:
            CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &a));
            CHECK_MPI(MPI_Comm_dup(a, &b));
            break;
        case 1:
            CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &a));
            CHECK_MPI(MPI_Comm_split(a, me < size / 2, me, &b));
            break;
        default: {
            /* Every rank but the last (all of them in a 1-rank job). */
            MPI_Group g;
            const int drop[1] = {size - 1};
            if (size > 1) {
                CHECK_MPI(MPI_Group_excl(world_group, 1, drop, &g));
            } else {
                CHECK_MPI(MPI_Group_incl(world_group, 1, drop, &g));
            }
            CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &a));
            CHECK_MPI(MPI_Comm_create(a, g, &b));
            CHECK_MPI(MPI_Group_free(&g));
            break;
        }
        }
        run_collectives(a, it, 0, "phase C (first)");
        if (b != MPI_COMM_NULL) {
            run_collectives(b, it + 1, it == 50 || it == 52, "phase C (second)");
            /* Free in either order. */
            if (it % 2 == 0) {
                CHECK_MPI(MPI_Comm_free(&b));
                CHECK_MPI(MPI_Comm_free(&a));
                continue;
            }
            CHECK_MPI(MPI_Comm_free(&a));
            run_collectives(b, it + 2, 0, "phase C (after the parent's free)");
            CHECK_MPI(MPI_Comm_free(&b));
        } else {
            CHECK_MPI(MPI_Comm_free(&a));
        }
    }
    CHECK_MPI(MPI_Group_free(&world_group));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int me = -1, size = -1;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK_MPI(MPI_Type_contiguous(2, MPI_UNSIGNED, &affine_type));
    CHECK_MPI(MPI_Type_commit(&affine_type));
    CHECK_MPI(MPI_Op_create(affine_op, 0, &affine_mpi_op));

    run_collectives(MPI_COMM_WORLD, 1, 1, "world");
    phase_a(me, size);
    phase_b();
    phase_c(me, size);
    run_collectives(MPI_COMM_WORLD, 2, 1, "world (at the end)");

    CHECK_MPI(MPI_Op_free(&affine_mpi_op));
    CHECK_MPI(MPI_Type_free(&affine_type));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
