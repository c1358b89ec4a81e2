//! A process-wide pool of host threads that run the work-group workers of every dispatch, so
//! a dispatch does not pay for spawning threads. Threads are started when more are needed
//! than are idle and then kept; a dispatch runs its share of the work on the calling thread
//! too.

use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// A job lent to pool threads: the address of a `dyn Fn() + Sync` that outlives the run (see
/// [`run`]), and the count of pool threads still running it.
struct Task {
    job: *const (dyn Fn() + Sync + 'static),
    pending: Arc<Pending>,
}

// SAFETY: the job is `Sync` (shared by reference between threads) and `run` keeps it alive
// until every thread that received it has finished with it.
unsafe impl Send for Task {}

/// Pool threads still running one dispatch's job.
struct Pending {
    count: Mutex<usize>,
    done: Condvar,
}

struct Pool {
    queue: Mutex<Queue>,
    work: Condvar,
}

struct Queue {
    tasks: Vec<Task>,
    idle: usize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        queue: Mutex::new(Queue {
            tasks: Vec::new(),
            idle: 0,
        }),
        work: Condvar::new(),
    })
}

fn pool_thread() {
    let p = pool();
    loop {
        let task = {
            let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(t) = q.tasks.pop() {
                    break t;
                }
                q.idle += 1;
                q = p.work.wait(q).unwrap_or_else(|e| e.into_inner());
                q.idle -= 1;
            }
        };
        // SAFETY: `run` does not return (nor unwind) before `pending` reaches zero, so the
        // job it lent is alive here.
        let job = unsafe { &*task.job };
        // The job catches its own panics; one escaping here is absorbed so the count still
        // drops and the pool thread lives on.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        let mut n = task.pending.count.lock().unwrap_or_else(|e| e.into_inner());
        *n -= 1;
        if *n == 0 {
            task.pending.done.notify_all();
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
            before - q.tasks.len()
        };
        let mut n = self.0.count.lock().unwrap_or_else(|e| e.into_inner());
        *n -= withdrawn;
        while *n > 0 {
            n = self.0.done.wait(n).unwrap_or_else(|e| e.into_inner());
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
        count: Mutex::new(helpers),
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
    let spawn = {
        let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..helpers {
            q.tasks.push(Task {
                job: erased,
                pending: pending.clone(),
            });
        }
        helpers.saturating_sub(q.idle)
    };
    for _ in 0..spawn {
        let started = std::thread::Builder::new()
            .name("amdgpu-emu worker".into())
            .spawn(pool_thread);
        if started.is_err() {
            break;
        }
    }
    p.work.notify_all();
    job();
    drop(join);
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn shares_run_at_once_on_pool_threads_and_run_waits_for_them() {
        for _ in 0..20 {
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
