//! Errors as a person reads them: the message, then each cause once.

/// The error's message, then each cause on its own line, each said once.
pub fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let said = c.to_string();
        // A transparent wrapper's message is its cause's: do not print it twice.
        if !text.ends_with(&said) {
            text.push_str("\n  caused by: ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    text
}
