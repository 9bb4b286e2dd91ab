// MPI_Type_create_struct (and MPI-1's MPI_Type_struct): blocks of different
// old types at byte displacements, with the MPI-1 bound markers MPI_LB and
// MPI_UB.  Markers only move the bounds; blocks of one type become the
// Blocks layout, blocks of several types the Struct layout.
#include <fmt/format.h>

#include "dtype/build.hpp"
#include "dtype/datatype.hpp"
#include "errors.hpp"

namespace shmpi::dtype {

Datatype* make_struct(int count, const int blocklens[], const MPI_Aint displs[],
                      const Datatype* const types[], const char* fn) {
    build::check_count(count, fn, "count");
    build::check_array(blocklens, count, fn, "array_of_blocklengths");
    build::check_array(displs, count, fn, "array_of_displacements");
    build::check_array(types, count, fn, "array_of_types");
    for (int i = 0; i < count; ++i) {
        if (blocklens[i] < 0) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: array_of_blocklengths[{}] = {} is negative", fn,
                                                    i, blocklens[i]));
        }
        if (types[i] == nullptr) {
            throw MpiError(MPI_ERR_TYPE, fmt::format("{}: array_of_types[{}] is not a valid datatype", fn, i));
        }
    }

    auto t = build::create("struct");
    build::Bounds b(fn);

    // 1. Markers only move the bounds; keep the blocks that carry copies.
    std::vector<std::int64_t> lens;
    std::vector<std::int64_t> disps;
    std::vector<const Datatype*> olds;
    bool one_type = true;
    for (int i = 0; i < count; ++i) {
        const Datatype& c = *types[i];
        if (c.kind == Kind::Marker) {
            b.add(c, blocklens[i], displs[i], displs[i]);
            continue;
        }
        if (blocklens[i] == 0) continue;
        one_type = one_type && (olds.empty() || olds.front() == &c);
        lens.push_back(blocklens[i]);
        disps.push_back(displs[i]);
        olds.push_back(&c);
    }

    // 2. One old type: the indexed layout.  Several: a child per block.
    if (!olds.empty() && one_type) {
        build::set_blocks(*t, std::move(lens), std::move(disps), *olds.front(), fn, b);
    } else {
        for (std::size_t i = 0; i < olds.size(); ++i) b.add(*olds[i], lens[i], disps[i], disps[i]);
        t->kind = Kind::Struct;
        t->count = static_cast<std::int64_t>(olds.size());
        t->blocklens = std::move(lens);
        t->displs = std::move(disps);
        for (const Datatype* c : olds) t->children.emplace_back(c);
    }

    // 3. Bounds with the alignment padding of a C struct, sums and flags.
    b.store(*t, true);
    build::finish(*t, fn);

    // 4. The envelope.
    std::vector<int> ints{count};
    ints.insert(ints.end(), blocklens, blocklens + count);
    build::set_envelope(*t, MPI_COMBINER_STRUCT, std::move(ints),
                        std::vector<MPI_Aint>(displs, displs + count),
                        std::vector<const Datatype*>(types, types + count));
    return t.release();
}

}  // namespace shmpi::dtype
