// The datatype object: references, handles, and the steps every
// constructor shares (bounds, sums, layout flags, envelope).
#include "dtype/datatype.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "dtype/build.hpp"
#include "errors.hpp"

namespace shmpi::dtype {

// ---------------------------------------------------------------- lifetime

Ref::Ref(const Datatype* t) : t_(t) { retain(t_); }
Ref::~Ref() { release(t_); }

Datatype::~Datatype() { magic = 0; }

void retain(const Datatype* t) {
    if (t == nullptr || t->predefined) return;
    // Relaxed: a new reference is only ever made from an existing one.
    t->refs.fetch_add(1, std::memory_order_relaxed);
}

void release(const Datatype* t) {
    if (t == nullptr || t->predefined) return;
    // acq_rel: every use through other references happens before the delete.
    if (t->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    // Deleting a type releases the types it is built on, which may delete
    // them in turn: a chain as deep as the nesting (200,000 levels of
    // MPI_Type_contiguous overflowed the stack).  The outermost release
    // deletes; the releases its deletes make only queue their types.
    thread_local std::vector<const Datatype*>* queue = nullptr;
    if (queue != nullptr) {
        queue->push_back(t);
        return;
    }
    std::vector<const Datatype*> doomed{t};
    queue = &doomed;
    while (!doomed.empty()) {
        const Datatype* d = doomed.back();
        doomed.pop_back();
        delete d;
    }
    queue = nullptr;
}

const Datatype* lookup(MPI_Datatype handle) {
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    if (v < 0x1000) return predefined(handle);
    if (!HandleStorage::may_read_as<Datatype>(handle)) return nullptr;
    const auto* d = reinterpret_cast<const Datatype*>(handle);
    if (d->magic != Datatype::kMagic) return nullptr;
    return d->handles.load(std::memory_order_relaxed) > 0 || d == UserFnType::current() ? d : nullptr;
}

thread_local const Datatype* UserFnType::current_ = nullptr;

bool freed(MPI_Datatype handle) {
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    if (v < 0x1000 || !HandleStorage::may_read_as<Datatype>(handle)) return false;
    const auto* d = reinterpret_cast<const Datatype*>(handle);
    // Freed and deleted: its memory is kept, filled (handle_storage.hpp).
    if (d->magic == kFreedMagic) return true;
    return d->magic == Datatype::kMagic && d->handles.load(std::memory_order_relaxed) == 0;
}

void commit(const Datatype& t) {
    if (!t.predefined) const_cast<Datatype&>(t).committed = true;
}

void free_handle(const Datatype& t, const char* fn) {
    if (t.predefined) {
        throw MpiError(MPI_ERR_TYPE, fmt::format("{}: {} is predefined and cannot be freed", fn, t.name));
    }
    // The user's last handle goes: the delete callbacks run now (a failing
    // one throws and leaves the type as it was).
    if (t.handles.load(std::memory_order_relaxed) == 1) t.attributes.clear(t.self, fn);
    t.handles.fetch_sub(1, std::memory_order_relaxed);
    release(&t);
}

void add_handle(const Datatype& t) {
    if (t.predefined) return;
    t.handles.fetch_add(1, std::memory_order_relaxed);
    retain(&t);
}

void set_name(const Datatype& t, const std::string& name) {
    t.user_name = name;
    t.named = true;
    if (t.predefined) return;  // (a const object: messages keep the MPI name)
    // Derived types are made on the heap, never const.
    auto& m = const_cast<Datatype&>(t);
    m.label = name;
    m.name = m.label.c_str();
}

std::string_view user_name(const Datatype& t) {
    if (t.named) return t.user_name;
    return t.combiner == MPI_COMBINER_NAMED ? std::string_view(t.name) : std::string_view();
}

// ---------------------------------------------------------------- building

namespace build {

void overflow(const char* fn, const std::string& what) {
    throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} overflows MPI_Aint", fn, what));
}

std::int64_t mul(std::int64_t a, std::int64_t b, const char* fn, const char* what) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) overflow(fn, fmt::format("{} ({} * {})", what, a, b));
    return r;
}

std::int64_t add(std::int64_t a, std::int64_t b, const char* fn, const char* what) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) overflow(fn, fmt::format("{} ({} + {})", what, a, b));
    return r;
}

std::int64_t sub(std::int64_t a, std::int64_t b, const char* fn, const char* what) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) overflow(fn, fmt::format("{} ({} - {})", what, a, b));
    return r;
}

