//! The app's one job service: every piece of background work (a run, the heat map's count,
//! a comparison, the PTX & SASS listing) starts here, on a thread of its own, with a Cancel
//! flag the work checks, a progress value it may publish, and its result on a channel.
//!
//! A view keeps the `Job` it started; dropping it cancels the work (the learner switched
//! lesson, or asked again), so no thread runs on unseen. The service keeps a weak list of
//! the jobs alive, which the status bar shows with one Cancel for all of them, and which
//! `busy` reads (a screenshot waits for work in flight).

use crate::backend::CancelFlag;
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex, Weak};

/// What the service knows of a job while it is alive.
struct Entry {
    name: &'static str,
    cancel: CancelFlag,
    finished: std::sync::atomic::AtomicBool,
}

/// Starts jobs and lists those in flight. Clones share the list.
#[derive(Clone, Default)]
pub struct Jobs {
    alive: Arc<Mutex<Vec<Weak<Entry>>>>,
    repaint: Option<egui::Context>,
}

/// What a job's work gets: the Cancel flag to check, and a way to say how far it is.
pub struct JobContext<P> {
    pub cancel: CancelFlag,
    progress: Arc<Mutex<Option<P>>>,
    repaint: Option<egui::Context>,
}

impl<P> JobContext<P> {
    /// Publishes how far the work is (the view reads the latest with `Job::progress`).
    pub fn progress(&self, value: P) {
        *self.progress.lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
        self.request_repaint();
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn request_repaint(&self) {
        if let Some(ctx) = &self.repaint {
            ctx.request_repaint();
        }
    }
}

/// A job in flight or finished: its result (taken once), its latest progress, its Cancel.
pub struct Job<T, P = ()> {
    result: Receiver<T>,
    progress: Arc<Mutex<Option<P>>>,
    entry: Arc<Entry>,
}

impl Jobs {
    /// From now on, jobs started repaint `ctx` when they publish progress or finish.
    pub fn repaint_with(&mut self, ctx: &egui::Context) {
        if self.repaint.is_none() {
            self.repaint = Some(ctx.clone());
        }
    }

    /// Runs `work` on a thread named `name`.
    pub fn start<T: Send + 'static, P: Send + 'static>(
        &self,
        name: &'static str,
        work: impl FnOnce(&JobContext<P>) -> T + Send + 'static,
    ) -> Job<T, P> {
        let (tx, result) = channel();
        let entry = Arc::new(Entry {
            name,
            cancel: CancelFlag::default(),
            finished: Default::default(),
        });
        let progress = Arc::new(Mutex::new(None));
        let cx = JobContext {
            cancel: entry.cancel.clone(),
            progress: progress.clone(),
            repaint: self.repaint.clone(),
        };
        {
            let mut alive = self.alive.lock().unwrap_or_else(|e| e.into_inner());
            alive.retain(|w| w.strong_count() > 0);
            alive.push(Arc::downgrade(&entry));
        }
        let finished = entry.clone();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let _ = tx.send(work(&cx));
                finished.finished.store(true, std::sync::atomic::Ordering::Relaxed);
                cx.request_repaint();
            })
            .unwrap_or_else(|e| panic!("cannot start the {name} thread: {e}"));
        Job {
            result,
            progress,
            entry,
        }
    }

    /// The names of the jobs still working, oldest first.
    pub fn running(&self) -> Vec<&'static str> {
        self.live().into_iter().map(|e| e.name).collect()
    }

    /// Whether any job is still working.
    pub fn busy(&self) -> bool {
        !self.live().is_empty()
    }

    /// Raises every working job's Cancel flag; each ends at its next check (within a second:
    /// tests/gui.rs) and hands back what it has, usually a "cancelled" result.
    pub fn cancel_all(&self) {
        for entry in self.live() {
            entry.cancel.cancel();
        }
    }

    fn live(&self) -> Vec<Arc<Entry>> {
        let alive = self.alive.lock().unwrap_or_else(|e| e.into_inner());
        alive
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|e| !e.finished.load(std::sync::atomic::Ordering::Relaxed))
            .collect()
    }
}

impl<T, P: Clone> Job<T, P> {
    /// The latest progress the work published.
    pub fn progress(&self) -> Option<P> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl<T, P> Job<T, P> {
    /// The result, once the work is done (taken once).
    pub fn poll(&self) -> Option<T> {
        self.result.try_recv().ok()
    }

    /// Asks the work to stop; it ends at its next check.
    pub fn cancel(&self) {
        self.entry.cancel.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.entry.cancel.is_cancelled()
    }
}

impl<T, P> Drop for Job<T, P> {
    fn drop(&mut self) {
        self.entry.cancel.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Work that runs until it is cancelled, and says when it stopped.
    fn endless(jobs: &Jobs) -> (Job<()>, std::sync::mpsc::Receiver<Instant>) {
        let (stopped_tx, stopped) = channel();
        let job = jobs.start("test job", move |cx: &JobContext<()>| {
            while !cx.is_cancelled() {
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = stopped_tx.send(Instant::now());
        });
        (job, stopped)
    }

    /// The job's thread has said it stopped; its entry leaves the list when the work has
    /// returned, a moment later (under load, not at once).
    fn unlisted_within_a_second(jobs: &Jobs) -> bool {
        let until = Instant::now() + Duration::from_secs(1);
        while jobs.busy() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        !jobs.busy()
    }

    fn stopped_within_a_second(stopped: &std::sync::mpsc::Receiver<Instant>, asked: Instant) {
        let at = stopped
            .recv_timeout(Duration::from_secs(1))
            .expect("the thread stopped");
        assert!(at.duration_since(asked) < Duration::from_secs(1));
    }

    #[test]
    fn dropping_a_job_stops_its_thread_within_a_second() {
        let jobs = Jobs::default();
        let (job, stopped) = endless(&jobs);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(job.poll(), None, "still running");
        assert_eq!(jobs.running(), vec!["test job"]);
        let dropped_at = Instant::now();
        drop(job);
        stopped_within_a_second(&stopped, dropped_at);
        assert!(unlisted_within_a_second(&jobs), "a dropped job is not listed");
    }

    #[test]
    fn cancel_all_stops_every_job_within_a_second() {
        let jobs = Jobs::default();
        let (first, stopped_first) = endless(&jobs);
        let (second, stopped_second) = endless(&jobs);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(jobs.running().len(), 2);
        let asked = Instant::now();
        jobs.cancel_all();
        stopped_within_a_second(&stopped_first, asked);
        stopped_within_a_second(&stopped_second, asked);
        assert!(first.is_cancelled() && second.is_cancelled());
    }

    #[test]
    fn a_finished_job_gives_its_result_once_and_its_last_progress() {
        let jobs = Jobs::default();
        let job = jobs.start("test job", |cx: &JobContext<u32>| {
            cx.progress(1);
            cx.progress(2);
            42
        });
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut got = None;
        while got.is_none() && Instant::now() < deadline {
            got = job.poll();
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(got, Some(42));
        assert_eq!(job.poll(), None);
        assert_eq!(job.progress(), Some(2));
        assert!(unlisted_within_a_second(&jobs), "finished");
    }
}
