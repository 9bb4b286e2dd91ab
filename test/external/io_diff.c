/*
 * io_diff.c: parallel I/O (MPI-3.1 chapter 13) through random file views,
 * described by the bytes that the read buffers and the file end up holding,
 * for scripts/external-checks.sh's `diff` check.  The same source is built
 * with shmpi's, MPICH's and Open MPI's mpicc and run at the same rank count;
 * diff_compare.py reads the outputs.
 *
 *   mpirun -n N io_diff ROUNDS PREFIX [START]
 *
 * Each round draws (alike on every rank) an etype (MPI_BYTE, MPI_INT or
 * MPI_DOUBLE), a filetype built of the etype only, a memory type (the etype
 * itself or another type built of it), an access kind, counts and offsets
 * per rank, the data representation ("native", or "external32" for int and
 * double), whether atomic mode is on, whether rank 0 first fills the file
 * with known bytes, and a size call (MPI_File_set_size or
 * MPI_File_preallocate) or none.  Filetypes follow MPI-3.1 13.3: their
 * displacements are nonnegative and grow, and their holes are multiples of
 * the etype's size (a type that breaks the last rule is drawn again).  Every
 * round opens one file, PREFIX.fileR for round R, on all ranks, and deletes
 * it at the end (a new name each round, so that nothing an implementation
 * keeps under the file's name, such as the segment that holds Open MPI's
 * shared file pointer, outlives the round).
 *
 * The views interleave without overlapping: the filetype is the drawn type
 * t resized to [0, N * E), E a multiple of the etype's size that holds t's
 * data, and rank r's view starts at byte BASE + r * E (BASE a multiple of
 * 16), so rank r's k-th tile covers [BASE + (k * N + r) * E, ... + E).  The
 * shared file pointer calls need the same view on every rank: there the
 * filetype is t resized to [0, E) and every view starts at BASE.
 *
 * The access kinds: MPI_File_write_at_all, _write_all (at an individual
 * pointer placed with MPI_File_seek, MPI_SEEK_SET then MPI_SEEK_CUR),
 * _write_at, _write, _write_ordered (at a shared pointer placed with
 * MPI_File_seek_shared), _iwrite_at and _iwrite with MPI_Wait, and the split
 * collectives _write_all_begin/_end, _write_at_all_begin/_end and
 * _write_ordered_begin/_end.  Each rank writes bytes that depend on the
 * rank and the offset; then MPI_File_sync, MPI_Barrier, MPI_File_sync
 * (13.6.1) make the writes visible, and each rank reads its data back with
 * the matching read call into a buffer that starts as 0xEE, gaps included.
 * Last, every view is set to MPI_BYTE at displacement 0 and rank 0 reads the
 * whole file.
 *
 * No two ranks write the same byte, and no rank reads a byte that nobody
 * wrote, except for the raw read of the whole file.  Holes in the file read
 * as zeros on POSIX file systems where nobody wrote them, or as the bytes
 * that rank 0 filled in first (three rounds in four).  The bytes that
 * MPI_File_set_size adds are left out of the raw read's hash, since MPI
 * leaves them undefined.  MPI_File_preallocate only grows the empty file of
 * a one-rank job (before the view is set); otherwise it is asked for less
 * than the file's size and must change nothing.
 *
 * Where MPICH 4.0.2 or Open MPI 4.1 get a case wrong, the round avoids it,
 * so that most rounds are judged: the files are opened with the ROMIO
 * hints romio_ds_write and romio_cb_write set to "disable" (with MPICH's
 * data sieving and collective buffering on, holes past the end of the file
 * come back holding stale bytes; other implementations ignore the hints);
 * memory types have lower bound 0 (MPICH adds the lower bound of a memory
 * type twice); external32 goes with the etype as the memory type, and not
 * with the nonblocking kinds or MPI_File_write_ordered (MPICH overruns a
 * buffer on noncontiguous memory, writes native data with
 * MPI_File_iwrite(_at), and skips the conversion in MPI_File_read_ordered);
 * only independent, blocking reads meet the end of the file (Open MPI hangs
 * in the others, and collective reads of both count the elements asked for
 * there); most rounds fill the file first (Open MPI's collective writes put
 * stray bytes in holes past the end of the file); MPI_File_preallocate as
 * above (Open MPI's copies bytes about and leaves ranks out of step).
 *
 * Each rank adds to PREFIX.RANK, per round from START (default 0) on,
 * "== R" and these lines:
 *   the arguments: etype, representation, filetype, tile E, BASE, memory
 *     type, access kind, this rank's count (of memory types) and offset (in
 *     etypes), the shared pointer's start, how many bytes rank 0 fills in
 *     first (0: none), atomic mode, and the size call with its arguments
 *     (the size becomes the current one times Q / 4, plus M bytes);
 *   "view disp D rep REP": MPI_File_get_view's displacement and
 *     representation;
 *   "extent filetype X memory Y": MPI_File_get_type_extent of both types;
 *   "write count C elements L": MPI_Get_count with the memory type and
 *     MPI_Get_elements of the write's status ("undef" for MPI_UNDEFINED);
 *   "pos P byte B [shared S]" (after the write and after the read):
 *     MPI_File_get_position, MPI_File_get_byte_offset of it and, for the
 *     shared pointer kinds, MPI_File_get_position_shared (all in etypes but
 *     B, which is in bytes);
 *   "size S": MPI_File_get_size after the writes, after the fill and after a
 *     size call;
 *   "set_size TO" or "preallocate TO": the size call's argument;
 *   "read HASH count C elements L": an FNV-1a hash of every byte of the read
 *     buffer, and the read's status;
 *   "file SIZE HASHED HASH" (rank 0): the file's size, how many bytes from
 *     its start the raw read hashes, and their hash.
 * A call that fails prints "CALL err CLASS" (MPI_Error_class's answer by
 * name) instead; the round goes on where that leaves the ranks in step.
 */
