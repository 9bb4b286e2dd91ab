/*
 * p2p_diff.c: point-to-point messages on random derived datatypes, described
 * by the statuses and the bytes they leave in the receive buffers, for
 * scripts/external-checks.sh's `diff` check.  The same source is built with
 * shmpi's, MPICH's and Open MPI's mpicc and run at the same rank count;
 * diff_compare.py reads the outputs.
 *
 *   mpirun -n N p2p_diff ROUNDS PREFIX [START]
 *
 * Each round draws (alike on every rank) a family of basic types (int, where
 * MPI_2INT counts as two ints, double, char or short) and a shift s: every
 * rank sends to rank + s and receives from rank - s (itself where s is 0),
 * so a receive from MPI_ANY_SOURCE has one sender to match.  The sender
 * starts 1 to 6 messages of random tags (0 to 3, repeats likely), each a
 * count of a random type of the family, with MPI_Isend, _Issend, _Ibsend,
 * _Irsend (to a receive the receiver posted before a barrier) or a persistent
 * MPI_Send_init; messages reach a few MiB.  The receiver takes them in an
 * order it draws, each with a specific tag or MPI_ANY_TAG, a specific source
 * or MPI_ANY_SOURCE, into another random type of the family whose count
 * leaves room (the last element often partly filled), with MPI_Recv,
 * MPI_Irecv, MPI_Probe or an MPI_Iprobe loop and then MPI_Recv, MPI_Mprobe
 * and MPI_Mrecv, an MPI_Improbe loop and MPI_Imrecv, or MPI_Recv_init; or it
 * posts every receive at once and completes them with MPI_Waitall or an
 * MPI_Testall loop.  Non-overtaking decides which message each receive
 * matches.  Then MPI_Sendrecv and MPI_Sendrecv_replace between the same
 * ranks; calls whose outcome MPI fixes (a receive from MPI_PROC_NULL,
 * MPI_Waitany, _Testany, _Testsome and _Waitall over null requests, an
 * MPI_Iprobe and MPI_Improbe that find nothing, MPI_Mprobe of
 * MPI_PROC_NULL, a cancelled receive, MPI_Status_set_elements(_x)); a
 * second batch of messages; and a third that every rank sends to one
 * root, which takes each sender's messages as above (naming the source:
 * with several senders a wildcard source would leave the match open), one
 * sender's receives interleaved at random with another's.
 *
 * Each rank adds to PREFIX.RANK, per round from START (default 0) on, "== R",
 * the arguments, and a line per receive or call: the source and tag of the
 * status, MPI_Get_count, MPI_Get_elements and MPI_Get_elements_x with the
 * receive type, and an FNV-1a hash of the receive buffer's every byte.
 * Ranks are printed as numbers, MPI_PROC_NULL as "null", MPI_ANY_SOURCE as
 * "any", MPI_ANY_TAG as "anytag" and MPI_UNDEFINED as "undef".
 */
#include "diff_common.h"

enum { MAXMSG = 6 };

static FILE *out;

/* The families: every type of a round is built of one basic type, so a
 * message of one type can be received with another. */
static const MPI_Datatype int_leaves[] = {MPI_INT, MPI_2INT}, int_members[] = {MPI_INT};
static const char *const int_names[] = {"int", "2int"};
static const MPI_Datatype double_leaves[] = {MPI_DOUBLE}, char_leaves[] = {MPI_CHAR}, short_leaves[] = {MPI_SHORT};
static const char *const double_names[] = {"double"}, *const char_names[] = {"char"}, *const short_names[] = {"short"};
static const struct leaves families[] = {
    {2, int_leaves, int_names, 1, int_members, int_names},
    {1, double_leaves, double_names, 1, double_leaves, double_names},
    {1, char_leaves, char_names, 1, char_leaves, char_names},
    {1, short_leaves, short_names, 1, short_leaves, short_names},
};

static void put_int(const char *name, int v)
{
    if (v == MPI_UNDEFINED) fprintf(out, " %s undef", name);
    else fprintf(out, " %s %d", name, v);
}

static void put_rank(const char *name, int r)
{
    if (r == MPI_PROC_NULL) fprintf(out, " %s null", name);
    else if (r == MPI_ANY_SOURCE) fprintf(out, " %s any", name);
    else fprintf(out, " %s %d", name, r);
}

/* What a status says of a receive into type t: the count and the
 * elements, whether it was cancelled. */
