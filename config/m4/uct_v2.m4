# PSEL_CHECK_UCT_V2: the UCT API v2 header (uct_iface_estimate_perf, which
# libuct 1.13 exports) for live per-operation costs. Newer UCX packages
# install it; Debian's libucx-dev (1.13.1) does not, so a UCX source tree
# given with --with-ucx-src (PSEL_CHECK_UCX_SRC, which checks it is the
# installed version) provides it: that tree's src/uct/api/v2/uct_v2.h,
# included by its path only (the rest comes from the installed headers).
# Defines PSEL_UCT_V2_HEADER to the header to #include, if there is one.
# Without it discovery derives the per-operation costs with UCX's rules
# (src/lane_select/README.md, "Per-operation costs").
AC_DEFUN([PSEL_CHECK_UCT_V2], [
    psel_uct_v2=
    psel_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $UCX_CFLAGS"
    AC_CHECK_HEADER([uct/api/v2/uct_v2.h],
                    [psel_uct_v2="<uct/api/v2/uct_v2.h>"], [],
                    [#include <uct/api/uct.h>])
    AS_IF([test -z "$psel_uct_v2" && test -n "$PSEL_UCX_SRC" &&
           test -f "$PSEL_UCX_SRC/src/uct/api/v2/uct_v2.h"], [
        AC_MSG_CHECKING([for uct_v2.h of the UCX source tree])
        AC_COMPILE_IFELSE([AC_LANG_PROGRAM(
            [[#include <uct/api/uct.h>
              #include "$PSEL_UCX_SRC/src/uct/api/v2/uct_v2.h"]],
            [[uct_perf_attr_t attr;
              attr.field_mask = UCT_PERF_ATTR_FIELD_LATENCY;
              return uct_iface_estimate_perf(NULL, &attr) == UCS_OK;]])],
            [psel_uct_v2="\"$PSEL_UCX_SRC/src/uct/api/v2/uct_v2.h\""
             AC_MSG_RESULT([yes])],
            [AC_MSG_RESULT([no])
             AC_MSG_ERROR([--with-ucx-src=$PSEL_UCX_SRC: its src/uct/api/v2/uct_v2.h does not compile with the installed UCX headers (see config.log)])])
    ])
    CPPFLAGS=$psel_save_CPPFLAGS
    AS_IF([test -n "$psel_uct_v2"],
          [AC_DEFINE_UNQUOTED([PSEL_UCT_V2_HEADER], [$psel_uct_v2],
                              [The UCT API v2 header (uct_iface_estimate_perf)])
           PSEL_UCT_V2_NOTE="$psel_uct_v2: live per-operation costs"],
          [PSEL_UCT_V2_NOTE="none: per-operation costs derived with UCX's rules (--with-ucx-src=DIR adds them)"])
])
