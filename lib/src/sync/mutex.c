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
 * The spin budget, in nanoseconds, is twice a running estimate of how
 * long a successful spin took, plus a floor, capped.  The estimate moves
 * 1/8 of the way to each new sample and decays when a spin fails, so a
 * lock whose holder sleeps or computes for long stops burning CPU on it.
 * See mx_spin() for how a saturated lock cuts the spin short.
 *
 * Ordering: acquisition is an acquire RMW on the word and release is a
 * release exchange, so the critical sections are ordered by the word
 * alone (which is also what ThreadSanitizer sees; it ignores the futex).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <asx/common.h>
#include <asx/sync.h>
#include "core/compiler.h"
#include "core/futex.h"
#include "core/probes.h"

enum { MX_FREE, MX_LOCKED, MX_CONTENDED };

/*
 * The spin is budgeted in nanoseconds, not in CPU-relax rounds: what one
 * round costs differs tenfold between CPUs (a few ns on older Intel parts,
 * ~26 ns for PAUSE on the Zen 4 KVM bench box), and a budget in rounds that
 * suited the one it was tuned on spun for up to 53 us and looked at the word
 * only every 3 us on the other.  MX_POLL_NS is how often the word is read.
 */
#define MX_POLL_NS	25
#define MX_SPIN_FLOOR_NS 400
#define MX_SPIN_CEIL_NS	4000

/* what one asx_cpu_relax() costs, in 1/16 ns; 0 until measured */
static uint32_t mx_relax_q4;

static __attribute__((noinline, cold)) uint32_t mx_calibrate(void)
{
	uint64_t best = UINT64_MAX;
	uint32_t q;

	/* the fastest of three: a preemption can only make one slower */
	for (int r = 0; r < 3; r++) {
		uint64_t t0 = asx_now_ns(), d;

		for (int i = 0; i < 32; i++)
			asx_cpu_relax();
		d = asx_now_ns() - t0;
		if (d < best)
			best = d;
	}
	q = (uint32_t)(best / 2);	/* 16 * best / 32 */
	if (!q)
		q = 1;
	if (q > 16 * MX_POLL_NS * 8)
		q = 16 * MX_POLL_NS * 8;
	ASX_STORE_RLX(&mx_relax_q4, q);
	return q;
}

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
 * *@spun: the nanoseconds spent.
 *
 * The word is read every MX_POLL_NS (CPU-relax rounds in between, so a
 * spinner does not keep stealing the cache line from the holder), for a
 * budget of twice the running estimate of a successful spin plus a floor,
 * capped at MX_SPIN_CEIL_NS: about what a futex sleep and wake-up cost, so
 * a holder that is off its CPU costs a spinner at most that much.  If the
 * holder lets go and takes the lock straight back before we can (we saw it
 * free and still lost), the lock is saturated: handing it over would only
 * ping-pong the line between the cores, so we stop spinning and sleep, and
 * the running thread keeps the lock hot.  (Spinning on after one lost race,
 * sleeping after the second, measured worse in the work rows: 6 paired
 * invocations each, 2 threads min 0.96 / med 1.11 against 1.02 / 1.15.)
 */
static bool mx_spin(struct asx_mutex *m, unsigned int *spun)
{
	uint32_t q = ASX_LOAD_RLX(&mx_relax_q4);
	uint32_t est = ASX_LOAD_RLX(&m->spin);
	uint32_t budget = 2 * est + MX_SPIN_FLOOR_NS, nest, per, step;
	uint32_t t = 0;

	if (unlikely(!q))
		q = mx_calibrate();
	per = (16 * MX_POLL_NS + q / 2) / q;	/* relax rounds per look */
	if (!per)
		per = 1;
	step = (per * q + 8) / 16;		/* ns per look */
	if (!step)
		step = 1;
	if (budget > MX_SPIN_CEIL_NS)
		budget = MX_SPIN_CEIL_NS;
	while (t < budget) {
		for (uint32_t k = 0; k < per; k++)
			asx_cpu_relax();
		t += step;
		if (ASX_LOAD_RLX(&m->word) != MX_FREE)
			continue;
		if (mx_cas(&m->word, MX_FREE, MX_LOCKED)) {
			nest = est + ((int)t - (int)est) / 8;
			goto done;
		}
		break;		/* lost the race to a running thread */
	}
	nest = est - est / 8;
	*spun = t;
	if (nest != est)
		ASX_STORE_RLX(&m->spin, nest);
	return false;
done:
	*spun = t;
	if (nest != est)
		ASX_STORE_RLX(&m->spin, nest);
	return true;
}

static int mx_lock_slow(struct asx_mutex *m, const struct timespec *abstime)
{
	unsigned int spins = 0, sleeps = 0;
	uint32_t c;
	int r;

	ASX_PROBE1(mutex_contended, m);
	if (!asx_timespec_valid(abstime))
		return -EINVAL;
	if (mx_spin(m, &spins))
		goto out;

	c = __atomic_exchange_n(&m->word, MX_CONTENDED, __ATOMIC_ACQUIRE);
	while (c != MX_FREE) {
		r = asx_futex_wait(&m->word, MX_CONTENDED, abstime);
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
		asx_futex_wake(&m->word, 1);
}
