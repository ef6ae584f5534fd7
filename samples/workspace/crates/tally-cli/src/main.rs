//! `tally-cli WORD...`: counts the words given on the command line.
use std::env;

use tally::tally_text;

fn main() {
    let words: Vec<String> = env::args().skip(1).collect();
    let text = words.join(" ");
    let t = tally_text(&text, 16);
    for w in &words {
        println!("{w}: {}", t.count(w));
    }
}
