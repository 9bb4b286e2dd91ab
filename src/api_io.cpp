// C boundary: parallel I/O (MPI-3.1 chapter 13).  The calls check their
// arguments here and hand the rest to io::File (io/file.hpp).  Errors of a
// call on a file go to the file's error handler; those of MPI_File_open and
// MPI_File_delete, which have no file, to the default file error handler,
// MPI_FILE_NULL's (13.7).  Both start as MPI_ERRORS_RETURN.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>
#include <utility>

#include "api_comm.hpp"
#include "api_common.hpp"
#include "api_info.hpp"
#include "api_requests.hpp"
#include "comm_create.hpp"
#include "io/file.hpp"

using namespace shmpi;
using namespace shmpi::api;
using shmpi::io::File;

namespace {

/// MPI_FILE_NULL's error handler: new files start with it, and the calls
/// without a file report to it.  Only the thread in MPI touches it.
MPI_Errhandler g_default_errhandler = MPI_ERRORS_RETURN;

File& file_arg(MPI_File handle, const char* fn) {
    if (handle == MPI_FILE_NULL) fail(MPI_ERR_FILE, "{}: fh is MPI_FILE_NULL", fn);
    File* f = io::file_of(handle);
    if (f == nullptr) {
        const bool freed = reinterpret_cast<std::uintptr_t>(handle) >= kPredefinedLimit &&
                           HandleStorage::may_read_as<File>(handle) &&
                           reinterpret_cast<const File*>(handle)->magic() == kFreedMagic;
        fail(MPI_ERR_FILE, "{}: invalid file {:#x}{}", fn, reinterpret_cast<std::uintptr_t>(handle),
             freed ? " (it has been closed with MPI_File_close)" : "");
    }
    return *f;
}

/// Applies the error handler of `fh` (the default one for MPI_FILE_NULL
/// and for what is not a file) to `e`.
int raise_file(MPI_File fh, const MpiError& e, int code = -1) {
    File* f = phase() == Phase::Running ? io::file_of(fh) : nullptr;
    const MPI_Errhandler eh = f != nullptr ? f->errhandler : g_default_errhandler;
    if (eh == MPI_ERRORS_RETURN) return code >= 0 ? code : make_error_code(e.error_class(), e.what());
    if (UserErrhandler* u = user_errhandler(eh); u != nullptr && u->file_fn != nullptr) {
        if (code < 0) code = make_error_code(e.error_class(), e.what());
        MPI_File target = f != nullptr ? fh : MPI_FILE_NULL;
        u->file_fn(&target, &code);
        return code;
    }
    std::fprintf(stderr, "shmpi: %s\n", e.what());
    runtime().transport().abort_job(e.error_class(), shm::kAbortFatal);
}

/// guard() for the calls on a file: errors go to its handler.
template <class Body>
int file_guard(MPI_File fh, const char* fn, Body&& body) {
    return object_guard(fn, [fh](const MpiError& e, int code) { return raise_file(fh, e, code); },
                        std::forward<Body>(body));
}

/// A status of an access that moved `bytes` bytes.
MPI_Status io_status(std::int64_t bytes) {
    MPI_Status s = empty_status();
    set_status_bytes(s, static_cast<std::uint64_t>(bytes));
    return s;
}
void put_io_status(MPI_Status* status, std::int64_t bytes) { put_status(status, io_status(bytes)); }

/// The arguments of a data access: checked, and the datatype translated.
const dtype::Datatype& data_args(const void* buf, int count, MPI_Datatype datatype, const char* fn) {
    check_count(count, fn);
    const dtype::Datatype& t = type_arg(datatype, "datatype", fn);
    check_buffer(buf, count, t, "buf", fn);
    return t;
}

void not_sequential(const File& f, const char* fn) {
    if ((f.amode() & MPI_MODE_SEQUENTIAL) != 0) {
        fail(MPI_ERR_UNSUPPORTED_OPERATION, "{}: the file was opened with MPI_MODE_SEQUENTIAL, which allows only "
             "the shared file pointer", fn);
    }
}

/// The amode rules of 13.2.1.
void check_amode(int amode, const char* fn) {
    constexpr int kKnown = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |
                           MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL | MPI_MODE_APPEND |
                           MPI_MODE_SEQUENTIAL;
    if ((amode & ~kKnown) != 0) fail(MPI_ERR_AMODE, "{}: amode {:#x} has bits that are no MPI_MODE_ constant", fn, amode);
    const int access = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_WRONLY ? 1 : 0) +
                       (amode & MPI_MODE_RDWR ? 1 : 0);
    if (access != 1) {
        fail(MPI_ERR_AMODE, "{}: amode {:#x} must hold exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and "
             "MPI_MODE_RDWR", fn, amode);
    }
    if ((amode & MPI_MODE_RDONLY) != 0 && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)) != 0) {
        fail(MPI_ERR_AMODE, "{}: amode {:#x}: MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or MPI_MODE_EXCL", fn,
             amode);
    }
    if ((amode & MPI_MODE_RDWR) != 0 && (amode & MPI_MODE_SEQUENTIAL) != 0) {
        fail(MPI_ERR_AMODE, "{}: amode {:#x}: MPI_MODE_RDWR cannot go with MPI_MODE_SEQUENTIAL", fn, amode);
    }
}

