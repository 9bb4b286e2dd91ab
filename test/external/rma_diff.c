/*
 * rma_diff.c: one-sided communication (MPI-3.1 chapter 11) on random derived
 * datatypes, described by the bytes it leaves in windows and origin buffers,
 * for scripts/external-checks.sh's `diff` check.  The same source is built
 * with shmpi's, MPICH's and Open MPI's mpicc and run at the same rank count;
 * diff_compare.py reads the outputs.
 *
 *   mpirun -n N rma_diff ROUNDS PREFIX [START]
 *
 * Each round draws (alike on every rank) a window flavour (MPI_Win_create,
 * _allocate, _allocate_shared or _create_dynamic with one attached block), a
 * displacement unit (1, 4 or 8; 1 for a dynamic window), a derived datatype
 * of mixed basic types (int, char, double and the pair types) with a count,
 * a second one of ints for the accumulates, and shifts s: each rank
 * targets rank + s, so every target has one origin.  Then, on one window:
 *   put      fence, MPI_Put of the origin's bytes (as the type, or as one
 *            contiguous type of it), fence;
 *   get      MPI_Get of rank + s2's window back into a buffer, fence;
 *   acc      every rank MPI_Accumulate's onto one root's ints with
 *            one operation (SUM, BXOR, BOR, BAND, MAX or MIN: the order of
 *            the origins cannot change the result), fence;
 *   getacc   MPI_Get_accumulate (SUM, BXOR, REPLACE or NO_OP) from one
 *            origin a target: the bytes fetched and the window after;
 *   fop, cas MPI_Fetch_and_op and MPI_Compare_and_swap on one unsigned int,
 *            the compare value the one the target holds or not;
 *   lock     MPI_Win_lock (exclusive), MPI_Put, MPI_Win_unlock, barrier;
 *   lockall  MPI_Win_lock_all, MPI_Rget waited on, MPI_Win_flush_all,
 *            barrier, MPI_Raccumulate (SUM, everyone onto the root) waited
 *            on, MPI_Win_unlock_all, barrier;
 *   pscw     MPI_Win_post to its one origin's group, MPI_Win_start to its
 *            target's, MPI_Put, MPI_Win_complete, MPI_Win_wait.
 * Windows start as 0xEE (or as fill()'s bytes where an operation combines
 * with what is there), so a byte written where the type has a gap shows.
 * Each rank adds to PREFIX.RANK, per round from START (default 0) on,
 * "== R", the arguments, the window's MPI_WIN_SIZE, MPI_WIN_DISP_UNIT and
 * MPI_WIN_CREATE_FLAVOR, and a line "WHAT HASH" a step, HASH an FNV-1a hash
 * of the window's (or the buffer's) every byte.
 */
#include "diff_common.h"

static FILE *out;

/* The accumulates' types: one basic type, as MPI-3.1 11.3.4 asks.  Int,
 * not unsigned: MPICH 4.0.2 takes MPI_MAX and MPI_MIN of unsigned types as
 * signed (pmodels/mpich#6083: MPI_Reduce_local of 0x80000000 and 1 gives
 * 1, and its accumulates do the same), and Open MPI 4.1 does so for
 * MPI_UNSIGNED_LONG and for accumulates of MPI_UNSIGNED, so the two would
 * agree on wrong answers.  Sums of ints wrap in all three. */
static const MPI_Datatype int_types[] = {MPI_INT};
static const char *const int_names[] = {"int"};
static const struct leaves ints = {1, int_types, int_names, 1, int_types, int_names};

enum flavor { CREATE, ALLOCATE, SHARED, DYNAMIC };
static const char *const flavor_names[] = {"create", "allocate", "allocate_shared", "dynamic"};

struct win {
    MPI_Win w;
    struct region mem;  /* the window's bytes on this rank (origin 0) */
    int du;
    enum flavor flavor;
    MPI_Aint *addrs;    /* dynamic: every rank's block, for displacements */
};

static void report(const char *what, const struct region *r)
{
    fprintf(out, "%s %016llx\n", what, (unsigned long long)hash_of(r));
}

