//! A process-wide pool of host threads that run the work-group workers of every dispatch, so
//! a dispatch does not pay for spawning threads. Threads are started when more are needed
//! than are idle and then kept; a dispatch runs its share of the work on the calling thread
//! too.
//!
//! A thread that has just finished its share keeps looking for the next one for a short while
//! ([`LINGER`]) before it sleeps: back-to-back dispatches then hand work over without waking a
//! sleeping host thread, which on a virtual machine costs tens of microseconds per dispatch.
//! The looking yields the core to any other runnable thread. The caller looks for its helpers'
//! end only for [`WATCH`], without yielding, then sleeps until the last one wakes it: on a busy
//! machine a yield gives the core away for a whole time slice (milliseconds), which would
//! delay the dispatch's end by as much.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a pool thread looks for work before it sleeps.
const LINGER: Duration = Duration::from_millis(1);

/// How long the caller of [`run`] watches for its helpers' end before it sleeps.
const WATCH: Duration = Duration::from_micros(20);

/// Look at `ready` until it holds or `within` has passed, yielding the core between looks
/// when `yielding`; whether it held.
fn look(ready: impl Fn() -> bool, within: Duration, yielding: bool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= within {
            return ready();
        }
        if yielding {
            std::thread::yield_now();
        }
    }
}

/// A job lent to pool threads: the address of a `dyn Fn() + Sync` that outlives the run (see
/// [`run`]), and the count of pool threads still running it.
struct Task {
    job: *const (dyn Fn() + Sync + 'static),
    pending: Arc<Pending>,
}

// SAFETY: the job is `Sync` (shared by reference between threads) and `run` keeps it alive
// until every thread that received it has finished with it.
unsafe impl Send for Task {}

/// Pool threads still running one dispatch's job: the count, and a lock and condition to
/// sleep on until it is zero (the last one to finish notifies under the lock).
struct Pending {
    left: AtomicUsize,
    lock: Mutex<()>,
    done: Condvar,
}

struct Pool {
    queue: Mutex<Queue>,
    /// The length of `queue.tasks`, read without the lock by lingering threads.
    queued: AtomicUsize,
    work: Condvar,
}

struct Queue {
    tasks: Vec<Task>,
    /// Pool threads not running a task (lingering or asleep).
    idle: usize,
    /// Of those, the ones asleep on `Pool::work`.
    asleep: usize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        queue: Mutex::new(Queue {
            tasks: Vec::new(),
            idle: 0,
            asleep: 0,
        }),
        queued: AtomicUsize::new(0),
        work: Condvar::new(),
    })
}

fn pool_thread() {
    let p = pool();
    p.queue.lock().unwrap_or_else(|e| e.into_inner()).idle += 1;
    loop {
        let task = next_task(p);
        // SAFETY: `run` does not return (nor unwind) before `pending` reaches zero, so the
        // job it lent is alive here.
        let job = unsafe { &*task.job };
        // The job catches its own panics; one escaping here is absorbed so the count still
        // drops and the pool thread lives on.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        // Idle again before the caller can see the share end, so that its next dispatch
        // counts this thread rather than starting another.
        p.queue.lock().unwrap_or_else(|e| e.into_inner()).idle += 1;
        task.pending.finish(1);
    }
}

/// The next task for a pool thread that counts as idle: looked for a while, then slept for.
fn next_task(p: &Pool) -> Task {
    loop {
        look(|| p.queued.load(Ordering::Acquire) > 0, LINGER, true);
        let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
        if q.tasks.is_empty() {
            q.asleep += 1;
            while q.tasks.is_empty() {
                q = p.work.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            q.asleep -= 1;
        }
        if let Some(t) = q.tasks.pop() {
            p.queued.store(q.tasks.len(), Ordering::Release);
            q.idle -= 1;
            return t;
        }
    }
}

impl Pending {
    /// `n` shares ended (finished or withdrawn); the waiting caller is woken at zero.
    fn finish(&self, n: usize) {
        if n > 0 && self.left.fetch_sub(n, Ordering::AcqRel) == n {
            let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.done.notify_all();
        }
    }
}

/// When dropped: withdraws the tasks no pool thread has taken (the caller's share has done
/// their work by then: every share claims from the same work-group counter), then waits until
/// the pool threads that took one have finished.
struct Join(Arc<Pending>);

impl Drop for Join {
    fn drop(&mut self) {
        let withdrawn = {
            let mut q = pool().queue.lock().unwrap_or_else(|e| e.into_inner());
            let before = q.tasks.len();
            q.tasks.retain(|t| !Arc::ptr_eq(&t.pending, &self.0));
            pool().queued.store(q.tasks.len(), Ordering::Release);
            before - q.tasks.len()
        };
        self.0.finish(withdrawn);
        let ended = || self.0.left.load(Ordering::Acquire) == 0;
        if look(ended, WATCH, false) {
            return;
        }
        let mut held = self.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        while !ended() {
            held = self.0.done.wait(held).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Run `job` on `threads` threads at once (the calling thread and `threads - 1` pool
/// threads) and return when all have finished, even if the caller's share panics.
pub(crate) fn run(threads: usize, job: &(dyn Fn() + Sync)) {
    let helpers = threads.saturating_sub(1);
    if helpers == 0 {
        job();
        return;
    }
    let pending = Arc::new(Pending {
        left: AtomicUsize::new(helpers),
        lock: Mutex::new(()),
        done: Condvar::new(),
    });
    let join = Join(pending.clone());
    // SAFETY: only the lifetime is erased; `join` waits in its `Drop` (also on unwinding)
    // until no pool thread uses the job any more, so the reference never outlives `job`.
    let erased: *const (dyn Fn() + Sync + 'static) = unsafe {
        std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(
            job,
        )
    };
    let p = pool();
    let (spawn, wake) = {
        let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..helpers {
            q.tasks.push(Task {
                job: erased,
                pending: pending.clone(),
            });
        }
        p.queued.store(q.tasks.len(), Ordering::Release);
        (helpers.saturating_sub(q.idle), q.asleep > 0)
    };
    for _ in 0..spawn {
        let started = std::thread::Builder::new()
            .name("amdgpu-emu worker".into())
            .spawn(pool_thread);
        if started.is_err() {
            break;
        }
    }
    if wake {
        p.work.notify_all();
    }
    job();
    drop(join);
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn shares_run_at_once_on_pool_threads_and_run_waits_for_them() {
        // Back to back (the pool threads still look for work), then with pauses longer than
        // they look (they are asleep when the next run starts).
        for k in 0..20 {
            if k >= 10 {
                std::thread::sleep(super::LINGER * 3);
            }
            let ran = AtomicUsize::new(0);
            let finished = AtomicUsize::new(0);
            super::run(3, &|| {
                ran.fetch_add(1, Ordering::SeqCst);
                // Each share waits for the others: they run on three threads at once.
                for _ in 0..50_000_000u64 {
                    if ran.load(Ordering::SeqCst) >= 3 {
                        break;
                    }
                    std::thread::yield_now();
                }
                finished.fetch_add(1, Ordering::SeqCst);
            });
            assert_eq!(ran.load(Ordering::SeqCst), 3);
            assert_eq!(
                finished.load(Ordering::SeqCst),
                3,
                "run returned before its shares"
            );
        }
        let q = super::pool().queue.lock().unwrap();
        assert!(q.tasks.is_empty());
    }
}