/// A file name as the program gave it, with ROMIO's file-system prefixes
/// ("ufs:", "nfs:") taken off, as programs written for ROMIO use them.
std::string file_path(const char* filename, const char* fn) {
    need(filename, "filename", fn);
    std::string path(filename);
    for (const char* prefix : {"ufs:", "nfs:"}) {
        if (path.rfind(prefix, 0) == 0) path.erase(0, std::strlen(prefix));
    }
    if (path.empty()) fail(MPI_ERR_BAD_FILE, "{}: filename is empty", fn);
    return path;
}

/// Keeps `info`'s entries as the file's hints.
void take_hints(File& f, MPI_Info info, const char* fn) {
    for (auto& [key, value] : info_entries(info, fn)) {
        auto it = std::find_if(f.hints.begin(), f.hints.end(), [&](const auto& e) { return e.first == key; });
        if (it != f.hints.end()) {
            it->second = value;
        } else {
            f.hints.emplace_back(key, value);
        }
    }
}

/// The MPI_File_i* calls: the access, then a request that is done.
template <class Access>
void start_access(MPI_Request* request, const char* fn, Access&& access) {
    need_new(request, MPI_REQUEST_NULL, "request", fn);
    *request = completed_request(io_status(access()));
}

}  // namespace

extern "C" {

// ------------------------------------------------------------ files

int PMPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
    const char* fn = "MPI_File_open";
    return file_guard(MPI_FILE_NULL, fn, [&] {
        Communicator& c = intracomm_of(comm, fn);
        need_new(fh, MPI_FILE_NULL, "fh", fn);
        const std::string path = file_path(filename, fn);
        check_amode(amode, fn);
        check_info_arg(info, fn);
        std::vector<int> all(static_cast<std::size_t>(c.size()));
        std::iota(all.begin(), all.end(), 0);
        std::unique_ptr<Communicator> dup = create_from_members(c, all);
        release(dup->errhandler());
        dup->set_errhandler(MPI_ERRORS_ARE_FATAL);
        std::unique_ptr<File> f = File::open(runtime(), std::move(dup), path, amode, fn);
        take_hints(*f, info, fn);
        retain(g_default_errhandler);
        f->errhandler = g_default_errhandler;
        *fh = reinterpret_cast<MPI_File>(f.release());
    });
}
SHMPI_WEAK_ALIAS(File_open);

int PMPI_File_close(MPI_File* fh) {
    const char* fn = "MPI_File_close";
    const MPI_File handle = fh != nullptr ? *fh : MPI_FILE_NULL;
    return file_guard(handle, fn, [&] {
        need(fh, "fh", fn);
        File& f = file_arg(*fh, fn);
        f.close(fn);
        release(f.errhandler);
        delete &f;
        *fh = MPI_FILE_NULL;
    });
}
SHMPI_WEAK_ALIAS(File_close);

int PMPI_File_delete(const char* filename, MPI_Info info) {
    const char* fn = "MPI_File_delete";
    return file_guard(MPI_FILE_NULL, fn, [&] {
        const std::string path = file_path(filename, fn);
        check_info_arg(info, fn);
        if (::unlink(path.c_str()) != 0) {
            const int e = errno;
            fail(io::error_class_of_errno(e), "{}: cannot delete {}: {}", fn, path, std::strerror(e));
        }
    });
}
SHMPI_WEAK_ALIAS(File_delete);

