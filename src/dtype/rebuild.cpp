// rebuild(): a type made again over other predefined types (datatype.hpp).
// The envelope (MPI_Type_get_contents's record of the constructor and its
// arguments) says how the user made each level, so each level is made
// again by the same constructor, over the rebuilt old types.
#include <fmt/format.h>

#include <vector>

#include "dtype/datatype.hpp"
#include "errors.hpp"

namespace shmpi::dtype {

Ref adopt_internal(Datatype* made) {
    made->committed = true;
    made->handles.store(0, std::memory_order_relaxed);  // no user handle names it
    Ref held(made);
    release(made);  // the constructor's reference: `held` is the one left
    return held;
}

Ref rebuild(const Datatype& t, const std::function<Ref(const Datatype&)>& replace, const char* fn) {
    if (t.kind == Kind::Marker) return Ref(&t);
    if (t.predefined) return replace(t);  // basic, pair and Fortran kind types
    std::vector<Ref> olds;
    olds.reserve(t.type_refs.size());
    for (const Ref& r : t.type_refs) olds.push_back(rebuild(*r, replace, fn));
    const Datatype& old = olds.empty() ? byte_type() : *olds.front();  // (a struct of no blocks has none)
    const std::vector<int>& i = t.ints;
    const std::vector<MPI_Aint>& a = t.aints;
    Datatype* made = nullptr;
    switch (t.combiner) {
    case MPI_COMBINER_DUP:
        return olds.front();  // the same layout (and no attribute copy callbacks run)
    case MPI_COMBINER_CONTIGUOUS:
        made = make_contiguous(i[0], old, fn);
        break;
    case MPI_COMBINER_VECTOR:
        made = make_vector(i[0], i[1], i[2], old, fn);
        break;
    case MPI_COMBINER_HVECTOR:
        made = make_hvector(i[0], i[1], a[0], old, fn);
        break;
    case MPI_COMBINER_INDEXED:
        made = make_indexed(i[0], i.data() + 1, i.data() + 1 + i[0], old, fn);
        break;
    case MPI_COMBINER_HINDEXED:
        made = make_hindexed(i[0], i.data() + 1, a.data(), old, fn);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        made = make_indexed_block(i[0], i[1], i.data() + 2, old, fn);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        made = make_hindexed_block(i[0], i[1], a.data(), old, fn);
        break;
    case MPI_COMBINER_STRUCT: {
        std::vector<const Datatype*> types;
        for (const Ref& r : olds) types.push_back(r.get());
        made = make_struct(i[0], i.data() + 1, a.data(), types.data(), fn);
        break;
    }
    case MPI_COMBINER_RESIZED:
        made = make_resized(old, a[0], a[1], fn);
        break;
    case MPI_COMBINER_SUBARRAY: {
        const int n = i[0];
        made = make_subarray(n, i.data() + 1, i.data() + 1 + n, i.data() + 1 + 2 * n, i[1 + 3 * n], old, fn);
        break;
    }
    case MPI_COMBINER_DARRAY: {
        const int n = i[2];
        const int* g = i.data() + 3;
        made = make_darray(i[0], i[1], n, g, g + n, g + 2 * n, g + 3 * n, g[4 * n], old, fn);
        break;
    }
    default:
        throw MpiError(MPI_ERR_INTERN, fmt::format("{}: type {} has combiner {}, which cannot be made again", fn,
                                                   t.name, t.combiner));
    }
    return adopt_internal(made);
}

}  // namespace shmpi::dtype
