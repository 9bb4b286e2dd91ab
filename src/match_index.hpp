// An index of the engine's matching queues by (context, source, tag), so
// that a match costs a few hash lookups instead of a walk through the queue.
//
// MPI's rule: a message takes the first posted receive that fits it, and a
// receive takes the first waiting message that fits it.  A pattern has one
// of four shapes: source and tag named, source named and MPI_ANY_TAG,
// MPI_ANY_SOURCE and tag named, or both wildcards.  The index keeps one list
// per key (context, source or MPI_ANY_SOURCE, tag or MPI_ANY_TAG), in queue
// order:
//   - a posted receive is filed under its own pattern (one list).  A
//     message looks at the heads of the lists of the four patterns that fit
//     it and takes the earliest (the lowest sequence number);
//   - a waiting message is filed under the four patterns that fit it (four
//     lists).  A receive looks at the head of its own pattern's list.
// An entry threads each list it is in through its own link for that list's
// shape (MatchLink), so leaving the queue costs no lookup.
//
// The index is on only while its queue is long (joined(), left()), since a
// short queue is faster to walk than to hash.  Single-threaded, like the
// engine.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace shmpi::p2p {

/// A matching pattern, or a message's envelope (then with no wildcard).
struct MatchKey {
    std::uint32_t context = 0;
    std::int32_t src = 0;  ///< a rank in the communicator, or MPI_ANY_SOURCE
    std::int32_t tag = 0;  ///< a tag, or MPI_ANY_TAG
    bool operator==(const MatchKey&) const = default;

    /// 0: source and tag named; 1: MPI_ANY_TAG; 2: MPI_ANY_SOURCE; 3: both.
    int shape() const { return (src == MPI_ANY_SOURCE ? 2 : 0) | (tag == MPI_ANY_TAG ? 1 : 0); }
    /// The pattern of shape `s` that fits this envelope.
    MatchKey widened(int s) const {
        return MatchKey{context, (s & 2) != 0 ? MPI_ANY_SOURCE : src, (s & 1) != 0 ? MPI_ANY_TAG : tag};
    }
};

struct MatchKeyHash {
    std::size_t operator()(const MatchKey& k) const noexcept {
        std::uint64_t h = (std::uint64_t{k.context} << 32) | static_cast<std::uint32_t>(k.src);
        h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull ^ static_cast<std::uint32_t>(k.tag);
        h = (h ^ (h >> 32)) * 0x94d049bb133111ebull;
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

template <class T>
struct MatchBucket {
    T* head = nullptr;
    T* tail = nullptr;
};

/// An entry's place in one list of a MatchIndex.
template <class T>
struct MatchLink {
    T* prev = nullptr;
    T* next = nullptr;
    MatchBucket<T>* bucket = nullptr;  ///< nullptr: in no list through this link
};

/// Lists of entries of T by key.  T has `MatchLink<T> match_links[N]`; every
/// list threads its entries through the same link index.
template <class T, int N>
class MatchIndex {
public:
    /// The index turns on when its queue grows past this many entries, and
    /// off when the queue empties: a short queue is walked faster than
    /// hashed, a long one costs a walk per match (bench/p2p_match;
    /// docs/BENCHMARKS.md, "Deep matching queues": the two cost about the
    /// same from 64 to 128 entries).
    static constexpr std::size_t kOnFrom = 64;

    /// Whether the entries of the queue are filed here (else: walk it).
    bool on() const { return on_; }

    /// `x` has just joined `queue` (a list of T in queue order): while on,
    /// `file(x)` files it; past kOnFrom entries, every entry is filed and
    /// the index turns on.
    template <class Queue, class File>
    void joined(Queue& queue, T* x, File&& file) {
        if (on_) {
            file(x);
        } else if (queue.size() > kOnFrom) {
            for (T& e : queue) file(&e);
            on_ = true;
        }
    }

    /// `x` has just left `queue`: unlinked, and the index turns off (its
    /// lists forgotten) once the queue is empty.
    template <class Queue>
    void left(const Queue& queue, T* x) {
        if (!on_) return;
        unlink(x);
        if (queue.empty()) {
            buckets_.clear();
            empty_ = 0;
            on_ = false;
        }
    }

    /// Appends `x` to the list of `key` through its link `li`.
    void file(T* x, int li, const MatchKey& key) {
        auto [it, created] = buckets_.try_emplace(key);
        MatchBucket<T>& b = it->second;
        if (!created && b.head == nullptr) --empty_;
        MatchLink<T>& l = x->match_links[li];
        l = MatchLink<T>{b.tail, nullptr, &b};
        if (b.tail != nullptr) {
            b.tail->match_links[li].next = x;
        } else {
            b.head = x;
        }
        b.tail = x;
    }

    /// The first entry in the list of `key`, or nullptr.
    T* head(const MatchKey& key) const {
        const auto it = buckets_.find(key);
        return it == buckets_.end() ? nullptr : it->second.head;
    }

    /// Takes `x` out of every list it is in.
    void unlink(T* x) {
        for (int li = 0; li < N; ++li) {
            MatchLink<T>& l = x->match_links[li];
            if (l.bucket == nullptr) continue;
            (l.prev != nullptr ? l.prev->match_links[li].next : l.bucket->head) = l.next;
            (l.next != nullptr ? l.next->match_links[li].prev : l.bucket->tail) = l.prev;
            if (l.bucket->head == nullptr) ++empty_;
            l = MatchLink<T>{};
        }
        // Empty lists stay for the next entry with their key (no allocation
        // per message in a steady exchange) until they outnumber the rest.
        if (empty_ > kKeepEmpty && 2 * empty_ > buckets_.size()) sweep();
    }

    std::size_t lists() const { return buckets_.size(); }

private:
    static constexpr std::size_t kKeepEmpty = 64;

    void sweep() {
        std::erase_if(buckets_, [](const auto& kv) { return kv.second.head == nullptr; });
        empty_ = 0;
    }

    std::unordered_map<MatchKey, MatchBucket<T>, MatchKeyHash> buckets_;
    std::size_t empty_ = 0;  ///< lists with no entry
    bool on_ = false;
};

}  // namespace shmpi::p2p