void Bounds::add(const Datatype& c, std::int64_t n, std::int64_t dmin, std::int64_t dmax) {
    if (n == 0) return;
    if (c.kind == Kind::Marker) {
        if (c.self == MPI_LB) {
            slb_ = sticky_lb_ ? std::min(slb_, dmin) : dmin;
            sticky_lb_ = true;
        } else {
            sub_ = sticky_ub_ ? std::max(sub_, dmax) : dmax;
            sticky_ub_ = true;
        }
        return;
    }
    // Copy k of the block sits at d + k * extent: the block spans
    // [d + lo, d + hi] beyond one copy.
    std::int64_t span = 0;
    if (__builtin_mul_overflow(n - 1, c.extent, &span)) {
        build::overflow(fn_, fmt::format("the span of a block of {} elements of {} (extent {} bytes)", n, c.name,
                                         c.extent));
    }
    const std::int64_t lo = std::min<std::int64_t>(0, span);
    const std::int64_t hi = std::max<std::int64_t>(0, span);
    const std::int64_t lb = build::add(build::add(dmin, c.lb, fn_, "displacement + lb"), lo, fn_,
                                       "lower bound");
    const std::int64_t ub = build::add(build::add(dmax, c.ub(), fn_, "displacement + ub"), hi, fn_,
                                       "upper bound");
    lb_ = any_ ? std::min(lb_, lb) : lb;
    ub_ = any_ ? std::max(ub_, ub) : ub;
    any_ = true;
    if (c.sticky_lb) {
        slb_ = sticky_lb_ ? std::min(slb_, lb) : lb;
        sticky_lb_ = true;
    }
    if (c.sticky_ub) {
        sub_ = sticky_ub_ ? std::max(sub_, ub) : ub;
        sticky_ub_ = true;
    }
    if (c.size > 0) {
        const std::int64_t tlb = build::add(build::add(dmin, c.true_lb, fn_, "displacement + true lb"),
                                            lo, fn_, "true lower bound");
        const std::int64_t tub = build::add(build::add(dmax, c.true_ub(), fn_, "displacement + true ub"),
                                            hi, fn_, "true upper bound");
        tlb_ = data_ ? std::min(tlb_, tlb) : tlb;
        tub_ = data_ ? std::max(tub_, tub) : tub;
        data_ = true;
        align_ = std::max(align_, c.align);
    }
}

void Bounds::store(Datatype& t, bool pad) const {
    const std::int64_t lb = sticky_lb_ ? slb_ : (any_ ? lb_ : 0);
    std::int64_t ub = sticky_ub_ ? sub_ : (any_ ? ub_ : 0);
    std::int64_t extent = build::sub(ub, lb, fn_, "extent (ub - lb)");
    if (pad && !sticky_ub_ && align_ > 1 && extent > 0 && extent % align_ != 0) {
        ub = build::add(ub, align_ - extent % align_, fn_, "upper bound + alignment padding");
        extent = build::sub(ub, lb, fn_, "extent (ub - lb)");
    }
    t.lb = lb;
    t.extent = extent;
    t.true_lb = data_ ? tlb_ : 0;
    t.true_extent = data_ ? build::sub(tub_, tlb_, fn_, "true extent (true ub - true lb)") : 0;
    t.sticky_lb = sticky_lb_;
    t.sticky_ub = sticky_ub_;
    t.align = align_;
}

std::unique_ptr<Datatype> create(const char* what) {
    auto t = std::make_unique<Datatype>();
    t->predefined = false;
    t->committed = false;
    t->self = reinterpret_cast<MPI_Datatype>(t.get());
    t->label = fmt::format("<{} datatype {}>", what, static_cast<const void*>(t.get()));
    t->name = t->label.c_str();
    return t;
}

Ref adopt(std::unique_ptr<Datatype> t) {
    Ref r(t.get());
    release(t.release());
    return r;
}

namespace {

/// `n` copies of `c` are one run of bytes in pack order.
bool block_is_run(const Datatype& c, std::int64_t n) { return c.size == 0 || c.is_run(n); }

/// Sum of `n` * value over blocks, checked.
std::int64_t block_sum(std::int64_t acc, std::int64_t n, std::int64_t v, const char* fn, const char* what) {
    return add(acc, mul(n, v, fn, what), fn, what);
}

void set_struct_flags(Datatype& t) {
    t.prefix.assign(static_cast<std::size_t>(t.count) + 1, 0);
    t.runs.clear();
    bool all_runs = true;
    for (std::int64_t b = 0; b < t.count; ++b) {
        const auto i = static_cast<std::size_t>(b);
        const Datatype& c = t.kind == Kind::Struct ? *t.children[i] : *t.child;
        const std::int64_t bytes = t.blocklens[i] * c.size;
        t.prefix[i + 1] = t.prefix[i] + bytes;
        if (bytes == 0) continue;
        if (!block_is_run(c, t.blocklens[i])) {
            all_runs = false;
            continue;
        }
        const std::int64_t at = t.displs[i] + c.true_lb;
        if (!t.runs.empty() && t.runs.back().offset + t.runs.back().length == at) {
            t.runs.back().length += bytes;
        } else {
            t.runs.push_back({at, bytes});
        }
    }
    if (!all_runs) t.runs.clear();
    t.dense = t.size == 0 || (all_runs && t.runs.size() == 1);
}

}  // namespace

