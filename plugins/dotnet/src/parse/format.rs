//! `dotnet format --verify-no-changes` reports each change it would make as a canonical MSBuild
//! line (`File.cs(2,36): error WHITESPACE: Fix whitespace formatting. Insert '\r\n'. [p.csproj]`,
//! with `FINALNEWLINE`, `IMPORTS`, `IDE0055` or an analyzer's code), and several formatters can
//! flag the same place. One line of the file is one thing to fix: its later reports become notes
//! of the first.

use buildvise_plugin_api::Diagnostic;
use std::collections::HashMap;

/// Notes kept on one line's diagnostic.
const MAX_NOTES: usize = 5;

/// The diagnostics with those of an already reported (file, line, severity) folded into it as
/// `CODE: message` notes; diagnostics without a line stay as they are.
pub fn one_per_line(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut kept: Vec<Diagnostic> = Vec::with_capacity(diagnostics.len());
    let mut index: HashMap<(String, u32, String), usize> = HashMap::new();
    for d in diagnostics {
        let key = match (&d.file, d.line) {
            (Some(file), Some(line)) => (file.clone(), line, format!("{:?}", d.severity)),
            _ => {
                kept.push(d);
                continue;
            }
        };
        match index.get(&key) {
            Some(&i) => {
                let first = &mut kept[i];
                if first.notes.len() < MAX_NOTES {
                    let code = d.code.as_deref().map(|c| format!("{c}: ")).unwrap_or_default();
                    first.notes.push(format!("{code}{}", d.message));
                }
                if let (Some(range), Some(other)) = (&mut first.log_range, d.log_range) {
                    range.end = range.end.max(other.end);
                }
            }
            None => {
                index.insert(key, kept.len());
                kept.push(d);
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use crate::DotnetPlugin;
    use buildvise_plugin_api::{ParseContext, Plugin, Severity, testing::parse_log};

    fn parse(log: &str, cwd: &str) -> buildvise_plugin_api::ParseResult {
        let parser = DotnetPlugin.parser(&ParseContext::new("dotnet.format", cwd));
        parse_log(parser, log.as_bytes(), 2)
    }

    #[test]
    fn two_formatters_on_one_line_are_one_diagnostic() {
        // .NET SDK 9.0.101 on Windows, quoted in dotnet/sdk#45586.
        let log = "E:\\Repos\\dotnettest\\Program.cs(2,36): error WHITESPACE: Fix whitespace formatting. Insert '\\r\\n'. [E:\\Repos\\dotnettest\\dotnettest.csproj]\n\
                   E:\\Repos\\dotnettest\\Program.cs(2,36): error FINALNEWLINE: Fix final newline. Delete 2 characters. [E:\\Repos\\dotnettest\\dotnettest.csproj]\n";
        let r = parse(log, "/elsewhere");
        assert_eq!(r.diagnostics.len(), 1, "{:#?}", r.diagnostics);
        let d = &r.diagnostics[0];
        assert_eq!((d.line, d.column, d.code.as_deref()), (Some(2), Some(36), Some("WHITESPACE")));
        assert_eq!(d.message, "Fix whitespace formatting. Insert '\\r\\n'.");
        assert_eq!(d.notes, ["FINALNEWLINE: Fix final newline. Delete 2 characters."]);
        assert_eq!(d.log_range.map(|r| (r.start, r.end)), Some((1, 2)));
    }

    #[test]
    fn other_lines_and_warnings_stay_apart() {
        // .NET SDK 8, quoted in dotnet/sdk#37812 (vs-threading).
        let log = "/workspaces/vs-threading/src/Microsoft.VisualStudio.Threading/ListOfOftenOne`1.cs(256,60): error WHITESPACE: Fix whitespace formatting. Delete 1 characters. [/workspaces/vs-threading/src/Microsoft.VisualStudio.Threading/Microsoft.VisualStudio.Threading.csproj]\n\
                   /workspaces/vs-threading/src/Microsoft.VisualStudio.Threading/RarelyRemoveItemSet`1.cs(217,61): error WHITESPACE: Fix whitespace formatting. Delete 1 characters. [/workspaces/vs-threading/src/Microsoft.VisualStudio.Threading/Microsoft.VisualStudio.Threading.csproj]\n\
                   /workspaces/vs-threading/src/Microsoft.VisualStudio.Threading/ListOfOftenOne`1.cs(256,59): warning SA1011: Closing square bracket should be followed by a space [/workspaces/vs-threading/src/Microsoft.VisualStudio.Threading/Microsoft.VisualStudio.Threading.csproj]\n";
        let r = parse(log, "/workspaces/vs-threading");
        let places: Vec<_> =
            r.diagnostics.iter().map(|d| (d.severity, d.file.as_deref(), d.line, d.code.as_deref())).collect();
        assert_eq!(
            places,
            [
                (
                    Severity::Error,
                    Some("src/Microsoft.VisualStudio.Threading/ListOfOftenOne`1.cs"),
                    Some(256),
                    Some("WHITESPACE")
                ),
                (
                    Severity::Error,
                    Some("src/Microsoft.VisualStudio.Threading/RarelyRemoveItemSet`1.cs"),
                    Some(217),
                    Some("WHITESPACE")
                ),
                (
                    Severity::Warning,
                    Some("src/Microsoft.VisualStudio.Threading/ListOfOftenOne`1.cs"),
                    Some(256),
                    Some("SA1011")
                ),
            ]
        );
    }
}
