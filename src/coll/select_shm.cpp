// Which shared-memory variant runs a call that asked for "shm": by size,
// the same choice on every member (sizes agree, and single_copy() and
// kernel_copies_slow() are the same everywhere).  The thresholds are
// ShmTuning's (SHMPI_COLL_SHM_DIRECT, SHMPI_COLL_SHM_RSAG); docs/DESIGN.md
// explains them.  Where mpirun found the kernel's copies slow and lines
// crossing between CPUs fast (SHMPI_KERNEL_COPIES,
// tools/launcher/copy_probe.hpp), Bcast, Allreduce and the Reduce of up to
// 4 members keep the tree at every size: the single copies (one kernel
// copy) lose to the cells (two memcpy) there.  Measured on the 2-CPU AMD
// EPYC VM whose kernel copies 64 KiB-1 MiB 3-5 times slower than memcpy,
// while its lines crossed in 0.06 us, coll_bench, us, tree against the
// other default, in alternating rounds:
//   Reduce 1 MiB: 2 ranks 101-110 / 131-164 (push), 4 ranks 354-532 /
//     499-778 in 4 of 5 rounds, 8 ranks even (1007-1326 / 1040-1414);
//     4 MiB, 8 ranks: 5197-7212 / 5288-5970, so push stays there;
//   Allreduce: 2 ranks 1 MiB 146-201 / 177-216 (rsag; three sets of
//     rounds, the tree ahead in two, even in one), 4 ranks 1 MiB
//     620-678 / 851-1364, 8 ranks 1 MiB 1926-2282 / 2711-3332 (push) and
//     4 MiB 8795-9390 / 11648-13126;
//   Bcast, 2 ranks, four rounds: 64 KiB 5.3-6.3 / 7.2-12.5 (direct),
//     1 MiB 87-112 / 100-151.
// docs/BENCHMARKS.md (session 38) has these and the slow stretches.
#include "coll/shm_team.hpp"

