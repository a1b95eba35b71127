//! [`Memo`]: a value computed once per key for the rest of the process, shared by every caller
//! (the plan memory's compiled kubelet expressions, their evaluations, the types a set of
//! requirements selects). It counts what it computed, so a test can say "once".

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Values computed once per key.
pub struct Memo<K, V> {
    values: Mutex<HashMap<K, Arc<V>>>,
    computed: AtomicUsize,
}

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Self {
            values: Mutex::new(HashMap::new()),
            computed: AtomicUsize::new(0),
        }
    }
}

impl<K: Eq + Hash, V> Memo<K, V> {
    /// The value of `key`, computed with `compute` the first time it is asked for. The lock is
    /// held while computing, so callers asking at once compute it once (the computations are
    /// short and pure).
    pub fn get_or_compute(&self, key: K, compute: impl FnOnce() -> V) -> Arc<V> {
        let mut values = match self.values.lock() {
            Ok(values) => values,
            // A computation that panicked cannot have left a half-written entry: start over.
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(v) = values.get(&key) {
            return v.clone();
        }
        self.computed.fetch_add(1, Ordering::Relaxed);
        let v = Arc::new(compute());
        values.insert(key, v.clone());
        v
    }

    /// How many values were computed (not found) so far.
    pub fn computed(&self) -> usize {
        self.computed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::Memo;

    #[test]
    fn each_key_is_computed_once() {
        let memo: Memo<String, usize> = Memo::default();
        assert_eq!(*memo.get_or_compute("a".into(), || 1), 1);
        assert_eq!(*memo.get_or_compute("a".into(), || 2), 1);
        assert_eq!(*memo.get_or_compute("b".into(), || 3), 3);
        assert_eq!(memo.computed(), 2);
    }
}
