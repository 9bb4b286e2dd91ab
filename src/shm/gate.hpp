// The lock of MPI_THREAD_MULTIPLE: one per process, around every MPI call.
//
// A program that asks MPI_Init_thread for MPI_THREAD_MULTIPLE gets it, and
// from then on every call through the C boundary (api::guard) holds this
// lock, so the library's state (the engine's queues, requests, handles,
// communicators, the rings this rank reads) is touched by one thread at a
// time, as under MPI_THREAD_SERIALIZED.  Programs that ask for less never
// take it: one relaxed load of a flag per call.
//
// A call that waits (Transport::wait, ShmTeam's flag waits) opens the gate
// around each pause, yield and sleep, so that other threads may call MPI
// meanwhile: a thread blocked in MPI_Recv does not keep another from
// sending the message it waits for.  Every poll of a wait runs with the
// lock held, so a wait sees the state between calls of other threads,
// never in the middle of one.  Calls do not keep state across their waits
// that another thread's call could change, but for what MPI makes the
// program's business (two threads in collectives on one communicator at
// once, one request waited on by two threads).
//
// A thread that sleeps on the doorbell (Transport::park) waits for a ring
// from another rank; what another thread of its own process does under the
// lock (a send to itself, MPI_Grequest_complete) rings nobody.  So a thread
// that leaves the lock while others of its process sleep rings this rank's
// doorbell (set_doorbell) at the end of each call (Hold) and when a call
// starts to wait (notify): they wake and look again.  The sleeper counts
// itself (will_sleep) and reads the doorbell before its last look, with
// the lock held, so either its look sees what the other thread did or the
// other thread, taking the lock after it, sees it counted and rings.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace shmpi::shm {

class Gate {
public:
    /// Whether calls take the lock: set by MPI_Init_thread when it provides
    /// MPI_THREAD_MULTIPLE, before it returns, so before any other thread
    /// may call MPI (the calls allowed before MPI_Init take no lock).
    /// Relaxed: the thread that sets it is the only one in MPI until
    /// MPI_Init_thread returns, and the program's own synchronisation
    /// orders that return before another thread's first call.
    static bool on() { return on_.load(std::memory_order_relaxed); }
    static void turn_on() { on_.store(true, std::memory_order_relaxed); }

    /// This rank's doorbell, rung for sleeping threads of this process: set
    /// when the transport attaches, cleared when it goes.  Relaxed: read
    /// only between the two, by threads in MPI calls.
    static void set_doorbell(std::atomic<std::uint32_t>* bell) { doorbell_.store(bell, std::memory_order_relaxed); }

    /// Holds the lock for one MPI call: nested calls (an error handler or
    /// a user operation that calls MPI) count up and release it with the
    /// outermost one.
    class Hold {
    public:
        Hold() {
            if (on()) [[unlikely]] enter();
        }
        ~Hold() {
            if (held_) leave();
        }
        Hold(const Hold&) = delete;
        Hold& operator=(const Hold&) = delete;

    private:
        void enter();
        void leave();
        bool held_ = false;
    };

    /// Opens the gate for a while inside a wait: releases the lock however
    /// deeply this thread holds it, and takes it back at the end.  Does
    /// nothing where this thread does not hold it.  Rings nobody (notify).
    class Open {
    public:
        Open() {
            if (on()) [[unlikely]] open();
        }
        ~Open() {
            if (depth_ != 0) close();
        }
        Open(const Open&) = delete;
        Open& operator=(const Open&) = delete;

    private:
        void open();
        void close();
        int depth_ = 0;
    };

    /// A wait about to open the gate for the first time: rings for the
    /// threads of this process asleep on the doorbell, since what the call
    /// did before its wait may be what they wait for.  The later openings
    /// of the wait ring nobody: two waiting threads would otherwise wake
    /// each other for ever.
    static void notify() {
        if (on()) [[unlikely]] wake_sleepers();
    }

    /// Transport::park, before it opens the gate to sleep on the doorbell:
    /// counts this thread as sleeping, so that a thread leaving the lock
    /// rings.  Returns whether it is the process's only sleeper.
    /// Relaxed, as are the loads of the count: every change and every load
    /// that decides a ring happens with the lock held, which orders them.
    static bool will_sleep() { return sleepers_.fetch_add(1, std::memory_order_relaxed) == 0; }
    /// After the sleep (lock held again): returns whether it was the last.
    static bool woke() { return sleepers_.fetch_sub(1, std::memory_order_relaxed) == 1; }

private:
    /// Rings the doorbell when a thread of this process sleeps on it.
    static void wake_sleepers();

    static inline std::atomic<bool> on_{false};
    static inline std::atomic<int> sleepers_{0};
    static inline std::atomic<std::atomic<std::uint32_t>*> doorbell_{nullptr};
};

}  // namespace shmpi::shm
