/*
 * link_probe: how long one cache line takes to travel from one CPU to
 * another right now, the floor under every small message between two ranks.
 *
 * Two processes, pinned to the first two CPUs this one may use, hand a
 * counter back and forth through a shared line (each side waits for the
 * other's value, then answers); the time per hand-over is half a round trip.
 * Virtual machines do not always give the same answer: the 2-CPU VMs this
 * project is measured on switch for seconds or minutes between about 0.05
 * and 0.25 us (docs/BENCHMARKS.md), and every MPI slows alike then.  The
 * compare scripts (scripts/bench-compare.sh, bench/dtype_compare.sh, through
 * bench/steady.sh) run this before and after each benchmark run and repeat a
 * run that a slow stretch hit.
 *
 * With --osu, the least time coll_bench's default pattern allows two ranks
 * instead, with no MPI library in the way.  coll_bench times each small
 * collective after an untimed barrier (the pattern of the OSU
 * micro-benchmarks); here each round is the least such a round can be: a
 * barrier over two lines (each side stores the round's number, then waits
 * for the other's), then a timed step in which the first process (the
 * sender) stores 8 bytes and a sequence number in its own line and the other
 * (the receiver) waits for them, as a Bcast's root and a Reduce's or
 * Gather's non-root do.  Each side times its step with clock_gettime, as
 * MPI_Wtime does; the medians of the two sides and their mean are the floor
 * under coll_bench's "avg" for an 8-byte Bcast, Reduce or Gather with 2
 * ranks.  The receiver waits for two crossings (the sender must first see
 * the barrier end, then its data must come back), the sender for none.
 *
 * With --switch, what a switch between two processes on one CPU costs, the
 * price of every wait when ranks outnumber CPUs: both processes are pinned
 * to the first CPU this one may use and hand the counter back and forth as
 * above, but each calls sched_yield() between its looks, as shmpi's waits
 * do when more ranks are awake than CPUs; each hand-over is one switch.
 *
 * Plain C and POSIX, no MPI.  usage: link_probe [--iters N] [--osu | --switch]
 * Prints "link_probe: T us one way, CPU A <-> CPU B", with --osu
 * "link_probe --osu: sender S us, receiver R us, mean M us (timer T us),
 * CPU A <-> CPU B", with --switch "link_probe --switch: T us a switch,
 * two processes on CPU A".  Exits 77 (test harnesses' "skipped") when this
 * process may use fewer than two CPUs (but for --switch), and 1 when the
 * other side does not answer within 5 seconds.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Each side's counter on its own 128 bytes (adjacent-line prefetch). */
struct link {
    _Alignas(128) atomic_long ping; /* written by the parent */
    _Alignas(128) atomic_long pong; /* written by the child */
    /* --osu: the barrier's arrivals (arrive[0] written by the parent,
     * arrive[1] by the child), the parent's published round, and each
     * side's median (median[1] written by the child before it exits; the
     * parent reads it after waitpid). */
    _Alignas(128) atomic_long arrive[2];
    _Alignas(128) atomic_long seq;
    long value; /* published by seq */
    _Alignas(128) double median[2];
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s) != 0) {
        perror("link_probe: sched_setaffinity");
        _exit(1);
    }
}

/* --switch: every look that finds nothing yields the CPU. */
static int yielding = 0;

/* Waits until *flag holds `want`; 0 when it does, -1 after `limit`
 * seconds.  The clock is read once every 4096 polls (every 64 when they
 * yield). */
