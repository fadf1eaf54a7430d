# PSEL_CHECK_UCX_SRC: --with-ucx-src=DIR, the configured source tree of the
# installed UCX, whose internal headers the protocol tier of
# libprotosel_ucx.so is built against (docs/runtime-library.md).
#
# The tree must be the installed version (UCT_VERNO_STRING of its generated
# uct/api/version.h against pkg-config's ucx version) and configured like
# the installed build: every ENABLE_* and HAVE_* that an #if of its ucs,
# uct and ucp headers reads (struct layouts, inline code), and
# UCS_MAX_LOG_LEVEL, must have the value `ucx_info -b` prints.
# "Installed" is the UCX this build compiles against (pkg-config's ucx, so
# PKG_CONFIG_PATH=/opt/ucx-1.22/lib/pkgconfig picks another), and its
# ucx_info is the one of that prefix, else the first on PATH.
# The protocol tier has one adapter per era of UCP's protocol API
# (docs/runtime-library.md), chosen here from the tree's version:
# proto_tier_init.c for 1.13 to 1.16 (init() fills caps), proto_tier_probe.c
# for 1.18 on (probe() adds instances with a ucp_proto_perf_t). 1.17, which
# has both, builds proto_tier_none.c, and configure says so.
# Sets PSEL_UCX_SRC (the directory), PSEL_UCX_SRC_VERSION, the conditionals
# HAVE_UCX_SRC (a tree was accepted), HAVE_PSEL_PROTO_TIER (the protocol
# tier is built) and PSEL_PROTO_TIER_PROBE (with the probe adapter), and
# the define PSEL_PROTO_TIER_UNPORTED (a tree of a release the protocol
# tier was not ported to).
#
# PSEL_CHECK_UCS_PLUGIN: the UCX compiled against loads UCS plugins from
# UCX_PLUGIN_PATH (UCX >= 1.22): conditional HAVE_UCS_PLUGIN, for
# libucs_protosel.so.0.
AC_DEFUN([PSEL_CHECK_UCX_SRC], [
    AC_ARG_WITH([ucx-src],
        [AS_HELP_STRING([--with-ucx-src=DIR],
            [configured source tree of the installed UCX (apt-get source ucx;
             ./autogen.sh; ./configure as the installed build): builds the
             protocol tier of libprotosel_ucx.so against its internal headers])],
        [], [with_ucx_src=no])

    PSEL_UCX_SRC=
    PSEL_UCX_SRC_VERSION=
    AS_IF([test "x$with_ucx_src" != xno && test "x$with_ucx_src" != x], [
        psel_dir=$with_ucx_src
        AS_IF([test ! -f "$psel_dir/src/ucp/proto/proto.h"],
              [AC_MSG_ERROR([--with-ucx-src=$psel_dir: no src/ucp/proto/proto.h there; give the top of an unpacked UCX source tree (apt-get source ucx)])])
        AS_IF([test ! -f "$psel_dir/config.h" || test ! -f "$psel_dir/src/uct/api/version.h"],
              [AC_MSG_ERROR([--with-ucx-src=$psel_dir: the tree is not configured (no config.h or src/uct/api/version.h); run ./autogen.sh and ./configure there with the options of the installed build (ucx_info -b | grep UCX_CONFIGURE_FLAGS), or let ./dev.sh do it])])
        psel_dir=$(cd "$psel_dir" && pwd)

        AC_MSG_CHECKING([the version of the UCX source tree])
        PSEL_UCX_SRC_VERSION=$(sed -n 's/^#define UCT_VERNO_STRING *"\(.*\)"/\1/p' "$psel_dir/src/uct/api/version.h")
        AC_MSG_RESULT([$PSEL_UCX_SRC_VERSION])
        psel_installed=$($PKG_CONFIG --modversion ucx)
        AS_IF([test "x$PSEL_UCX_SRC_VERSION" != "x$psel_installed"],
              [AC_MSG_ERROR([--with-ucx-src=$psel_dir is UCX $PSEL_UCX_SRC_VERSION but UCX $psel_installed is installed; the internal headers must be those of the installed version (apt-get source ucx=<installed package version>)])])

        dnl The defines the internal headers read: every ENABLE_* and HAVE_*
        dnl in an #if of a ucs, uct or ucp header, and the log level that
        dnl inline logging compares with.
        psel_ucx_bindir=$($PKG_CONFIG --variable=bindir ucx 2>/dev/null)
        AS_IF([test -n "$psel_ucx_bindir" && test -x "$psel_ucx_bindir/ucx_info"],
              [PSEL_UCX_INFO_B=$psel_ucx_bindir/ucx_info],
              [AC_PATH_PROG([PSEL_UCX_INFO_B], [ucx_info], [])])
        AS_IF([test -z "$PSEL_UCX_INFO_B"],
              [AC_MSG_ERROR([--with-ucx-src needs ucx_info (apt-get install ucx-utils) to compare the tree's config.h with the installed build])])
        AC_MSG_CHECKING([that the tree is configured like the installed UCX])
        psel_defs=$(cd "$psel_dir/src" &&
                    grep -rhE '^[[ \t]]*@%:@[[ \t]]*(if|ifdef|ifndef|elif)' --include='*.h' --include='*.inl' \
                         ucs ucp uct/api uct/base 2>/dev/null |
                    grep -oE '(ENABLE|HAVE)_[[A-Za-z0-9_]]+' | grep -v '^HAVE_CONFIG_H$' | sort -u)
        $PSEL_UCX_INFO_B -b 2>/dev/null >conftest.installed
        psel_bad=
        for psel_def in $psel_defs UCS_MAX_LOG_LEVEL; do
            psel_a=$(sed -n "s/^#define $psel_def  *\(.*\)$/\1/p" "$psel_dir/config.h" | sed 's/ *$//')
            psel_b=$(sed -n "s/^#define $psel_def  *\(.*\)$/\1/p" conftest.installed | sed 's/ *$//')
            AS_IF([test "x$psel_a" != "x$psel_b"],
                  [psel_bad="$psel_bad $psel_def (tree: '${psel_a:-undefined}', installed: '${psel_b:-undefined}')"])
        done
        rm -f conftest.installed
        AS_IF([test -n "$psel_bad"], [
            AC_MSG_RESULT([no])
            AC_MSG_ERROR([--with-ucx-src=$psel_dir was configured differently from the installed UCX:$psel_bad. Configure it again with the installed build's options: ucx_info -b | grep UCX_CONFIGURE_FLAGS])])
        AC_MSG_RESULT([yes (the $(echo $psel_defs | wc -w) defines its headers read)])
        PSEL_UCX_SRC=$psel_dir
    ])
    psel_proto_tier=no
    psel_proto_tier_era=
    AS_CASE([$PSEL_UCX_SRC_VERSION],
        [1.1[[3456]].*], [psel_proto_tier=yes; psel_proto_tier_era=init],
        [0.*|1.[[0-9]].*|1.1[[0-2]].*|1.17.*],
              [AC_MSG_WARN([the protocol tier has no adapter for UCX $PSEL_UCX_SRC_VERSION's protocols (1.13-1.16 and 1.18 on have one); only the config tier is built: see docs/runtime-library.md])
               AC_DEFINE_UNQUOTED([PSEL_PROTO_TIER_UNPORTED], ["$PSEL_UCX_SRC_VERSION"],
                   [UCX release of the source tree the protocol tier was not ported to])],
        [?*], [psel_proto_tier=yes; psel_proto_tier_era=probe])
    AS_IF([test -n "$psel_proto_tier_era"],
          [AC_MSG_NOTICE([the protocol tier is built with its $psel_proto_tier_era() adapter for UCX $PSEL_UCX_SRC_VERSION])])
    AC_SUBST([PSEL_UCX_SRC])
    AC_SUBST([PSEL_UCX_SRC_VERSION])
    AM_CONDITIONAL([HAVE_UCX_SRC], [test -n "$PSEL_UCX_SRC"])
    AM_CONDITIONAL([HAVE_PSEL_PROTO_TIER], [test "x$psel_proto_tier" = xyes])
    AM_CONDITIONAL([PSEL_PROTO_TIER_PROBE], [test "x$psel_proto_tier_era" = xprobe])
])

AC_DEFUN([PSEL_CHECK_UCS_PLUGIN], [
    AC_MSG_CHECKING([whether UCX loads UCS plugins (UCX_PLUGIN_PATH, UCX >= 1.22)])
    AS_IF([$PKG_CONFIG --atleast-version=1.22 ucx],
          [psel_ucs_plugin=yes], [psel_ucs_plugin=no])
    AC_MSG_RESULT([$psel_ucs_plugin])
    AM_CONDITIONAL([HAVE_UCS_PLUGIN], [test "x$psel_ucs_plugin" = xyes])
])