/* report() with a second word (an operation's name) after the first. */
static void report2(const char *what, const char *detail, const struct region *r)
{
    fprintf(out, "%s %s %016llx\n", what, detail, (unsigned long long)hash_of(r));
}

/* The target displacement of byte offset off (a multiple of the unit) in
 * rank target's window. */
static MPI_Aint tdisp(const struct win *w, int target, MPI_Aint off)
{
    return w->flavor == DYNAMIC ? MPI_Aint_add(w->addrs[target], off) : off / w->du;
}

static void open_window(struct win *w, size_t bytes, int np)
{
    w->mem.bytes = bytes;
    w->mem.origin = 0;
    w->addrs = NULL;
    const MPI_Aint size = (MPI_Aint)bytes;
    switch (w->flavor) {
    case CREATE:
        w->mem.mem = malloc(bytes);
        MPI_Win_create(w->mem.mem, size, w->du, MPI_INFO_NULL, MPI_COMM_WORLD, &w->w);
        break;
    case ALLOCATE:
        MPI_Win_allocate(size, w->du, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem.mem, &w->w);
        break;
    case SHARED:
        MPI_Win_allocate_shared(size, w->du, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem.mem, &w->w);
        break;
    case DYNAMIC: {
        w->mem.mem = malloc(bytes);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->w);
        MPI_Win_attach(w->w, w->mem.mem, size);
        MPI_Aint mine;
        MPI_Get_address(w->mem.mem, &mine);
        w->addrs = malloc((size_t)np * sizeof *w->addrs);
        MPI_Allgather(&mine, 1, MPI_AINT, w->addrs, 1, MPI_AINT, MPI_COMM_WORLD);
        break;
    }
    }
    MPI_Aint *asize;
    int *adu, *aflavor, flag1, flag2, flag3;
    MPI_Win_get_attr(w->w, MPI_WIN_SIZE, &asize, &flag1);
    MPI_Win_get_attr(w->w, MPI_WIN_DISP_UNIT, &adu, &flag2);
    MPI_Win_get_attr(w->w, MPI_WIN_CREATE_FLAVOR, &aflavor, &flag3);
    fprintf(out, "win size %ld du %d flavor %s\n", flag1 ? (long)*asize : -1L, flag2 ? *adu : -1,
            !flag3                                  ? "none"
            : *aflavor == MPI_WIN_FLAVOR_CREATE     ? "create"
            : *aflavor == MPI_WIN_FLAVOR_ALLOCATE   ? "allocate"
            : *aflavor == MPI_WIN_FLAVOR_SHARED     ? "shared"
            : *aflavor == MPI_WIN_FLAVOR_DYNAMIC    ? "dynamic"
                                                    : "other");
}

static void close_window(struct win *w)
{
    if (w->flavor == DYNAMIC) MPI_Win_detach(w->w, w->mem.mem);
    MPI_Win_free(&w->w);
    if (w->flavor == CREATE || w->flavor == DYNAMIC) free(w->mem.mem);
    free(w->addrs);
}

/* The unsigned int at byte off of rank's window after fill(), as every
 * rank can compute it. */
static unsigned fill_unsigned(size_t off, int rank)
{
    unsigned v = 0;
    unsigned char b[sizeof v];
    for (size_t i = 0; i < sizeof v; i++) b[i] = (unsigned char)((off + i) * 7 + (size_t)rank * 61 + 1);
    memcpy(&v, b, sizeof v);
    return v;
}

/* An epoch boundary after stores to this rank's own window, then fill()'s
 * bytes in it (the window's fill must not race an epoch of other ranks:
 * it comes between two fences). */
static void refill(struct win *w, int me, int fill_it)
{
    MPI_Win_fence(0, w->w);
    if (fill_it) fill(&w->mem, me); else clear(&w->mem);
    MPI_Win_fence(0, w->w);
}

