/* soak.c: a message storm (issue 7, point 2).
 *
 * usage: soak [MESSAGES [SEED]]     (defaults: 20000 messages, seed 1)
 *
 * The job sends at least MESSAGES point-to-point messages in rounds.  In each
 * round every rank sends kPerRound messages, each to a random rank (itself
 * included) on one of three communicators (MPI_COMM_WORLD and two duplicates)
 * with a random tag, and a size from 0 to 4 MiB: the tag picks a size class
 * whose cap is 2^tag bytes, tags 0..16 (up to 64 KiB) most of the time and
 * tags 17..22 (up to 4 MiB) one time in 64; the size is uniform from 0 to the
 * cap.  Every rank knows the whole round's plan, because every rank draws it
 * from the same seeded generator, so receivers know what must arrive.
 *
 * A round, as every rank runs it:
 *   1. Draw the plan; list the messages this rank must receive, grouped by
 *      (communicator, tag, source).
 *   2. Post the receives: about half by their source ("named"), posted
 *      first, the rest with MPI_ANY_SOURCE, posted after every named one
 *      (so every message has a receive whatever the arrival order).  Buffers
 *      are exactly as big as the largest message that can match.
 *   3. Post the sends (MPI_Isend), payloads filled from a generator seeded by
 *      (seed, round, source, destination, communicator, tag, sequence).
 *   4. While all of that is in flight, an MPI_Allreduce on a fourth
 *      duplicate checks that every rank is in the same round.
 *   5. Complete everything, alternating MPI_Waitany and MPI_Testsome.
 *   6. Check every receive, walking them in the order they were posted:
 *      MPI's non-overtaking rule says the receives that matched messages
 *      from source s on (communicator, tag) got s's messages in the order
 *      s sent them, so the k-th such receive must hold sequence number k:
 *      its size must be the planned one and its bytes the generator's.
 *      Each rank also adds up a checksum of what it sent and of what it
 *      received.
 *   7. An MPI_Allreduce on the first duplicate (after its point-to-point
 *      traffic) compares the job's totals: messages and bytes sent and
 *      received, and the checksums.  Every 8th round also broadcasts a
 *      buffer on the second duplicate, and every 16th adds a barrier on
 *      MPI_COMM_WORLD.
 * Memory: the resident set (VmRSS) and its peak (VmHWM) of every rank are
 * reported after the first tenth of the rounds and at the end; the job fails
 * when the largest resident set grew by more than 10% + 16 MiB (at a million
 * messages, a leak of about 100 bytes per message sent or received shows).
 *
 * Plain MPI-3.1: it builds and runs unchanged with MPICH and Open MPI. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "check.h"

enum {
    kComms = 3,            /* communicators carrying point-to-point traffic */
    kTags = 23,            /* tag t: sizes 0..2^t bytes; 2^22 = 4 MiB */
    kSmallTags = 17,       /* tags 0..16: up to 64 KiB */
    kPerRound = 24,        /* messages each rank sends per round */
};

/* ---- generators ---- */

static uint64_t splitmix(uint64_t* s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t s = a ^ (b * 0xd6e8feb86659fd93ull);
    return splitmix(&s);
}

/* Fills or checks `bytes` bytes of a message's payload: the stream of a
 * generator seeded by `key`.  Returns the payload's checksum, or, when
 * checking, UINT64_MAX at the first byte that differs (reported). */
static uint64_t payload(unsigned char* buf, size_t bytes, uint64_t key, int check) {
    uint64_t s = key, sum = key;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        const uint64_t w = splitmix(&s);
        if (check) {
            uint64_t got;
            memcpy(&got, buf + i, 8);
            if (got != w) return UINT64_MAX;
        } else {
            memcpy(buf + i, &w, 8);
        }
        sum = (sum ^ w) * 0x100000001b3ull;
    }
    if (i < bytes) {
        const uint64_t w = splitmix(&s);
        for (size_t k = 0; i < bytes; ++i, ++k) {
            const unsigned char b = (unsigned char)(w >> (8 * k));
            if (check && buf[i] != b) return UINT64_MAX;
            if (!check) buf[i] = b;
            sum = (sum ^ b) * 0x100000001b3ull;
        }
    }
    return sum == UINT64_MAX ? 0 : sum;
}

