#!/bin/sh
# The compiler wrappers' test (meson suite 'wrappers').
#
# usage: test-wrappers.sh MPICC MPICXX MPICC_INSTALLED MPICXX_INSTALLED
#                         INCDIR LIBDIR VERSION HELLO_C HELLO_CPP
#
# MPICC/MPICXX are the build-tree wrappers; the *_INSTALLED ones are the copies
# meson installs, which are placed in a scratch prefix here to check that they
# find it from their own location.  Checks every info option's output, then
# compiles, links and runs a C and a C++ program.  Exits 0 when all pass, 1 on
# a failure, 77 (skip) when everything but the link step passed and libshmpi.so
# is not built yet.
set -u

if [ $# -ne 9 ]; then
    echo "usage: $0 MPICC MPICXX MPICC_INSTALLED MPICXX_INSTALLED INCDIR LIBDIR VERSION HELLO_C HELLO_CPP" >&2
    exit 2
fi
abspath() { (cd -- "$(dirname -- "$1")" && printf '%s/%s\n' "$(pwd)" "$(basename -- "$1")"); }
mpicc=$(abspath "$1")
mpicxx=$(abspath "$2")
mpicc_installed=$(abspath "$3")
mpicxx_installed=$(abspath "$4")
incdir=$5
libdir=$6
version=$7
hello_c=$(abspath "$8")
hello_cpp=$(abspath "$9")

unset SHMPI_CC SHMPI_CXX MPICH_CC MPICH_CXX OMPI_CC OMPI_CXX SHMPI_WRAPPER_ACTIVE LD_LIBRARY_PATH
scratch=$(mktemp -d "${TMPDIR:-/tmp}/shmpi-wrappers.XXXXXX") || exit 1
trap 'rm -rf -- "$scratch"' EXIT
cd -- "$scratch" || exit 1

failures=0
pass() { printf 'ok   %s\n' "$1"; }
fail() {
    printf 'FAIL %s\n' "$1"
    failures=$((failures + 1))
}
# expect NAME EXPECTED ACTUAL
expect() {
    if [ "$2" = "$3" ]; then
        pass "$1"
    else
        fail "$1"
        printf '     expected: %s\n     got:      %s\n' "$2" "$3"
    fi
}
# expect_refused NAME PATTERN COMMAND...: COMMAND fails, and its stderr
# matches PATTERN (grep).
expect_refused() {
    name=$1 pattern=$2
    shift 2
    if "$@" 2>refused.err; then
        fail "$name (it succeeded)"
    elif grep -q -- "$pattern" refused.err; then
        pass "$name"
    else
        fail "$name: $(cat refused.err)"
    fi
}
# The wrappers quote a word that holds anything but these characters: in
# double quotes after its -D, -I, -L or -Wl,-rpath, (CMake's FindMPI reads
# only that form), in single quotes when it holds a character special in
# double quotes.
quote() {
    case $1 in
        *[!A-Za-z0-9_./:=,+@%^-]*) ;;
        *) printf '%s' "$1"; return ;;
    esac
    case $1 in
        *[\"\$\`\\!]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
        -D* | -I* | -L*) printf '%s"%s"' "${1%"${1#??}"}" "${1#??}" ;;
        -Wl,-rpath,*) printf '%s"%s"' '-Wl,-rpath,' "${1#-Wl,-rpath,}" ;;
        *) printf '"%s"' "$1" ;;
    esac
}