#include "diff_common.h"

static FILE *out;
static const char *prefix; /* round R's file is PREFIX.fileR */

/* The families: a round's types are all built of its etype. */
static const MPI_Datatype byte_leaf[] = {MPI_BYTE}, int_leaf[] = {MPI_INT}, double_leaf[] = {MPI_DOUBLE};
static const char *const byte_name[] = {"byte"}, *const int_name[] = {"int"}, *const double_name[] = {"double"};
static const struct leaves families[] = {
    {1, byte_leaf, byte_name, 1, byte_leaf, byte_name},
    {1, int_leaf, int_name, 1, int_leaf, int_name},
    {1, double_leaf, double_name, 1, double_leaf, double_name},
};

/* The access kinds, and which file pointer each moves. */
enum { AT_ALL, ALL, AT, INDIVIDUAL, ORDERED, IAT, IINDIVIDUAL, ALL_SPLIT, AT_ALL_SPLIT, ORDERED_SPLIT, NKINDS };
enum { EXPLICIT, OWN, SHARED };
static const struct {
    const char *read, *write;
    int pointer;
} kinds[NKINDS] = {
    {"read_at_all", "write_at_all", EXPLICIT},
    {"read_all", "write_all", OWN},
    {"read_at", "write_at", EXPLICIT},
    {"read", "write", OWN},
    {"read_ordered", "write_ordered", SHARED},
    {"iread_at", "iwrite_at", EXPLICIT},
    {"iread", "iwrite", OWN},
    {"read_all_begin", "write_all_begin", OWN},
    {"read_at_all_begin", "write_at_all_begin", EXPLICIT},
    {"read_ordered_begin", "write_ordered_begin", SHARED},
};

/* What the size call of a round is. */
enum { NO_SIZE, SET_SIZE_BEFORE, SET_SIZE_AFTER, PREALLOCATE_FIRST, PREALLOCATE_SMALLER };
static const char *const size_calls[] = {"none", "set_size before reads", "set_size after reads",
                                         "preallocate first", "preallocate smaller"};

/* Prints "CALL err CLASS" and answers 1 where rc is an error. */
static int failed(const char *call, int rc)
{
    if (rc == MPI_SUCCESS) return 0;
    fprintf(out, "%s err %s\n", call, error_class_name(rc));
    return 1;
}

/* Whether every element of t, a committed type built of one basic type of
 * esize bytes, starts at a multiple of esize from byte 0: then the holes
 * of a filetype made of t are multiples of the etype's extent (MPI-3.1
 * 13.3).  Unpacks zeros into a buffer of 0xFF bytes and looks at where
 * they landed. */