/* ---- the plan ---- */

typedef struct {
    int dst, comm, tag;
    size_t bytes;
    int seq; /* among src's messages to dst on (comm, tag) in this round */
} Msg;

static size_t tag_cap(int tag) { return (size_t)1 << tag; }

/* Draws rank `src`'s messages of `round` into out[kPerRound]. */
static void draw(uint64_t seed, long round, int src, int size, Msg* out) {
    uint64_t s = mix(mix(seed, (uint64_t)round), (uint64_t)src + 1);
    for (int i = 0; i < kPerRound; ++i) {
        Msg* m = &out[i];
        m->dst = (int)(splitmix(&s) % (uint64_t)size);
        m->comm = (int)(splitmix(&s) % kComms);
        if (splitmix(&s) % 64 == 0) {
            m->tag = kSmallTags + (int)(splitmix(&s) % (kTags - kSmallTags));
        } else {
            m->tag = (int)(splitmix(&s) % kSmallTags);
        }
        m->bytes = (size_t)(splitmix(&s) % (tag_cap(m->tag) + 1));
        m->seq = 0;
        for (int j = 0; j < i; ++j) {
            if (out[j].dst == m->dst && out[j].comm == m->comm && out[j].tag == m->tag) ++m->seq;
        }
    }
}

static uint64_t msg_key(uint64_t seed, long round, int src, const Msg* m) {
    uint64_t k = mix(seed ^ 0x5eed, (uint64_t)round);
    k = mix(k, (uint64_t)src);
    k = mix(k, (uint64_t)m->dst);
    k = mix(k, (uint64_t)(m->comm * kTags + m->tag));
    return mix(k, (uint64_t)m->seq);
}

/* ---- memory ---- */

