//! Word counts in a fixed number of buckets.
pub mod bucket;

use bucket::Bucket;
use fnvish::hash_str;

/// A tally of words.
pub struct Tally {
    buckets: Vec<Bucket>,
}

impl Tally {
    /// An empty tally with `n` buckets.
    pub fn new(n: usize) -> Self {
        Tally { buckets: (0..n.max(1)).map(|_| Bucket::default()).collect() }
    }

    /// Count one word.
    pub fn add(&mut self, word: &str) {
        let i = (hash_str(word) as usize) % self.buckets.len();
        self.buckets[i].push(word);
    }

    /// How often `word` was counted.
    pub fn count(&self, word: &str) -> usize {
        let i = (hash_str(word) as usize) % self.buckets.len();
        self.buckets[i].count(word)
    }
}

/// Split text on whitespace and count every word.
pub fn tally_text(text: &str, buckets: usize) -> Tally {
    let mut t = Tally::new(buckets);
    for w in text.split_whitespace() {
        t.add(w);
    }
    t
}
