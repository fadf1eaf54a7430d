# PSEL_REQUIRE_PKG(VARIABLE-PREFIX, MODULES, DEBIAN-PACKAGE)
# Find MODULES with pkg-config; stop with a message naming the Debian package.
AC_DEFUN([PSEL_REQUIRE_PKG], [
    PKG_CHECK_MODULES([$1], [$2], [],
        [AC_MSG_ERROR([$2 not found by pkg-config.
  On Debian/Ubuntu install it with:  apt-get install $3
  (pkg-config said: $$1_PKG_ERRORS)])])
])

# PSEL_COMPILER_WARNINGS: warnings on by default; --enable-werror makes them errors.
AC_DEFUN([PSEL_COMPILER_WARNINGS], [
    AC_ARG_ENABLE([werror],
        [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
        [], [enable_werror=no])
    PSEL_WARN_CFLAGS="-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wshadow -Wstrict-prototypes -Wmissing-prototypes"
    AS_IF([test "x$enable_werror" = xyes], [PSEL_WARN_CFLAGS="$PSEL_WARN_CFLAGS -Werror"])
    AC_SUBST([PSEL_WARN_CFLAGS])
])
