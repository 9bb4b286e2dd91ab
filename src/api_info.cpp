// C boundary: info objects (MPI-3.1 chapter 9), MPI_INFO_ENV, and the
// communicator info calls.
//
// An info object is an ordered list of (key, value) strings; MPI_Info_set
// of a key already there replaces its value in place, so MPI_Info_get_nthkey
// numbers keys in the order they were first set.  shmpi takes no hints: the
// calls that accept an info check it and go on.
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api_common.hpp"
#include "api_info.hpp"

using namespace shmpi;
using namespace shmpi::api;

namespace shmpi::api {

/// What an MPI_Info handle points at.  Written only by the calls on it.
struct Info : HandleStorage {
    static constexpr std::uint32_t kMagic = 0x494e464f;  // "INFO"
    std::uint32_t magic = kMagic;
    std::vector<std::pair<std::string, std::string>> entries;

    /// The entry of `key` in `self`, const or not; end() if none.
    template <class Self>
    static auto find_in(Self& self, std::string_view key) {
        return std::find_if(self.entries.begin(), self.entries.end(), [&](const auto& e) { return e.first == key; });
    }
    auto find(std::string_view key) { return find_in(*this, key); }
    auto find(std::string_view key) const { return find_in(*this, key); }
};

namespace {

/// The words of this process's command line, from /proc (MPI_Init may have
/// been given no argv).
std::vector<std::string> command_line() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> words;
    std::size_t start = 0;
    while (start < all.size()) {
        const std::size_t end = all.find('\0', start);
        words.push_back(all.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return words;
}

const char* thread_level_name(int level) {
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
    }
}

/// MPI_INFO_ENV (MPI-3.1 8.7.2): how this process was started; every key
/// is one the standard reserves, and a value too long for an info (a very
/// long command line) leaves its key out.  Built the first time it is asked
/// for, and again once MPI runs if it was first asked for before.
const Info& env_info() {
    static std::unique_ptr<Info> env;
    static bool with_runtime = false;
    if (env != nullptr && (with_runtime || phase() != Phase::Running)) return *env;
    auto e = std::make_unique<Info>();
    auto add = [&](const char* key, std::string value) {
        if (value.size() <= MPI_MAX_INFO_VAL) e->entries.emplace_back(key, std::move(value));
    };
    const std::vector<std::string> words = command_line();
    if (!words.empty()) {
        add("command", words[0]);
        std::string args;
        for (std::size_t i = 1; i < words.size(); ++i) {
            if (i > 1) args += ' ';
            args += words[i];
        }
        add("argv", std::move(args));
    }
    const bool running_now = phase() == Phase::Running;
    if (running_now) {
        // Like "command" and "argv", the rank's own program's (MPMD).
        add("maxprocs", std::to_string(runtime().transport().app_size()));
        // MPI-3.1 8.7.2: the level the program required, not the one provided.
        add("thread_level", thread_level_name(runtime().required_thread_level()));
    }
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) add("host", host);
    std::vector<char> cwd(4096);
    if (getcwd(cwd.data(), cwd.size()) != nullptr) add("wdir", cwd.data());
    env = std::move(e);  // only now: a throw above leaves the old one in place
    with_runtime = running_now;
    return *env;
}

std::string key_of(const char* key, const char* fn) {
    need(key, "key", fn);
    const std::size_t n = std::strlen(key);
    if (n == 0) throw MpiError(MPI_ERR_INFO_KEY, fmt::format("{}: key is empty", fn));
    if (n > MPI_MAX_INFO_KEY) {
        throw MpiError(MPI_ERR_INFO_KEY, fmt::format("{}: key of {} characters is too long (at most {}, "
                                                     "MPI_MAX_INFO_KEY)",
                                                     fn, n, MPI_MAX_INFO_KEY));
    }
    return std::string(key, n);
}

/// A writable info: not MPI_INFO_ENV.
Info& mutable_info(MPI_Info handle, const char* fn) {
    if (handle == MPI_INFO_ENV) {
        throw MpiError(MPI_ERR_INFO, fmt::format("{}: MPI_INFO_ENV is predefined and cannot be changed or freed", fn));
    }
    return const_cast<Info&>(info_of(handle, fn));
}

/// Copies `s` into `out`, at most `room` characters and a terminating NUL.
void copy_out(const std::string& s, char* out, int room) {
    const std::size_t n = std::min<std::size_t>(s.size(), static_cast<std::size_t>(room));
    std::memcpy(out, s.data(), n);
    out[n] = '\0';
}

}  // namespace

const Info& info_of(MPI_Info handle, const char* fn) {
    if (handle == MPI_INFO_NULL) throw MpiError(MPI_ERR_INFO, fmt::format("{}: info is MPI_INFO_NULL", fn));
    if (handle == MPI_INFO_ENV) return env_info();
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    const auto* i = reinterpret_cast<const Info*>(handle);
    const bool readable = v >= kPredefinedLimit && HandleStorage::may_read_as<Info>(handle);
    if (!readable || i->magic != Info::kMagic) {
        const bool freed = readable && i->magic == kFreedMagic;
        throw MpiError(MPI_ERR_INFO, fmt::format("{}: invalid info {:#x}{}", fn, v,
                                                 freed ? " (it has been freed with MPI_Info_free)" : ""));
    }
    return *i;
}

void check_info_arg(MPI_Info handle, const char* fn) {
    if (handle != MPI_INFO_NULL) info_of(handle, fn);
}

