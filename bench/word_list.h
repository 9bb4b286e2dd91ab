/*
 * word_list.h: reads a comma list of names ("p2p,test") as bits, for the
 * MPI programs in bench/ that every MPI's mpicc builds (standard C only).
 */
#ifndef SHMPI_BENCH_WORD_LIST_H
#define SHMPI_BENCH_WORD_LIST_H

#include <string.h>

/* Bit i set for every word of `list` equal to names[i] (of n); -1 when a
 * word names none. */
static int bench_word_bits(const char *list, const char *const names[], int n)
{
    int bits = 0;
    while (*list != '\0') {
        const size_t len = strcspn(list, ",");
        int found = -1;
        for (int i = 0; i < n; ++i)
            if (strlen(names[i]) == len && strncmp(list, names[i], len) == 0)
                found = i;
        if (found < 0)
            return -1;
        bits |= 1 << found;
        list += len;
        if (*list == ',')
            ++list;
    }
    return bits;
}

#endif
