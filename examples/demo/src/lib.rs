//! A tiny crate for trying buildvise: it builds with one warning and its tests pass.

/// Celsius to Fahrenheit.
pub fn to_fahrenheit(celsius: f64) -> f64 {
    let unused_offset = 32.0;
    celsius * 9.0 / 5.0 + 32.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freezing() {
        assert_eq!(to_fahrenheit(0.0), 32.0);
    }

    #[test]
    fn boiling() {
        assert_eq!(to_fahrenheit(100.0), 212.0);
    }

    #[test]
    #[ignore = "shows how skipped tests are counted"]
    fn body() {
        assert_eq!(to_fahrenheit(37.0), 98.6);
    }
}