static int etype_aligned(MPI_Datatype t, int esize)
{
    MPI_Aint tlb, text;
    int size, pos = 0, ok = 1;
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_size(t, &size);
    if (tlb < 0 || tlb % esize != 0) return 0;
    if (esize == 1) return 1;
    unsigned char *mem = malloc((size_t)text + 1), *zeros = calloc((size_t)size + 1, 1);
    memset(mem, 0xFF, (size_t)text);
    MPI_Unpack(zeros, size, &pos, mem - tlb, 1, t, MPI_COMM_SELF);
    for (MPI_Aint i = 0; i < text;) {
        if (mem[i] != 0) {
            i++;
            continue;
        }
        MPI_Aint j = i;
        while (j < text && mem[j] == 0) j++;
        if (i % esize != 0 || (j - i) % esize != 0) ok = 0;
        i = j;
    }
    free(mem);
    free(zeros);
    return ok;
}

/* One access of the kind kind: a write (wr) or a read of n elements of m
 * at buf, at offset off for the explicit offset kinds. */
static int access_file(int kind, int wr, MPI_File fh, MPI_Offset off, void *buf, int n, MPI_Datatype m,
                       MPI_Status *st)
{
    MPI_Request rq;
    int rc;
    switch (kind) {
    case AT_ALL: return wr ? MPI_File_write_at_all(fh, off, buf, n, m, st) : MPI_File_read_at_all(fh, off, buf, n, m, st);
    case ALL: return wr ? MPI_File_write_all(fh, buf, n, m, st) : MPI_File_read_all(fh, buf, n, m, st);
    case AT: return wr ? MPI_File_write_at(fh, off, buf, n, m, st) : MPI_File_read_at(fh, off, buf, n, m, st);
    case INDIVIDUAL: return wr ? MPI_File_write(fh, buf, n, m, st) : MPI_File_read(fh, buf, n, m, st);
    case ORDERED: return wr ? MPI_File_write_ordered(fh, buf, n, m, st) : MPI_File_read_ordered(fh, buf, n, m, st);
    case IAT:
        rc = wr ? MPI_File_iwrite_at(fh, off, buf, n, m, &rq) : MPI_File_iread_at(fh, off, buf, n, m, &rq);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&rq, st);
    case IINDIVIDUAL:
        rc = wr ? MPI_File_iwrite(fh, buf, n, m, &rq) : MPI_File_iread(fh, buf, n, m, &rq);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&rq, st);
    case ALL_SPLIT:
        rc = wr ? MPI_File_write_all_begin(fh, buf, n, m) : MPI_File_read_all_begin(fh, buf, n, m);
        if (rc != MPI_SUCCESS) return rc;
        return wr ? MPI_File_write_all_end(fh, buf, st) : MPI_File_read_all_end(fh, buf, st);
    case AT_ALL_SPLIT:
        rc = wr ? MPI_File_write_at_all_begin(fh, off, buf, n, m) : MPI_File_read_at_all_begin(fh, off, buf, n, m);
        if (rc != MPI_SUCCESS) return rc;
        return wr ? MPI_File_write_at_all_end(fh, buf, st) : MPI_File_read_at_all_end(fh, buf, st);
    default:
        rc = wr ? MPI_File_write_ordered_begin(fh, buf, n, m) : MPI_File_read_ordered_begin(fh, buf, n, m);
        if (rc != MPI_SUCCESS) return rc;
        return wr ? MPI_File_write_ordered_end(fh, buf, st) : MPI_File_read_ordered_end(fh, buf, st);
    }
}

/* Places the pointer that kind moves: the individual one at off (by
 * MPI_SEEK_SET to pre, then MPI_SEEK_CUR), the shared one at shared. */
static void place_pointer(MPI_File fh, int kind, MPI_Offset pre, MPI_Offset off, MPI_Offset shared)
{
    if (kinds[kind].pointer == OWN) {
        if (!failed("seek", MPI_File_seek(fh, pre, MPI_SEEK_SET))) failed("seek", MPI_File_seek(fh, off - pre, MPI_SEEK_CUR));
    } else if (kinds[kind].pointer == SHARED) {
        failed("seek_shared", MPI_File_seek_shared(fh, shared, MPI_SEEK_SET));
    }
}

/* "WHAT count C elements L" of a status. */
static void report_status(const char *what, const MPI_Status *st, MPI_Datatype m)
{
    int count, elements;
    char c[32], e[32];
    MPI_Get_count(st, m, &count);
    MPI_Get_elements(st, m, &elements);
    if (count == MPI_UNDEFINED) snprintf(c, sizeof c, "undef"); else snprintf(c, sizeof c, "%d", count);
    if (elements == MPI_UNDEFINED) snprintf(e, sizeof e, "undef"); else snprintf(e, sizeof e, "%d", elements);
    fprintf(out, "%s count %s elements %s\n", what, c, e);
}

