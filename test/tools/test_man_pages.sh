#!/usr/bin/env bash
# The man pages (man/, installed by make install: issue 30) against the
# tools they document:
#  1. every option that psel_info, psel_perftest and psel_calibrate print
#     with -h (the options that start a help line, as "  -d", "  --local
#     FILE", "-q, --quick", "--same-host / --remote-host", and every long
#     option the help names anywhere) has an entry in the OPTIONS section of
#     the tool's page: it is on a tag line of a .TP or .TQ there;
#  2. every UCX_PSEL_* variable that psel_info -c lists is in the
#     ENVIRONMENT section of at least one page;
#  3. each page has its .TH title and the sections of its kind;
#  4. each page formats without a warning: groff, else mandoc, else man -l
#     (skipped, saying why, only when none of them is installed).
# The pages are read as troff source, with font escapes (\fB, \fR, \f(CW,
# \f[...]), \& and \% taken out and \- read as -. TAP output.
set -u
top=${PSEL_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
mandir=$top/man
psel_info=${PSEL_INFO:-./src/tools/psel_info}
perftest=${PSEL_PERFTEST:-./src/tools/psel_perftest}
calibrate=${PSEL_CALIBRATE:-./src/tools/psel_calibrate}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"

pages=(psel_info.1 psel_perftest.1 psel_calibrate.1 libprotosel_ucx.7)

# normalise PAGE: the troff source as plain text, one line per line
normalise() {
    sed -e 's/\\f\[[^]]*\]//g' -e 's/\\f([A-Za-z][A-Za-z]//g' \
        -e 's/\\f[A-Za-z1-9]//g' -e 's/\\&//g' -e 's/\\%//g' \
        -e 's/\\-/-/g' -e 's/\\e/\\/g' "$1"
}

# section FILE NAME: the lines of section NAME (.SH NAME up to the next .SH)
section() {
    awk -v name="$2" '
        /^\.SH/ { t = $0; sub(/^\.SH[ \t]+/, "", t); gsub(/"/, "", t)
                  on = (t == name); next }
        on' "$1"
}

# tags FILE: the tag lines of the OPTIONS section (the line after each .TP
# or .TQ), without their font macro and quotes
tags() {
    section "$1" OPTIONS | awk '
        /^\.\\"/ { next }
        want     { t = $0; sub(/^\.(B|I|BR|RB|BI|IB|IR|RI|SB|SM)([ \t]+|$)/, "", t)
                   gsub(/"/, "", t); print t; want = 0; next }
        /^\.(TP|TQ)([ \t]|$)/ { want = 1 }'
}

# help_options FILE: the options of a help text, one per line: those that
# start a help line (up to the first run of two spaces, where the
# description starts), and the long options named anywhere in it
help_options() {
    awk '
        /^[ \t]+-/ {
            s = $0; sub(/^[ \t]+/, "", s)
            i = index(s, "  "); if (i > 0) s = substr(s, 1, i - 1)
            n = split(s, tok, /[ \t]+/)
            for (k = 1; k <= n; ++k) {
                t = tok[k]; sub(/,$/, "", t)
                if (t ~ /^--?[A-Za-z0-9][A-Za-z0-9-]*$/) print t
            }
        }' "$1"
    grep -oE '(^|[^A-Za-z0-9_-])--[A-Za-z0-9][A-Za-z0-9-]*' "$1" | sed 's/^[^-]*//'
}

# has_word FILE WORD: WORD occurs in FILE, not as part of a longer name
has_word() {
    grep -qE "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|\$)" "$1"
}

for page in "${pages[@]}"; do
    if [ -f "$mandir/$page" ]; then
        normalise "$mandir/$page" >"$tmp/$page.txt"
        result "$page exists" 0
    else
        echo "# no $mandir/$page"
        result "$page exists" 1
    fi
done

# 1. every option of each tool's help is in its page's OPTIONS
for tool in psel_info psel_perftest psel_calibrate; do
    case $tool in
        psel_info)      bin=$psel_info ;;
        psel_perftest)  bin=$perftest ;;
        psel_calibrate) bin=$calibrate ;;
    esac
    page=$tool.1
    "$bin" -h >"$tmp/$tool.help" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q -- '-h' "$tmp/$tool.help"; then
        echo "# $bin -h exited $rc:"
        result "$tool -h prints its help" 1 "$tmp/$tool.help"
        continue
    fi
    help_options "$tmp/$tool.help" | sort -u >"$tmp/$tool.opts"
    count=$(wc -l <"$tmp/$tool.opts")
    echo "# $tool -h: $count options:" $(cat "$tmp/$tool.opts")
    # a help of a few options means the extraction broke, not a small tool
    [ "$count" -ge 5 ]
    result "$tool -h: options read from the help ($count)" $? "$tmp/$tool.help"
    [ -f "$tmp/$page.txt" ] || continue
    tags "$tmp/$page.txt" >"$tmp/$page.tags"
    missing=
    while read -r opt; do
        if ! has_word "$tmp/$page.tags" "$opt"; then
            echo "# option $opt of '$tool -h' is not in the OPTIONS section of man/$page (a .TP entry)"
            missing="$missing $opt"
        fi
    done <"$tmp/$tool.opts"
    [ -z "$missing" ]
    result "man/$page documents every option of $tool -h${missing:+ (missing:$missing)}" $?
done

# 2. every UCX_PSEL_* variable is in some page's ENVIRONMENT
if "$psel_info" -c >"$tmp/config" 2>&1; then
    for page in "${pages[@]}"; do
        [ -f "$tmp/$page.txt" ] && section "$tmp/$page.txt" ENVIRONMENT
    done >"$tmp/environment"
    missing=
    for var in $(sed -n 's/^\(UCX_PSEL_[A-Z0-9_]*\)=.*/\1/p' "$tmp/config" | sort -u); do
        if ! has_word "$tmp/environment" "$var"; then
            echo "# $var (psel_info -c) is in no man page's ENVIRONMENT section"
            missing="$missing $var"
        fi
    done
    n_vars=$(grep -c '^UCX_PSEL_[A-Z0-9_]*=' "$tmp/config")
    [ "$n_vars" -ge 5 ] && [ -z "$missing" ]
    result "every UCX_PSEL_* variable of psel_info -c ($n_vars) is in an ENVIRONMENT section${missing:+ (missing:$missing)}" $?
else
    result "psel_info -c lists the UCX_PSEL_* variables" 1 "$tmp/config"
fi

# 3. title and sections
for page in "${pages[@]}"; do
    [ -f "$tmp/$page.txt" ] || continue
    name=${page%.*} sec=${page##*.}
    want=(NAME SYNOPSIS DESCRIPTION ENVIRONMENT FILES EXAMPLES "SEE ALSO")
    [ "$sec" = 1 ] && want+=(OPTIONS "EXIT STATUS")
    bad=
    title=$(sed -n 's/^\.TH[ \t]\{1,\}"\{0,1\}\([^ "]*\)"\{0,1\}[ \t]\{1,\}\([0-9]\).*/\1 \2/p' "$tmp/$page.txt" | head -n 1)
    if [ "$title" != "$(echo "$name" | tr '[:lower:]' '[:upper:]') $sec" ]; then
        echo "# man/$page: .TH gives '$title', expected the page's name and section"
        bad=1
    fi
    for s in "${want[@]}"; do
        if ! grep -qE "^\\.SH[ \t]+\"?$s\"?[ \t]*\$" "$tmp/$page.txt"; then
            echo "# man/$page: no section $s"
            bad=1
        fi
    done
    [ -z "$bad" ]
    result "man/$page: title and sections" $?
done

# 4. the pages format without warnings
if command -v groff >/dev/null; then
    formatter="groff -man -Tutf8 -ww -Wbreak -z"
elif command -v mandoc >/dev/null; then
    formatter="mandoc -Tlint -W warning"
elif command -v man >/dev/null; then
    formatter="man --warnings -l"
else
    formatter=
fi
for page in "${pages[@]}"; do
    [ -f "$mandir/$page" ] || continue
    if [ -z "$formatter" ]; then
        skip "man/$page formats without warnings" "neither groff, mandoc nor man is installed"
        continue
    fi
    LC_ALL=C.UTF-8 MANWIDTH=80 $formatter "$mandir/$page" >"$tmp/$page.out" 2>"$tmp/$page.err"
    rc=$?
    [ "$rc" -eq 0 ] && [ ! -s "$tmp/$page.err" ]
    result "man/$page formats without warnings (${formatter%% *})" $? "$tmp/$page.err" "$tmp/$page.out"
done

tap_done
