// Attribute caching (MPI-3.1 chapter 6.7): keyvals, and the store of
// (keyval, value) pairs that each communicator and each datatype carries.
//
// A keyval is an int the user holds; behind it a Keyval with the copy and
// delete callbacks of one object kind.  A Keyval lives while the user's key
// or any stored attribute refers to it: MPI_Comm_free_keyval only drops the
// user's reference, so attributes set earlier keep working until deleted
// (MPI-3.1 6.7.2: they "need to be explicitly freed by the program, either
// via calls to MPI_COMM_DELETE_ATTR ... or by calls to MPI_COMM_FREE"), and
// their id still reads and deletes them.
// Keyvals are per process (the id table lives in attributes.cpp; only the
// thread inside the library touches keyvals and stores,
// MPI_THREAD_SERIALIZED at most).
//
// Callbacks are C functions taking the object's handle.  A callback that
// returns something other than MPI_SUCCESS makes the MPI call that ran it
// fail (MpiError naming the call, the keyval and the code): a predefined
// class becomes a code of that class with that message; another error code
// (of a class the program added, say) is returned as it is; anything else
// becomes a code of class MPI_ERR_OTHER.
// The predefined callbacks (MPI_*_NULL_COPY_FN, MPI_*_DUP_FN,
// MPI_*_NULL_DELETE_FN) are functions like any other (attributes.cpp); a
// null callback does nothing (no copy, no delete work).
#pragma once

#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "errors.hpp"

namespace shmpi::attr {

/// Which objects a keyval may be used on.
enum class Kind { Comm, Type };

struct Keyval {
    Kind kind = Kind::Comm;
    int id = MPI_KEYVAL_INVALID;
    /// Comm keyvals (MPI_Keyval_create's functions have the same type);
    /// null for none (see the top of this file).
    MPI_Comm_copy_attr_function* comm_copy = nullptr;
    MPI_Comm_delete_attr_function* comm_delete = nullptr;
    /// Type keyvals, likewise.
    MPI_Type_copy_attr_function* type_copy = nullptr;
    MPI_Type_delete_attr_function* type_delete = nullptr;
    void* extra_state = nullptr;
    /// The user's key (until freed) plus one per stored attribute.
    int refs = 1;
    /// The user freed the key; attributes may still refer to it.
    bool freed = false;
};

/// Makes a keyval like `k` (its kind, callbacks, extra state); returns its
/// id, never a predefined key nor MPI_KEYVAL_INVALID.
int create_keyval(Keyval k);
/// For tests: the id create_keyval() tries next (ids count up to
/// INT32_MAX, then start again past those still alive).
void set_next_keyval_id(int id);
/// The keyval `id`: one the user has not freed, or one freed that stored
/// attributes still refer to (`freed` set); nullptr when there is none.
Keyval* find_keyval(int id);
/// MPI_*_free_keyval: drops the user's reference; the Keyval and its id
/// live on while stored attributes refer to it.  `k` must not be freed.
void free_keyval(Keyval& k);
/// Deletes a Keyval made by create_keyval() and drops its id (release()
/// calls it when the last reference goes).
void end_keyval(Keyval& k);

inline void retain(Keyval& k) { ++k.refs; }
/// Drops a reference; the last one ends the Keyval (and its id).
inline void release(Keyval& k) {
    if (--k.refs == 0) end_keyval(k);
}

/// The attributes of one object, in the order they were set.  The owner
/// passes its own handle to each call, for the callbacks.  Destroying a
/// Store drops its keyval references without running delete callbacks:
/// owners run clear() where MPI says callbacks run (MPI_Comm_free,
/// MPI_Type_free).
///
/// Inline, as the datatype engine carries a Store in every type; the
/// keyvals behind it live in attributes.cpp, which every target that
/// builds the engine links (fuzz/ lists it).
class Store {
public:
    Store() = default;
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;
    ~Store() {
        for (auto& e : entries_) release(*e.first);
    }

    /// The value stored under `k`, if any: returns false when there is none.
    bool get(const Keyval& k, void** value) const {
        for (const auto& e : entries_) {
            if (e.first == &k) {
                *value = e.second;
                return true;
            }
        }
        return false;
    }