/* "pos P byte B [shared S]": where the pointers are.  Between barriers:
 * the shared pointer is final once every rank has made its access, and
 * must stay so until every rank has read it (MPICH's and Open MPI's
 * MPI_File_seek_shared move it before the other ranks have entered). */
static void report_pointers(MPI_File fh, int kind)
{
    MPI_Offset pos, byte, shared;
    MPI_Barrier(MPI_COMM_WORLD);
    if (!failed("get_position", MPI_File_get_position(fh, &pos)) &&
        !failed("get_byte_offset", MPI_File_get_byte_offset(fh, pos, &byte))) {
        fprintf(out, "pos %lld byte %lld", (long long)pos, (long long)byte);
        if (kinds[kind].pointer == SHARED) {
            if (MPI_File_get_position_shared(fh, &shared) == MPI_SUCCESS)
                fprintf(out, " shared %lld", (long long)shared);
            else
                fprintf(out, " shared err");
        }
        fprintf(out, "\n");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_File_sync, MPI_Barrier, MPI_File_sync: what every rank wrote is seen
 * by every rank after it (MPI-3.1 13.6.1); then "size S".  Answers S (-1
 * where MPI_File_get_size failed). */
static MPI_Offset sync_and_size(MPI_File fh)
{
    MPI_Offset size = -1;
    failed("sync", MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    failed("sync", MPI_File_sync(fh));
    if (!failed("get_size", MPI_File_get_size(fh, &size))) fprintf(out, "size %lld\n", (long long)size);
    MPI_Barrier(MPI_COMM_WORLD); /* no rank changes the file before every rank has the size */
    return size;
}

/* The size call: MPI_File_set_size or MPI_File_preallocate to the current
 * size times quarters / 4, plus more bytes.  Answers how many bytes at the
 * start of the file still hold what was there before (the smaller of the
 * sizes before and after): MPI leaves the bytes that either call adds
 * undefined (13.2.4, 13.2.5). */
static MPI_Offset size_call(MPI_File fh, int call, int quarters, int more, MPI_Offset defined)
{
    MPI_Offset size;
    const int rc = MPI_File_get_size(fh, &size);
    MPI_Barrier(MPI_COMM_WORLD); /* no rank resizes before every rank has the size */
    if (failed("get_size", rc)) return defined;
    const MPI_Offset to = size * quarters / 4 + more;
    const int set = call == SET_SIZE_BEFORE || call == SET_SIZE_AFTER;
    fprintf(out, "%s %lld\n", set ? "set_size" : "preallocate", (long long)to);
    if (failed(set ? "set_size" : "preallocate", set ? MPI_File_set_size(fh, to) : MPI_File_preallocate(fh, to)))
        return defined;
    const MPI_Offset after = sync_and_size(fh);
    return after >= 0 && after < size ? after : size;
}

static void round_of(int me, int np, int round)
{
    state = 9001 + (uint64_t)round * 104729;
    char name[4096];
    snprintf(name, sizeof name, "%s.file%d", prefix, round);
    /* A file left by a run cut short goes; deleting a missing file fails,
     * which is fine (MPI_FILE_NULL's handler returns errors). */
    if (me == 0) MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the etype and the filetype */
    const int e = (int)rnd(3);
    const struct leaves *lv = &families[e];
    const MPI_Datatype etype = lv->types[0];
    int esize;
    MPI_Type_size(etype, &esize);
    int ext32 = e > 0 && rnd(4) == 0;
    char fdesc[DESC], mdesc[DESC] = "";
    MPI_Datatype t;
    for (;;) {
        fdesc[0] = 0;
        t = make_type(irnd(1, 3), lv, fdesc);
        MPI_Type_commit(&t);
        if (etype_aligned(t, esize)) break;
        MPI_Type_free(&t);
    }
    int tsize;
    MPI_Aint tlb, text;
    MPI_Type_size(t, &tsize);
    MPI_Type_get_true_extent(t, &tlb, &text);
    const MPI_Aint tile = (tlb + text + esize - 1) / esize * esize + esize * irnd(0, 3);
    const int kind = (int)rnd(NKINDS);
    /* MPICH 4.0.2's MPI_File_iwrite(_at) write native data, and its
     * MPI_File_read_ordered hands the file's bytes over unconverted */
    if (kind == IAT || kind == IINDIVIDUAL || kind == ORDERED) ext32 = 0;
    const int shared = kinds[kind].pointer == SHARED;
    const MPI_Aint span = shared ? tile : np * tile; /* the filetype's extent */
    MPI_Datatype ft;
    MPI_Type_create_resized(t, 0, span, &ft);
    MPI_Type_commit(&ft);
    const MPI_Offset base = 16 * irnd(0, 64);
    const MPI_Offset disp = base + (shared ? 0 : me * tile);

    /* the memory type */
    MPI_Datatype m;
    if (rnd(2) || ext32) { /* MPICH 4.0.2 overruns a buffer on external32 from noncontiguous memory */
        MPI_Type_dup(etype, &m);
        add(mdesc, "%s", lv->names[0]);
    } else {
        /* with its lower bound at 0: MPICH 4.0.2 adds the lower bound of
         * a memory type to the buffer's address twice */
        MPI_Datatype d = make_type(2, lv, mdesc);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(d, &lb, &ext);
        MPI_Type_create_resized(d, 0, (lb + ext + 15) / 16 * 16, &m);
        MPI_Type_free(&d);
    }
    MPI_Type_commit(&m);
    int msize;
    MPI_Type_size(m, &msize);
    const long per_tile = tsize / esize, per_m = msize / esize;

    /* counts (of memory types) and offsets (of etypes): a rank's data takes
     * up to about 2 MiB of file, all ranks' together */
    static const long scale[] = {0, 1, 5, 40, 300, 3000, 20000};
    long c = scale[rnd(7)];
    const long cap = per_tile * ((2L << 20) / span + 1) / (shared ? np : 1);
    if (c > cap) c = cap;
    const long nmax = c == 0 ? 0 : c / per_m > 0 ? c / per_m : 1;
    int n[64];
    MPI_Offset off[64], pre[64];
    for (int i = 0; i < np; i++) {
        n[i] = (int)(rnd(3) == 0 ? rnd((unsigned)nmax + 1) : nmax);
        off[i] = rnd(3) ? irnd(0, (int)per_tile * 2) : 0;
        pre[i] = rnd((unsigned)off[i] + 1);
    }
    const MPI_Offset start = shared ? irnd(0, (int)per_tile) : 0; /* of the shared pointer */
    /* Where the data ends at most: the end of the tile that holds each
     * rank's last etype.  Most rounds first fill the file up to there
     * or beyond from rank 0, so that the holes between the data hold
     * known bytes: Open MPI 4.1's collective writes fill holes past the
     * end of the file with whatever their buffers held. */
    MPI_Offset end = 0;
    for (int i = 0, before = 0; i < np; i++) {
        const long total = (long)n[i] * per_m;
        const MPI_Offset last = (shared ? start + before : off[i]) + total - 1;
        const MPI_Offset e = base + (shared ? 0 : i * tile) + last / per_tile * span + tile;
        if (total > 0 && e > end) end = e;
        before += (int)total;
    }
    const MPI_Offset prefill = rnd(4) ? end + rnd(100) : 0;
    const int atomic = rnd(4) == 0;
    /* The size call.  Reads that meet the end of the file are independent
     * and blocking: Open MPI 4.1 hangs in the others, and MPICH's and
     * Open MPI's collective reads there count the elements asked for.
     * MPI_File_preallocate grows only a one-rank job's empty file, before
     * set_view; else it asks for less than the size.  Open MPI 4.1's copies
     * the file's bytes through the view onto later bytes, and after it grew
     * the empty file of a job of several ranks, a later collective call
     * (MPI_File_set_atomicity) failed on some ranks or hung at times. */
    int call = rnd(2) ? NO_SIZE : irnd(SET_SIZE_BEFORE, PREALLOCATE_SMALLER);
    if (call == SET_SIZE_BEFORE && kind != AT && kind != INDIVIDUAL) call = SET_SIZE_AFTER;
    if (call == PREALLOCATE_FIRST && np > 1) call = PREALLOCATE_SMALLER;
    int quarters = irnd(0, 8), more = rnd(2) ? irnd(0, 5000) : 0;
    if (call == PREALLOCATE_FIRST) more += 1000 * quarters; /* of an empty file */
    if (call == PREALLOCATE_SMALLER) quarters %= 4, more = 0;
    fprintf(out,
            "etype %s, rep %s, filetype %s, tile %ld, base %lld, memory %s, access %s, count %d, offset %lld, "
            "shared start %lld, prefill %lld, atomic %d, size call %s %d/4+%d\n",
            lv->names[0], ext32 ? "external32" : "native", fdesc, (long)tile, (long long)base, mdesc,
            kinds[kind].write, n[me], shared ? 0LL : (long long)off[me], (long long)start, (long long)prefill, atomic,
            size_calls[call], quarters, more);

    struct region w = region_for(m, n[me]), rd = region_for(m, n[me]);
    fill(&w, me);
    clear(&rd);
    MPI_File fh;
    MPI_Status st;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "disable");
    MPI_Info_set(info, "romio_cb_write", "disable");
    const int rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    if (failed("open", rc)) goto done;
    MPI_Offset defined = -1; /* the bytes that the raw read hashes; -1: all */
    if (call == PREALLOCATE_FIRST) size_call(fh, call, quarters, more, defined);
    if (prefill > 0) {
        if (me == 0) {
            unsigned char *bytes = malloc((size_t)prefill);
            for (MPI_Offset i = 0; i < prefill; i++) bytes[i] = (unsigned char)(i * 13 + 0x5A);
            failed("prefill", MPI_File_write_at(fh, 0, bytes, (int)prefill, MPI_BYTE, &st));
            free(bytes);
        }
        sync_and_size(fh);
    }
    if (failed("set_view", MPI_File_set_view(fh, disp, etype, ft, ext32 ? "external32" : "native", MPI_INFO_NULL)))
        goto close;
    {
        MPI_Offset d;
        MPI_Datatype et, vt;
        char rep[MPI_MAX_DATAREP_STRING + 1];
        int ni, na, nd, combiner;
        if (!failed("get_view", MPI_File_get_view(fh, &d, &et, &vt, rep))) {
            fprintf(out, "view disp %lld rep %s\n", (long long)d, rep);
            MPI_Type_get_envelope(vt, &ni, &na, &nd, &combiner);
            if (combiner != MPI_COMBINER_NAMED) MPI_Type_free(&vt);
            MPI_Type_get_envelope(et, &ni, &na, &nd, &combiner);
            if (combiner != MPI_COMBINER_NAMED) MPI_Type_free(&et);
        }
        MPI_Aint fx, mx;
        if (!failed("get_type_extent", MPI_File_get_type_extent(fh, ft, &fx)) &&
            !failed("get_type_extent", MPI_File_get_type_extent(fh, m, &mx)))
            fprintf(out, "extent filetype %ld memory %ld\n", (long)fx, (long)mx);
    }
    if (atomic) failed("set_atomicity", MPI_File_set_atomicity(fh, 1));

    place_pointer(fh, kind, pre[me], off[me], start);
    if (!failed(kinds[kind].write, access_file(kind, 1, fh, off[me], at(&w), n[me], m, &st)))
        report_status("write", &st, m);
    sync_and_size(fh);
    report_pointers(fh, kind);

    if (call == SET_SIZE_BEFORE) defined = size_call(fh, call, quarters, more, defined);
    place_pointer(fh, kind, pre[me], off[me], start);
    if (!failed(kinds[kind].read, access_file(kind, 0, fh, off[me], at(&rd), n[me], m, &st))) {
        fprintf(out, "read %016llx", (unsigned long long)hash_of(&rd));
        report_status("", &st, m);
    }
    report_pointers(fh, kind);
    if (call == SET_SIZE_AFTER || call == PREALLOCATE_SMALLER) defined = size_call(fh, call, quarters, more, defined);

    /* the whole file, as bytes */
    if (!failed("set_view", MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL)) && me == 0) {
        MPI_Offset size;
        if (!failed("get_size", MPI_File_get_size(fh, &size))) {
            const MPI_Offset hashed = defined >= 0 && defined < size ? defined : size;
            struct region raw = {malloc((size_t)hashed + 1), (size_t)hashed, 0};
            memset(raw.mem, 0xEE, raw.bytes);
            if (!failed("read_at", MPI_File_read_at(fh, 0, raw.mem, (int)hashed, MPI_BYTE, &st)))
                fprintf(out, "file %lld %lld %016llx\n", (long long)size, (long long)hashed,
                        (unsigned long long)hash_of(&raw));
            free(raw.mem);
        }
    }
close:
    failed("close", MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) MPI_File_delete(name, MPI_INFO_NULL);
done:
    free(w.mem);
    free(rd.mem);
    MPI_Type_free(&m);
    MPI_Type_free(&ft);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    prefix = argc > 2 ? argv[2] : "";
    return rounds_main(argc, argv, "io_diff", 64, &out, round_of);
}