static void put_counts(const MPI_Status *st, MPI_Datatype t)
{
    int count, elements, cancelled;
    MPI_Count elements_x;
    MPI_Get_count(st, t, &count);
    MPI_Get_elements(st, t, &elements);
    MPI_Get_elements_x(st, t, &elements_x);
    MPI_Test_cancelled(st, &cancelled);
    put_int("count", count);
    put_int("elements", elements);
    fprintf(out, " elements_x %lld cancelled %d", (long long)elements_x, cancelled);
}

/* The same, after the source and the tag. */
static void put_status(const MPI_Status *st, MPI_Datatype t)
{
    put_rank("src", st->MPI_SOURCE);
    if (st->MPI_TAG == MPI_ANY_TAG) fprintf(out, " tag anytag");
    else fprintf(out, " tag %d", st->MPI_TAG);
    put_counts(st, t);
}

static void put_buffer(const struct region *r) { fprintf(out, " hash %016llx\n", (unsigned long long)hash_of(r)); }

/* One message of the round: what is sent, and the receive that takes it. */
struct message {
    int tag;
    MPI_Datatype st, rt; /* send and receive types */
    int scount, rcount;
    int mode;  /* how it is sent: 0 Isend, 1 Issend, 2 Ibsend, 3 Irsend, 4 Send_init */
    int order; /* the receive that takes it, in the plan */
    char sdesc[DESC], rdesc[DESC];
    struct region send;
    MPI_Request sreq;
};

/* A count of t for at most a few MiB. */
static int count_for(MPI_Datatype t)
{
    static const int scale[] = {0, 1, 2, 3, 17, 300, 5000, 40000, 150000};
    long c = scale[rnd(9)];
    while (c > 1 && c * (long)extent_of(t) > (3L << 20)) c /= 4;
    return (int)c;
}

static MPI_Datatype family_type(const struct leaves *fam, char *d)
{
    MPI_Datatype t = make_type(3, fam, d);
    MPI_Type_commit(&t);
    return t;
}

static int basics_of(MPI_Datatype t, MPI_Datatype basic)
{
    int size, bsize;
    MPI_Type_size(t, &size);
    MPI_Type_size(basic, &bsize);
    return size / bsize;
}

/* Which message each receive takes (taken[j]), by MPI's matching rules:
 * receives 0 to pre - 1 are posted before any message is sent, so each
 * message, in the order sent, goes to the earliest of them that matches;
 * the others are posted one at a time once those completed, and each takes
 * the earliest message left that matches.  0 when a receive finds none. */
static int match(int k, const struct message *m, int pre, const int *tags, int *taken)
{
    int used[MAXMSG] = {0};
    for (int j = 0; j < k; j++) taken[j] = -1;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < pre; j++)
            if (taken[j] < 0 && (tags[j] == MPI_ANY_TAG || tags[j] == m[i].tag)) {
                taken[j] = i;
                used[i] = 1;
                break;
            }
    for (int j = 0; j < k; j++) {
        for (int i = 0; j >= pre && i < k; i++)
            if (!used[i] && (tags[j] == MPI_ANY_TAG || tags[j] == m[i].tag)) {
                taken[j] = i;
                used[i] = 1;
                break;
            }
        if (taken[j] < 0) return 0;
    }
    return 1;
}

/* The receive of message plan entry j from source index s, in the order a
 * rank takes them. */
struct take {
    int s, j;
};

/* Sends 1 to MAXMSG messages to dest, and receives as many from each of
 * the nsrc ranks srcs (none where srcs is NULL: nsrc only says how many
 * the receiving rank has, for the draws every rank makes alike), each
 * source's in an order drawn, with one method each; one source's receives
 * are interleaved at random with another's.  With several sources every
 * receive names its source: MPI_ANY_SOURCE would leave which sender it
 * matches open. */
