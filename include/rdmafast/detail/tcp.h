/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/tcp.h - the clock of tcp.h's bounded waits.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_TCP_H
#define RDMAFAST_DETAIL_TCP_H

#include <time.h>

#include <rdmafast/compiler.h>

RF_BEGIN_DECLS

/* Milliseconds on the C11 clock (timespec_get: no POSIX clock needed). */
static inline RF_COLD long long rf__tcp_now_ms(void)
{
	struct timespec ts;

	if (timespec_get(&ts, TIME_UTC) != TIME_UTC)
		return 0;
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_TCP_H */