namespace shmpi::coll {

// These are the "shm" rows of select.cpp's tables, which only run() calls,
// after it has made the team's first call probe single copies: so they take
// team.shm as it is instead of ready(team), whose possible probe (a call)
// made each of them save every argument before it went on to the algorithm.

bool bcast_shm(const Team& team, void* buf, std::int64_t bytes, int root, Landing* land, Source* source) {
    ShmTeam* shm = team.shm;  // run() has probed single copies (select.cpp)
    if (shm == nullptr) return false;
    // Single copies win with one reader only.  Measured (docs/COLLECTIVES.md,
    // coll_bench, µs at 1 MiB, direct against tree): 50 against 99 at 2
    // members, but 307 against 250 at 3 and 933 against 763 at 8 on 2 CPUs,
    // and 708 against 199 at 8, 1624 against 216 at 16 members on 16 cores.
    // Our reading: readers that pin the same pages of the root's buffer at
    // once queue on them (unproven), where the tree's levels copy different
    // cells in parallel.
    if (shm->size() == 2 && bytes >= shm->tuning().direct_min && !shm->kernel_copies_slow() &&
        shm->single_copy()) {
        return bcast_shm_direct(team, buf, bytes, root, land, source);
    }
    return bcast_shm_tree(team, buf, bytes, root, land, source);
}

bool reduce_shm(const Team& team, const void* send, void* recv, std::int64_t count,
                const Reduction& red, int root) {
    ShmTeam* shm = team.shm;  // run() has probed single copies (select.cpp)
    if (shm == nullptr) return false;
    // Measured on 2 CPUs (docs/COLLECTIVES.md): the tree wins up to 128 KiB
    // at 2, 4 and 8 members; push from 256 KiB.  Slow kernel copies: the
    // tree up to 4 members, push from 4 × SHMPI_COLL_SHM_RSAG beyond.
    const std::int64_t rsag_min = shm->tuning().rsag_min;
    const bool slow = shm->kernel_copies_slow();
    if ((!slow || shm->size() > 4) && count * red.elem_bytes >= (slow ? 4 * rsag_min : rsag_min) &&
        shm->single_copy()) {
        // Declines (having touched nothing) only past 2^8 members.
        if (reduce_shm_push(team, send, recv, count, red, root)) return true;
        return reduce_shm_rsag(team, send, recv, count, red, root);
    }
    return reduce_shm_tree(team, send, recv, count, red, root);
}

bool allreduce_shm(const Team& team, const void* send, void* recv, std::int64_t count,
                   const Reduction& red) {
    ShmTeam* shm = team.shm;  // run() has probed single copies (select.cpp)
    if (shm == nullptr) return false;
    // Measured on 2 CPUs with 2 members (docs/COLLECTIVES.md): the tree
    // wins below 128 KiB; beyond, rsag, whose two halves run in parallel.
    // With a CPU each, up to 4 members take rsag from 256 KiB; 5 or
    // more members keep the tree up to 1 MiB and take rsag from there: on
    // 16 cores push was the slowest of the three (8 members, 1 MiB: tree
    // 853, rsag 895, push 1423 µs; 16 members, 4 MiB: rsag 3941, tree
    // 5763, push 7274), its parents taking several children's writes at
    // once.  Members that outnumber the CPUs keep the tree at every size
    // (the 2-CPU table that put rsag and push there is from an earlier VM
    // and an earlier tree).  On the 2-CPU Intel Xeon VM
    // (coll_bench, µs, tree / rsag / push, two or three alternating rounds)
    // 4 members 1 MiB 523-576 / 680-706 / 653-737, 4 MiB 1905-2393 /
    // 2654-2973 / 2759-2848; 8 members 1 MiB 1250-1447 / 1388-1498 /
    // 1419-1653; 16 members 4 MiB 15233-17086 / 17289-19892 / 18182-18391;
    // 3 members 1 MiB 425-437 / 490-520 / 448-546 (4 MiB: push 1611-1687,
    // tree 1767-1836, rsag 1876-1968).  docs/COLLECTIVES.md has the table.
    const std::int64_t bytes = count * red.elem_bytes;
    const std::int64_t rsag_min = shm->tuning().rsag_min;
    const bool spread = shm->size() > 4 && !shm->crowded();
    const std::int64_t from = shm->size() == 2 ? rsag_min / 2 : spread ? 4 * rsag_min : rsag_min;
    if (!shm->crowded() && !shm->kernel_copies_slow() && bytes >= from && shm->single_copy()) {
        // (push where rsag declines, having touched nothing.)
        if (allreduce_shm_rsag(team, send, recv, count, red)) return true;
        return allreduce_shm_push(team, send, recv, count, red);
    }
    // Two members with a CPU each, from two slots of cells (32 KiB): a
    // Reduce to member 0, then a Bcast of its result, each pipelined on
    // its own, beat the tree's Reduce and Bcast in one pass.  On the Zen 5
    // VM of docs/BENCHMARKS.md (session 54; a loop of MPI_Allreduce against
    // one of MPI_Reduce and MPI_Bcast, SHMPI_KERNEL_COPIES=slow, us): 128
    // KiB 8.6 / 7.6, 256 KiB 17.6 / 14.2, 1 MiB 82-85 / 59-60, 4 MiB 342 /
    // 248; with both ranks on one CPU the one pass was ahead (1 MiB 99.7 /
    // 110.2).  Below 128 KiB (session 56, coll_bench --mode osu, one pass /
    // two, us): lines crossing the CPUs in 0.06 us, 32 KiB 2.11-2.12 /
    // 1.89-1.90, 64 KiB 4.10-4.15 / 3.39-3.42; in 0.25 us, 32 KiB
    // 5.00-5.18 / 4.12-4.28, 64 KiB 9.37-9.51 / 6.96-7.12; but 16 KiB (one
    // slot) 2.45-2.54 / 2.73-2.77.  The Reduce checks what the tree would
    // (its sizes fit the cells whenever the tree's do, and so do the
    // Bcast's, so the Bcast cannot decline after the Reduce ran), and the
    // fold is the tree's: the same bits as the tree and the linear oracle.
    if (shm->size() == 2 && !shm->crowded() && bytes >= 2 * static_cast<std::int64_t>(shm->slot_bytes())) {
        if (!reduce_shm_tree(team, send, recv, count, red, 0)) return false;
        return bcast_shm_tree(team, recv, bytes, 0);
    }
    return allreduce_shm_tree(team, send, recv, count, red);
}

}  // namespace shmpi::coll