static void messages(int me, int dest, int nsrc, const int *srcs, const struct leaves *fam, int tag_base)
{
    struct message m[MAXMSG];
    const int k = irnd(1, MAXMSG);
    const MPI_Datatype basic = fam->types[0];
    for (int i = 0; i < k; i++) {
        m[i].sdesc[0] = m[i].rdesc[0] = 0;
        m[i].tag = tag_base + irnd(0, 3);
        m[i].st = family_type(fam, m[i].sdesc);
        m[i].scount = count_for(m[i].st);
        m[i].rt = family_type(fam, m[i].rdesc);
        /* room for the message's basic elements, and up to two more
         * elements of the receive type */
        const int per = basics_of(m[i].rt, basic), n = m[i].scount * basics_of(m[i].st, basic);
        m[i].rcount = (n + per - 1) / per + irnd(0, 2);
        m[i].mode = (int)rnd(5);
        m[i].order = -1;
    }
    /* The receives: each asks for the tag of a message left, or for
     * MPI_ANY_TAG; taken one at a time, each gets the earliest message
     * left that it matches. */
    int tags[MAXMSG], any_source[MAXMSG], taken[MAXMSG], methods[MAXMSG];
    int all_at_once = rnd(4) == 0;
    for (int j = 0; j < k; j++) {
        const int pick = (int)rnd((unsigned)(k - j));
        int i = 0;
        for (int left = -1; i < k; i++)
            if (m[i].order < 0 && ++left == pick) break;
        const int any = rnd(3) == 0;
        for (int e = 0; e < i; e++)
            if (m[e].order < 0 && (any || m[e].tag == m[i].tag)) {
                i = e;
                break;
            }
        m[i].order = j;
        tags[j] = any ? MPI_ANY_TAG : m[i].tag;
        any_source[j] = rnd(3) == 0 && nsrc == 1;
        methods[j] = (int)rnd(7);
    }
    /* Receives posted before the sends: all of them, or those up to the
     * last that takes a ready-mode message (which must find its receive
     * posted).  Posted early, they may take other messages than the plan
     * above; where that would leave a ready-mode message without its
     * receive, or a receive without a message, the round sends no message
     * in ready mode, and posts nothing early. */
    int pre = k;
    if (!all_at_once) {
        pre = 0;
        for (int i = 0; i < k; i++)
            if (m[i].mode == 3 && m[i].order + 1 > pre) pre = m[i].order + 1;
    }
    int ok = match(k, m, pre, tags, taken);
    for (int j = 0; ok && j < k; j++) ok = j < pre || m[taken[j]].mode != 3;
    if (!ok) {
        for (int i = 0; i < k; i++) m[i].mode = m[i].mode == 3 ? 0 : m[i].mode;
        all_at_once = 0;
        pre = 0;
        match(k, m, pre, tags, taken);
    }
    /* The order of the receives over the sources: the early ones source
     * by source, then the others interleaved. */
    struct take *order = malloc(sizeof *order * (size_t)(nsrc * k));
    int n_order = 0, *next = malloc(sizeof *next * (size_t)nsrc);
    for (int s = 0; s < nsrc; s++)
        for (next[s] = 0; next[s] < pre; next[s]++) order[n_order++] = (struct take){s, next[s]};
    while (n_order < nsrc * k) {
        int s = (int)rnd((unsigned)nsrc);
        while (next[s] == k) s = (s + 1) % nsrc;
        order[n_order++] = (struct take){s, next[s]++};
    }
    free(next);
    const int testall = rnd(2);

    int bsend_bytes = 0;
    for (int i = 0; i < k; i++) {
        fprintf(out, "message %d tag %d mode %d: %d of %s\n", i, m[i].tag, m[i].mode, m[i].scount, m[i].sdesc);
        if (m[i].mode == 2) {
            int bytes;
            MPI_Pack_size(m[i].scount, m[i].st, MPI_COMM_WORLD, &bytes);
            bsend_bytes += bytes + MPI_BSEND_OVERHEAD;
        }
    }
    for (int j = 0; j < k; j++) {
        const struct message *mj = &m[taken[j]];
        fprintf(out, "receive %d from %s tag %d method %d: message %d, %d of %s\n", j,
                any_source[j] ? "any" : "its source", tags[j] == MPI_ANY_TAG ? -1 : tags[j],
                all_at_once ? -1 : methods[j], taken[j], mj->rcount, mj->rdesc);
    }
    fprintf(out, "posted early %d\n", pre);

    const int nrecv = srcs != NULL ? nsrc : 0;
    struct region *recv = malloc(sizeof *recv * (size_t)(nrecv * k + 1));
    MPI_Request *rreq = malloc(sizeof *rreq * (size_t)(nrecv * k + 1));
    MPI_Status *rstat = malloc(sizeof *rstat * (size_t)(nrecv * k + 1));
    for (int i = 0; i < k; i++) {
        m[i].send = region_for(m[i].st, m[i].scount);
        fill(&m[i].send, me * 8 + i);
    }
    for (int x = 0; x < nrecv * k; x++) {
        recv[x] = region_for(m[taken[x % k]].rt, m[taken[x % k]].rcount);
        clear(&recv[x]);
    }
    char *bsend_buffer = NULL;
    if (bsend_bytes > 0) {
        bsend_buffer = malloc((size_t)bsend_bytes);
        MPI_Buffer_attach(bsend_buffer, bsend_bytes);
    }
    /* Receive x = s * k + j: plan entry j from source srcs[s]. */
#define SOURCE(x) (any_source[(x) % k] ? MPI_ANY_SOURCE : srcs[(x) / k])
    for (int y = 0; y < nrecv * pre; y++) {
        const int x = order[y].s * k + order[y].j;
        const struct message *mj = &m[taken[order[y].j]];
        MPI_Irecv(at(&recv[x]), mj->rcount, mj->rt, SOURCE(x), tags[order[y].j], MPI_COMM_WORLD, &rreq[x]);
    }
    /* every rank's early receives are posted once this ends */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < k; i++) {
        void *buf = at(&m[i].send);
        switch (m[i].mode) {
        case 0: MPI_Isend(buf, m[i].scount, m[i].st, dest, m[i].tag, MPI_COMM_WORLD, &m[i].sreq); break;
        case 1: MPI_Issend(buf, m[i].scount, m[i].st, dest, m[i].tag, MPI_COMM_WORLD, &m[i].sreq); break;
        case 2: MPI_Ibsend(buf, m[i].scount, m[i].st, dest, m[i].tag, MPI_COMM_WORLD, &m[i].sreq); break;
        case 3: MPI_Irsend(buf, m[i].scount, m[i].st, dest, m[i].tag, MPI_COMM_WORLD, &m[i].sreq); break;
        default:
            MPI_Send_init(buf, m[i].scount, m[i].st, dest, m[i].tag, MPI_COMM_WORLD, &m[i].sreq);
            MPI_Start(&m[i].sreq);
            break;
        }
    }
    if (all_at_once && nrecv > 0) {
        if (!testall) {
            MPI_Waitall(nrecv * k, rreq, rstat);
        } else {
            int flag = 0;
            while (!flag) MPI_Testall(nrecv * k, rreq, &flag, rstat);
        }
    }
    for (int y = 0; y < nrecv * k; y++) {
        const int j = order[y].j, x = order[y].s * k + j, src = SOURCE(x);
        const struct message *mj = &m[taken[j]];
        void *buf = at(&recv[x]);
        /* (MPICH leaves a probe's cancelled flag as it was) */
        MPI_Status *st = &rstat[x], probe;
        memset(&probe, 0, sizeof probe);
        MPI_Message msg;
        int flag = 0;
        if (all_at_once) {
            /* completed above */
        } else if (j < pre) {
            MPI_Wait(&rreq[x], st);
        } else {
            switch (methods[j]) {
            case 0: MPI_Recv(buf, mj->rcount, mj->rt, src, tags[j], MPI_COMM_WORLD, st); break;
            case 1:
                MPI_Irecv(buf, mj->rcount, mj->rt, src, tags[j], MPI_COMM_WORLD, &rreq[x]);
                MPI_Wait(&rreq[x], st);
                break;
            case 2:
            case 3:
                if (methods[j] == 2) MPI_Probe(src, tags[j], MPI_COMM_WORLD, &probe);
                else
                    while (!flag) MPI_Iprobe(src, tags[j], MPI_COMM_WORLD, &flag, &probe);
                fprintf(out, "probe %d.%d:", order[y].s, j);
                put_status(&probe, mj->rt);
                fprintf(out, "\n");
                /* the message the probe saw, by its source and tag */
                MPI_Recv(buf, mj->rcount, mj->rt, probe.MPI_SOURCE, probe.MPI_TAG, MPI_COMM_WORLD, st);
                break;
            case 4:
            case 5:
                if (methods[j] == 4) {
                    MPI_Mprobe(src, tags[j], MPI_COMM_WORLD, &msg, &probe);
                    MPI_Mrecv(buf, mj->rcount, mj->rt, &msg, st);
                } else {
                    while (!flag) MPI_Improbe(src, tags[j], MPI_COMM_WORLD, &flag, &msg, &probe);
                    MPI_Imrecv(buf, mj->rcount, mj->rt, &msg, &rreq[x]);
                    MPI_Wait(&rreq[x], st);
                }
                fprintf(out, "mprobe %d.%d:", order[y].s, j);
                put_status(&probe, mj->rt);
                fprintf(out, " message null %d\n", msg == MPI_MESSAGE_NULL);
                break;
            default:
                MPI_Recv_init(buf, mj->rcount, mj->rt, src, tags[j], MPI_COMM_WORLD, &rreq[x]);
                MPI_Start(&rreq[x]);
                MPI_Wait(&rreq[x], st);
                MPI_Request_free(&rreq[x]);
                break;
            }
        }
        fprintf(out, "received %d.%d:", order[y].s, j);
        put_status(st, mj->rt);
        put_buffer(&recv[x]);
    }