int PMPI_Register_datarep(const char* datarep, MPI_Datarep_conversion_function* read_conversion_fn,
                          MPI_Datarep_conversion_function* write_conversion_fn,
                          MPI_Datarep_extent_function* dtype_file_extent_fn, void* extra_state) {
    const char* fn = "MPI_Register_datarep";
    // Not about a file: errors go to MPI_FILE_NULL's handler, as ROMIO's do.
    return file_guard(MPI_FILE_NULL, fn, [&] {
        need(datarep, "datarep", fn);
        const std::string name = datarep;
        if (name.empty() || name.size() >= MPI_MAX_DATAREP_STRING) {
            fail(MPI_ERR_ARG, "{}: datarep \"{}\" has {} characters; a name has 1 to {} (MPI_MAX_DATAREP_STRING - 1)",
                 fn, name, name.size(), MPI_MAX_DATAREP_STRING - 1);
        }
        if (dtype_file_extent_fn == nullptr) {
            fail(MPI_ERR_ARG, "{}: dtype_file_extent_fn is NULL; a data representation needs one", fn);
        }
        io::Datarep::add(name, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, extra_state, fn);
    });
}
SHMPI_WEAK_ALIAS(Register_datarep);

int PMPI_File_set_size(MPI_File fh, MPI_Offset size) {
    const char* fn = "MPI_File_set_size";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        if (size < 0) fail(MPI_ERR_ARG, "{}: size {} is negative", fn, size);
        f.set_size(size, false, fn);
    });
}
SHMPI_WEAK_ALIAS(File_set_size);

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
    const char* fn = "MPI_File_preallocate";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        if (size < 0) fail(MPI_ERR_ARG, "{}: size {} is negative", fn, size);
        f.set_size(size, true, fn);
    });
}
SHMPI_WEAK_ALIAS(File_preallocate);

int PMPI_File_get_size(MPI_File fh, MPI_Offset* size) {
    const char* fn = "MPI_File_get_size";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        need(size, "size", fn);
        *size = f.file_size(fn);
    });
}
SHMPI_WEAK_ALIAS(File_get_size);

int PMPI_File_get_group(MPI_File fh, MPI_Group* group) {
    const char* fn = "MPI_File_get_group";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        need(group, "group", fn);
        *group = group_handle(f.comm().world_ranks());
    });
}
SHMPI_WEAK_ALIAS(File_get_group);

int PMPI_File_get_amode(MPI_File fh, int* amode) {
    const char* fn = "MPI_File_get_amode";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        need(amode, "amode", fn);
        *amode = f.amode();
    });
}
SHMPI_WEAK_ALIAS(File_get_amode);

int PMPI_File_set_info(MPI_File fh, MPI_Info info) {
    const char* fn = "MPI_File_set_info";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        check_info_arg(info, fn);
        take_hints(f, info, fn);
    });
}
SHMPI_WEAK_ALIAS(File_set_info);

int PMPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
    const char* fn = "MPI_File_get_info";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        need(info_used, "info_used", fn);
        *info_used = new_info(f.hints);
    });
}
SHMPI_WEAK_ALIAS(File_get_info);

// ------------------------------------------------------------ views

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char* datarep, MPI_Info info) {
    const char* fn = "MPI_File_set_view";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        const dtype::Datatype& et = type_arg(etype, "etype", fn);
        const dtype::Datatype& ft = type_arg(filetype, "filetype", fn);
        need(datarep, "datarep", fn);
        check_info_arg(info, fn);
        f.set_view(disp, et, ft, datarep, fn);
        take_hints(f, info, fn);
    });
}
SHMPI_WEAK_ALIAS(File_set_view);

int PMPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype, char* datarep) {
    const char* fn = "MPI_File_get_view";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        need(disp, "disp", fn);
        need(etype, "etype", fn);
        need(filetype, "filetype", fn);
        need(datarep, "datarep", fn);
        *disp = f.view_disp();
        // Derived types come back as handles the caller frees (13.3).
        dtype::add_handle(f.etype());
        *etype = dtype::handle_of(f.etype());
        dtype::add_handle(f.filetype());
        *filetype = dtype::handle_of(f.filetype());
        std::snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", f.datarep().c_str());
    });
}
SHMPI_WEAK_ALIAS(File_get_view);

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
    const char* fn = "MPI_File_get_byte_offset";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        need(disp, "disp", fn);
        not_sequential(f, fn);
        *disp = f.byte_offset(offset, fn);
    });
}
SHMPI_WEAK_ALIAS(File_get_byte_offset);

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
    const char* fn = "MPI_File_get_type_extent";
    return file_guard(fh, fn, [&] {
        const File& f = file_arg(fh, fn);
        const dtype::Datatype& t = any_type(datatype, fn);
        need(extent, "extent", fn);
        *extent = static_cast<MPI_Aint>(f.type_extent(t, fn));
    });
}
SHMPI_WEAK_ALIAS(File_get_type_extent);

// ------------------------------------------------------------ explicit offsets

