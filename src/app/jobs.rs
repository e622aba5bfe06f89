//! Background work for the views (heat map, compare): one thread per job, its result on a
//! channel, and a Cancel flag the work checks. Dropping a job cancels it, so a view that lets
//! go of its job (the learner switched lesson, or asked again) stops the thread instead of
//! leaving it to run on unseen.

use crate::backend::CancelFlag;
use std::sync::mpsc::{Receiver, channel};

pub struct Job<T> {
    result: Receiver<T>,
    cancel: CancelFlag,
}

impl<T: Send + 'static> Job<T> {
    /// Runs `work` on a thread named `name`; `repaint` is called when it is done.
    pub fn start(
        name: &str,
        work: impl FnOnce(&CancelFlag) -> T + Send + 'static,
        repaint: impl Fn() + Send + 'static,
    ) -> Job<T> {
        let (tx, result) = channel();
        let cancel = CancelFlag::default();
        let flag = cancel.clone();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let _ = tx.send(work(&flag));
                repaint();
            })
            .unwrap_or_else(|e| panic!("cannot start the {name} thread: {e}"));
        Job { result, cancel }
    }
}

impl<T> Job<T> {
    /// The result, once the work is done (taken once).
    pub fn poll(&self) -> Option<T> {
        self.result.try_recv().ok()
    }
}

impl<T> Drop for Job<T> {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Work that runs until it is cancelled, and says when it stopped.
    fn endless() -> (Job<()>, std::sync::mpsc::Receiver<Instant>) {
        let (stopped_tx, stopped) = channel();
        let job = Job::start(
            "test job",
            move |cancel| {
                while !cancel.is_cancelled() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let _ = stopped_tx.send(Instant::now());
            },
            || {},
        );
        (job, stopped)
    }

    #[test]
    fn dropping_a_job_stops_its_thread_within_a_second() {
        let (job, stopped) = endless();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(job.poll(), None, "still running");
        let dropped_at = Instant::now();
        drop(job);
        let at = stopped
            .recv_timeout(Duration::from_secs(1))
            .expect("the thread stopped");
        assert!(at.duration_since(dropped_at) < Duration::from_secs(1));
    }

    #[test]
    fn a_finished_job_gives_its_result_once() {
        let job = Job::start("test job", |_| 42, || {});
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut got = None;
        while got.is_none() && Instant::now() < deadline {
            got = job.poll();
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(got, Some(42));
        assert_eq!(job.poll(), None);
    }
}