# check_info WRAPPER COMPILER LANGUAGE INCDIR LIBDIR: every option that prints.
check_info() {
    w=$1 comp=$2 lang=$3 inc=$4 lib=$5
    name=$(basename -- "$w")
    cflags=$(quote "-I$inc")
    lflags="$(quote "-L$lib") $(quote "-Wl,-rpath,$lib") -lshmpi"

    expect "$name -show (link)" "$comp a.c -o a $cflags $lflags" "$("$w" -show a.c -o a)"
    expect "$name --showme (link)" "$comp a.c -o a $cflags $lflags" "$("$w" --showme a.c -o a)"
    expect "$name -show -c" "$comp -c a.c $cflags" "$("$w" -show -c a.c)"
    expect "$name -show -E" "$comp -E a.c $cflags" "$("$w" -show -E a.c)"
    expect "$name -show -S" "$comp -S a.c $cflags" "$("$w" -show -S a.c)"
    expect "$name -show -M" "$comp -M a.c $cflags" "$("$w" -show -M a.c)"
    expect "$name -show -MM" "$comp -MM a.c $cflags" "$("$w" -show -MM a.c)"
    expect "$name -show -MD (still links)" "$comp -MD a.c $cflags $lflags" "$("$w" -show -MD a.c)"
    expect "$name -show keeps a spaced argument" "$comp -D\"X=a b\" a.c $cflags $lflags" \
        "$("$w" -show '-DX=a b' a.c)"
    # What -show prints, read back by a shell, is the words given.
    eval "set -- $("$w" -show '-DX=a b' "-DY=it's" '-DZ=$HOME' 'my file.c' '-I/a b' '"q".c')"
    expect "$name -show reads back as the words given" \
        "$comp|-DX=a b|-DY=it's|-DZ=\$HOME|my file.c|-I/a b|\"q\".c" "$(printf '%s|' "$@" | sed 's/|$//' | cut -d'|' -f1-7)"
    expect "$name -static -c compiles" "$comp -static -c a.c $cflags" "$("$w" -show -static -c a.c)"
    expect "$name -compile-info" "$comp a.c $cflags" "$("$w" -compile-info a.c)"
    expect "$name -compile_info" "$comp a.c $cflags" "$("$w" -compile_info a.c)"
    expect "$name -link-info" "$comp a.o -o a $cflags $lflags" "$("$w" -link-info a.o -o a)"
    expect "$name -link_info" "$comp a.o $cflags $lflags" "$("$w" -link_info a.o)"
    expect "$name -show-compile-info" "$cflags" "$("$w" -show-compile-info)"
    expect "$name -show-link-info" "$lflags" "$("$w" -show-link-info)"
    expect "$name --showme:compile" "$cflags" "$("$w" --showme:compile)"
    expect "$name -showme:compile" "$cflags" "$("$w" -showme:compile)"
    expect "$name --showme:link" "$lflags" "$("$w" --showme:link)"
    expect "$name --showme:command" "$comp" "$("$w" --showme:command)"
    expect "$name --showme:incdirs" "$inc" "$("$w" --showme:incdirs)"
    expect "$name --showme:libdirs" "$lib" "$("$w" --showme:libdirs)"
    expect "$name --showme:libs" "shmpi" "$("$w" --showme:libs)"
    expect "$name --showme:link_static" "$lflags" "$("$w" --showme:link_static)"
    expect "$name --showme:libdirs_static" "$lib" "$("$w" --showme:libdirs_static)"
    expect "$name --showme:libs_static" "shmpi" "$("$w" --showme:libs_static)"
    # MPICH's options that must not reach the compiler.
    expect "$name -static-mpi" "$comp a.c $cflags $lflags" "$("$w" -static-mpi -show a.c 2>/dev/null)"
    expect "$name -profile=mpe" "$comp a.c $cflags $lflags" "$("$w" -profile=mpe -show a.c 2>/dev/null)"
    expect "$name -profile=mpe says so" "$name: -profile=mpe: shmpi has no profiling libraries; ignored" \
        "$("$w" -profile=mpe -show a.c 2>&1 >/dev/null)"
    expect "$name -echo" "$comp a.c $cflags $lflags" "$("$w" -echo -show a.c 2>/dev/null)"
    expect "$name -config=foo" "$comp a.c $cflags $lflags" "$("$w" -config=foo -show a.c 2>/dev/null)"
    expect "$name -config=foo says so" "$name: -config=foo: shmpi has no compiler configuration files; ignored" \
        "$("$w" -config=foo -show a.c 2>&1 >/dev/null)"
    # MPICH's -nativelinking links without the MPI library, and says nothing.
    expect "$name -nativelinking" "$comp a.c -o a $cflags" "$("$w" -nativelinking -show a.c -o a 2>&1)"
    expect "$name -nativelinking -c" "$comp -c a.c $cflags" "$("$w" -nativelinking -show -c a.c 2>&1)"
    expect "$name --showme:version" "$name: shmpi $version (Language: $lang)" \
        "$("$w" --showme:version)"
}

