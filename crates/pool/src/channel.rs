//! A small multi-producer multi-consumer channel that loom can see.
//!
//! Without `cfg(weir_loom)` this is [`crossbeam_channel`], re-exported. Under
//! `cfg(weir_loom)` crossbeam's atomics are invisible to loom, so a
//! `Mutex<VecDeque<T>>` with two `Condvar`s stands in behind the same subset
//! of the API: [`bounded`], [`unbounded`], `send`, `try_send`, `recv` and
//! `try_recv`, with crossbeam's error types. Both are FIFO, and both
//! disconnect when every sender (for receivers) or every receiver (for
//! senders) has been dropped; queued messages can still be received after
//! the last sender is gone. `recv_timeout` exists only without loom.
//!
//! The loom stand-in has no rendezvous mode: `bounded(0)` behaves like
//! `bounded(1)` there.
//!
//! The stand-in must not order more than crossbeam does, or loom cannot see
//! the orderings its users rely on: a `try_send` that finds the channel
//! full is a pure read in crossbeam (it releases nothing to the receiver
//! that later empties the slot), so the stand-in decides "full" from a
//! relaxed length without taking the lock.

pub use crossbeam_channel::{RecvError, SendError, TryRecvError, TrySendError};

#[cfg(not(weir_loom))]
pub use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded, unbounded};

#[cfg(weir_loom)]
pub use self::loom_channel::{Receiver, Sender, bounded, unbounded};

#[cfg(weir_loom)]
mod loom_channel {
    use std::collections::VecDeque;
    use std::fmt;

    use super::{RecvError, SendError, TryRecvError, TrySendError};
    use crate::sync::{Arc, AtomicUsize, Condvar, Mutex, Ordering};

    struct State<T> {
        queue: VecDeque<T>,
        senders: usize,
        receivers: usize,
    }

    struct Chan<T> {
        state: Mutex<State<T>>,
        not_empty: Condvar,
        not_full: Condvar,
        capacity: Option<usize>,
        /// `state.queue.len()`, stored under the lock after every change
        /// and read without it by `try_send`'s full check.
        len: AtomicUsize,
    }

    impl<T> Chan<T> {
        fn is_full(&self, state: &State<T>) -> bool {
            self.capacity.is_some_and(|cap| state.queue.len() >= cap)
        }

        /// Records the queue's length; called under the lock.
        fn record_len(&self, state: &State<T>) {
            self.len.store(state.queue.len(), Ordering::Relaxed);
        }
    }

    /// The sending half of a channel; cloneable.
    pub struct Sender<T> {
        chan: Arc<Chan<T>>,
    }

    /// The receiving half of a channel; cloneable.
    pub struct Receiver<T> {
        chan: Arc<Chan<T>>,
    }

    /// A channel holding at most `capacity` messages (at least one).
    pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
        make(Some(capacity.max(1)))
    }

    /// A channel without a capacity limit.
    pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
        make(None)
    }

    fn make<T>(capacity: Option<usize>) -> (Sender<T>, Receiver<T>) {
        let chan = Arc::new(Chan {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                senders: 1,
                receivers: 1,
            }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            capacity,
            len: AtomicUsize::new(0),
        });
        (
            Sender {
                chan: Arc::clone(&chan),
            },
            Receiver { chan },
        )
    }

    impl<T> Sender<T> {
        /// Sends `msg`, blocking while the channel is full.
        pub fn send(&self, msg: T) -> Result<(), SendError<T>> {
            let mut state = self.chan.state.lock().unwrap();
            loop {
                if state.receivers == 0 {
                    return Err(SendError(msg));
                }
                if !self.chan.is_full(&state) {
                    state.queue.push_back(msg);
                    self.chan.record_len(&state);
                    drop(state);
                    self.chan.not_empty.notify_one();
                    return Ok(());
                }
                state = self.chan.not_full.wait(state).unwrap();
            }
        }

        /// Sends `msg` unless the channel is full or disconnected.
        pub fn try_send(&self, msg: T) -> Result<(), TrySendError<T>> {
            // A pure read, like crossbeam's: finding the channel full
            // synchronises with nobody.
            if self
                .chan
                .capacity
                .is_some_and(|cap| self.chan.len.load(Ordering::Relaxed) >= cap)
            {
                return Err(TrySendError::Full(msg));
            }
            let mut state = self.chan.state.lock().unwrap();
            if state.receivers == 0 {
                return Err(TrySendError::Disconnected(msg));
            }
            if self.chan.is_full(&state) {
                return Err(TrySendError::Full(msg));
            }
            state.queue.push_back(msg);
            self.chan.record_len(&state);
            drop(state);
            self.chan.not_empty.notify_one();
            Ok(())
        }
    }

    impl<T> Receiver<T> {
        /// Receives a message, blocking while the channel is empty and
        /// some sender is alive.
        pub fn recv(&self) -> Result<T, RecvError> {
            let mut state = self.chan.state.lock().unwrap();
            loop {
                if let Some(msg) = state.queue.pop_front() {
                    self.chan.record_len(&state);
                    drop(state);
                    self.chan.not_full.notify_one();
                    return Ok(msg);
                }
                if state.senders == 0 {
                    return Err(RecvError);
                }
                state = self.chan.not_empty.wait(state).unwrap();
            }
        }

        /// Receives a message if one is queued.
        pub fn try_recv(&self) -> Result<T, TryRecvError> {
            let mut state = self.chan.state.lock().unwrap();
            match state.queue.pop_front() {
                Some(msg) => {
                    self.chan.record_len(&state);
                    drop(state);
                    self.chan.not_full.notify_one();
                    Ok(msg)
                }
                None if state.senders == 0 => Err(TryRecvError::Disconnected),
                None => Err(TryRecvError::Empty),
            }
        }
    }

    impl<T> Clone for Sender<T> {
        fn clone(&self) -> Self {
            self.chan.state.lock().unwrap().senders += 1;
            Sender {
                chan: Arc::clone(&self.chan),
            }
        }
    }

    impl<T> Clone for Receiver<T> {
        fn clone(&self) -> Self {
            self.chan.state.lock().unwrap().receivers += 1;
            Receiver {
                chan: Arc::clone(&self.chan),
            }
        }
    }

    impl<T> Drop for Sender<T> {
        fn drop(&mut self) {
            let mut state = self.chan.state.lock().unwrap();
            state.senders -= 1;
            if state.senders == 0 {
                drop(state);
                self.chan.not_empty.notify_all();
            }
        }
    }

    impl<T> Drop for Receiver<T> {
        fn drop(&mut self) {
            let mut state = self.chan.state.lock().unwrap();
            state.receivers -= 1;
            if state.receivers == 0 {
                drop(state);
                self.chan.not_full.notify_all();
            }
        }
    }

    impl<T> fmt::Debug for Sender<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Sender { .. }")
        }
    }

    impl<T> fmt::Debug for Receiver<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Receiver { .. }")
        }
    }
}