bool info_says_true(MPI_Info handle, const char* key, const char* fn) {
    if (handle == MPI_INFO_NULL) return false;
    const Info& i = info_of(handle, fn);
    const auto it = i.find(key);
    return it != i.entries.end() && it->second == "true";
}

std::vector<std::pair<std::string, std::string>> info_entries(MPI_Info handle, const char* fn) {
    if (handle == MPI_INFO_NULL) return {};
    return info_of(handle, fn).entries;
}

MPI_Info new_info(std::vector<std::pair<std::string, std::string>> entries) {
    auto* i = new Info;
    i->entries = std::move(entries);
    return reinterpret_cast<MPI_Info>(i);
}

}  // namespace shmpi::api

extern "C" {

int PMPI_Info_create(MPI_Info* info) {
    const char* fn = "MPI_Info_create";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(info, "info", fn);
        *info = reinterpret_cast<MPI_Info>(new Info);
    });
}
SHMPI_WEAK_ALIAS(Info_create);

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
    const char* fn = "MPI_Info_set";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Info& i = mutable_info(info, fn);
        std::string k = key_of(key, fn);
        need(value, "value", fn);
        const std::size_t n = std::strlen(value);
        if (n > MPI_MAX_INFO_VAL) {
            throw MpiError(MPI_ERR_INFO_VALUE,
                           fmt::format("{}: the value of key \"{}\" has {} characters, more than {} "
                                       "(MPI_MAX_INFO_VAL)",
                                       fn, k, n, MPI_MAX_INFO_VAL));
        }
        auto it = i.find(k);
        if (it != i.entries.end()) {
            it->second.assign(value, n);
        } else {
            i.entries.emplace_back(std::move(k), std::string(value, n));
        }
    });
}
SHMPI_WEAK_ALIAS(Info_set);

int PMPI_Info_delete(MPI_Info info, const char* key) {
    const char* fn = "MPI_Info_delete";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Info& i = mutable_info(info, fn);
        const std::string k = key_of(key, fn);
        auto it = i.find(k);
        if (it == i.entries.end()) {
            throw MpiError(MPI_ERR_INFO_NOKEY, fmt::format("{}: key \"{}\" is not in the info", fn, k));
        }
        i.entries.erase(it);
    });
}
SHMPI_WEAK_ALIAS(Info_delete);

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
    const char* fn = "MPI_Info_get";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const Info& i = info_of(info, fn);
        const std::string k = key_of(key, fn);
        if (valuelen < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: valuelen {} is negative", fn, valuelen));
        need(flag, "flag", fn);
        auto it = i.find(k);
        *flag = it != i.entries.end() ? 1 : 0;
        if (*flag == 0) return;  // value is left as it was
        need(value, "value", fn);
        copy_out(it->second, value, valuelen);
    });
}
SHMPI_WEAK_ALIAS(Info_get);

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
    const char* fn = "MPI_Info_get_valuelen";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const Info& i = info_of(info, fn);
        const std::string k = key_of(key, fn);
        need(valuelen, "valuelen", fn);
        need(flag, "flag", fn);
        auto it = i.find(k);
        *flag = it != i.entries.end() ? 1 : 0;
        if (*flag != 0) *valuelen = static_cast<int>(it->second.size());
    });
}
SHMPI_WEAK_ALIAS(Info_get_valuelen);

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
    const char* fn = "MPI_Info_get_nkeys";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const Info& i = info_of(info, fn);
        need(nkeys, "nkeys", fn);
        *nkeys = static_cast<int>(i.entries.size());
    });
}
SHMPI_WEAK_ALIAS(Info_get_nkeys);

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
    const char* fn = "MPI_Info_get_nthkey";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const Info& i = info_of(info, fn);
        const int nkeys = static_cast<int>(i.entries.size());
        if (n < 0 || n >= nkeys) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: n = {} is not a key number (the info has {} key{})", fn, n,
                                                    nkeys, nkeys == 1 ? "" : "s"));
        }
        need(key, "key", fn);
        copy_out(i.entries[static_cast<std::size_t>(n)].first, key, MPI_MAX_INFO_KEY);
    });
}
SHMPI_WEAK_ALIAS(Info_get_nthkey);

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
    const char* fn = "MPI_Info_dup";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need_new(newinfo, MPI_INFO_NULL, "newinfo", fn);
        const Info& i = info_of(info, fn);
        auto d = std::make_unique<Info>();
        d->entries = i.entries;
        *newinfo = reinterpret_cast<MPI_Info>(d.release());
    });
}
SHMPI_WEAK_ALIAS(Info_dup);

int PMPI_Info_free(MPI_Info* info) {
    const char* fn = "MPI_Info_free";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(info, "info", fn);
        Info& i = mutable_info(*info, fn);
        delete &i;
        *info = MPI_INFO_NULL;
    });
}
SHMPI_WEAK_ALIAS(Info_free);

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
    const char* fn = "MPI_Comm_set_info";
    return guard(comm, fn, [&] {
        comm_of(comm, fn);
        info_of(info, fn);  // shmpi uses no communicator hints
    });
}
SHMPI_WEAK_ALIAS(Comm_set_info);

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
    const char* fn = "MPI_Comm_get_info";
    return guard(comm, fn, [&] {
        comm_of(comm, fn);
        need(info_used, "info_used", fn);
        // The hints in use: none.  A new object the caller frees.
        *info_used = reinterpret_cast<MPI_Info>(new Info);
    });
}
SHMPI_WEAK_ALIAS(Comm_get_info);

}  // extern "C"
