//! Each exported format on its own: it reads its own output (snippets of the parser's tests,
//! captured from dotnet) and not the other's.

use super::FORMATS;
use crate::DotnetPlugin;
use buildvise_plugin_api::testing::parse_log;
use buildvise_plugin_api::{ParseContext, ParseResult, Plugin};

const MSBUILD: &str = "\
MSBuild version 17.11.9+a69bbaaf5 for .NET
/src/Inv/Program.cs(12,36): error CS0103: The name 'qty' does not exist in the current context [/src/Inv/Inv.csproj]
/src/Inv/Models/Item.cs(8,19): warning CS8618: Non-nullable property 'Sku' must contain a non-null value. [/src/Inv/Inv.csproj]

Build FAILED.
";

const VSTEST: &str = "\
  Orders.Tests -> /src/O/tests/Orders.Tests/bin/Debug/net8.0/Orders.Tests.dll
Test run for /src/O/tests/Orders.Tests/bin/Debug/net8.0/Orders.Tests.dll (.NETCoreApp,Version=v8.0)
VSTest version 17.11.1 (x64)
[xUnit.net 00:00:00.41]     Orders.Tests.PricingTests.Total_AppliesDiscount [FAIL]
  Failed Orders.Tests.PricingTests.Total_AppliesDiscount [4 ms]
  Error Message:
   Assert.Equal() Failure: Values differ
Expected: 90.00
Actual:   100.00
  Stack Trace:
     at Orders.Tests.PricingTests.Total_AppliesDiscount() in /src/O/tests/Orders.Tests/PricingTests.cs:line 25
   at System.RuntimeMethodHandle.InvokeMethod(Object target, Void** arguments, Signature sig, Boolean isConstructor)

Failed!  - Failed:     1, Passed:    14, Skipped:     0, Total:    15, Duration: 96 ms - Orders.Tests.dll (net8.0)
";

fn parse(format: &str, log: &str) -> ParseResult {
    let context = ParseContext::new("ci.test", "/src/Inv");
    parse_log(DotnetPlugin.format_parser(format, &context).expect("an exported format"), log.as_bytes(), 1)
}

#[test]
fn msbuild_reads_build_diagnostics_and_no_tests() {
    let result = parse("msbuild", MSBUILD);
    let codes: Vec<_> = result.diagnostics.iter().map(|d| d.code.as_deref()).collect();
    assert_eq!(codes, [Some("CS0103"), Some("CS8618")]);
    assert_eq!(result.diagnostics[0].file.as_deref(), Some("Program.cs"));
    let result = parse("msbuild", VSTEST);
    assert!(result.diagnostics.is_empty() && result.failed_tests.is_empty() && result.summary.is_none());
}

#[test]
fn vstest_reads_test_results_and_no_build_diagnostics() {
    let result = parse("vstest", VSTEST);
    assert_eq!(result.failed_tests, ["Orders.Tests.PricingTests.Total_AppliesDiscount"]);
    assert_eq!(result.diagnostics.len(), 1);
    assert_eq!(result.diagnostics[0].message, "Assert.Equal() Failure: Values differ");
    assert_eq!(result.summary.map(|s| (s.passed, s.failed, s.total)), Some((14, 1, 15)));
    let result = parse("vstest", MSBUILD);
    assert!(result.diagnostics.is_empty(), "{:?}", result.diagnostics);
    // Its build errors still say that the test project never ran.
    assert_eq!(result.summary.and_then(|s| s.projects_build_failed), Some(1));
}

#[test]
fn the_manifest_lists_every_format_and_only_those() {
    let manifest = DotnetPlugin.manifest();
    let names: Vec<&str> = manifest.formats.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, FORMATS.map(|(name, _)| name));
    let context = ParseContext::new("ci.test", "/src/Inv");
    for name in &names {
        assert!(DotnetPlugin.format_parser(name, &context).is_some(), "{name}");
    }
    assert!(DotnetPlugin.format_parser("dotnet", &context).is_none());
}
