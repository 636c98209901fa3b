//! Tokens as an agent's model counts them: o200k_base, the encoding of OpenAI's current models
//! and the yardstick every token figure of buildvise uses.

/// The o200k_base tokens of `text`. The vocabulary is loaded on first use, once per process.
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_o200k_tokens() {
        assert_eq!(super::count(""), 0);
        assert_eq!(super::count("hello world"), 2);
    }
}
