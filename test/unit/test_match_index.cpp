// MatchIndex (src/match_index.hpp): the lists by (context, source, tag)
// that the point-to-point engine matches long queues with.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <list>
#include <vector>

#include "match_index.hpp"

namespace {

using shmpi::p2p::MatchIndex;
using shmpi::p2p::MatchKey;
using shmpi::p2p::MatchLink;

struct Entry {
    int id = 0;
    MatchLink<Entry> match_links[4];
};

/// The ids in the list of `key`, head first, walked through link `li`.
std::vector<int> ids(const MatchIndex<Entry, 4>& index, const MatchKey& key, int li) {
    std::vector<int> out;
    for (const Entry* e = index.head(key); e != nullptr; e = e->match_links[li].next) out.push_back(e->id);
    return out;
}

TEST(MatchKey, ShapesAndWidening) {
    const MatchKey env{7, 3, 12};
    EXPECT_EQ(env.shape(), 0);
    EXPECT_EQ(env.widened(0), env);
    EXPECT_EQ(env.widened(1), (MatchKey{7, 3, MPI_ANY_TAG}));
    EXPECT_EQ(env.widened(2), (MatchKey{7, MPI_ANY_SOURCE, 12}));
    EXPECT_EQ(env.widened(3), (MatchKey{7, MPI_ANY_SOURCE, MPI_ANY_TAG}));
    for (int s = 0; s < 4; ++s) EXPECT_EQ(env.widened(s).shape(), s);
}

TEST(MatchIndex, ListsKeepFilingOrderAndUnlinkAnywhere) {
    MatchIndex<Entry, 4> index;
    std::vector<Entry> e(6);
    for (int i = 0; i < 6; ++i) {
        e[i].id = i;
        // Envelopes: source i % 2, tag i % 3, context 1; filed under every shape.
        const MatchKey env{1, i % 2, i % 3};
        for (int s = 0; s < 4; ++s) index.file(&e[i], s, env.widened(s));
    }
    EXPECT_EQ(ids(index, MatchKey{1, 0, 0}, 0), (std::vector<int>{0}));
    EXPECT_EQ(ids(index, MatchKey{1, 1, MPI_ANY_TAG}, 1), (std::vector<int>{1, 3, 5}));
    EXPECT_EQ(ids(index, MatchKey{1, MPI_ANY_SOURCE, 2}, 2), (std::vector<int>{2, 5}));
    EXPECT_EQ(ids(index, MatchKey{1, MPI_ANY_SOURCE, MPI_ANY_TAG}, 3), (std::vector<int>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(index.head(MatchKey{2, 0, 0}), nullptr);  // another context

    index.unlink(&e[3]);  // the middle of the lists
    index.unlink(&e[0]);  // a head
    index.unlink(&e[5]);  // a tail
    EXPECT_EQ(ids(index, MatchKey{1, 1, MPI_ANY_TAG}, 1), (std::vector<int>{1}));
    EXPECT_EQ(ids(index, MatchKey{1, MPI_ANY_SOURCE, 2}, 2), (std::vector<int>{2}));
    EXPECT_EQ(ids(index, MatchKey{1, MPI_ANY_SOURCE, MPI_ANY_TAG}, 3), (std::vector<int>{1, 2, 4}));
    EXPECT_EQ(index.head(MatchKey{1, 0, 0}), nullptr);
    for (int li = 0; li < 4; ++li) EXPECT_EQ(e[3].match_links[li].bucket, nullptr);

    // A list emptied and filled again starts from its new entry.
    index.file(&e[0], 0, MatchKey{1, 0, 0});
    EXPECT_EQ(ids(index, MatchKey{1, 0, 0}, 0), (std::vector<int>{0}));
}

TEST(MatchIndex, EmptyListsAreSweptOnceTheyOutnumberTheRest) {
    MatchIndex<Entry, 4> index;
    Entry keep;
    keep.id = -1;
    index.file(&keep, 0, MatchKey{1, 0, 5000});
    // A new tag per message: each leaves an empty list behind.
    std::size_t most = 0;
    for (int tag = 0; tag < 1000; ++tag) {
        Entry e;
        e.id = tag;
        index.file(&e, 0, MatchKey{1, 0, tag});
        ASSERT_EQ(index.head(MatchKey{1, 0, tag}), &e);
        index.unlink(&e);
        most = std::max(most, index.lists());
    }
    EXPECT_LE(most, 200u);                               // swept, not one list per tag ever used
    EXPECT_EQ(index.head(MatchKey{1, 0, 5000}), &keep);  // the live list survives every sweep
    EXPECT_NE(keep.match_links[0].bucket, nullptr);
}

TEST(MatchIndex, OnPastTheThresholdOffWhenTheQueueEmpties) {
    using Index = MatchIndex<Entry, 4>;
    Index index;
    std::list<Entry> queue;  // stands for the engine's list, in queue order
    int filed = 0;
    auto file = [&](Entry* x) {
        ++filed;
        index.file(x, 0, MatchKey{1, 0, x->id});
    };
    for (int i = 0; i < static_cast<int>(Index::kOnFrom) + 2; ++i) {
        queue.emplace_back().id = i;
        index.joined(queue, &queue.back(), file);
        // Off (nothing filed) up to kOnFrom entries; then all are filed at
        // once, and each newcomer after them.
        EXPECT_EQ(index.on(), queue.size() > Index::kOnFrom);
        EXPECT_EQ(filed, index.on() ? static_cast<int>(queue.size()) : 0);
    }
    EXPECT_EQ(index.head(MatchKey{1, 0, 3})->id, 3);
    // Out of the queue (kept alive in `gone`), then left(), as the engine does.
    std::list<Entry> gone;
    while (!queue.empty()) {
        gone.splice(gone.end(), queue, std::prev(queue.end()));
        index.left(queue, &gone.back());
        EXPECT_EQ(gone.back().match_links[0].bucket, nullptr);
        EXPECT_EQ(index.on(), !queue.empty());
    }
    EXPECT_EQ(index.lists(), 0u);  // its lists forgotten when it turned off
}

}  // namespace