check_info "$mpicc" cc C "$incdir" "$libdir"
check_info "$mpicxx" c++ C++ "$incdir" "$libdir"

# The compiler variables.
expect "SHMPI_CC" "clang a.c -I$(quote "$incdir")" "$(SHMPI_CC=clang "$mpicc" -compile-info a.c)"
expect "SHMPI_CXX" "clang++ a.cpp -I$(quote "$incdir")" \
    "$(SHMPI_CXX=clang++ "$mpicxx" -compile-info a.cpp)"
expect "mpicc -cc=" "clang a.c -I$(quote "$incdir")" "$(SHMPI_CC=gcc "$mpicc" -cc=clang -compile-info a.c)"
expect "mpicxx -cxx=" "clang++ a.cpp -I$(quote "$incdir")" "$("$mpicxx" -cxx=clang++ -compile-info a.cpp)"
expect "SHMPI_CC with two words" "ccache cc a.c -I$(quote "$incdir")" \
    "$(SHMPI_CC='ccache cc' "$mpicc" -compile-info a.c)"
# MPICH's and Open MPI's variables, after ours and in that order.
expect "MPICH_CC" "clang a.c -I$(quote "$incdir")" "$(MPICH_CC=clang "$mpicc" -compile-info a.c)"
expect "OMPI_CC" "clang a.c -I$(quote "$incdir")" "$(OMPI_CC=clang "$mpicc" -compile-info a.c)"
expect "MPICH_CXX" "clang++ a.cpp -I$(quote "$incdir")" "$(MPICH_CXX=clang++ "$mpicxx" -compile-info a.cpp)"
expect "OMPI_CXX" "clang++ a.cpp -I$(quote "$incdir")" "$(OMPI_CXX=clang++ "$mpicxx" -compile-info a.cpp)"
expect "SHMPI_CC before MPICH_CC and OMPI_CC" "gcc a.c -I$(quote "$incdir")" \
    "$(SHMPI_CC=gcc MPICH_CC=clang OMPI_CC=tcc "$mpicc" -compile-info a.c)"
expect "MPICH_CC before OMPI_CC" "clang a.c -I$(quote "$incdir")" \
    "$(MPICH_CC=clang OMPI_CC=tcc "$mpicc" -compile-info a.c)"
expect "an empty SHMPI_CC does not count" "clang a.c -I$(quote "$incdir")" \
    "$(SHMPI_CC= OMPI_CC=clang "$mpicc" -compile-info a.c)"

# -v alone: the banner, then the compiler's own -v output, and success.
if out=$("$mpicc" -v 2>/dev/null); then
    expect "mpicc -v banner" "mpicc for shmpi $version" "$(printf '%s\n' "$out" | head -n 1)"
else
    fail "mpicc -v exits 0"
fi
if "$mpicc" -v 2>&1 | grep -q -i 'version'; then pass "mpicc -v runs the compiler with -v"; else
    fail "mpicc -v runs the compiler with -v"; fi
if out=$("$mpicxx" -v 2>/dev/null); then
    expect "mpicxx -v banner" "mpicxx for shmpi $version" "$(printf '%s\n' "$out" | head -n 1)"
else
    fail "mpicxx -v exits 0"
fi

# Misuse fails cleanly.
if "$mpicc" >/dev/null 2>&1; then fail "mpicc with no arguments fails"; else
    pass "mpicc with no arguments fails"; fi
expect_refused "SHMPI_CC=mpicc is refused" \
    "mpicc: called as the compiler of mpicc (SHMPI_CC=.*), which names an MPI wrapper" \
    env SHMPI_CC="$mpicc" "$mpicc" -c "$hello_c" -o rec.o
