/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * thread.h - starting the emulator's own threads (the device engine, the
 * CM thread, the umad timer), which the application never asked for.
 */
#ifndef RDMAFAST_EMU_BASE_THREAD_H
#define RDMAFAST_EMU_BASE_THREAD_H

#include <pthread.h>

/*
 * pthread_create(), returning only once the new thread runs fn: 0 or an
 * errno.  The application's next fork() must not find the thread still
 * starting.  A thread is born inside its C runtime's start-up (gcc's
 * AddressSanitizer allocates and frees there, under a lock of its
 * allocator that a fork() does not take before LLVM's
 * llvm/llvm-project#75290), and a child forked at that moment inherits
 * the lock taken by a thread it does not have: its first thread, or
 * malloc() of that size, waits forever.  A program that forks right after
 * rdma_create_event_channel() or ibv_open_device() did exactly that.
 */
int emu_thread_create(pthread_t *thread, const pthread_attr_t *attr,
		      void *(*fn)(void *), void *arg);

#endif /* RDMAFAST_EMU_BASE_THREAD_H */