/* The "VmRSS:" or "VmHWM:" line of /proc/self/status in KiB, or -1. */
static long status_kib(const char* field) {
    FILE* f = fopen("/proc/self/status", "r");
    if (f == NULL) return -1;
    char line[256];
    long kib = -1;
    const size_t n = strlen(field);
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, field, n) == 0) {
            kib = strtol(line + n, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kib;
}

typedef struct {
    long rss_max, hwm_max;
} Memory;

static Memory memory_of_job(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    long mine[2] = {status_kib("VmRSS:"), status_kib("VmHWM:")}, most[2];
    MPI_Allreduce(mine, most, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    Memory m = {most[0], most[1]};
    return m;
}

/* ---- one round ---- */

typedef struct {
    MPI_Request* reqs;   /* receives first, then sends */
    unsigned char** bufs;
    int* src;            /* named source, or MPI_ANY_SOURCE */
    int* comm;
    int* tag;
    size_t* cap;
    int* got_src;        /* filled at completion */
    int* got_bytes;
    int capacity;
} Slots;

static void slots_reserve(Slots* s, int n) {
    if (n <= s->capacity) return;
    s->reqs = realloc(s->reqs, (size_t)n * sizeof *s->reqs);
    s->bufs = realloc(s->bufs, (size_t)n * sizeof *s->bufs);
    s->src = realloc(s->src, (size_t)n * sizeof *s->src);
    s->comm = realloc(s->comm, (size_t)n * sizeof *s->comm);
    s->tag = realloc(s->tag, (size_t)n * sizeof *s->tag);
    s->cap = realloc(s->cap, (size_t)n * sizeof *s->cap);
    s->got_src = realloc(s->got_src, (size_t)n * sizeof *s->got_src);
    s->got_bytes = realloc(s->got_bytes, (size_t)n * sizeof *s->got_bytes);
    CHECK(s->reqs && s->bufs && s->src && s->comm && s->tag && s->cap && s->got_src && s->got_bytes);
    s->capacity = n;
}

static void slots_free(Slots* s) {
    free(s->reqs); free(s->bufs); free(s->src); free(s->comm); free(s->tag); free(s->cap);
    free(s->got_src); free(s->got_bytes);
}

typedef struct {
    long sent, received;
    long long bytes_sent, bytes_received;
    uint64_t sum_sent, sum_received;
} Totals;

static void run_round(uint64_t seed, long round, int rank, int size, const MPI_Comm* comms,
                      MPI_Comm coll, Msg* plan, Slots* sl, Totals* t) {
    /* 1. The plan: plan[s * kPerRound + i] is s's i-th message. */
    for (int s = 0; s < size; ++s) draw(seed, round, s, size, &plan[(size_t)s * kPerRound]);
    int nrecv = 0;
    for (int i = 0; i < size * kPerRound; ++i) nrecv += plan[i].dst == rank;
    slots_reserve(sl, nrecv + kPerRound);

    /* 2. Receives.  A coin per message decides how many of source s's
     *    messages on (comm, tag) get named receives: those are posted first,
     *    so the j-th named one matches s's message j and is sized for it.
     *    ANY_SOURCE buffers fit the largest message on their (comm, tag). */
    uint64_t coin = mix(mix(seed, (uint64_t)round), 0xc0ffee + (uint64_t)rank);
    size_t any_cap[kComms][kTags];
    memset(any_cap, 0, sizeof any_cap);
    int named_posted[size][kComms][kTags];
    memset(named_posted, 0, sizeof named_posted);
    int r = 0;
    for (int i = 0; i < size * kPerRound; ++i) {
        const Msg* m = &plan[i];
        if (m->dst != rank) continue;
        if (any_cap[m->comm][m->tag] < m->bytes) any_cap[m->comm][m->tag] = m->bytes;
    }
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < size * kPerRound; ++i) {
            const Msg* m = &plan[i];
            if (m->dst != rank) continue;
            const int src = i / kPerRound;
            const int named = (int)((mix(coin, (uint64_t)i) >> 7) & 1);
            if (pass == 0 && named) {
                const int j = named_posted[src][m->comm][m->tag]++;
                const Msg* first = NULL;  /* src's message j on (comm, tag) */
                for (int k = 0; k < kPerRound; ++k) {
                    const Msg* cand = &plan[(size_t)src * kPerRound + k];
                    if (cand->dst == rank && cand->comm == m->comm && cand->tag == m->tag &&
                        cand->seq == j) first = cand;
                }
                CHECK(first != NULL);
                sl->src[r] = src;
                sl->cap[r] = first->bytes;
            } else if (pass == 1 && !named) {
                sl->src[r] = MPI_ANY_SOURCE;
                sl->cap[r] = any_cap[m->comm][m->tag];
            } else {
                continue;
            }
            sl->comm[r] = m->comm;
            sl->tag[r] = m->tag;
            sl->bufs[r] = malloc(sl->cap[r] > 0 ? sl->cap[r] : 1);
            CHECK(sl->bufs[r] != NULL);
            CHECK_MPI(MPI_Irecv(sl->bufs[r], (int)sl->cap[r], MPI_BYTE, sl->src[r], m->tag,
                                comms[m->comm], &sl->reqs[r]));
            ++r;
        }
    }
    CHECK(r == nrecv);

    /* 3. Sends. */
    const Msg* mine = &plan[(size_t)rank * kPerRound];
    for (int i = 0; i < kPerRound; ++i) {
        const Msg* m = &mine[i];
        const int k = nrecv + i;
        sl->bufs[k] = malloc(m->bytes > 0 ? m->bytes : 1);
        CHECK(sl->bufs[k] != NULL);
        t->sum_sent += payload(sl->bufs[k], m->bytes, msg_key(seed, round, rank, m), 0);
        t->sent++;
        t->bytes_sent += (long long)m->bytes;
        CHECK_MPI(MPI_Isend(sl->bufs[k], (int)m->bytes, MPI_BYTE, m->dst, m->tag,
                            comms[m->comm], &sl->reqs[k]));
    }

    /* 4. A collective while the point-to-point traffic is in flight. */
    long here[2] = {round, -round}, most[2];
    CHECK_MPI(MPI_Allreduce(here, most, 2, MPI_LONG, MPI_MAX, coll));
    CHECKF(most[0] == round && -most[1] == round, "round %ld: another rank is in round %ld/%ld",
           round, most[0], -most[1]);

    /* 5. Completion: Waitany and Testsome in turn. */
    const int n = nrecv + kPerRound;
    int left = n, turn = 0;
    int idx[n > 0 ? n : 1];
    MPI_Status st[n > 0 ? n : 1];
    while (left > 0) {
        int done = 0;
        if (turn++ % 2 == 0) {
            CHECK_MPI(MPI_Waitany(n, sl->reqs, &idx[0], &st[0]));
            CHECK(idx[0] != MPI_UNDEFINED);
            done = 1;
        } else {
            CHECK_MPI(MPI_Testsome(n, sl->reqs, &done, idx, st));
            CHECK(done != MPI_UNDEFINED);
        }
        for (int j = 0; j < done; ++j) {
            if (idx[j] < nrecv) {
                sl->got_src[idx[j]] = st[j].MPI_SOURCE;
                CHECK_MPI(MPI_Get_count(&st[j], MPI_BYTE, &sl->got_bytes[idx[j]]));
                CHECKF(st[j].MPI_TAG == sl->tag[idx[j]], "receive %d: tag %d, posted for %d",
                       idx[j], st[j].MPI_TAG, sl->tag[idx[j]]);
            }
        }
        left -= done;
    }

    /* 6. Check the receives in posting order. */
    int next_seq[size][kComms][kTags];
    memset(next_seq, 0, sizeof next_seq);
    for (int k = 0; k < nrecv; ++k) {
        const int s = sl->got_src[k], c = sl->comm[k], tg = sl->tag[k];
        CHECKF(s >= 0 && s < size, "receive %d: source %d", k, s);
        CHECKF(sl->src[k] == MPI_ANY_SOURCE || sl->src[k] == s,
               "receive %d: posted for source %d, matched %d", k, sl->src[k], s);
        const int seq = next_seq[s][c][tg]++;
        const Msg* m = NULL;
        for (int i = 0; i < kPerRound; ++i) {
            const Msg* cand = &plan[(size_t)s * kPerRound + i];
            if (cand->dst == rank && cand->comm == c && cand->tag == tg && cand->seq == seq) m = cand;
        }
        CHECKF(m != NULL, "round %ld: a message from %d on comm %d tag %d beyond the %d planned",
               round, s, c, tg, seq);
        CHECKF((size_t)sl->got_bytes[k] == m->bytes,
               "round %ld: message %d from %d on comm %d tag %d: %d bytes, planned %zu "
               "(lost, duplicated or overtaken?)", round, seq, s, c, tg, sl->got_bytes[k], m->bytes);
        const uint64_t sum = payload(sl->bufs[k], m->bytes, msg_key(seed, round, s, m), 1);
        CHECKF(sum != UINT64_MAX, "round %ld: message %d from %d on comm %d tag %d (%zu bytes): "
               "payload differs", round, seq, s, c, tg, m->bytes);
        t->sum_received += sum;
        t->received++;
        t->bytes_received += (long long)m->bytes;
    }
    for (int k = 0; k < n; ++k) free(sl->bufs[k]);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long messages = argc > 1 ? atol(argv[1]) : 20000;
    const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    CHECKF(messages > 0, "MESSAGES must be positive, not '%s'", argv[1]);
#ifdef __GLIBC__
    /* A fixed threshold (the default one moves up after the first large
     * free): large payloads are mapped and unmapped, so the resident set
     * measures the MPI library, not the allocator's caches. */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif

    MPI_Comm comms[kComms], coll, bcast_comm;
    comms[0] = MPI_COMM_WORLD;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[2]));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &coll));
    bcast_comm = comms[2];

    const long rounds = (messages + (long)kPerRound * size - 1) / ((long)kPerRound * size);
    Msg* plan = malloc((size_t)size * kPerRound * sizeof *plan);
    CHECK(plan != NULL);
    Slots sl = {0};
    Totals t = {0};
    Memory warm = {0, 0};
    const long warm_round = rounds / 10;
    double start = MPI_Wtime();

    for (long round = 0; round < rounds; ++round) {
        run_round(seed, round, rank, size, comms, coll, plan, &sl, &t);

        /* 7. The job's totals, on a duplicate that also carried messages. */
        long long mine[6] = {t.sent, t.received, t.bytes_sent, t.bytes_received,
                             (long long)(t.sum_sent & 0xffffffffu), (long long)(t.sum_received & 0xffffffffu)};
        long long all[6];
        CHECK_MPI(MPI_Allreduce(mine, all, 6, MPI_LONG_LONG, MPI_SUM, comms[1]));
        CHECKF(all[0] == all[1] && all[2] == all[3],
               "round %ld: the job sent %lld messages (%lld bytes) and received %lld (%lld bytes)",
               round, all[0], all[2], all[1], all[3]);
        /* Each rank's sums are taken mod 2^32, so the job's agree mod 2^32. */
        CHECKF(((all[4] - all[5]) & 0xffffffffll) == 0,
               "round %ld: checksums of sent and received payloads differ", round);
        if (round % 8 == 0) {
            unsigned char b[257];
            const uint64_t key = mix(seed, (uint64_t)round ^ 0xbca57);
            if (rank == (int)(round / 8 % (long)size)) payload(b, sizeof b, key, 0);
            CHECK_MPI(MPI_Bcast(b, (int)sizeof b, MPI_BYTE, (int)(round / 8 % (long)size), bcast_comm));
            CHECK(payload(b, sizeof b, key, 1) != UINT64_MAX);
        }
        if (round % 16 == 0) CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (round == warm_round) {
            warm = memory_of_job();
            if (rank == 0) {
                printf("soak: %d ranks, after round %ld of %ld: largest VmRSS %ld KiB, VmHWM %ld KiB\n",
                       size, round + 1, rounds, warm.rss_max, warm.hwm_max);
                fflush(stdout);
            }
        }
    }

    const Memory end = memory_of_job();
    long long totals[2] = {t.sent, t.bytes_sent}, job[2];
    MPI_Reduce(totals, job, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("soak: %d ranks, %ld rounds, %lld messages, %.1f MiB, %.1f s, seed %llu\n", size,
               rounds, job[0], job[1] / 1048576.0, MPI_Wtime() - start, (unsigned long long)seed);
        printf("soak: at the end: largest VmRSS %ld KiB, VmHWM %ld KiB\n", end.rss_max, end.hwm_max);
        fflush(stdout);
    }
    long allowed = warm.rss_max + warm.rss_max / 10 + 16 * 1024;
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer keeps freed blocks resident in its quarantine (256 MiB
     * by default) before it reuses them: growth up to that is its own. */
    allowed += 256 * 1024;
#endif
    CHECKF(end.rss_max <= allowed,
           "memory grew: largest VmRSS %ld KiB at the end, %ld KiB after the first tenth", end.rss_max,
           warm.rss_max);

    slots_free(&sl);
    free(plan);
    MPI_Comm_free(&coll);
    MPI_Comm_free(&comms[2]);
    MPI_Comm_free(&comms[1]);
    MPI_Finalize();
    return 0;
}