static void round_of(int me, int np, int round)
{
    state = 9001 + (uint64_t)round * 15485863;
    char desc[DESC] = "", udesc[DESC] = "";
    MPI_Datatype t = make_type(3, &mixed_leaves, desc), ut = make_type(2, &ints, udesc), tc;
    MPI_Type_commit(&t);
    MPI_Type_commit(&ut);
    static const long scale[] = {0, 1, 2, 3, 17, 300, 5000};
    long c = scale[rnd(7)], uc = scale[1 + rnd(6)];
    while (c > 1 && c * (long)extent_of(t) > (2L << 20)) c /= 4;
    while (uc > 1 && uc * (long)extent_of(ut) > (1L << 20)) uc /= 4;
    MPI_Type_contiguous((int)c, t, &tc);
    MPI_Type_commit(&tc);

    struct win w;
    w.flavor = (enum flavor)rnd(4);
    static const int units[] = {1, 4, 8};
    w.du = w.flavor == DYNAMIC ? 1 : units[rnd(3)];
    const int s1 = (int)rnd((unsigned)np), s2 = (int)rnd((unsigned)np), root = (int)rnd((unsigned)np);
    const int as_contig = (int)rnd(2);
    MPI_Aint tlb, text, ulb, utext;
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_get_true_extent(ut, &ulb, &utext);
    struct region sone = region_for(t, c), one = region_for(t, c);
    struct region usrc = region_for(ut, uc), ures = region_for(ut, uc);
    /* Where the data goes: byte offsets that are multiples of 8 (so of
     * every unit), the window as large as the furthest use and a little. */
    const MPI_Aint off = 8 * irnd(0, 3), uoff = 8 * irnd(0, 3);
    size_t bytes = (size_t)(off + tlb) + sone.bytes;
    if ((size_t)(uoff + ulb) + usrc.bytes > bytes) bytes = (size_t)(uoff + ulb) + usrc.bytes;
    bytes = (bytes + 7) / 8 * 8 + 8 * (size_t)irnd(1, 3);
    const MPI_Aint foff = 8 * (MPI_Aint)rnd((unsigned)(bytes / 8)); /* the one unsigned of fop and cas */
    static const MPI_Op acc_ops[] = {MPI_SUM, MPI_BXOR, MPI_BOR, MPI_BAND, MPI_MAX, MPI_MIN};
    static const char *const acc_names[] = {"sum", "bxor", "bor", "band", "max", "min"};
    static const MPI_Op getacc_ops[] = {MPI_SUM, MPI_BXOR, MPI_REPLACE, MPI_NO_OP};
    static const char *const getacc_names[] = {"sum", "bxor", "replace", "no_op"};
    const int aop = (int)rnd(6), gop = (int)rnd(4), cas_hit = (int)rnd(2);
    fprintf(out, "type %s count %ld%s, utype %s count %ld, flavor %s du %d, shifts %d %d root %d, offsets %ld %ld %ld\n",
            desc, c, as_contig ? " (contiguous)" : "", udesc, uc, flavor_names[w.flavor], w.du, s1, s2, root,
            (long)off, (long)uoff, (long)foff);

    open_window(&w, bytes, np);
    const int to = (me + s1) % np, from = (me + np - s1) % np, peer = (me + s2) % np;

    /* put: one origin a target */
    refill(&w, me, 0);
    fill(&sone, me);
    if (as_contig)
        MPI_Put(at(&sone), c > 0, tc, to, tdisp(&w, to, off), (int)c, t, w.w);
    else
        MPI_Put(at(&sone), (int)c, t, to, tdisp(&w, to, off), (int)c, t, w.w);
    MPI_Win_fence(0, w.w);
    report("put", &w.mem);

    /* get: the window as the put left it */
    clear(&one);
    MPI_Get(at(&one), (int)c, t, peer, tdisp(&w, peer, off), (int)c, t, w.w);
    MPI_Win_fence(0, w.w);
    report("get", &one);

    /* acc: everyone onto the root's ints */
    refill(&w, me, 1);
    fill(&usrc, me + 5);
    MPI_Accumulate(at(&usrc), (int)uc, ut, root, tdisp(&w, root, uoff), (int)uc, ut, acc_ops[aop], w.w);
    MPI_Win_fence(0, w.w);
    report2("acc", acc_names[aop], &w.mem);

    /* getacc: one origin a target */
    refill(&w, me, 1);
    clear(&ures);
    MPI_Get_accumulate(at(&usrc), (int)uc, ut, at(&ures), (int)uc, ut, to, tdisp(&w, to, uoff), (int)uc, ut,
                       getacc_ops[gop], w.w);
    MPI_Win_fence(0, w.w);
    report2("getacc fetched", getacc_names[gop], &ures);
    report2("getacc window", getacc_names[gop], &w.mem);

    /* fop and cas on one unsigned int, one origin a target */
    refill(&w, me, 1);
    unsigned v = 1000003u * (unsigned)(me + 1), fetched = 0;
    MPI_Fetch_and_op(&v, &fetched, MPI_UNSIGNED, to, tdisp(&w, to, foff), MPI_SUM, w.w);
    MPI_Win_fence(0, w.w);
    fprintf(out, "fop fetched %u\n", fetched);
    report("fop window", &w.mem);
    refill(&w, me, 1);
    const unsigned expect = fill_unsigned((size_t)foff, to) + (cas_hit ? 0u : 1u);
    unsigned swapped = 0, repl = 77u + (unsigned)me;
    MPI_Compare_and_swap(&repl, &expect, &swapped, MPI_UNSIGNED, to, tdisp(&w, to, foff), w.w);
    MPI_Win_fence(0, w.w);
    fprintf(out, "cas %s fetched %u\n", cas_hit ? "hit" : "miss", swapped);
    report("cas window", &w.mem);

    /* lock: passive target, one origin a target */
    refill(&w, me, 0);
    fill(&sone, me + 11);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, w.w);
    MPI_Put(at(&sone), (int)c, t, to, tdisp(&w, to, off), (int)c, t, w.w);
    MPI_Win_unlock(to, w.w);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w.w);
    MPI_Win_sync(w.w);
    report("lock", &w.mem);
    MPI_Win_unlock(me, w.w);

    /* lockall: request-based get and accumulate */
    refill(&w, me, 1);
    MPI_Request reqs[2];
    clear(&one);
    MPI_Win_lock_all(0, w.w);
    MPI_Rget(at(&one), (int)c, t, peer, tdisp(&w, peer, off), (int)c, t, w.w, &reqs[0]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    MPI_Win_flush_all(w.w);
    MPI_Barrier(MPI_COMM_WORLD); /* every get done before any accumulate */
    MPI_Raccumulate(at(&usrc), (int)uc, ut, root, tdisp(&w, root, uoff), (int)uc, ut, MPI_SUM, w.w, &reqs[1]);
    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    MPI_Win_unlock_all(w.w);
    MPI_Barrier(MPI_COMM_WORLD);
    report("lockall rget", &one);
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w.w);
    MPI_Win_sync(w.w);
    report("lockall window", &w.mem);
    MPI_Win_unlock(me, w.w);

    /* pscw: each rank exposes its window to its one origin */
    refill(&w, me, 0);
    MPI_Group world, origin_group, target_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &from, &origin_group);
    MPI_Group_incl(world, 1, &to, &target_group);
    fill(&sone, me + 23);
    MPI_Win_post(origin_group, 0, w.w);
    MPI_Win_start(target_group, 0, w.w);
    MPI_Put(at(&sone), (int)c, t, to, tdisp(&w, to, off), (int)c, t, w.w);
    MPI_Win_complete(w.w);
    MPI_Win_wait(w.w);
    report("pscw", &w.mem);
    MPI_Group_free(&origin_group);
    MPI_Group_free(&target_group);
    MPI_Group_free(&world);

    close_window(&w);
    free(sone.mem);
    free(one.mem);
    free(usrc.mem);
    free(ures.mem);
    MPI_Type_free(&tc);
    MPI_Type_free(&t);
    MPI_Type_free(&ut);
}

int main(int argc, char **argv) { return rounds_main(argc, argv, "rma_diff", 64, &out, round_of); }
