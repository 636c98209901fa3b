//! How many runs one process runs at once. A server shared by several agents (or one agent
//! firing calls in parallel) would otherwise start every build together and make each slower
//! than running them in turn; beyond the limit, calls wait in the order they came.

use buildvise_engine::run::CancelToken;
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How often a waiting call looks at its cancel token and says where it is in the queue.
const LOOK_EVERY: Duration = Duration::from_millis(250);

pub(super) struct Slots {
    capacity: usize,
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Default)]
struct State {
    running: usize,
    next_ticket: u64,
    /// The tickets of the calls waiting, first come first.
    waiting: VecDeque<u64>,
}

/// A run's slot, given back when dropped.
pub(super) struct Slot<'a>(&'a Slots);

impl Slots {
    pub fn new(capacity: usize) -> Self {
        Slots { capacity: capacity.max(1), state: Mutex::default(), freed: Condvar::new() }
    }

    /// A slot, once one is free and every call that came earlier has one; None when `cancel`
    /// fires first. `queued` hears, now and then, how many calls are ahead and how many run.
    pub fn take(&self, cancel: &CancelToken, queued: &mut dyn FnMut(usize, usize)) -> Option<Slot<'_>> {
        let mut state = self.lock();
        if state.waiting.is_empty() && state.running < self.capacity {
            state.running += 1;
            return Some(Slot(self));
        }
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.waiting.push_back(ticket);
        loop {
            let ahead = state.waiting.iter().position(|t| *t == ticket).unwrap_or(0);
            if ahead == 0 && state.running < self.capacity {
                state.waiting.pop_front();
                state.running += 1;
                // The next in line may fit too.
                self.freed.notify_all();
                return Some(Slot(self));
            }
            if cancel.is_cancelled() {
                state.waiting.retain(|t| *t != ticket);
                self.freed.notify_all();
                return None;
            }
            let running = state.running;
            drop(state);
            queued(ahead, running);
            state = self.lock();
            state = self.freed.wait_timeout(state, LOOK_EVERY).map_or_else(|e| e.into_inner().0, |(s, _)| s);
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.lock().running -= 1;
        self.0.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::mpsc;

    #[test]
    fn calls_beyond_the_capacity_wait_in_order_and_say_so() {
        let slots = Arc::new(Slots::new(1));
        let first = slots.take(&CancelToken::default(), &mut |_, _| panic!("a free slot is taken at once"));
        let (started, order) = mpsc::channel();
        let mut waiters = Vec::new();
        for n in 0..3 {
            let (shared, started) = (Arc::clone(&slots), started.clone());
            waiters.push(std::thread::spawn(move || {
                let mut heard = Vec::new();
                let slot = shared.take(&CancelToken::default(), &mut |ahead, running| heard.push((ahead, running)));
                started.send(n).unwrap();
                drop(slot);
                heard
            }));
            // Each waiter queues before the next one comes.
            while slots.lock().waiting.len() < n + 1 {
                std::thread::yield_now();
            }
        }
        drop(first);
        let heard: Vec<Vec<(usize, usize)>> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
        assert_eq!(order.try_iter().collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(heard[2].first(), Some(&(2, 1)), "the third waiter heard two calls ahead, one running");
        assert_eq!(slots.lock().running, 0);
    }

    #[test]
    fn a_cancelled_waiter_leaves_the_queue_and_frees_the_way() {
        let slots = Arc::new(Slots::new(1));
        let held = slots.take(&CancelToken::default(), &mut |_, _| {}).unwrap();
        let cancel = CancelToken::default();
        let waiter = {
            let (shared, cancel) = (Arc::clone(&slots), cancel.clone());
            std::thread::spawn(move || shared.take(&cancel, &mut |_, _| {}).is_some())
        };
        while slots.lock().waiting.is_empty() {
            std::thread::yield_now();
        }
        cancel.cancel();
        assert!(!waiter.join().unwrap(), "a cancelled call gets no slot");
        assert!(slots.lock().waiting.is_empty());
        drop(held);
        assert!(slots.take(&CancelToken::default(), &mut |_, _| panic!("nobody is ahead")).is_some());
    }
}
