/*
 * p2p_match_random: matching under wildcards, several senders and every
 * protocol at once (MPI-3.1 3.5, 3.8).
 *
 * In each batch every rank but 0 sends PER messages to rank 0 with tags
 * 0 .. NT-1 and sizes from 16 B to 150,000 B (eager, and the rendezvous
 * protocols past the eager limit), all by MPI_Isend.  Rank 0 receives them
 * with patterns drawn at random: a source or MPI_ANY_SOURCE, a tag or
 * MPI_ANY_TAG.  A batch is one of
 *   0. receives first: every receive posted (MPI_Irecv), then the messages,
 *      then MPI_Waitall: deep posted queues;
 *   1. messages first: the receives come after every message was sent:
 *      deep queues of waiting messages, large ones included;
 *   2. both at once, no barrier;
 * and in batches 1 and 2 each receive is one of MPI_Recv, MPI_Probe +
 * MPI_Recv, MPI_Iprobe until found + MPI_Recv, MPI_Mprobe + MPI_Mrecv.
 *
 * Every receive can be satisfied: after its PER messages each sender sends,
 * for each tag, one 16-byte filler per receive that fits (that sender, that
 * tag), so no receive waits for a message that another receive took.  Rank
 * 0 then takes what is left with MPI_ANY_SOURCE / MPI_ANY_TAG.
 *
 * Checks, on rank 0 (every message carries its sender, number, tag and
 * length, and bytes that depend on them):
 *   - every message arrives exactly once, intact, with its source, tag and
 *     count in the status; a probe describes the message then received;
 *   - every receive got a message that fits its pattern;
 *   - no overtaking: when a receive got message q of a sender, no earlier
 *     message of that sender that also fits the receive went to a receive
 *     posted later.  (With one receiving thread this is what the standard's
 *     rule implies, whichever came first, the receive or the messages.)
 * All ranks draw the same plan from one seed per batch.
 */
#include "check.h"

enum {
    BATCHES = 12,
    PER = 40,       /* planned messages per sender and batch */
    NT = 5,         /* tags */
    MAXB = 150000,  /* the largest message */
};

static const int sizes[] = {16, 64, 1000, 20000, 33000, 40000, MAXB};

/* The head of every message; the rest are pattern bytes. */
typedef struct {
    int src, seq, tag, len;
} Head;

static unsigned char pattern(int src, int seq, int i)
{
    return (unsigned char)(src * 31 + seq * 7 + i * 13 + (i >> 8));
}

static int fits(int want_src, int want_tag, int src, int tag)
{
    return (want_src == MPI_ANY_SOURCE || want_src == src) && (want_tag == MPI_ANY_TAG || want_tag == tag);
}

/* One batch's plan, the same on every rank. */
typedef struct {
    int mode;
    int nrecv;          /* receives with drawn patterns */
    int *rsrc, *rtag;   /* their patterns */
    int *how;           /* 0 Recv, 1 Probe, 2 Mprobe, 3 Iprobe */
    int *count;         /* count[s]: messages sender s sends */
    int **tag, **len;   /* tag[s][q], len[s][q] */
    int total;          /* messages of all senders */
} Plan;

static Plan draw(int batch, int n)
{
    Plan p;
    check_seed(0x9e3779b97f4a7c15ULL * (unsigned long long)(batch + 1));
    const int senders = n - 1;
    p.nrecv = senders * PER;
    p.rsrc = malloc(sizeof(int) * (size_t)p.nrecv);
    p.rtag = malloc(sizeof(int) * (size_t)p.nrecv);
    p.how = malloc(sizeof(int) * (size_t)p.nrecv);
    for (int r = 0; r < p.nrecv; ++r) {
        const int w = (int)(check_rand() % 6);
        p.rsrc[r] = (w == 1 || w == 3) ? MPI_ANY_SOURCE : 1 + (int)(check_rand() % (unsigned)senders);
        p.rtag[r] = (w == 2 || w == 3) ? MPI_ANY_TAG : (int)(check_rand() % NT);
        p.how[r] = (int)(check_rand() % 4);
    }
    p.mode = (int)(check_rand() % 3);
    p.count = malloc(sizeof(int) * (size_t)n);
    p.tag = malloc(sizeof(int *) * (size_t)n);
    p.len = malloc(sizeof(int *) * (size_t)n);
    p.total = 0;
    for (int s = 1; s < n; ++s) {
        int fill[NT] = {0};
        int fillers = 0;
        for (int r = 0; r < p.nrecv; ++r) {
            for (int t = 0; t < NT; ++t) {
                if (fits(p.rsrc[r], p.rtag[r], s, t)) {
                    fill[t]++;
                    fillers++;
                }
            }
        }
        p.count[s] = PER + fillers;
        p.tag[s] = malloc(sizeof(int) * (size_t)p.count[s]);
        p.len[s] = malloc(sizeof(int) * (size_t)p.count[s]);
        for (int q = 0; q < PER; ++q) {
            p.tag[s][q] = (int)(check_rand() % NT);
            p.len[s][q] = sizes[check_rand() % (sizeof sizes / sizeof sizes[0])];
        }
        for (int q = PER; q < p.count[s];) {
            const int t = (int)(check_rand() % NT);
            if (fill[t] == 0) continue;
            fill[t]--;
            p.tag[s][q] = t;
            p.len[s][q] = 16;
            ++q;
        }
        p.total += p.count[s];
    }
    return p;
}

