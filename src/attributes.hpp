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
// thread inside the library touches keyvals and stores: one at a time,
// under MPI_THREAD_MULTIPLE by the C boundary's lock, shm/gate.hpp).
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
#include <exception>
#include <utility>
#include <vector>

#include "errors.hpp"

namespace shmpi::attr {

/// Which objects a keyval may be used on.
enum class Kind { Comm, Type, Win };

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
    /// Window keyvals (windows are never copied, so only the delete
    /// callback ever runs).
    MPI_Win_delete_attr_function* win_delete = nullptr;
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
/// Callbacks may call MPI on the same object (MPI-3.1 6.7 does not forbid
/// it): a delete callback may set or delete other attributes, a copy
/// callback may set attributes on the object being copied.  So no
/// reference, iterator or position into the entries is held across a
/// callback: each operation finds its entry again afterwards.  While an
/// attribute's delete callback runs, that attribute is marked, and setting
/// or deleting it from inside the callback is an error (it would run the
/// same callback on the same value again, without end).
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
        for (auto& e : entries_) release(*e.key);
    }

    /// The value stored under `k`, if any: returns false when there is none.
    bool get(const Keyval& k, void** value) const {
        if (const Entry* e = find(k)) {
            *value = e->value;
            return true;
        }
        return false;
    }

    /// Stores `value` under `k`; when there is already one, its delete
    /// callback runs first (and, if it fails, the old value stays and
    /// MpiError is thrown naming `fn`).  Handle: MPI_Comm or MPI_Datatype.
    template <class Handle>
    void set(Handle self, Keyval& k, void* value, const char* fn) {
        if (Entry* e = find(k)) {
            delete_value(self, k, e->value, fn);
            // The callback may have deleted k's attribute: store anew.
            e = find(k);
            if (e != nullptr) {
                e->value = value;
                return;
            }
        }
        add(k, value);
    }

    /// Runs the delete callback and removes the attribute; returns false when
    /// `k` has none here.  Throws MpiError (and keeps the attribute) when the
    /// callback fails.
    template <class Handle>
    bool erase(Handle self, Keyval& k, const char* fn) {
        Entry* e = find(k);
        if (e == nullptr) return false;
        delete_value(self, k, e->value, fn);
        remove(k);
        return true;
    }

    /// Deletes every attribute, the last set first, and those the delete
    /// callbacks set meanwhile.  Stops at the first delete callback that
    /// fails (throws MpiError; the rest stay).
    template <class Handle>
    void clear(Handle self, const char* fn) {
        drain(self, fn, false);
    }

    /// clear() for an object that goes away whatever its callbacks say
    /// (MPI_Finalize): runs every delete callback and drops every
    /// attribute, those whose callback fails too; returns the first failure
    /// (null if none).
    template <class Handle>
    std::exception_ptr clear_all(Handle self, const char* fn) {
        return drain(self, fn, true);
    }

    /// MPI_Comm_dup / MPI_Type_dup: runs each copy callback (with `self`, the
    /// old object) and stores what they ask for in `out`, which must be
    /// empty.  The attributes copied are those present when the call began
    /// and still present when their turn comes (a copy callback may change
    /// `self`'s).  On a failing callback, `out` is cleared (running the
    /// delete callbacks with `out_handle`) and MpiError is thrown.
    template <class Handle>
    void copy_into(Handle self, Store& out, Handle out_handle, const char* fn) const {
        std::vector<Keyval*> keys;
        keys.reserve(entries_.size());
        for (const Entry& e : entries_) {
            keys.push_back(e.key);
            retain(*e.key);  // a callback may delete the attribute and free the keyval
        }
        try {
            for (Keyval* k : keys) {
                const Entry* e = find(*k);
                if (e == nullptr) continue;
                void* copy = nullptr;
                if (call_copy(self, *k, e->value, &copy, fn)) out.add(*k, copy);
            }
        } catch (const MpiError&) {
            for (Keyval* k : keys) release(*k);
            try {
                out.clear(out_handle, fn);
            } catch (const MpiError&) {
                // The copy's own failure is the one to report.
            }
            throw;
        }
        for (Keyval* k : keys) release(*k);
    }

    bool empty() const { return entries_.empty(); }

private:
    struct Entry {
        Keyval* key;
        void* value;
        bool deleting;  ///< its delete callback is running (see the class comment)
    };

    Entry* find(const Keyval& k) {
        for (Entry& e : entries_) {
            if (e.key == &k) return &e;
        }
        return nullptr;
    }
    const Entry* find(const Keyval& k) const { return const_cast<Store*>(this)->find(k); }

    /// Runs k's delete callback on `value`, the attribute stored under k,
    /// with the attribute marked meanwhile.
    template <class Handle>
    void delete_value(Handle self, Keyval& k, void* value, const char* fn) {
        Entry* e = find(k);
        if (e->deleting) {
            throw MpiError(MPI_ERR_OTHER, fmt::format("{}: the delete callback of keyval {} is running on this "
                                                      "object, and its attribute cannot be set or deleted from "
                                                      "there", fn, k.id));
        }
        e->deleting = true;
        try {
            call_delete(self, k, value, fn);
        } catch (...) {
            if ((e = find(k)) != nullptr) e->deleting = false;
            throw;
        }
        if ((e = find(k)) != nullptr) e->deleting = false;
    }

    /// clear() and clear_all(): deletes the attributes from the last set
    /// on.  A failing delete callback throws, its attribute kept, unless
    /// `past_failures`: then the attribute goes too and the first failure
    /// is returned once every attribute is gone.
    template <class Handle>
    std::exception_ptr drain(Handle self, const char* fn, bool past_failures) {
        std::exception_ptr first;
        while (!entries_.empty()) {
            Keyval& k = *entries_.back().key;
            try {
                delete_value(self, k, entries_.back().value, fn);
            } catch (const MpiError&) {
                if (!past_failures) throw;
                if (first == nullptr) first = std::current_exception();
            }
            remove(k);
        }
        return first;
    }

    /// Drops k's attribute, if any, and its keyval reference.
    void remove(const Keyval& k) {
        auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == &k; });
        if (it == entries_.end()) return;
        Keyval* key = it->key;
        entries_.erase(it);
        release(*key);
    }

    /// Stores a new attribute: `k` has none here yet.
    void add(Keyval& k, void* value) {
        entries_.push_back(Entry{&k, value, false});
        retain(k);
    }

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
    static void call_delete(MPI_Win h, Keyval& k, void* v, const char* fn) {
        if (k.win_delete == nullptr) return;
        if (int rc = k.win_delete(h, k.id, v, k.extra_state); rc != MPI_SUCCESS) failed(fn, "delete", k, rc);
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

    std::vector<Entry> entries_;
};

}  // namespace shmpi::attr