void set_flags(Datatype& t) {
    switch (t.kind) {
    case Kind::Builtin:
    case Kind::Marker: t.dense = true; break;
    case Kind::Vector: {
        const Datatype& c = *t.child;
        const std::int64_t run = t.blocklen * c.size;
        t.dense = t.size == 0 || (block_is_run(c, t.blocklen) && (t.count == 1 || t.stride == run));
        break;
    }
    case Kind::Blocks:
    case Kind::Struct: set_struct_flags(t); break;
    case Kind::Resized: t.dense = t.child->dense; break;
    }
    t.contiguous = t.dense && t.size == t.extent;
}

void finish(Datatype& t, const char* fn) {
    int depth = 0;
    switch (t.kind) {
    case Kind::Builtin:
    case Kind::Marker: break;
    case Kind::Vector: {
        const Datatype& c = *t.child;
        const std::int64_t copies = mul(t.count, t.blocklen, fn, "count * block length");
        t.size = mul(copies, c.size, fn, "size (copies * size of the old type)");
        t.elements = mul(copies, c.elements, fn, "basic elements");
        t.basic = c.basic;
        depth = c.depth;
        break;
    }
    case Kind::Blocks: {
        const Datatype& c = *t.child;
        std::int64_t copies = 0;
        for (std::int64_t n : t.blocklens) copies = add(copies, n, fn, "sum of block lengths");
        t.size = mul(copies, c.size, fn, "size (copies * size of the old type)");
        t.elements = mul(copies, c.elements, fn, "basic elements");
        t.basic = c.basic;
        depth = c.depth;
        break;
    }
    case Kind::Struct: {
        t.size = 0;
        t.elements = 0;
        t.basic = nullptr;
        bool mixed = false;
        for (std::size_t i = 0; i < t.children.size(); ++i) {
            const Datatype& c = *t.children[i];
            t.size = block_sum(t.size, t.blocklens[i], c.size, fn, "size");
            t.elements = block_sum(t.elements, t.blocklens[i], c.elements, fn, "basic elements");
            depth = std::max(depth, c.depth);
            if (i == 0) {
                t.basic = c.basic;
            } else if (c.basic != t.basic) {
                mixed = true;
            }
        }
        if (mixed) t.basic = nullptr;
        break;
    }
    case Kind::Resized: {
        const Datatype& c = *t.child;
        t.size = c.size;
        t.elements = c.elements;
        t.basic = c.basic;
        depth = c.depth;
        break;
    }
    }
    t.depth = depth + 1;
    if (t.depth > kMaxDepth) {
        throw MpiError(MPI_ERR_ARG, fmt::format("{}: datatypes nest {} deep; shmpi allows {}", fn,
                                                t.depth, kMaxDepth));
    }
    set_flags(t);
}

void set_envelope(Datatype& t, int combiner, std::vector<int> ints, std::vector<MPI_Aint> aints,
                  const std::vector<const Datatype*>& types) {
    t.combiner = combiner;
    t.ints = std::move(ints);
    t.aints = std::move(aints);
    t.types.clear();
    t.type_refs.clear();
    for (const Datatype* d : types) {
        t.types.push_back(d->self);
        t.type_refs.emplace_back(d);
    }
}

void check_old(const Datatype& old, const char* fn) {
    if (old.kind == Kind::Marker) {
        throw MpiError(MPI_ERR_TYPE, fmt::format("{}: oldtype {} is a bound marker; markers may only "
                                                 "appear in MPI_Type_struct",
                                                 fn, old.name));
    }
}

void check_count(std::int64_t count, const char* fn, const char* arg) {
    if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{}: {} {} is negative", fn, arg, count));
}

void check_blocklen(std::int64_t n, const char* fn, const char* arg) {
    if (n < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} {} is negative", fn, arg, n));
}

void check_array(const void* p, int count, const char* fn, const char* arg) {
    if (p == nullptr && count > 0) {
        throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is NULL but count is {}", fn, arg, count));
    }
}

}  // namespace build
}  // namespace shmpi::dtype
