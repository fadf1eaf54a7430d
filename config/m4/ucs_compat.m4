# PSEL_UCS_HEADERS_COMPAT: after UCX_CFLAGS/UCX_LIBS are known, adjust them
# to the installed UCX's public headers (src/lane_select/ucs_compat.h holds
# the API differences; this what only the compiler flags can fix):
#  - a UCX outside /usr (PKG_CONFIG_PATH=/opt/ucx-1.22/lib/pkgconfig): its
#    headers are system headers too, out of protosel's warnings and -Werror;
#  - UCX 1.22's installed ucs/datastruct/array.h (UCS_STRING_BUFFER_ONSTACK)
#    calls ucs_alloca(), which lives in the uninstalled ucs/sys/compiler.h:
#    when a string buffer on the stack does not link, ucs_alloca is defined
#    as the compiler's alloca.
AC_DEFUN([PSEL_UCS_HEADERS_COMPAT], [
    UCX_CFLAGS=$(echo " $UCX_CFLAGS" | sed 's/ -I/ -isystem /g')
    AC_MSG_CHECKING([whether UCS_STRING_BUFFER_ONSTACK links as installed])
    psel_save_CFLAGS=$CFLAGS
    psel_save_LIBS=$LIBS
    CFLAGS="$CFLAGS $UCX_CFLAGS"
    LIBS="$UCX_LIBS $LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <ucs/datastruct/string_buffer.h>]],
                       [[UCS_STRING_BUFFER_ONSTACK(s, 16);
                         ucs_string_buffer_appendf(&s, "x");
                         return ucs_string_buffer_length(&s) != 1;]])],
        [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no: defining ucs_alloca])
         UCX_CFLAGS="$UCX_CFLAGS -Ducs_alloca=__builtin_alloca"])
    CFLAGS=$psel_save_CFLAGS
    LIBS=$psel_save_LIBS
])

# PSEL_UCX_PATHS: where the UCX compiled against lives (pkg-config's ucx:
# PKG_CONFIG_PATH picks another prefix, as ./dev.sh ucx does). A UCX outside
# the system's library directories is found at run time through a run path
# in every program and library that links it, so that protosel's tools and
# tests never load another UCX's libraries than their own. Substitutes
# PSEL_UCX_BINDIR and PSEL_UCX_LIBDIR (the tests run that prefix's stock
# tools) and sets the conditional PSEL_UCX_SYSTEM (the system's own UCX).
AC_DEFUN([PSEL_UCX_PATHS], [
    PSEL_UCX_VERSION=$($PKG_CONFIG --modversion ucx)
    PSEL_UCX_BINDIR=$($PKG_CONFIG --variable=bindir ucx)
    PSEL_UCX_LIBDIR=$($PKG_CONFIG --variable=libdir ucx)
    AC_MSG_CHECKING([whether the UCX compiled against is the system's])
    AS_CASE([$PSEL_UCX_LIBDIR],
        [/usr/lib|/usr/lib64|/usr/lib/*-linux-gnu|/lib|/lib64|/lib/*-linux-gnu],
            [psel_ucx_system=yes],
        [psel_ucx_system=no
         UCX_LIBS="$UCX_LIBS -Wl,-rpath,$PSEL_UCX_LIBDIR"])
    AC_MSG_RESULT([$psel_ucx_system ($PSEL_UCX_LIBDIR)])
    AC_SUBST([PSEL_UCX_VERSION])
    AC_SUBST([PSEL_UCX_BINDIR])
    AC_SUBST([PSEL_UCX_LIBDIR])
    AM_CONDITIONAL([PSEL_UCX_SYSTEM], [test "x$psel_ucx_system" = xyes])
])