    /// Stores `value` under `k`; when there is already one, its delete
    /// callback runs first (and, if it fails, the old value stays and
    /// MpiError is thrown naming `fn`).  Handle: MPI_Comm or MPI_Datatype.
    template <class Handle>
    void set(Handle self, Keyval& k, void* value, const char* fn) {
        for (auto& e : entries_) {
            if (e.first == &k) {
                call_delete(self, k, e.second, fn);
                e.second = value;
                return;
            }
        }
        entries_.emplace_back(&k, value);
        retain(k);
    }

    /// Runs the delete callback and removes the attribute; returns false when
    /// `k` has none here.  Throws MpiError (and keeps the attribute) when the
    /// callback fails.
    template <class Handle>
    bool erase(Handle self, Keyval& k, const char* fn) {
        auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == &k; });
        if (it == entries_.end()) return false;
        call_delete(self, k, it->second, fn);
        entries_.erase(it);
        release(k);
        return true;
    }

    /// Deletes every attribute, the last set first.  Stops at the first
    /// delete callback that fails (throws MpiError; the rest stay).
    template <class Handle>
    void clear(Handle self, const char* fn) {
        while (!entries_.empty()) {
            auto [k, v] = entries_.back();
            call_delete(self, *k, v, fn);
            entries_.pop_back();
            release(*k);
        }
    }

    /// MPI_Comm_dup / MPI_Type_dup: runs each copy callback (with `self`, the
    /// old object) and stores what they ask for in `out`, which must be
    /// empty.  On a failing callback, `out` is cleared (running the delete
    /// callbacks with `out_handle`) and MpiError is thrown.
    template <class Handle>
    void copy_into(Handle self, Store& out, Handle out_handle, const char* fn) const {
        try {
            for (const auto& [k, v] : entries_) {
                void* copy = nullptr;
                if (call_copy(self, *k, v, &copy, fn)) {
                    out.entries_.emplace_back(k, copy);
                    retain(*k);
                }
            }
        } catch (const MpiError&) {
            try {
                out.clear(out_handle, fn);
            } catch (const MpiError&) {
                // The copy's own failure is the one to report.
            }
            throw;
        }
    }

    bool empty() const { return entries_.empty(); }

private:
    [[noreturn]] static void failed(const char* fn, const char* which, const Keyval& k, int code) {
        // A callback may return any error code.  A predefined class gets a
        // code of that class that says which callback failed; any other
        // code (one of ours, or of a class the program added with
        // MPI_Add_error_class/_code) is what the call returns.  Anything
        // else reports as MPI_ERR_OTHER.
        std::string message = fmt::format("{}: the {} callback of keyval {} returned error {}", fn, which, k.id, code);
        const int cls = code > MPI_SUCCESS ? error_class_of(code) : -1;
        if (cls > MPI_SUCCESS && cls != code) throw MpiError(cls, std::move(message), code);
        throw MpiError(cls > MPI_SUCCESS ? cls : MPI_ERR_OTHER, std::move(message));
    }

    static void call_delete(MPI_Comm h, Keyval& k, void* v, const char* fn) {
        if (k.comm_delete == nullptr) return;
        if (int rc = k.comm_delete(h, k.id, v, k.extra_state); rc != MPI_SUCCESS) failed(fn, "delete", k, rc);
    }
    static void call_delete(MPI_Datatype h, Keyval& k, void* v, const char* fn) {
        if (k.type_delete == nullptr) return;
        if (int rc = k.type_delete(h, k.id, v, k.extra_state); rc != MPI_SUCCESS) failed(fn, "delete", k, rc);
    }
    /// Runs the copy callback; returns whether to store `*out`.
    template <class Handle, class Copy>
    static bool run_copy(Copy* f, Handle h, Keyval& k, void* in, void** out, const char* fn) {
        if (f == nullptr) return false;
        int flag = 0;
        if (int rc = f(h, k.id, k.extra_state, in, out, &flag); rc != MPI_SUCCESS) failed(fn, "copy", k, rc);
        return flag != 0;
    }
    static bool call_copy(MPI_Comm h, Keyval& k, void* in, void** out, const char* fn) {
        return run_copy(k.comm_copy, h, k, in, out, fn);
    }
    static bool call_copy(MPI_Datatype h, Keyval& k, void* in, void** out, const char* fn) {
        return run_copy(k.type_copy, h, k, in, out, fn);
    }

    std::vector<std::pair<Keyval*, void*>> entries_;
};

}  // namespace shmpi::attr
