//! FNV-1a over bytes, 64 bits.

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0100_0000_01b3;

/// Hash bytes.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = OFFSET;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// Hash a string's UTF-8 bytes.
pub fn hash_str(s: &str) -> u64 {
    hash_bytes(s.as_bytes())
}