#undef SOURCE
    for (int i = 0; i < k; i++) {
        MPI_Wait(&m[i].sreq, MPI_STATUS_IGNORE);
        if (m[i].mode == 4) MPI_Request_free(&m[i].sreq);
    }
    if (bsend_buffer != NULL) {
        void *was;
        int size;
        MPI_Buffer_detach(&was, &size);
        fprintf(out, "detached %d of %d\n", was == bsend_buffer, size == bsend_bytes);
        free(bsend_buffer);
    }
    for (int i = 0; i < k; i++) {
        free(m[i].send.mem);
        MPI_Type_free(&m[i].st);
        MPI_Type_free(&m[i].rt);
    }
    for (int x = 0; x < nrecv * k; x++) free(recv[x].mem);
    free(recv);
    free(rreq);
    free(rstat);
    free(order);
}

/* MPI_Sendrecv between other types of the family, and
 * MPI_Sendrecv_replace. */
static void sendrecvs(int me, int dest, int src, const struct leaves *fam)
{
    char sd[DESC] = "", rd[DESC] = "";
    MPI_Datatype st = family_type(fam, sd), rt = family_type(fam, rd);
    const int scount = count_for(st), per = basics_of(rt, fam->types[0]);
    const int rcount = (scount * basics_of(st, fam->types[0]) + per - 1) / per + irnd(0, 1);
    fprintf(out, "sendrecv %d of %s into %d of %s\n", scount, sd, rcount, rd);
    struct region s = region_for(st, scount), r = region_for(rt, rcount);
    fill(&s, me);
    clear(&r);
    MPI_Status status;
    MPI_Sendrecv(at(&s), scount, st, dest, 5, at(&r), rcount, rt, rnd(2) ? src : MPI_ANY_SOURCE, 5, MPI_COMM_WORLD,
                 &status);
    fprintf(out, "sendrecv:");
    put_status(&status, rt);
    put_buffer(&r);
    free(s.mem);
    free(r.mem);

    /* Sendrecv_replace: one type and count both ways */
    const int count = count_for(st);
    struct region b = region_for(st, count);
    fill(&b, me);
    MPI_Sendrecv_replace(at(&b), count, st, dest, 6, rnd(2) ? src : MPI_ANY_SOURCE, rnd(2) ? 6 : MPI_ANY_TAG,
                         MPI_COMM_WORLD, &status);
    fprintf(out, "sendrecv_replace %d:", count);
    put_status(&status, st);
    put_buffer(&b);
    free(b.mem);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
}

