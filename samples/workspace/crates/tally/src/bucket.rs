//! One bucket: words and their counts.

/// Words that hashed to the same bucket.
#[derive(Default)]
pub struct Bucket {
    entries: Vec<(String, usize)>,
}

impl Bucket {
    pub fn push(&mut self, word: &str) {
        match self.entries.iter_mut().find(|(w, _)| w == word) {
            Some((_, n)) => *n += 1,
            None => self.entries.push((word.to_string(), 1)),
        }
    }

    pub fn count(&self, word: &str) -> usize {
        self.entries.iter().find(|(w, _)| w == word).map(|(_, n)| *n).unwrap_or(0)
    }
}
