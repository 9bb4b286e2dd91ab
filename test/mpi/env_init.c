/*
 * env_init: the environment functions around MPI_Init_thread and
 * MPI_Finalize.
 *
 * - MPI_Initialized and MPI_Finalized work before MPI_Init_thread (both
 *   false) and after MPI_Finalize (both true).
 * - MPI_Init_thread is the first MPI call apart from those two; asked for
 *   MPI_THREAD_MULTIPLE it provides one of the four levels, and
 *   MPI_Query_thread agrees; the calling thread is the main thread.
 *   MPI_INFO_ENV's "thread_level", where there is one, is the level asked
 *   for, not the one provided (MPI-3.1 8.7.2).
 * - MPI_Wtime is monotonic and advances; MPI_Wtick is positive.
 * - MPI_Get_processor_name, MPI_Get_version and MPI_Get_library_version
 *   return sensible, correctly measured values.
 * - MPI_COMM_SELF has size 1 and rank 0; MPI_COMM_WORLD's rank is in range.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include "check.h"

#include <time.h>

/* Before MPI_Init_thread, MPI_COMM_WORLD cannot be used, so failures here
 * exit without MPI_Abort (check_fail does that when MPI is not up). */
static void check_before_init(void)
{
    int flag = -1;
    CHECK(MPI_Initialized(&flag) == MPI_SUCCESS);
    CHECKF(flag == 0, "MPI_Initialized before MPI_Init_thread gave %d", flag);
    flag = -1;
    CHECK(MPI_Finalized(&flag) == MPI_SUCCESS);
    CHECKF(flag == 0, "MPI_Finalized before MPI_Init_thread gave %d", flag);
}

static void check_thread_level(int provided)
{
    CHECKF(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
               provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
           "provided thread level %d is not one of the four levels", provided);
    int queried = -1;
    CHECK_MPI(MPI_Query_thread(&queried));
    CHECKF(queried == provided, "MPI_Query_thread gave %d, MPI_Init_thread provided %d",
           queried, provided);
    int is_main = -1;
    CHECK_MPI(MPI_Is_thread_main(&is_main));
    CHECKF(is_main != 0, "MPI_Is_thread_main is false on the thread that called MPI_Init");
}

static void check_info_thread_level(void)
{
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, value, &flag));
    CHECKF(!flag || strcmp(value, "MPI_THREAD_MULTIPLE") == 0,
           "MPI_INFO_ENV's thread_level is %s, not the MPI_THREAD_MULTIPLE asked for", value);
}

static void check_flags_while_running(void)
{
    int flag = -1;
    CHECK_MPI(MPI_Initialized(&flag));
    CHECKF(flag != 0, "MPI_Initialized is false after MPI_Init_thread");
    flag = -1;
    CHECK_MPI(MPI_Finalized(&flag));
    CHECKF(flag == 0, "MPI_Finalized is true before MPI_Finalize");
}

static void check_clock(void)
{
    double tick = MPI_Wtick();
    CHECKF(tick > 0.0 && tick < 1.0, "MPI_Wtick gave %g s", tick);

    double prev = MPI_Wtime();
    for (int i = 0; i < 100000; ++i) {
        double now = MPI_Wtime();
        CHECKF(now >= prev, "MPI_Wtime went backwards: %.9f after %.9f", now, prev);
        prev = now;
    }
    /* A 20 ms sleep is seen as at least about 20 ms and not hours. */
    double before = MPI_Wtime();
    struct timespec nap = {0, 20 * 1000 * 1000};
    while (nanosleep(&nap, &nap) != 0) {
    }
    double elapsed = MPI_Wtime() - before;
    CHECKF(elapsed >= 0.019 && elapsed < 3600.0, "a 20 ms sleep measured %.6f s", elapsed);
}

static void check_names_and_versions(void)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    memset(name, 'x', sizeof name);
    int len = -1;
    CHECK_MPI(MPI_Get_processor_name(name, &len));
    CHECKF(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "processor name length %d", len);
    CHECKF(name[len] == '\0' && (int)strlen(name) == len,
           "processor name is not a string of the returned length %d", len);

    int version = -1;
    int subversion = -1;
    CHECK_MPI(MPI_Get_version(&version, &subversion));
    CHECKF(version >= 3 && subversion >= 0, "MPI_Get_version gave %d.%d", version, subversion);
    CHECKF(version == MPI_VERSION && subversion == MPI_SUBVERSION,
           "MPI_Get_version gave %d.%d but mpi.h says %d.%d", version, subversion, MPI_VERSION,
           MPI_SUBVERSION);

    char *lib = check_malloc(MPI_MAX_LIBRARY_VERSION_STRING);
    memset(lib, 'x', MPI_MAX_LIBRARY_VERSION_STRING);
    len = -1;
    CHECK_MPI(MPI_Get_library_version(lib, &len));
    CHECKF(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING, "library version length %d", len);
    CHECKF(lib[len] == '\0' && (int)strlen(lib) == len,
           "library version is not a string of the returned length %d", len);
    free(lib);
}

static void check_predefined_comms(void)
{
    int size = -1;
    int rank = -1;
    CHECK_MPI(MPI_Comm_size(MPI_COMM_SELF, &size));
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_SELF, &rank));
    CHECKF(size == 1 && rank == 0, "MPI_COMM_SELF has size %d, rank %d", size, rank);

    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECKF(size >= 1 && rank >= 0 && rank < size, "MPI_COMM_WORLD has size %d, rank %d", size,
           rank);
}

int main(int argc, char **argv)
{
    check_before_init();

    int provided = -1;
    CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS);
    check_flags_while_running();
    check_thread_level(provided);
    check_info_thread_level();
    check_clock();
    check_names_and_versions();
    check_predefined_comms();

    /* Every rank got through; MPI_Finalize must not wait for anything else. */
    sync_all(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Finalize());

    int flag = -1;
    CHECK(MPI_Initialized(&flag) == MPI_SUCCESS);
    CHECKF(flag != 0, "MPI_Initialized is false after MPI_Finalize");
    flag = -1;
    CHECK(MPI_Finalized(&flag) == MPI_SUCCESS);
    CHECKF(flag != 0, "MPI_Finalized is false after MPI_Finalize");
    int version = -1;
    int subversion = -1;
    CHECK(MPI_Get_version(&version, &subversion) == MPI_SUCCESS);
    CHECKF(version == MPI_VERSION && subversion == MPI_SUBVERSION,
           "MPI_Get_version after MPI_Finalize gave %d.%d", version, subversion);
    return 0;
}