/* Calls whose outcome MPI fixes without a message: MPI_PROC_NULL, null
 * requests, probes that find nothing, a cancelled receive, statuses set by
 * hand. */
static void fixed_outcomes(int src, const struct leaves *fam)
{
    char d[DESC] = "";
    MPI_Datatype t = family_type(fam, d);
    const int count = irnd(0, 5);
    struct region r = region_for(t, count + 1);
    clear(&r);
    fprintf(out, "type %s\n", d);
    MPI_Status st;
    /* a receive from MPI_PROC_NULL: source MPI_PROC_NULL, tag MPI_ANY_TAG,
     * count 0, the buffer untouched */
    MPI_Recv(at(&r), count, t, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st);
    fprintf(out, "recv proc_null:");
    put_status(&st, t);
    put_buffer(&r);

    /* null requests: empty statuses */
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[3];
    int index = -5, flag = -5, outcount = -5, indices[3];
    MPI_Waitany(3, reqs, &index, &st);
    fprintf(out, "waitany null:");
    put_int("index", index);
    put_status(&st, t);
    fprintf(out, "\n");
    MPI_Testany(3, reqs, &index, &flag, &st);
    fprintf(out, "testany null:");
    put_int("index", index);
    fprintf(out, " flag %d", flag);
    put_status(&st, t);
    fprintf(out, "\n");
    MPI_Testsome(3, reqs, &outcount, indices, sts);
    fprintf(out, "testsome null:");
    put_int("outcount", outcount);
    MPI_Waitsome(3, reqs, &outcount, indices, sts);
    fprintf(out, ", waitsome null:");
    put_int("outcount", outcount);
    fprintf(out, "\n");
    MPI_Waitall(3, reqs, sts);
    fprintf(out, "waitall null:");
    put_status(&sts[1], t);
    fprintf(out, "\n");
    MPI_Test(&reqs[0], &flag, &st);
    fprintf(out, "test null: flag %d", flag);
    put_status(&st, t);
    fprintf(out, "\n");

    /* a PROC_NULL request among others */
    MPI_Irecv(at(&r), count, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitany(3, reqs, &index, &st);
    fprintf(out, "waitany proc_null:");
    put_int("index", index);
    put_status(&st, t);
    fprintf(out, " request null %d\n", reqs[1] == MPI_REQUEST_NULL);

    /* nothing to find: tag 30 is never sent */
    MPI_Message msg = MPI_MESSAGE_NO_PROC;
    MPI_Iprobe(src, 30, MPI_COMM_WORLD, &flag, &st);
    fprintf(out, "iprobe nothing: flag %d\n", flag);
    MPI_Improbe(src, 30, MPI_COMM_WORLD, &flag, &msg, &st);
    fprintf(out, "improbe nothing: flag %d\n", flag);
    MPI_Iprobe(MPI_PROC_NULL, 30, MPI_COMM_WORLD, &flag, &st);
    fprintf(out, "iprobe proc_null: flag %d", flag);
    put_status(&st, t);
    fprintf(out, "\n");
    MPI_Mprobe(MPI_PROC_NULL, 30, MPI_COMM_WORLD, &msg, &st);
    fprintf(out, "mprobe proc_null: no_proc %d", msg == MPI_MESSAGE_NO_PROC);
    put_status(&st, t);
    MPI_Mrecv(at(&r), count, t, &msg, &st);
    fprintf(out, " mrecv: null %d", msg == MPI_MESSAGE_NULL);
    put_status(&st, t);
    put_buffer(&r);

    /* a receive that nothing matches, cancelled */
    MPI_Request req;
    MPI_Irecv(at(&r), count, t, src, 31, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    fprintf(out, "cancelled recv: %d request null %d", flag, req == MPI_REQUEST_NULL);
    put_buffer(&r);

    /* statuses set by hand (their source and tag are the cancelled
     * receive's, which MPI leaves undefined): n elements of the basic
     * type, read with t */
    const int per = basics_of(t, fam->types[0]), n = irnd(0, 3 * per);
    MPI_Status_set_elements(&st, fam->types[0], n);
    MPI_Status_set_cancelled(&st, 1);
    fprintf(out, "set %d basic:", n);
    put_counts(&st, fam->types[0]);
    fprintf(out, "\n");
    MPI_Status_set_elements(&st, t, count);
    fprintf(out, "set %d elements of the type:", count);
    put_counts(&st, t);
    fprintf(out, "\n");
    MPI_Status_set_elements_x(&st, t, (MPI_Count)count * 3);
    MPI_Status_set_cancelled(&st, 0);
    fprintf(out, "set_x %d elements of the type:", count * 3);
    put_counts(&st, t);
    fprintf(out, "\n");

    free(r.mem);
    MPI_Type_free(&t);
}

static void round_of(int me, int np, int round)
{
    state = 7919 + (uint64_t)round * 104729;
    const int f = (int)rnd(4), s = np > 1 && rnd(5) != 0 ? irnd(1, np - 1) : 0;
    const int dest = (me + s) % np, src = (me - s + np) % np;
    fprintf(out, "family %s, shift %d\n", families[f].names[0], s);
    messages(me, dest, 1, &src, &families[f], 0);
    sendrecvs(me, dest, src, &families[f]);
    fixed_outcomes(src, &families[f]);
    /* a second batch, its tags above the first's */
    messages(me, dest, 1, &src, &families[f], 10);
    /* every rank (the root too) sends a batch to a root, which takes them
     * source by source, interleaved */
    const int root = (int)rnd((unsigned)np);
    int *all = malloc(sizeof *all * (size_t)np);
    for (int r = 0; r < np; r++) all[r] = r;
    fprintf(out, "fan-in to %d\n", root);
    messages(me, root, np, me == root ? all : NULL, &families[f], 20);
    free(all);
}

int main(int argc, char **argv) { return rounds_main(argc, argv, "p2p_diff", 1 << 20, &out, round_of); }