#define SHMPI_IO_READ_AT(Name, Collective)                                                            \
    int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype, \
                         MPI_Status* status) {                                                        \
        const char* fn = "MPI_File_" #Name;                                                           \
        return file_guard(fh, fn, [&] {                                                               \
            File& f = file_arg(fh, fn);                                                               \
            const dtype::Datatype& t = data_args(buf, count, datatype, fn);                           \
            not_sequential(f, fn);                                                                    \
            put_io_status(status, Collective ? f.read_at_all(offset, buf, count, t, fn)              \
                                             : f.read_at(offset, buf, count, t, fn));                 \
        });                                                                                           \
    }                                                                                                 \
    SHMPI_WEAK_ALIAS(File_##Name);

#define SHMPI_IO_WRITE_AT(Name, Collective)                                                                 \
    int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype, \
                         MPI_Status* status) {                                                              \
        const char* fn = "MPI_File_" #Name;                                                                 \
        return file_guard(fh, fn, [&] {                                                                     \
            File& f = file_arg(fh, fn);                                                                     \
            const dtype::Datatype& t = data_args(buf, count, datatype, fn);                                 \
            not_sequential(f, fn);                                                                          \
            put_io_status(status, Collective ? f.write_at_all(offset, buf, count, t, fn)                  \
                                             : f.write_at(offset, buf, count, t, fn));                     \
        });                                                                                                 \
    }                                                                                                       \
    SHMPI_WEAK_ALIAS(File_##Name);

SHMPI_IO_READ_AT(read_at, false)
SHMPI_IO_READ_AT(read_at_all, true)
SHMPI_IO_WRITE_AT(write_at, false)
SHMPI_IO_WRITE_AT(write_at_all, true)

#define SHMPI_IO_IREAD_AT(Name, Collective)                                                            \
    int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,  \
                         MPI_Request* request) {                                                       \
        const char* fn = "MPI_File_" #Name;                                                            \
        return file_guard(fh, fn, [&] {                                                                \
            File& f = file_arg(fh, fn);                                                                \
            const dtype::Datatype& t = data_args(buf, count, datatype, fn);                            \
            not_sequential(f, fn);                                                                     \
            start_access(request, fn, [&] {                                                            \
                return Collective ? f.read_at_all(offset, buf, count, t, fn) : f.read_at(offset, buf, count, t, fn); \
            });                                                                                        \
        });                                                                                            \
    }                                                                                                  \
    SHMPI_WEAK_ALIAS(File_##Name);

#define SHMPI_IO_IWRITE_AT(Name, Collective)                                                                \
    int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype, \
                         MPI_Request* request) {                                                            \
        const char* fn = "MPI_File_" #Name;                                                                 \
        return file_guard(fh, fn, [&] {                                                                     \
            File& f = file_arg(fh, fn);                                                                     \
            const dtype::Datatype& t = data_args(buf, count, datatype, fn);                                 \
            not_sequential(f, fn);                                                                          \
            start_access(request, fn, [&] {                                                                 \
                return Collective ? f.write_at_all(offset, buf, count, t, fn) : f.write_at(offset, buf, count, t, fn); \
            });                                                                                             \
        });                                                                                                 \
    }                                                                                                       \
    SHMPI_WEAK_ALIAS(File_##Name);

SHMPI_IO_IREAD_AT(iread_at, false)
SHMPI_IO_IREAD_AT(iread_at_all, true)
SHMPI_IO_IWRITE_AT(iwrite_at, false)
SHMPI_IO_IWRITE_AT(iwrite_at_all, true)

// ------------------------------------------------------------ individual file pointer

#define SHMPI_IO_READ(Name, Collective)                                                                  \
    int PMPI_File_##Name(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) { \
        const char* fn = "MPI_File_" #Name;                                                              \
        return file_guard(fh, fn, [&] {                                                                  \
            File& f = file_arg(fh, fn);                                                                  \
            const dtype::Datatype& t = data_args(buf, count, datatype, fn);                              \
            not_sequential(f, fn);                                                                       \
            put_io_status(status, Collective ? f.read_all(buf, count, t, fn) : f.read(buf, count, t, fn)); \
        });                                                                                              \
    }                                                                                                    \
    SHMPI_WEAK_ALIAS(File_##Name);

#define SHMPI_IO_WRITE(Name, Collective)                                                                       \
    int PMPI_File_##Name(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status) { \
        const char* fn = "MPI_File_" #Name;                                                                    \
        return file_guard(fh, fn, [&] {                                                                        \
            File& f = file_arg(fh, fn);                                                                        \
            const dtype::Datatype& t = data_args(buf, count, datatype, fn);                                    \
            not_sequential(f, fn);                                                                             \
            put_io_status(status, Collective ? f.write_all(buf, count, t, fn) : f.write(buf, count, t, fn));   \
        });                                                                                                    \
    }                                                                                                          \
    SHMPI_WEAK_ALIAS(File_##Name);

SHMPI_IO_READ(read, false)
SHMPI_IO_READ(read_all, true)
SHMPI_IO_WRITE(write, false)
SHMPI_IO_WRITE(write_all, true)

#define SHMPI_IO_IREAD(Name, Collective)                                                                     \
    int PMPI_File_##Name(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {  \
        const char* fn = "MPI_File_" #Name;                                                                  \
        return file_guard(fh, fn, [&] {                                                                      \
            File& f = file_arg(fh, fn);                                                                      \
            const dtype::Datatype& t = data_args(buf, count, datatype, fn);                                  \
            not_sequential(f, fn);                                                                           \
            start_access(request, fn, [&] { return Collective ? f.read_all(buf, count, t, fn) : f.read(buf, count, t, fn); }); \
        });                                                                                                  \
    }                                                                                                        \
    SHMPI_WEAK_ALIAS(File_##Name);

#define SHMPI_IO_IWRITE(Name, Collective)                                                                          \
    int PMPI_File_##Name(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {   \
        const char* fn = "MPI_File_" #Name;                                                                        \
        return file_guard(fh, fn, [&] {                                                                            \
            File& f = file_arg(fh, fn);                                                                            \
            const dtype::Datatype& t = data_args(buf, count, datatype, fn);                                        \
            not_sequential(f, fn);                                                                                 \
            start_access(request, fn, [&] { return Collective ? f.write_all(buf, count, t, fn) : f.write(buf, count, t, fn); }); \
        });                                                                                                        \
    }                                                                                                              \
    SHMPI_WEAK_ALIAS(File_##Name);

SHMPI_IO_IREAD(iread, false)
SHMPI_IO_IREAD(iread_all, true)
SHMPI_IO_IWRITE(iwrite, false)
SHMPI_IO_IWRITE(iwrite_all, true)

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
    const char* fn = "MPI_File_seek";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        not_sequential(f, fn);
        f.seek(offset, whence, fn);
    });
}
SHMPI_WEAK_ALIAS(File_seek);

int PMPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
    const char* fn = "MPI_File_get_position";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        need(offset, "offset", fn);
        not_sequential(f, fn);
        *offset = f.position();
    });
}
SHMPI_WEAK_ALIAS(File_get_position);

// ------------------------------------------------------------ shared file pointer

int PMPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
    const char* fn = "MPI_File_read_shared";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        const dtype::Datatype& t = data_args(buf, count, datatype, fn);
        put_io_status(status, f.read_shared(buf, count, t, fn));
    });
}
SHMPI_WEAK_ALIAS(File_read_shared);

int PMPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
    const char* fn = "MPI_File_write_shared";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        const dtype::Datatype& t = data_args(buf, count, datatype, fn);
        put_io_status(status, f.write_shared(buf, count, t, fn));
    });
}
SHMPI_WEAK_ALIAS(File_write_shared);

int PMPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
    const char* fn = "MPI_File_iread_shared";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        const dtype::Datatype& t = data_args(buf, count, datatype, fn);
        start_access(request, fn, [&] { return f.read_shared(buf, count, t, fn); });
    });
}
SHMPI_WEAK_ALIAS(File_iread_shared);

int PMPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
    const char* fn = "MPI_File_iwrite_shared";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        const dtype::Datatype& t = data_args(buf, count, datatype, fn);
        start_access(request, fn, [&] { return f.write_shared(buf, count, t, fn); });
    });
}
SHMPI_WEAK_ALIAS(File_iwrite_shared);

int PMPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
    const char* fn = "MPI_File_read_ordered";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        const dtype::Datatype& t = data_args(buf, count, datatype, fn);
        f.no_split(fn);
        put_io_status(status, f.read_ordered(buf, count, t, fn));
    });
}
SHMPI_WEAK_ALIAS(File_read_ordered);

int PMPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
    const char* fn = "MPI_File_write_ordered";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        const dtype::Datatype& t = data_args(buf, count, datatype, fn);
        f.no_split(fn);
        put_io_status(status, f.write_ordered(buf, count, t, fn));
    });
}
SHMPI_WEAK_ALIAS(File_write_ordered);

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
    const char* fn = "MPI_File_seek_shared";
    return file_guard(fh, fn, [&] { file_arg(fh, fn).seek_shared(offset, whence, fn); });
}
SHMPI_WEAK_ALIAS(File_seek_shared);

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
    const char* fn = "MPI_File_get_position_shared";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        need(offset, "offset", fn);
        *offset = f.position_shared(fn);
    });
}
SHMPI_WEAK_ALIAS(File_get_position_shared);

// ------------------------------------------------------------ split collectives

