/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * thread.c - emu_thread_create() (thread.h): the new thread says it has
 * started by a semaphore the creator waits on.
 */
#include <errno.h>
#include <semaphore.h>

#include "thread.h"

struct start {
	void	*(*fn)(void *);
	void	*arg;
	sem_t	running;
};

static void *run(void *p)
{
	struct start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	sem_post(&s->running);	/* s is the creator's: not touched after this */
	return fn(arg);
}

int emu_thread_create(pthread_t *thread, const pthread_attr_t *attr,
		      void *(*fn)(void *), void *arg)
{
	struct start s = { .fn = fn, .arg = arg };
	int err;

	if (sem_init(&s.running, 0, 0))
		return errno;
	err = pthread_create(thread, attr, run, &s);
	if (!err)
		while (sem_wait(&s.running) && errno == EINTR)
			;
	sem_destroy(&s.running);
	return err;
}
