// MPI_Type_create_resized and MPI_Type_dup: the old layout with new bounds,
// or with a new envelope.
#include <fmt/format.h>

#include "dtype/build.hpp"
#include "dtype/datatype.hpp"
#include "errors.hpp"

namespace shmpi::dtype {

namespace build {

void set_resized(Datatype& t, const Datatype& c, std::int64_t lb, std::int64_t extent, const char* fn) {
    // Resizing a resized type resizes its child: one level, same map.
    t.kind = Kind::Resized;
    t.child = Ref(c.kind == Kind::Resized ? c.child.get() : &c);
    // The new bounds are explicit markers (MPI-3.1 4.1.7): sticky in every
    // type built on this one.
    add(lb, extent, fn, "lb + extent");
    t.lb = lb;
    t.extent = extent;
    t.sticky_lb = true;
    t.sticky_ub = true;
    t.true_lb = c.true_lb;
    t.true_extent = c.true_extent;
    t.align = c.align;
}

}  // namespace build

Datatype* make_resized(const Datatype& old, MPI_Aint lb, MPI_Aint extent, const char* fn) {
    build::check_old(old, fn);
    auto t = build::create("resized");
    build::set_resized(*t, old, lb, extent, fn);
    build::finish(*t, fn);
    build::set_envelope(*t, MPI_COMBINER_RESIZED, {}, {lb, extent}, {&old});
    return t.release();
}

namespace build {

std::unique_ptr<Datatype> same_layout(const Datatype& old, const char* what, const char* fn) {
    check_old(old, fn);
    auto t = create(what);
    // Same map, same layout: share the old type's children.
    t->kind = old.kind;
    t->count = old.count;
    t->blocklen = old.blocklen;
    t->stride = old.stride;
    t->blocklens = old.blocklens;
    t->displs = old.displs;
    t->prefix = old.prefix;
    t->child = old.child;
    t->children = old.children;
    t->runs = old.runs;
    t->size = old.size;
    t->lb = old.lb;
    t->extent = old.extent;
    t->true_lb = old.true_lb;
    t->true_extent = old.true_extent;
    t->contiguous = old.contiguous;
    t->dense = old.dense;
    t->sticky_lb = old.sticky_lb;
    t->sticky_ub = old.sticky_ub;
    t->align = old.align;
    t->elements = old.elements;
    t->basic = old.basic;
    t->depth = old.depth + 1;
    if (t->depth > kMaxDepth) {
        throw MpiError(MPI_ERR_ARG,
                       fmt::format("{}: datatypes nest {} deep; shmpi allows {}", fn, t->depth, kMaxDepth));
    }
    return t;
}

}  // namespace build

Datatype* make_dup(const Datatype& old, const char* fn) {
    auto t = build::same_layout(old, "dup", fn);
    // MPI-3.1 4.1.10: the duplicate has the old type's committed state.
    t->committed = old.committed;
    build::set_envelope(*t, MPI_COMBINER_DUP, {}, {}, {&old});
    // MPI_Type_dup copies the attributes through their copy callbacks.
    old.attributes.copy_into(old.self, t->attributes, t->self, fn);
    return t.release();
}

}  // namespace shmpi::dtype
