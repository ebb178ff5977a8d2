/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/version.h - the version of the headers being compiled against.
 *
 *   #if RF_VERSION_AT_LEAST(0, 2)
 *       ... code that needs 0.2 or later ...
 *   #endif
 */
#ifndef RDMAFAST_VERSION_H
#define RDMAFAST_VERSION_H

#define RF_VERSION_MAJOR 0
#define RF_VERSION_MINOR 1
#define RF_VERSION_PATCH 0

/* One comparable number: 0x00MMmmpp. */
#define RF_VERSION_CODE(major, minor, patch) \
	(((major) << 16) | ((minor) << 8) | (patch))

#define RF_VERSION \
	RF_VERSION_CODE(RF_VERSION_MAJOR, RF_VERSION_MINOR, RF_VERSION_PATCH)

/* True (1) when these headers are version major.minor or newer. */
#define RF_VERSION_AT_LEAST(major, minor) \
	(RF_VERSION >= RF_VERSION_CODE(major, minor, 0))

#endif /* RDMAFAST_VERSION_H */