expect_refused "OMPI_CC=mpicc is refused, naming OMPI_CC" \
    "mpicc: called as the compiler of mpicc (OMPI_CC=.*mpicc')" \
    env OMPI_CC="$mpicc" "$mpicc" -c "$hello_c" -o rec.o
# The setting that named the wrapper is the one the message names.
expect_refused "SHMPI_CC=mpicxx is refused, naming SHMPI_CC" \
    "mpicxx: called as the compiler of mpicc (SHMPI_CC=.*mpicxx')" \
    env SHMPI_CC="$mpicxx" "$mpicc" -c "$hello_c" -o rec.o
expect_refused "mpicc -static is refused when it links" "mpicc: -static: shmpi has no static library" \
    "$mpicc" -static "$hello_c" -o static
if "$mpicc" --showme:nonsense >/dev/null 2>&1; then fail "unknown --showme: option fails"; else
    pass "unknown --showme: option fails"; fi
if "$mpicc" -help | grep -q -- '--showme:link'; then pass "mpicc -help"; else fail "mpicc -help"; fi

# Compile-only runs need the header alone.
if "$mpicc" -c "$hello_c" -o hello_c.o; then pass "mpicc -c hello.c"; else fail "mpicc -c hello.c"; fi
if "$mpicxx" -c "$hello_cpp" -o hello_cpp.o; then pass "mpicxx -c hello.cpp"; else
    fail "mpicxx -c hello.cpp"; fi

# The installed copies, in a scratch prefix: they must find it from their own
# location, also through a symbolic link, and again after the tree is moved.
if grep -q "^prefix_from_self=''" "$mpicc_installed"; then
    printf 'note installed copies use absolute paths (bindir outside the prefix); not relocatable\n'
    relocatable=no
