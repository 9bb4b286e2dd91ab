#include "op.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "errors.hpp"

namespace shmpi::op {
namespace {

constexpr std::uintptr_t kPredefinedLimit = 0x1000;
constexpr std::size_t kOpHandles = 0x40;

Op predefined_op(dtype::OpKind k) {
    Op o;
    o.predefined = true;
    o.kind = k;
    o.name = dtype::op_kind_name(k);
    return o;
}

struct Table {
    std::array<Op, kOpHandles> ops{};
    std::array<bool, kOpHandles> valid{};
    void put(MPI_Op h, const Op& o) {
        const auto i = reinterpret_cast<std::uintptr_t>(h);
        ops[i] = o;
        valid[i] = true;
    }
};

Table make_table() {
    using dtype::OpKind;
    Table t;
    t.put(MPI_MAX, predefined_op(OpKind::Max));
    t.put(MPI_MIN, predefined_op(OpKind::Min));
    t.put(MPI_SUM, predefined_op(OpKind::Sum));
    t.put(MPI_PROD, predefined_op(OpKind::Prod));
    t.put(MPI_LAND, predefined_op(OpKind::Land));
    t.put(MPI_LOR, predefined_op(OpKind::Lor));
    t.put(MPI_LXOR, predefined_op(OpKind::Lxor));
    t.put(MPI_BAND, predefined_op(OpKind::Band));
    t.put(MPI_BOR, predefined_op(OpKind::Bor));
    t.put(MPI_BXOR, predefined_op(OpKind::Bxor));
    t.put(MPI_MAXLOC, predefined_op(OpKind::Maxloc));
    t.put(MPI_MINLOC, predefined_op(OpKind::Minloc));
    Op replace;
    replace.predefined = true;
    replace.one_sided_only = true;
    // f(a, b) = b (and MPI_NO_OP's f(a, b) = a): neither commutes, as
    // MPI_Op_commutative says (MPICH too).
    replace.commutative = false;
    replace.name = "MPI_REPLACE";
    t.put(MPI_REPLACE, replace);
    Op no_op = replace;
    no_op.name = "MPI_NO_OP";
    t.put(MPI_NO_OP, no_op);
    return t;
}

/// Built when the library loads (it depends on nothing else), as the
/// reduction kernels' table is: every reduction looks here.
const Table g_table = make_table();

/// The basic type a datatype is made of: the datatype itself when it is
/// predefined, else what the derived-type engine recorded (nullptr when the
/// type mixes basic types or has no data).
/// The named type the kernels know `t` by (Fortran kind types are
/// predefined but copies of one).
const dtype::Datatype* basic_of(const dtype::Datatype& t) {
    return t.combiner == MPI_COMBINER_NAMED ? &t : t.basic;
}

/// True when the dense bytes of the datatype are the user's layout: the
/// user function can run on them directly.
bool dense_is_layout(const dtype::Datatype& t) {
    return t.contiguous && t.true_lb == 0 && t.size == t.extent;
}

/// Scratch memory laid out as `count` elements of `t`: base() is the address
/// a user buffer would have.
class Laid {
public:
    Laid(const dtype::Datatype& t, std::int64_t count) {
        const std::int64_t step = (count - 1) * t.extent;
        lo_ = t.true_lb + std::min<std::int64_t>(0, step);
        const std::int64_t hi = t.true_lb + t.true_extent + std::max<std::int64_t>(0, step);
        mem_.reset(new std::byte[static_cast<std::size_t>(std::max<std::int64_t>(hi - lo_, 1))]);
    }
    std::byte* base() { return mem_.get() - lo_; }

private:
    std::unique_ptr<std::byte[]> mem_;
    std::int64_t lo_ = 0;
};

/// Calls the user function over `count` elements at typed addresses, in
/// pieces of at most INT_MAX elements (its length is an int).
void call_user(const Binding::User& u, void* in, void* inout, std::int64_t count) {
    MPI_Datatype h = u.handle;
    const dtype::UserFnType in_fn(u.type);
    const std::int64_t step = u.type->extent;
    while (count > 0) {
        int len = static_cast<int>(std::min<std::int64_t>(count, INT_MAX));
        u.fn(in, inout, &len, &h);
        in = static_cast<std::byte*>(in) + len * step;
        inout = static_cast<std::byte*>(inout) + len * step;
        count -= len;
    }
}

/// coll::Reduction::combine for MPI_Op_create's functions: the dense runs go
/// to the function as they are when that is the datatype's layout, else
/// through scratch buffers laid out as the datatype describes.
void user_combine(const void* in, void* inout, std::int64_t count, const void* state) {
    if (count <= 0) return;
    const auto& u = *static_cast<const Binding::User*>(state);
    const dtype::Datatype& t = *u.type;
    if (dense_is_layout(t)) {
        call_user(u, const_cast<void*>(in), inout, count);
        return;
    }
    const std::int64_t bytes = count * t.size;
    Laid a(t, count);
    Laid b(t, count);
    dtype::unpack(t, static_cast<const std::byte*>(in), bytes, a.base());
    dtype::unpack(t, static_cast<const std::byte*>(inout), bytes, b.base());
    call_user(u, a.base(), b.base(), count);
    dtype::pack(t, b.base(), count, static_cast<std::byte*>(inout));
}

std::string describe(const dtype::Datatype& t, const dtype::Datatype* basic) {
    if (t.predefined) return t.name;
    if (basic == nullptr) return fmt::format("{} (a derived type that mixes basic types)", t.name);
    return fmt::format("{} (a derived type of {})", t.name, basic->name);
}

}  // namespace

const Op& op_of(MPI_Op handle, const char* fn) {
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    if (handle == MPI_OP_NULL) [[unlikely]] fail(MPI_ERR_OP, "{}: operation is MPI_OP_NULL", fn);
    if (v < kOpHandles) {
        if (g_table.valid[v]) [[likely]] return g_table.ops[v];
    }
    const bool readable = v >= kPredefinedLimit && HandleStorage::may_read_as<Op>(handle);
    if (!readable || reinterpret_cast<const Op*>(handle)->magic != Op::kMagic) {
        const bool freed = readable && reinterpret_cast<const Op*>(handle)->magic == kFreedMagic;
        fail(MPI_ERR_OP, "{}: invalid operation {:#x}{}", fn, v, freed ? " (it has been freed with MPI_Op_free)" : "");
    }
    return *reinterpret_cast<const Op*>(handle);
}

MPI_Op create(MPI_User_function* user_fn, bool commutative) {
    auto* o = new Op();
    o->fn = user_fn;
    o->commutative = commutative;
    return reinterpret_cast<MPI_Op>(o);
}

void destroy(MPI_Op handle, const char* fn) {
    const Op& o = op_of(handle, fn);
    if (o.predefined) {
        throw MpiError(MPI_ERR_OP, fmt::format("{}: {} is predefined and cannot be freed", fn, o.name));
    }
    auto* p = const_cast<Op*>(&o);
    p->magic = 0;
    delete p;
}

Binding::Binding(const Op& op, MPI_Datatype handle, const dtype::Datatype& type, std::int64_t count,
                 const char* fn) {
    if (op.one_sided_only) [[unlikely]] {
        fail(MPI_ERR_OP, "{}: {} is only for one-sided accumulate operations, not for collectives", fn, op.name);
    }
    if (!op.predefined) {
        user_ = User{op.fn, handle, &type};
        red_.combine = user_combine;
        red_.state = &user_;
        red_.commutative = op.commutative;
        red_.elem_bytes = type.size;
        red_.user = true;
        dense_count_ = count;
        factor_ = 1;
        return;
    }
    const dtype::Datatype* basic = basic_of(type);
    const MPI_Datatype basic_handle = type.combiner == MPI_COMBINER_NAMED
                                          ? handle
                                          : (basic != nullptr ? dtype::handle_of(*basic) : MPI_DATATYPE_NULL);
    const dtype::ReduceKernel k =
        basic_handle == MPI_DATATYPE_NULL ? nullptr : dtype::reduce_kernel(op.kind, basic_handle);
    if (k == nullptr || basic->size <= 0) [[unlikely]] {
        fail(MPI_ERR_OP, "{}: {} is not defined on datatype {}", fn, op.name, describe(type, basic));
    }
    red_.combine = k;
    red_.state = nullptr;
    red_.commutative = true;
    red_.elem_bytes = basic->size;
    // A named type is its own basic type: no division on the common path.
    factor_ = basic == &type ? 1 : type.size / basic->size;
    dense_count_ = count * factor_;
}

void reduce_local(const Binding& b, const void* in, void* inout, std::int64_t count,
                  const dtype::Datatype& type) {
    if (count <= 0) return;
    const coll::Reduction& r = b.reduction();
    if (r.combine == user_combine) {
        // The user function takes typed buffers as they are.
        call_user(*static_cast<const Binding::User*>(r.state), const_cast<void*>(in), inout, count);
        return;
    }
    if (type.contiguous) {
        r.combine(static_cast<const std::byte*>(in) + type.true_lb,
                  static_cast<std::byte*>(inout) + type.true_lb, b.dense_count(), r.state);
        return;
    }
    const auto bytes = static_cast<std::size_t>(count * type.size);
    std::vector<std::byte> a(bytes);
    std::vector<std::byte> c(bytes);
    dtype::pack(type, in, count, a.data());
    dtype::pack(type, inout, count, c.data());
    r.combine(a.data(), c.data(), b.dense_count(), r.state);
    dtype::unpack(type, c.data(), static_cast<std::int64_t>(bytes), inout);
}

}  // namespace shmpi::op