#define SHMPI_IO_SPLIT_BEGIN_AT(Name, Kind, Access, Buf)                                                         \
    int PMPI_File_##Name##_begin(MPI_File fh, MPI_Offset offset, Buf buf, int count, MPI_Datatype datatype) { \
        const char* fn = "MPI_File_" #Name "_begin";                                                            \
        return file_guard(fh, fn, [&] {                                                                         \
            File& f = file_arg(fh, fn);                                                                         \
            const dtype::Datatype& t = data_args(buf, count, datatype, fn);                                     \
            not_sequential(f, fn);                                                                              \
            f.no_split(fn);                                                                                     \
            f.split_begin(File::Split::Kind, buf, f.Access(offset, buf, count, t, fn), fn);                     \
        });                                                                                                     \
    }                                                                                                           \
    SHMPI_WEAK_ALIAS(File_##Name##_begin);

#define SHMPI_IO_SPLIT_BEGIN(Name, Kind, Access, Buf, Sequential)                                      \
    int PMPI_File_##Name##_begin(MPI_File fh, Buf buf, int count, MPI_Datatype datatype) {            \
        const char* fn = "MPI_File_" #Name "_begin";                                                   \
        return file_guard(fh, fn, [&] {                                                                \
            File& f = file_arg(fh, fn);                                                                \
            const dtype::Datatype& t = data_args(buf, count, datatype, fn);                            \
            if (!(Sequential)) not_sequential(f, fn);                                                  \
            f.no_split(fn);                                                                            \
            f.split_begin(File::Split::Kind, buf, f.Access(buf, count, t, fn), fn);                    \
        });                                                                                            \
    }                                                                                                  \
    SHMPI_WEAK_ALIAS(File_##Name##_begin);

#define SHMPI_IO_SPLIT_END(Name, Kind, Buf)                                         \
    int PMPI_File_##Name##_end(MPI_File fh, Buf buf, MPI_Status* status) {         \
        const char* fn = "MPI_File_" #Name "_end";                                  \
        return file_guard(fh, fn, [&] {                                             \
            File& f = file_arg(fh, fn);                                             \
            put_io_status(status, f.split_end(File::Split::Kind, buf, fn));         \
        });                                                                         \
    }                                                                               \
    SHMPI_WEAK_ALIAS(File_##Name##_end);

SHMPI_IO_SPLIT_BEGIN_AT(read_at_all, ReadAt, read_at_all, void*)
SHMPI_IO_SPLIT_END(read_at_all, ReadAt, void*)
SHMPI_IO_SPLIT_BEGIN_AT(write_at_all, WriteAt, write_at_all, const void*)
SHMPI_IO_SPLIT_END(write_at_all, WriteAt, const void*)
SHMPI_IO_SPLIT_BEGIN(read_all, Read, read_all, void*, false)
SHMPI_IO_SPLIT_END(read_all, Read, void*)
SHMPI_IO_SPLIT_BEGIN(write_all, Write, write_all, const void*, false)
SHMPI_IO_SPLIT_END(write_all, Write, const void*)
SHMPI_IO_SPLIT_BEGIN(read_ordered, ReadOrdered, read_ordered, void*, true)
SHMPI_IO_SPLIT_END(read_ordered, ReadOrdered, void*)
SHMPI_IO_SPLIT_BEGIN(write_ordered, WriteOrdered, write_ordered, const void*, true)
SHMPI_IO_SPLIT_END(write_ordered, WriteOrdered, const void*)

// ------------------------------------------------------------ consistency

int PMPI_File_set_atomicity(MPI_File fh, int flag) {
    const char* fn = "MPI_File_set_atomicity";
    return file_guard(fh, fn, [&] { file_arg(fh, fn).set_atomicity(flag != 0, fn); });
}
SHMPI_WEAK_ALIAS(File_set_atomicity);

int PMPI_File_get_atomicity(MPI_File fh, int* flag) {
    const char* fn = "MPI_File_get_atomicity";
    return file_guard(fh, fn, [&] {
        File& f = file_arg(fh, fn);
        need(flag, "flag", fn);
        *flag = f.atomicity() ? 1 : 0;
    });
}
SHMPI_WEAK_ALIAS(File_get_atomicity);

int PMPI_File_sync(MPI_File fh) {
    const char* fn = "MPI_File_sync";
    return file_guard(fh, fn, [&] { file_arg(fh, fn).sync(fn); });
}
SHMPI_WEAK_ALIAS(File_sync);

// ------------------------------------------------------------ error handlers

int PMPI_File_create_errhandler(MPI_File_errhandler_function* file_errhandler_fn, MPI_Errhandler* errhandler) {
    const char* fn = "MPI_File_create_errhandler";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        if (file_errhandler_fn == nullptr) fail(MPI_ERR_ARG, "{}: file_errhandler_fn is NULL", fn);
        need(errhandler, "errhandler", fn);
        auto* u = new UserErrhandler();
        u->file_fn = file_errhandler_fn;
        *errhandler = reinterpret_cast<MPI_Errhandler>(u);
    });
}
SHMPI_WEAK_ALIAS(File_create_errhandler);

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
    const char* fn = "MPI_File_set_errhandler";
    return file_guard(file, fn, [&] {
        File* f = file == MPI_FILE_NULL ? nullptr : &file_arg(file, fn);
        set_errhandler_slot(f != nullptr ? f->errhandler : g_default_errhandler, errhandler, HandlerKind::File, fn);
    });
}
SHMPI_WEAK_ALIAS(File_set_errhandler);

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
    const char* fn = "MPI_File_get_errhandler";
    return file_guard(file, fn, [&] {
        File* f = file == MPI_FILE_NULL ? nullptr : &file_arg(file, fn);
        need(errhandler, "errhandler", fn);
        *errhandler = f != nullptr ? f->errhandler : g_default_errhandler;
        retain(*errhandler);  // the caller frees it with MPI_Errhandler_free
    });
}
SHMPI_WEAK_ALIAS(File_get_errhandler);

int PMPI_File_call_errhandler(MPI_File fh, int errorcode) {
    const char* fn = "MPI_File_call_errhandler";
    return file_guard(fh, fn, [&] {
        if (fh != MPI_FILE_NULL) file_arg(fh, fn);
        // The handler sees the code as given; the call returns MPI_SUCCESS
        // once the handler returns (MPI-3.1 8.3).
        raise_file(fh, called_error(errorcode, fn), errorcode);
    });
}
SHMPI_WEAK_ALIAS(File_call_errhandler);

}  // extern "C"