else
    relocatable=yes
    mkdir -p prefix/bin elsewhere
    cp "$mpicc_installed" prefix/bin/mpicc
    cp "$mpicxx_installed" prefix/bin/mpicxx
    chmod +x prefix/bin/mpicc prefix/bin/mpicxx
    # Without shmpi's header in its tree (a wrapper copied out of shmpi's
    # bin/), it refuses to compile instead of finding another mpi.h, and to
    # print flags that point there.
    mkdir -p copy/bin
    cp prefix/bin/mpicc copy/bin/mpicc
    expect_refused "a wrapper away from shmpi's tree refuses to compile" \
        "mpicc: shmpi's mpi.h is not in '$scratch/copy/" copy/bin/mpicc -c "$hello_c" -o copy.o
    expect_refused "a wrapper away from shmpi's tree refuses -show" \
        "mpicc: shmpi's mpi.h is not in '$scratch/copy/" copy/bin/mpicc -show -c a.c
    expect_refused "a wrapper away from shmpi's tree refuses --showme:incdirs" \
        "mpicc: shmpi's mpi.h is not in '$scratch/copy/" copy/bin/mpicc --showme:incdirs
    # Give the scratch prefix the real header and library where the
    # installed wrappers look for them (incdir and libdir under the prefix).
    rel_inc=$(sed -n "s/^incdir='\(.*\)'$/\1/p" "$mpicc_installed")
    rel_lib=$(sed -n "s/^libdir='\(.*\)'$/\1/p" "$mpicc_installed")
    for pair in "$rel_inc $incdir" "$rel_lib $libdir"; do
        rel=${pair%% *} real=${pair#* }
        case $rel in
            /*) ;;  # absolute: the installed tree's own
            *) mkdir -p "prefix/$(dirname -- "$rel")" && ln -s "$real" "prefix/$rel" ;;
        esac
    done
    inst_inc=$(prefix/bin/mpicc --showme:incdirs)
    inst_lib=$(prefix/bin/mpicc --showme:libdirs)
    case $inst_inc in
        "$scratch"/prefix/*) pass "installed mpicc finds its prefix (include)" ;;
        *) fail "installed mpicc finds its prefix (include): got $inst_inc" ;;
    esac
    case $inst_lib in
        "$scratch"/prefix/*) pass "installed mpicc finds its prefix (lib)" ;;
        *) fail "installed mpicc finds its prefix (lib): got $inst_lib" ;;
    esac
    check_info "$scratch/prefix/bin/mpicc" cc C "$inst_inc" "$inst_lib"
    check_info "$scratch/prefix/bin/mpicxx" c++ C++ "$inst_inc" "$inst_lib"
    ln -s ../prefix/bin/mpicc elsewhere/mpicc
    expect "installed mpicc through a symlink" "$inst_inc" "$(elsewhere/mpicc --showme:incdirs)"
    expect "installed mpicc found on PATH" "$inst_inc" \
        "$(env PATH="$scratch/prefix/bin:$PATH" mpicc --showme:incdirs)"
    # `sh mpicc` in its directory runs that file, whatever mpicc is first
    # on PATH (another MPI's), and the wrapper must know itself as that one.
    mkdir -p decoy
    printf '#!/bin/sh\necho decoy\n' > decoy/mpicc
    chmod +x decoy/mpicc
    expect "installed mpicc run as 'sh mpicc' in its directory" "$inst_inc" \
        "$(cd prefix/bin && env PATH="$scratch/decoy:$PATH" sh mpicc --showme:incdirs)"
    mv prefix moved
    expect "installed mpicc after the tree moved" "$scratch/moved${inst_inc#"$scratch"/prefix}" \
        "$(moved/bin/mpicc --showme:incdirs)"
    # -Wl, would split a library directory at its commas: such a one
    # goes through -Xlinker.
    mkdir -p 'co,mma'
    mv moved 'co,mma/prefix'
    comma_lib=$scratch/co,mma/prefix${inst_lib#"$scratch"/prefix}
    expect "installed mpicc under a directory with a comma" \
        "$(quote "-L$comma_lib") -Xlinker -rpath -Xlinker $(quote "$comma_lib") -lshmpi" \
        "$('co,mma/prefix/bin/mpicc' --showme:link)"
    # CMake's FindMPI reads include and library directories with spaces
    # only as -I"DIR" and -L"DIR".
    mkdir -p 'sp ace'
    mv 'co,mma/prefix' 'sp ace/prefix'
    space_inc="$scratch/sp ace/prefix${inst_inc#"$scratch"/prefix}"
    expect "installed mpicc under a directory with a space" "-I\"$space_inc\"" \
        "$('sp ace/prefix/bin/mpicc' --showme:compile)"
    mv 'sp ace/prefix' prefix
fi

# Link and run; needs libshmpi.so.
if [ ! -e "$libdir/libshmpi.so" ]; then
    printf 'note %s/libshmpi.so is not built: skipping the link and run checks\n' "$libdir"
    printf '%d failure(s)\n' "$failures"
    [ "$failures" -eq 0 ] && exit 77
    exit 1
fi
# link_and_run NAME WRAPPER SOURCE EXPECTED_OUTPUT
link_and_run() {
    exe=$scratch/$1
    if ! "$2" "$3" -o "$exe"; then
        fail "$1: compile and link"
        return
    fi
    pass "$1: compile and link"
    # No LD_LIBRARY_PATH: the rpath must find libshmpi.  No mpirun: a singleton.
    expect "$1: runs as a singleton" "$4" "$(env -u SHMPI_SEGMENT_FD -u SHMPI_RANK -u SHMPI_SIZE "$exe")"
}
link_and_run hello-c "$mpicc" "$hello_c" "hello from C, rank 0 of 1"
link_and_run hello-cpp "$mpicxx" "$hello_cpp" "hello from C++, rank 0 of 1"
if [ "$relocatable" = yes ]; then
    link_and_run hello-c-installed "$scratch/prefix/bin/mpicc" "$hello_c" "hello from C, rank 0 of 1"
    link_and_run hello-cpp-installed "$scratch/prefix/bin/mpicxx" "$hello_cpp" \
        "hello from C++, rank 0 of 1"
fi

printf '%d failure(s)\n' "$failures"
[ "$failures" -eq 0 ]