static void drop(Plan *p, int n)
{
    for (int s = 1; s < n; ++s) {
        free(p->tag[s]);
        free(p->len[s]);
    }
    free(p->count);
    free(p->tag);
    free(p->len);
    free(p->rsrc);
    free(p->rtag);
    free(p->how);
}

static void send_batch(const Plan *p, int me)
{
    const int m = p->count[me];
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)m);
    unsigned char **bufs = malloc(sizeof(unsigned char *) * (size_t)m);
    if (p->mode == 0) CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));  /* after rank 0 posted */
    for (int q = 0; q < m; ++q) {
        const int len = p->len[me][q];
        bufs[q] = malloc((size_t)len);
        for (int i = 0; i < len; ++i) bufs[q][i] = pattern(me, q, i);
        const Head h = {me, q, p->tag[me][q], len};
        memcpy(bufs[q], &h, sizeof h);
        CHECK_MPI(MPI_Isend(bufs[q], len, MPI_BYTE, 0, p->tag[me][q], MPI_COMM_WORLD, &req[q]));
    }
    if (p->mode == 1) CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));  /* before rank 0 receives */
    CHECK_MPI(MPI_Waitall(m, req, MPI_STATUSES_IGNORE));
    for (int q = 0; q < m; ++q) free(bufs[q]);
    free(bufs);
    free(req);
}

/* Receive r of the batch by its drawn method, into `buf`. */
static void receive_one(const Plan *p, int batch, int r, unsigned char *buf, MPI_Status *st)
{
    const int src = p->rsrc[r], tag = p->rtag[r];
    MPI_Status probed;
    if (p->how[r] == 0) {
        CHECK_MPI(MPI_Recv(buf, MAXB, MPI_BYTE, src, tag, MPI_COMM_WORLD, st));
        return;
    }
    if (p->how[r] == 2) {
        MPI_Message msg;
        CHECK_MPI(MPI_Mprobe(src, tag, MPI_COMM_WORLD, &msg, &probed));
        CHECK_MPI(MPI_Mrecv(buf, MAXB, MPI_BYTE, &msg, st));
    } else {
        if (p->how[r] == 1) {
            CHECK_MPI(MPI_Probe(src, tag, MPI_COMM_WORLD, &probed));
        } else {
            int found = 0;
            while (!found) CHECK_MPI(MPI_Iprobe(src, tag, MPI_COMM_WORLD, &found, &probed));
        }
        /* The probed message is the next of its source and tag: this
         * receive must get it. */
        CHECK_MPI(MPI_Recv(buf, MAXB, MPI_BYTE, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD, st));
    }
    int pc = -1, rc = -2;
    CHECK_MPI(MPI_Get_count(&probed, MPI_BYTE, &pc));
    CHECK_MPI(MPI_Get_count(st, MPI_BYTE, &rc));
    Head h;
    memcpy(&h, buf, sizeof h);
    CHECKF(probed.MPI_SOURCE == st->MPI_SOURCE && probed.MPI_TAG == st->MPI_TAG && pc == rc,
           "batch %d receive %d (method %d): probed source %d tag %d count %d, received %d/%d/%d", batch, r,
           p->how[r], probed.MPI_SOURCE, probed.MPI_TAG, pc, st->MPI_SOURCE, st->MPI_TAG, rc);
}

