#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# tools/public-names.sh HEADER... - print, one a line, the public names the
# headers define: functions and function types (rf_*), structs and enums
# (rf_*), function-like macros (RF_*). Private names (rf__*, RF__*) are
# left out, and so are detail/ headers when the caller does not pass them.
# make man-test checks that man NAME finds a page for each.
#
# A definition starts at column 0; anything indented or inside a comment
# is not one.
set -e
[ $# -gt 0 ] || { echo "usage: $0 HEADER..." >&2; exit 2; }
{
	# functions and typedef'd function types: the name before the first '('
	sed -n -e 's/__attribute__((\([^()]*\)*)) *//' \
	       -e '/^[A-Za-z_][^(]*[ *]rf_[a-z0-9_]*(/{s/^[^(]*[ *]\(rf_[a-z0-9_]*\)(.*/\1/p}' "$@"
	# struct and enum types, defined at column 0
	sed -n 's/^\(typedef \)\{0,1\}\(struct\|enum\) \(rf_[a-z0-9_]*\) *{.*/\3/p' "$@"
	# function-like macros
	sed -n 's/^# *define \(RF_[A-Z0-9_]*\)(.*/\1/p' "$@"
} | grep -v '^rf__\|^RF__' | sort -u
