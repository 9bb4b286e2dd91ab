/* victim.c: one rank fails in a chosen way while the others wait in MPI_Recv.
 *
 * usage: victim VICTIM HOW
 *   VICTIM  the rank that fails, or -1 for none (then every rank waits for
 *           ever, for tests that signal mpirun or use --timeout)
 *   HOW     kill    raise SIGKILL
 *           segv    write through a null pointer (SIGSEGV)
 *           exit3   exit(3) without MPI_Finalize
 *           return  return 0 from main without MPI_Finalize
 *           abort7  MPI_Abort(MPI_COMM_WORLD, 7)
 *           init2   print "unflushed R" without flushing, then call
 *                   MPI_Init a second time (erroneous: the MPI ends the
 *                   process, and the line must not be lost)
 *           badrank MPI_Send to a rank that does not exist, under the
 *                   default MPI_ERRORS_ARE_FATAL
 *           userclass  MPI_Comm_call_errhandler on MPI_COMM_WORLD (fatal)
 *                   with a code of a class the program added (16384 & 0xff
 *                   is 0), whose string is "victim's own error"
 *           nostring   the same with no string set for the code
 *           badcode    MPI_Comm_call_errhandler on MPI_COMM_WORLD (fatal)
 *                   with 12345678, a code that was never issued
 *
 * Every rank prints "ready R PID" once MPI_Init has returned.  The victim
 * waits 300 ms, so that the others are asleep in MPI_Recv, then prints
 * "dying R" and fails.  Standard MPI only: builds with any MPI's mpicc. */
#define _POSIX_C_SOURCE 200809L  /* nanosleep, write */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int rank = -1;
    int size = 0;
    int value = 0;
    if (argc != 3) {
        fprintf(stderr, "usage: victim VICTIM kill|segv|exit3|return|abort7|init2|badrank|userclass|"
                        "nostring|badcode\n");
        return 2;
    }
    const int victim = atoi(argv[1]);
    const char *how = argv[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("ready %d %ld\n", rank, (long)getpid());
    fflush(stdout);

    if (rank != victim) {
        /* Nobody ever sends this message. */
        const int from = victim >= 0 ? victim : (rank + 1) % size;
        MPI_Recv(&value, 1, MPI_INT, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank %d: MPI_Recv returned, which it must not\n", rank);
        MPI_Finalize();
        return 1;
    }

    sleep_ms(300);
    printf("dying %d\n", rank);
    fflush(stdout);
    if (strcmp(how, "kill") == 0) {
        raise(SIGKILL);
    } else if (strcmp(how, "segv") == 0) {
        /* Not NULL: UndefinedBehaviorSanitizer would report a store to a
         * null pointer and exit 1 instead of taking the signal. */
        volatile int *nowhere = (volatile int *)(uintptr_t)64;
        *nowhere = 1;
    } else if (strcmp(how, "exit3") == 0) {
        exit(3);
    } else if (strcmp(how, "return") == 0) {
        return 0;
    } else if (strcmp(how, "abort7") == 0) {
        MPI_Abort(MPI_COMM_WORLD, 7);
    } else if (strcmp(how, "init2") == 0) {
        printf("unflushed %d\n", rank);
        MPI_Init(&argc, &argv);
    } else if (strcmp(how, "badrank") == 0) {
        MPI_Send(&value, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    } else if (strcmp(how, "userclass") == 0 || strcmp(how, "nostring") == 0) {
        int cls = 0, code = 0;
        MPI_Add_error_class(&cls);
        MPI_Add_error_code(cls, &code);
        if (strcmp(how, "userclass") == 0) MPI_Add_error_string(code, "victim's own error");
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    } else if (strcmp(how, "badcode") == 0) {
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, 12345678);
    }
    fprintf(stderr, "victim: unknown way to fail '%s'\n", how);
    return 2;
}