static void receive_batch(const Plan *p, int batch, int n)
{
    unsigned char *bufs = malloc((size_t)p->nrecv * MAXB);
    unsigned char *rest = malloc(MAXB);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)p->nrecv);
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)p->total);
    Head *got = malloc(sizeof(Head) * (size_t)p->total);
    if (p->mode == 0) {
        for (int r = 0; r < p->nrecv; ++r) {
            CHECK_MPI(MPI_Irecv(bufs + (size_t)r * MAXB, MAXB, MPI_BYTE, p->rsrc[r], p->rtag[r], MPI_COMM_WORLD,
                                &req[r]));
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Waitall(p->nrecv, req, st));
    } else {
        if (p->mode == 1) CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int r = 0; r < p->nrecv; ++r) receive_one(p, batch, r, bufs + (size_t)r * MAXB, &st[r]);
    }
    /* What each receive got (the drawn ones, then the drain of the rest). */
    for (int r = 0; r < p->total; ++r) {
        const unsigned char *buf = bufs + (size_t)r * MAXB;
        const int want_src = r < p->nrecv ? p->rsrc[r] : MPI_ANY_SOURCE;
        const int want_tag = r < p->nrecv ? p->rtag[r] : MPI_ANY_TAG;
        if (r >= p->nrecv) {
            CHECK_MPI(MPI_Recv(rest, MAXB, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st[r]));
            buf = rest;
        }
        Head h;
        memcpy(&h, buf, sizeof h);
        int count = -1;
        CHECK_MPI(MPI_Get_count(&st[r], MPI_BYTE, &count));
        CHECKF(h.src >= 1 && h.src < n && h.seq >= 0 && h.seq < p->count[h.src],
               "batch %d receive %d: a message headed sender %d number %d", batch, r, h.src, h.seq);
        CHECKF(h.tag == p->tag[h.src][h.seq] && h.len == p->len[h.src][h.seq] && count == h.len &&
                   st[r].MPI_SOURCE == h.src && st[r].MPI_TAG == h.tag,
               "batch %d receive %d: message %d/%d (tag %d, %d B; sent with tag %d, %d B) with status source %d "
               "tag %d count %d", batch, r, h.src, h.seq, h.tag, h.len, p->tag[h.src][h.seq], p->len[h.src][h.seq],
               st[r].MPI_SOURCE, st[r].MPI_TAG, count);
        CHECKF(fits(want_src, want_tag, h.src, h.tag), "batch %d receive %d for source %d tag %d got %d/%d (tag %d)",
               batch, r, want_src, want_tag, h.src, h.seq, h.tag);
        for (int i = (int)sizeof h; i < count; ++i) {
            CHECKF(buf[i] == pattern(h.src, h.seq, i), "batch %d receive %d: message %d/%d byte %d", batch, r,
                   h.src, h.seq, i);
        }
        got[r] = h;
    }
    for (int s = 1; s < n; ++s) {
        char *seen = calloc((size_t)p->count[s], 1);
        for (int r = 0; r < p->total; ++r) {
            if (got[r].src != s) continue;
            CHECKF(!seen[got[r].seq], "batch %d: message %d/%d received twice", batch, s, got[r].seq);
            seen[got[r].seq] = 1;
        }
        free(seen);
    }
    for (int r = 0; r < p->total; ++r) {
        const int want_src = r < p->nrecv ? p->rsrc[r] : MPI_ANY_SOURCE;
        const int want_tag = r < p->nrecv ? p->rtag[r] : MPI_ANY_TAG;
        for (int later = r + 1; later < p->total; ++later) {
            const Head a = got[r], b = got[later];
            CHECKF(!(b.src == a.src && b.seq < a.seq && fits(want_src, want_tag, b.src, b.tag)),
                   "batch %d (mode %d): receive %d (source %d tag %d) got %d/%d, though %d/%d fits it, was sent "
                   "first, and went to receive %d", batch, p->mode, r, want_src, want_tag, a.src, a.seq, b.src,
                   b.seq, later);
        }
    }
    free(bufs);
    free(rest);
    free(req);
    free(st);
    free(got);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = -1, n = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &n));
    for (int batch = 0; n > 1 && batch < BATCHES; ++batch) {
        Plan p = draw(batch, n);
        if (rank == 0) {
            receive_batch(&p, batch, n);
        } else {
            send_batch(&p, rank);
        }
        /* The drain above must not take the next batch's messages. */
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        drop(&p, n);
    }
    CHECK_MPI(MPI_Finalize());
    return 0;
}
