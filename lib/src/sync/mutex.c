// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * mutex.c - the adaptive mutex.
 *
 * The lock word is 0 (free), 1 (held) or 2 (held, and somebody may be
 * asleep on it).  Taking it is a plain read and, if that saw 0, one
 * compare-and-swap 0 -> 1; releasing it is one exchange.  On failure the
 * caller spins for a bounded, self-tuning number of CPU-relax rounds,
 * watching for the word to drop to 0; if that does not happen it swaps in
 * 2 and sleeps on the futex until an unlock that finds 2 wakes it.  A
 * thread woken from the futex always re-marks the word 2, so an unlock
 * after it still wakes whoever is left asleep.
 *
 * The spin budget, counted in CPU-relax rounds, is twice a running
 * estimate of how long a successful spin took, plus a floor, capped.  The
 * estimate moves 1/8 of the way to each new sample and decays when a spin
 * fails, so a lock whose holder sleeps or computes for long stops burning
 * CPU on it.  See mx_spin() for how a saturated lock cuts the spin short.
 *
 * Waiting goes through asx__word_wait() (asc/wait.h): a pthread sleeps on
 * the futex as before, an ASC user thread parks and its VP runs others.
 * A user thread on the only VP does not spin: the holder cannot run
 * until it stops.
 *
 * Ordering: acquisition is an acquire RMW on the word and release is a
 * release exchange, so the critical sections are ordered by the word
 * alone (which is also what ThreadSanitizer sees; it ignores the futex).
 */
#include <errno.h>
#include <stdbool.h>

#include <asx/sync.h>
#include "asc/wait.h"
#include "core/compiler.h"
#include "core/futex.h"
#include "core/probes.h"
#include "sync/lockstat.h"

enum { MX_FREE, MX_LOCKED, MX_CONTENDED };

#define MX_SPIN_FLOOR	64
#define MX_BACKOFF_MAX	128
#define MX_SPIN_CEIL	2048

static inline bool mx_cas(uint32_t *w, uint32_t from, uint32_t to)
{
	return __atomic_compare_exchange_n(w, &from, to, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

void asx_mutex_init(struct asx_mutex *m)
{
	m->word = MX_FREE;
	m->spin = 0;
}

void asx_mutex_destroy(struct asx_mutex *m)
{
	(void)m;
}

/*
 * Spin while the holder is likely to let go soon; true if we got it.
 *
 * The word is polled with exponential back-off, so a spinner does not
 * keep stealing the cache line from the holder.  If the holder lets go
 * and takes the lock straight back before we can (we saw it free, or saw
 * it change hands, and still lost), the lock is saturated: handing it
 * over would only ping-pong the line between the cores, so we stop
 * spinning and sleep, and the running thread keeps the lock hot.
 */
static bool mx_spin(struct asx_mutex *m, unsigned int *spun)
{
	uint32_t est = __atomic_load_n(&m->spin, __ATOMIC_RELAXED);
	uint32_t budget = 2 * est + MX_SPIN_FLOOR, nest;
	uint32_t i = 0, pause = 1, w;

	if (budget > MX_SPIN_CEIL)
		budget = MX_SPIN_CEIL;
	while (i < budget) {
		for (uint32_t k = 0; k < pause; k++)
			asx_cpu_relax();
		i += pause;
		if (pause < MX_BACKOFF_MAX)
			pause <<= 1;
		w = __atomic_load_n(&m->word, __ATOMIC_RELAXED);
		if (w != MX_FREE)
			continue;
		if (mx_cas(&m->word, MX_FREE, MX_LOCKED)) {
			nest = est + ((int)i - (int)est) / 8;
			goto done;
		}
		break;		/* lost the race to a running thread */
	}
	nest = est - est / 8;
	*spun = i;
	if (nest != est)
		__atomic_store_n(&m->spin, nest, __ATOMIC_RELAXED);
	return false;
done:
	*spun = i;
	if (nest != est)
		__atomic_store_n(&m->spin, nest, __ATOMIC_RELAXED);
	return true;
}

static int mx_lock_slow(struct asx_mutex *m, const struct timespec *abstime)
{
	unsigned int spins = 0, sleeps = 0;
	uint64_t t0;
	uint32_t c;
	int r;

	ASX_PROBE1(mutex_contended, m);
	if (!asx_timespec_valid(abstime))
		return -EINVAL;
	t0 = asx__lockstat_begin();
	if (!asx__spin_futile() && mx_spin(m, &spins))
		goto out;

	c = __atomic_exchange_n(&m->word, MX_CONTENDED, __ATOMIC_ACQUIRE);
	while (c != MX_FREE) {
		r = asx__word_wait(&m->word, MX_CONTENDED, abstime);
		sleeps++;
		/*
		 * On time-out the word stays 2 even if we were the last
		 * sleeper: the cost is one spare wake-up at the next unlock.
		 */
		if (r == -ETIMEDOUT)
			return r;
		c = __atomic_exchange_n(&m->word, MX_CONTENDED, __ATOMIC_ACQUIRE);
	}
out:
	asx__lockstat_add(ASX_LOCKSTAT_ACQUIRE, t0);
	ASX_PROBE3(mutex_acquired, m, spins, sleeps);
	return 0;
}

/*
 * Test-and-test-and-set: read the word before the CAS.  A held lock then
 * goes to the slow path without a locked instruction (no write to a line
 * the holder is using), and on the 2-vCPU bench box this is also 2-3%
 * faster uncontended than a bare CAS, which is what decides the
 * saturated case, where one thread runs a long burst of uncontended
 * acquisitions while the other waits.
 */
static inline bool mx_fast(struct asx_mutex *m)
{
	return __atomic_load_n(&m->word, __ATOMIC_RELAXED) == MX_FREE &&
	       mx_cas(&m->word, MX_FREE, MX_LOCKED);
}

/*
 * Every acquisition fires mutex_acquired, the uncontended ones too: a USDT
 * probe is one nop, and tracing it costs a tenth of a uprobe at the entry
 * of the function (an instruction the kernel must single-step).
 */
void asx_mutex_lock(struct asx_mutex *m)
{
	if (likely(mx_fast(m))) {
		ASX_PROBE3(mutex_acquired, m, 0, 0);
		return;
	}
	mx_lock_slow(m, NULL);
}

int asx_mutex_trylock(struct asx_mutex *m)
{
	if (!mx_fast(m))
		return -EBUSY;
	ASX_PROBE3(mutex_acquired, m, 0, 0);
	return 0;
}

int asx_mutex_timedlock(struct asx_mutex *m, const struct timespec *abstime)
{
	if (likely(mx_fast(m))) {
		ASX_PROBE3(mutex_acquired, m, 0, 0);
		return 0;
	}
	return mx_lock_slow(m, abstime);
}

void asx_mutex_unlock(struct asx_mutex *m)
{
	ASX_PROBE1(mutex_release, m);
	if (unlikely(__atomic_exchange_n(&m->word, MX_FREE, __ATOMIC_RELEASE) ==
		     MX_CONTENDED))
		asx__word_wake(&m->word, 1);
}