static int await(atomic_long *flag, long want, double limit)
{
    const double start = now();
    const unsigned every = yielding ? 64 : 4096;
    for (unsigned polls = 1;; ++polls) {
        /* Acquire: nothing else is exchanged, but it keeps each side's
         * answer after its read, as a message flag's would be. */
        if (atomic_load_explicit(flag, memory_order_acquire) >= want)
            return 0;
        if (yielding)
            sched_yield();
        if (polls % every == 0 && now() - start > limit)
            return -1;
    }
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* --osu: side `me`'s rounds (side 0, the parent, sends); its median step
 * time in us, or -1 if the other side stopped answering or the receiver
 * read wrong values. */
static double osu_rounds(struct link *l, int me, long iters, double limit)
{
    double *times = malloc((size_t)iters * sizeof *times);
    if (times == NULL)
        return -1;
    long sum = 0;
    int ok = 1;
    for (long k = 1; k <= iters && ok; ++k) {
        /* Release: orders nothing but the arrival itself. */
        atomic_store_explicit(&l->arrive[me], k, memory_order_release);
        if (await(&l->arrive[!me], k, limit) != 0) {
            ok = 0;
            break;
        }
        const double t0 = now();
        if (me == 0) {
            l->value = 3 * k;
            /* Release: publishes value to the receiver's acquire. */
            atomic_store_explicit(&l->seq, k, memory_order_release);
        } else {
            ok = await(&l->seq, k, limit) == 0;
            sum += l->value;
        }
        times[k - 1] = now() - t0;
    }
    if (ok && me == 1 && sum != 3 * (iters * (iters + 1) / 2)) {
        fprintf(stderr, "link_probe: the receiver read wrong values\n");
        ok = 0;
    }
    if (!ok) {
        free(times);
        return -1;
    }
    qsort(times, (size_t)iters, sizeof *times, by_value);
    const double median = times[iters / 2] * 1e6;
    free(times);
    return median;
}

int main(int argc, char **argv)
{
    long iters = 200000;
    int osu = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc && atol(argv[i + 1]) > 0) {
            iters = atol(argv[++i]);
        } else if (strcmp(argv[i], "--osu") == 0 && !yielding) {
            osu = 1;
        } else if (strcmp(argv[i], "--switch") == 0 && !osu) {
            yielding = 1;
        } else {
            fprintf(stderr, "usage: link_probe [--iters N] [--osu | --switch]\n");
            return 2;
        }
    }
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        perror("link_probe: sched_getaffinity");
        return 1;
    }
    int cpus[2], found = 0;
    for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
        if (CPU_ISSET(c, &allowed))
            cpus[found++] = c;
    if (yielding && found > 0) {
        cpus[1] = cpus[0];
    } else if (found < 2) {
        fprintf(stderr, "link_probe: needs two CPUs, this process may use %d\n", found);
        return 77;
    }
    struct link *l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (l == MAP_FAILED) {
        perror("link_probe: mmap");
        return 1;
    }
    atomic_init(&l->ping, 0);
    atomic_init(&l->pong, 0);
    atomic_init(&l->arrive[0], 0);
    atomic_init(&l->arrive[1], 0);
    atomic_init(&l->seq, 0);
    const double limit = 5.0;
    const pid_t child = fork();
    if (child < 0) {
        perror("link_probe: fork");
        return 1;
    }
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pin(cpus[1]);
        if (osu) {
            l->median[1] = osu_rounds(l, 1, iters, limit);
            _exit(l->median[1] < 0 ? 1 : 0);
        }
        for (long i = 1; i <= iters; ++i) {
            if (await(&l->ping, i, limit) != 0)
                _exit(1);
            /* Release: pairs with the parent's acquire of the answer. */
            atomic_store_explicit(&l->pong, i, memory_order_release);
        }
        _exit(0);
    }
    pin(cpus[0]);
    const double t0 = now();
    int ok = 1;
    if (osu) {
        l->median[0] = osu_rounds(l, 0, iters, limit);
        ok = l->median[0] >= 0;
    }
    for (long i = 1; i <= iters && ok && !osu; ++i) {
        /* Release: pairs with the child's acquire of the question. */
        atomic_store_explicit(&l->ping, i, memory_order_release);
        ok = await(&l->pong, i, limit) == 0;
    }
    const double elapsed = now() - t0;
    if (!ok)
        kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "link_probe: no answer from CPU %d within %.0f s\n", cpus[1], limit);
        return 1;
    }
    if (osu) {
        /* The empty timed region: two clock reads, as in coll_bench. */
        const double f0 = now();
        for (int i = 0; i < 1000; ++i)
            (void)now();
        printf("link_probe --osu: sender %.3f us, receiver %.3f us, mean %.3f us (timer %.3f us), "
               "CPU %d <-> CPU %d\n",
               l->median[0], l->median[1], (l->median[0] + l->median[1]) / 2, (now() - f0) / 1000 * 1e6, cpus[0],
               cpus[1]);
        return 0;
    }
    if (yielding) {
        printf("link_probe --switch: %.3f us a switch, two processes on CPU %d\n",
               elapsed / (double)iters / 2 * 1e6, cpus[0]);
        return 0;
    }
    printf("link_probe: %.3f us one way, CPU %d <-> CPU %d\n", elapsed / (double)iters / 2 * 1e6, cpus[0],
           cpus[1]);
    return 0;
}
