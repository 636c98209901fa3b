//! Progress notifications: a call that carried a progress token hears how its work goes.
//!
//! MCP wants each notification's `progress` strictly greater than the last, and `total` when it
//! is known. The known total is the tests a tool announced; until it announces one, nothing
//! measures how far a build is. So the value counts in units: the time before tests is unit 0,
//! and each finished test one more (`total` = 1 + the tests announced); within a unit, each
//! notification adds a part of what is left of it, which keeps the value rising and never lets
//! it reach the next unit. A notification goes out when its message changed, and at least every
//! [`HEARTBEAT`] while the work is silent: clients such as the TypeScript SDK reset a request's
//! timeout (60 s by default) on progress, and a test that prints nothing for a minute would
//! otherwise be cancelled by the client that asked for it.

use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The longest a call that asked for progress goes without a notification: well inside the
/// 60 s a client's default timeout allows, and rare enough to cost nothing.
pub const HEARTBEAT: Duration = Duration::from_secs(10);

/// What one notification says: its message, and tests finished and announced when known.
#[derive(Clone)]
pub struct Said {
    pub message: String,
    pub tests: Option<(u64, u64)>,
}

/// The strictly rising values of one call's notifications.
#[derive(Debug, Default)]
struct Clock {
    unit: u64,
    /// Notifications sent within the current unit.
    within: u32,
    last_message: Option<String>,
}

impl Clock {
    /// The progress and total of the next notification, or None when it would say nothing new.
    fn next(&mut self, said: &Said) -> Option<(f64, Option<f64>)> {
        if self.last_message.as_deref() == Some(said.message.as_str()) {
            return None;
        }
        self.last_message = Some(said.message.clone());
        let (unit, total) = match said.tests {
            Some((done, announced)) => (1 + done, Some(1 + announced.max(done))),
            None => (0, None),
        };
        if unit > self.unit {
            (self.unit, self.within) = (unit, 0);
        } else {
            self.within += 1;
        }
        let part = f64::from(self.within) / f64::from(self.within + 1);
        Some((self.unit as f64 + part, total.map(|t| t as f64)))
    }
}

/// For a call that asked for progress (it carried a token): a channel whose values are sent as
/// notifications, worded by `say`, and the task sending them (done once the channel closes).
pub fn sender<T: Send + 'static>(
    context: &RequestContext<RoleServer>,
    say: fn(&T) -> Said,
) -> Option<(UnboundedSender<T>, JoinHandle<()>)> {
    let token = context.meta.get_progress_token()?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<T>();
    let peer = context.peer.clone();
    let reporter = tokio::spawn(async move {
        let mut clock = Clock::default();
        let started = Instant::now();
        let mut last_sent = started;
        let mut last_said: Option<Said> = None;
        loop {
            let said = tokio::select! {
                value = rx.recv() => match value {
                    Some(value) => {
                        let said = say(&value);
                        last_said = Some(said.clone());
                        said
                    }
                    None => break,
                },
                () = tokio::time::sleep_until(last_sent + HEARTBEAT) => heartbeat(started.elapsed(), last_said.as_ref()),
            };
            let Some((progress, total)) = clock.next(&said) else { continue };
            let mut params = ProgressNotificationParam::new(token.clone(), progress).with_message(said.message);
            params.total = total;
            let _ = peer.notify_progress(params).await;
            last_sent = Instant::now();
        }
    });
    Some((tx, reporter))
}

/// What a silent call says: how long it has been going, and the last thing it said (a silent
/// test keeps its count, so the value stays within its unit).
fn heartbeat(elapsed: Duration, last: Option<&Said>) -> Said {
    let secs = elapsed.as_secs();
    match last {
        Some(last) => Said { message: format!("{secs} s: {}", last.message), tests: last.tests },
        None => Said { message: format!("{secs} s: no output yet"), tests: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(message: &str, tests: Option<(u64, u64)>) -> Said {
        Said { message: message.to_string(), tests }
    }

    #[test]
    fn values_rise_strictly_through_a_build_then_its_tests_and_total_is_the_tests_plus_one() {
        let mut clock = Clock::default();
        let steps = [
            said("10 lines: Compiling a", None),
            said("20 lines: Compiling b", None),
            said("30 lines: Compiling c", None),
            said("40 lines, 0/3 tests", Some((0, 3))),
            said("41 lines, 0/3 tests", Some((0, 3))),
            said("42 lines, 2/3 tests", Some((2, 3))),
            said("43 lines, 2/5 tests", Some((2, 5))),
            said("50 lines, 5/5 tests", Some((5, 5))),
        ];
        let sent: Vec<_> = steps.iter().map(|s| clock.next(s).expect("a new message is sent")).collect();
        for pair in sent.windows(2) {
            assert!(pair[1].0 > pair[0].0, "{sent:?}");
        }
        let totals: Vec<_> = sent.iter().map(|(_, t)| *t).collect();
        assert_eq!(totals, [None, None, None, Some(4.0), Some(4.0), Some(4.0), Some(6.0), Some(6.0)]);
        assert!(sent[2].0 < 1.0 && sent[3].0 >= 1.0, "the build stays in unit 0: {sent:?}");
        assert_eq!(sent[5].0, 3.0, "two tests done is unit 3");
        assert_eq!(sent[7], (6.0, Some(6.0)), "all done reaches the total");
    }

    #[test]
    fn a_message_that_did_not_change_is_not_sent() {
        let mut clock = Clock::default();
        assert!(clock.next(&said("5 lines", None)).is_some());
        assert!(clock.next(&said("5 lines", None)).is_none());
        assert!(clock.next(&said("6 lines", None)).is_some());
    }

    #[test]
    fn many_notifications_in_one_unit_keep_rising_below_the_next() {
        let mut clock = Clock::default();
        let mut last = -1.0;
        for n in 0..10_000 {
            let (value, _) = clock.next(&said(&format!("{n} lines"), None)).unwrap();
            assert!(value > last && value < 1.0, "notification {n}: {value} after {last}");
            last = value;
        }
    }
}
