//! Whole-parser tests, one or more per format, on small excerpts shaped like real output.

use super::*;
use buildvise_plugin_api::testing::{parse_log, parse_streams};
use buildvise_plugin_api::{LogRange, Stream};

fn parser(tool: &str, cwd: &str) -> Box<dyn Parser> {
    Box::new(DotnetParser::new(&ParseContext::new(tool, cwd)))
}

fn build(log: &str, exit: i32) -> ParseResult {
    parse_log(parser("dotnet.build", "/src/Inv"), log.as_bytes(), exit)
}

fn test(log: &str, exit: i32) -> ParseResult {
    parse_log(parser("dotnet.test", ""), log.as_bytes(), exit)
}

/// Severity, code, file and line of each diagnostic.
type Brief<'a> = (Severity, Option<&'a str>, Option<&'a str>, Option<u32>);

fn codes(r: &ParseResult) -> Vec<Brief<'_>> {
    r.diagnostics.iter().map(|d| (d.severity, d.code.as_deref(), d.file.as_deref(), d.line)).collect()
}

fn summary(r: &ParseResult) -> (u64, u64, u64, u64, Option<u64>) {
    let s = r.summary.as_ref().expect("a test summary");
    (s.passed, s.failed, s.skipped, s.total, s.projects_build_failed)
}

#[test]
fn classic_logger_diagnostics_once_despite_the_build_failed_repeat() {
    let log = "\
MSBuild version 17.11.9+a69bbaaf5 for .NET
/src/Inv/Program.cs(12,36): error CS0103: The name 'qty' does not exist in the current context [/src/Inv/Inv.csproj]
/src/Inv/Models/Item.cs(8,19): warning CS8618: Non-nullable property 'Sku' must contain a non-null value. [/src/Inv/Inv.csproj]
/src/Inv/Models/Item.cs(9,19): warning CS8618: Non-nullable property 'Name' must contain a non-null value. [/src/Inv/Inv.csproj]

Build FAILED.

/src/Inv/Models/Item.cs(8,19): warning CS8618: Non-nullable property 'Sku' must contain a non-null value. [/src/Inv/Inv.csproj]
/src/Inv/Models/Item.cs(9,19): warning CS8618: Non-nullable property 'Name' must contain a non-null value. [/src/Inv/Inv.csproj]
/src/Inv/Program.cs(12,36): error CS0103: The name 'qty' does not exist in the current context [/src/Inv/Inv.csproj]
    2 Warning(s)
    1 Error(s)
";
    let r = build(log, 1);
    assert_eq!(
        codes(&r),
        [
            (Severity::Error, Some("CS0103"), Some("Program.cs"), Some(12)),
            (Severity::Warning, Some("CS8618"), Some("Models/Item.cs"), Some(8)),
            (Severity::Warning, Some("CS8618"), Some("Models/Item.cs"), Some(9)),
        ]
    );
    let first = &r.diagnostics[0];
    assert_eq!(first.message, "The name 'qty' does not exist in the current context");
    assert_eq!(first.column, Some(36));
    assert_eq!(first.log_range, Some(LogRange::new(2, 2)));
    assert!(first.notes.is_empty());
    assert_eq!(r.summary, None);
    assert_eq!(r.success, None);
}

#[test]
fn windows_paths_and_crlf() {
    let log = "C:\\src\\App\\Program.cs(10,5): error CS0246: The type 'HttpClientFactory' could not be found [C:\\src\\App\\App.csproj]\r\n\
C:\\src\\App\\Program.cs(14,13): warning CS0219: The variable 'retries' is assigned but never used [C:\\src\\App\\App.csproj]\r\n";
    let r = parse_log(parser("dotnet.build", r"c:\src\app"), log.as_bytes(), 1);
    assert_eq!(r.diagnostics[0].file.as_deref(), Some("Program.cs"));
    assert_eq!(r.diagnostics[0].message, "The type 'HttpClientFactory' could not be found");
    assert_eq!(r.diagnostics[1].message, "The variable 'retries' is assigned but never used");
}

#[test]
fn nuget_multi_line_messages_are_one_diagnostic_and_ci_noise_is_dropped() {
    let log = "\
2026-01-29T20:02:11.9846651Z /w/App/App.csproj : error NU1605: Warning As Error: Detected package downgrade: Pkg from 2.0.0 to 1.0.0.  [/w/App.sln]
2026-01-29T20:02:11.9849007Z /w/App/App.csproj : error NU1605:  App -> Other 3.0.0 -> Pkg (>= 2.0.0)  [/w/App.sln]
2026-01-29T20:02:11.9850724Z /w/App/App.csproj : error NU1605:  App -> Pkg (>= 1.0.0) [/w/App.sln]
2026-01-29T20:02:11.9911518Z   Failed to restore /w/App/App.csproj (in 2.97 sec).
2026-01-29T20:02:12.1468677Z ##[error]Process completed with exit code 1.
";
    let r = parse_log(parser("dotnet.restore", "/w"), log.as_bytes(), 1);
    assert_eq!(r.diagnostics.len(), 1, "{:?}", r.diagnostics);
    let d = &r.diagnostics[0];
    assert_eq!((d.file.as_deref(), d.code.as_deref()), (Some("App/App.csproj"), Some("NU1605")));
    assert!(d.message.starts_with("Warning As Error: Detected package downgrade"), "{}", d.message);
    assert_eq!(d.notes, ["App -> Other 3.0.0 -> Pkg (>= 2.0.0)", "App -> Pkg (>= 1.0.0)"]);
    assert_eq!(d.log_range, Some(LogRange::new(1, 3)));
}

#[test]
fn copy_retries_collapse_but_distinct_messages_at_one_location_stay() {
    let mut log = String::new();
    for retry in 1..=3 {
        log += &format!(
            "C:\\sdk\\Microsoft.Common.CurrentVersion.targets(4895,5): warning MSB3026: Could not copy \"a.dll\" to \"b.dll\". Beginning retry {retry} in 1000ms. [D:\\w\\Api\\Api.csproj]\n"
        );
    }
    log += "C:\\sdk\\Microsoft.Common.CurrentVersion.targets(4895,5): error MSB3027: Could not copy \"a.dll\" to \"b.dll\". Exceeded retry count of 10. Failed. [D:\\w\\Api\\Api.csproj]\n";
    for pkg in ["Xamarin.AndroidX.Core", "Xamarin.Google.Material"] {
        log += &format!(
            "/sdk/targets/Sdk.DefaultItems.Shared.targets(152,5): warning NETSDK1023: A PackageReference for '{pkg}' was included in your project. [/w/M/M.csproj::TargetFramework=net7.0-android]\n"
        );
    }
    let r = build(&log, 1);
    let got: Vec<_> = r.diagnostics.iter().map(|d| d.code.as_deref().unwrap_or("")).collect();
    assert_eq!(got, ["MSB3026", "MSB3027", "NETSDK1023", "NETSDK1023"]);
    assert_eq!(r.diagnostics[0].notes, [r"project: D:\w\Api\Api.csproj"]);
}

#[test]
fn multi_targeting_repeats_are_one_diagnostic() {
    let log = "\
C:\\w\\Doble.cs(7,13): warning CS0219: The variable 'x' is assigned but its value is never used [C:\\w\\Multi.csproj::TargetFramework=net10.0]
C:\\w\\Doble.cs(5,16): warning CA1822: Member 'Sumar' can be marked as static (https://learn.microsoft.com/dotnet/ca1822) [C:\\w\\Multi.csproj::TargetFramework=net10.0]
C:\\w\\Doble.cs(7,13): warning CS0219: The variable 'x' is assigned but its value is never used [C:\\w\\Multi.csproj::TargetFramework=net9.0]
C:\\w\\Doble.cs(5,16): warning CA1822: Member 'Sumar' can be marked as static (https://learn.microsoft.com/dotnet/ca1822) [C:\\w\\Multi.csproj::TargetFramework=net9.0]

Build succeeded.
    4 Warning(s)
    0 Error(s)
";
    let r = build(log, 0);
    assert_eq!(r.diagnostics.len(), 2);
    assert_eq!(r.diagnostics[1].message, "Member 'Sumar' can be marked as static");
    assert_eq!(r.diagnostics[1].notes, ["https://learn.microsoft.com/dotnet/ca1822"]);
}

#[test]
fn tool_origins_subcategories_and_switch_lines() {
    let log = "\
CSC : error SA0001: XML comment analysis is disabled due to project configuration [/p/Lib/Lib.csproj]
MSBUILD : error MSB1009: Project file does not exist.
Switch: Nope.csproj
C:\\w\\W.sln : Solution file error MSB4249: Unable to build website project \"Site\".
MSBUILD: error MSBUILD0000: Project file 'src/Api/Api.csproj' not found.
";
    let r = build(log, 1);
    let got: Vec<_> = r.diagnostics.iter().map(|d| (d.file.as_deref(), d.code.as_deref(), d.line)).collect();
    assert_eq!(
        got,
        [
            (Some("CSC"), Some("SA0001"), None),
            (Some("MSBUILD"), Some("MSB1009"), None),
            (Some(r"C:\w\W.sln"), Some("MSB4249"), None),
            (Some("MSBUILD"), Some("MSBUILD0000"), None),
        ]
    );
    assert_eq!(r.diagnostics[0].notes, ["project: /p/Lib/Lib.csproj"]);
    assert_eq!(r.diagnostics[1].notes, ["switch: Nope.csproj"]);
    assert_eq!(r.diagnostics[1].log_range, Some(LogRange::new(2, 3)));
}

#[test]
fn terminal_logger_layout_with_ansi_and_links() {
    let log = "\x1b[?25l\x1b[1F\n\
\x1b[?25hRestore complete (0.6s)\n\
  Inv.Core \x1b[32;1msucceeded\x1b[m (1.4s) \u{2192} \x1b]8;;file:///src/Inv/Inv.Core/bin/\x1b\\Inv.Core/bin/Inv.Core.dll\x1b]8;;\x1b\\\n\
  Inv.Api \x1b[31;1mfailed with 1 error(s) and 1 warning(s)\x1b[m (0.9s)\n\
    /src/Inv/Inv.Api/Stock.cs(9,24): \x1b[33;1mwarning CS8618\x1b[m: Non-nullable field '_log' must contain a non-null value.\n\
    /src/Inv/Inv.Api/Program.cs(12,36): \x1b[31;1merror CS0103\x1b[m: The name 'itemName' does not exist in the current context\n\
\n\
\x1b[31;1mBuild failed with 1 error(s) and 1 warning(s) in 3.4s\x1b[m\n";
    let r = build(log, 1);
    assert_eq!(
        codes(&r),
        [
            (Severity::Warning, Some("CS8618"), Some("Inv.Api/Stock.cs"), Some(9)),
            (Severity::Error, Some("CS0103"), Some("Inv.Api/Program.cs"), Some(12)),
        ]
    );
}

#[test]
fn mcs_related_locations_are_notes_and_streams_may_come_apart() {
    let stderr = "\
src/Item.cs(22,23): warning CS0108: `Item.Describe()' hides inherited member `Entity.Describe()'
src/Item.cs(8,23): (Location of the symbol related to previous warning)
src/Program.cs(12,41): error CS0103: The name `itemName' does not exist in the current context
/usr/lib/mono/4.5/mscorlib.dll (Location of the symbol related to previous error)
";
    let stdout = "Compilation failed: 1 error(s), 1 warnings\n";
    let end = RunEnd::exited(1);
    let r = parse_streams(parser("dotnet.build", "/src"), stdout.as_bytes(), stderr.as_bytes(), &end);
    assert_eq!(r.diagnostics.len(), 2);
    assert_eq!(r.diagnostics[0].notes, ["related: src/Item.cs(8,23)"]);
    assert_eq!(r.diagnostics[0].log_range, Some(LogRange::new(2, 3)));
    assert_eq!(r.diagnostics[1].notes, ["related: /usr/lib/mono/4.5/mscorlib.dll"]);
}

#[test]
fn xbuild_error_tree_repeats_once() {
    let log = "\
\t\tTool /usr/lib/mono/4.5/mcs.exe execution started with arguments: /noconfig /out:obj/Debug/L.dll A.cs
A.cs(12,29): error CS0103: The name `rate' does not exist in the current context
\tTask \"Csc\" execution -- FAILED
Build FAILED.

Errors:

/src/L/L.csproj (default targets) ->
/usr/lib/mono/xbuild/14.0/bin/Microsoft.CSharp.targets (CoreCompile target) ->

\tA.cs(12,29): error CS0103: The name `rate' does not exist in the current context

\t 0 Warning(s)
\t 1 Error(s)
";
    let r = build(log, 1);
    assert_eq!(codes(&r), [(Severity::Error, Some("CS0103"), Some("A.cs"), Some(12))]);
}

#[test]
fn vstest_xunit_failures_counted_once_with_stack_locations() {
    let log = "\
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

[xUnit.net 00:00:00.44]     Orders.Tests.OrderTests.Latest [FAIL]
  Failed Orders.Tests.OrderTests.Latest [7 ms]
  Error Message:
   System.InvalidOperationException : Sequence contains no elements
  Stack Trace:
     at System.Linq.ThrowHelper.ThrowNoElementsException()
   at Orders.OrderService.GetLatest(Int32 id) in /src/O/src/Orders/OrderService.cs:line 41
   at Orders.Tests.OrderTests.Latest() in /src/O/tests/Orders.Tests/OrderTests.cs:line 33

[xUnit.net 00:00:00.45]     Orders.Tests.ShippingTests.International [SKIP]
  Skipped Orders.Tests.ShippingTests.International [1 ms]

Failed!  - Failed:     2, Passed:    14, Skipped:     1, Total:    17, Duration: 96 ms - Orders.Tests.dll (net8.0)
";
    let r = test(log, 1);
    assert_eq!(r.failed_tests, ["Orders.Tests.PricingTests.Total_AppliesDiscount", "Orders.Tests.OrderTests.Latest"]);
    assert_eq!(r.diagnostics.len(), 2);
    let first = &r.diagnostics[0];
    assert_eq!(first.message, "Assert.Equal() Failure: Values differ");
    assert_eq!(first.notes, ["Expected: 90.00", "Actual:   100.00"]);
    assert_eq!((first.file.as_deref(), first.line), (Some("/src/O/tests/Orders.Tests/PricingTests.cs"), Some(25)));
    assert_eq!(first.log_range, Some(LogRange::new(5, 12)));
    let second = &r.diagnostics[1];
    assert_eq!((second.file.as_deref(), second.line), (Some("/src/O/src/Orders/OrderService.cs"), Some(41)));
    assert_eq!(summary(&r), (14, 2, 1, 17, Some(0)));
}

#[test]
fn xunit_fail_lines_stand_in_when_vstest_printed_no_details() {
    let log = "\
[xUnit.net 00:00:00.17]     Lib.Tests.CalcTests.AddFails [FAIL]
Failed!  - Failed:     1, Passed:     1, Skipped:     0, Total:     2, Duration: 29 ms - Lib.Tests.dll (net10.0)";
    let r = test(log, 1);
    assert_eq!(r.failed_tests, ["Lib.Tests.CalcTests.AddFails"]);
    assert_eq!(r.diagnostics[0].log_range, Some(LogRange::new(1, 1)));
}

#[test]
fn vstest_normal_verbosity_summary() {
    let log = "\
Test run for C:\\w\\tests\\W.Tests\\bin\\Release\\net8.0\\W.Tests.dll (.NETCoreApp,Version=v8.0)
  Passed W.Tests.RegistryTests.AcquireHandle [12 ms]
  Passed W.Tests.RegistryTests.Release [< 1 ms]

Test Run Successful.
Total tests: 2
     Passed: 2
 Total time: 0.5875 Seconds
";
    let r = test(log, 0);
    assert!(r.diagnostics.is_empty());
    assert_eq!(summary(&r), (2, 0, 0, 2, Some(0)));
}

#[test]
fn test_projects_that_failed_to_build() {
    let log = "\
  Catalog.Core.Tests -> /src/C/tests/Catalog.Core.Tests/bin/Debug/net8.0/Catalog.Core.Tests.dll
/src/C/tests/Catalog.Api.Tests/ProductTests.cs(41,27): error CS1061: 'HttpResponseMessage' does not contain a definition for 'ReadAsJsonAsync' [/src/C/tests/Catalog.Api.Tests/Catalog.Api.Tests.csproj]
/src/C/tests/Catalog.Api.Tests/ProductTests.cs(58,13): error CS0103: The name 'client' does not exist in the current context [/src/C/tests/Catalog.Api.Tests/Catalog.Api.Tests.csproj]
Test run for /src/C/tests/Catalog.Core.Tests/bin/Debug/net8.0/Catalog.Core.Tests.dll (.NETCoreApp,Version=v8.0)

Passed!  - Failed:     0, Passed:    37, Skipped:     0, Total:    37, Duration: 140 ms - Catalog.Core.Tests.dll (net8.0)
";
    let r = test(log, 1);
    assert_eq!(r.diagnostics.len(), 2);
    assert!(r.failed_tests.is_empty());
    assert_eq!(summary(&r), (37, 0, 0, 37, Some(1)));
}

#[test]
fn crashed_test_host_is_reported() {
    let log = "\
Test run for /src/T/bin/Debug/net8.0/T.Tests.dll (.NETCoreApp,Version=v8.0)
The active test run was aborted. Reason: Test host process crashed : Stack overflow.
The active Test Run was aborted because the host process exited unexpectedly. Please inspect the call stack above.
The test running when the crash occurred:
T.Tests.RecursionTests.Deep

Test Run Aborted.
Total tests: Unknown
     Passed: 5
 Total time: 0.7 Seconds
";
    let r = test(log, 1);
    assert_eq!(r.diagnostics.len(), 1, "{:?}", r.diagnostics);
    let d = &r.diagnostics[0];
    assert_eq!(d.message, "The active test run was aborted. Reason: Test host process crashed : Stack overflow.");
    assert_eq!(d.test.as_deref(), Some("T.Tests.RecursionTests.Deep"));
    assert!(r.failed_tests.is_empty());
    assert_eq!(summary(&r), (5, 0, 0, 5, Some(0)));
}

#[test]
fn host_crash_with_an_unhandled_exception_is_located_in_the_project() {
    let log = "\
Test run for /home/dev/src/shop/tests/Shop.Tests/bin/Debug/net8.0/Shop.Tests.dll (.NETCoreApp,Version=v8.0)
VSTest version 17.11.1 (x64)

Starting test execution, please wait...
A total of 1 test files matched the specified pattern.
The active test run was aborted. Reason: Test host process crashed : Unhandled exception. System.InvalidOperationException: Queue was disposed
   at System.Collections.Concurrent.BlockingCollection`1.Add(T item)
   at Shop.Worker.Run() in /home/dev/src/shop/src/Shop/Worker.cs:line 42
   at Shop.Tests.WorkerTests.<>c.<Crash>b__0_0() in /home/dev/src/shop/tests/Shop.Tests/WorkerTests.cs:line 12
   at System.Threading.Thread.StartCallback()

Test Run Aborted.
Total tests: Unknown
     Passed: 3
 Total time: 0.9 Seconds
";
    let r = parse_log(parser("dotnet.test", "/home/dev/src/shop"), log.as_bytes(), 1);
    assert_eq!(r.diagnostics.len(), 1, "{:?}", r.diagnostics);
    let d = &r.diagnostics[0];
    assert_eq!(d.message, "System.InvalidOperationException: Queue was disposed");
    assert_eq!((d.file.as_deref(), d.line), (Some("src/Shop/Worker.cs"), Some(42)));
    assert_eq!(d.notes[0], "The active test run was aborted. Reason: Test host process crashed");
    assert_eq!(d.log_range, Some(LogRange::new(6, 12)));
    assert_eq!(summary(&r), (3, 0, 0, 3, Some(0)));
    assert_eq!(r.stopped_early.as_deref(), Some("test host crashed: the rest of its tests did not run"));
}

#[test]
fn unhandled_exception_of_any_program() {
    let log = "\
Unhandled exception. System.IO.FileNotFoundException: Could not find file '/srv/app/appsettings.json'.
File name: '/srv/app/appsettings.json'
   at Microsoft.Win32.SafeHandles.SafeFileHandle.Open(String fullPath)
   at Shop.Program.Main(String[] args) in /src/Shop/Program.cs:line 7
";
    let r = parse_log(parser("dotnet.build", "/src/Shop"), log.as_bytes(), 134);
    let d = &r.diagnostics[0];
    assert_eq!(d.message, "System.IO.FileNotFoundException: Could not find file '/srv/app/appsettings.json'.");
    assert_eq!((d.file.as_deref(), d.line), (Some("Program.cs"), Some(7)));
    assert_eq!(r.stopped_early, None);
}

#[test]
fn test_projects_that_failed_to_build_are_said_not_to_have_run() {
    let log = "\
/src/C/tests/A.Tests/T.cs(4,1): error CS1002: ; expected [/src/C/tests/A.Tests/A.Tests.csproj]
/src/C/tests/B.Tests/T.cs(9,5): error CS0103: The name 'x' does not exist in the current context [/src/C/tests/B.Tests/B.Tests.csproj]
";
    let r = test(log, 1);
    assert_eq!(summary(&r).4, Some(2));
    assert_eq!(r.stopped_early.as_deref(), Some("2 test projects not run: build failed"));
}

#[test]
fn terminal_logger_test_errors() {
    let log = "\
  MyTests test failed with 2 error(s) (0.8s)
    UnitTest1.cs(28): {ESC}[31;1merror{ESC}[m {ESC}[31;1mTESTERROR{ESC}[m: 
      MyTests.UnitTest1.Theory(value: 6) (< 1ms): Error Message: Assert.True() Failure
      Expected: True
      Actual:   False
      Stack Trace:
         at MyTests.UnitTest1.Theory(Int32 value) in /src/MyTests/UnitTest1.cs:line 28
    UnitTest1.cs(14): error TESTERROR:
      MyTests.UnitTest1.Failing (2ms): Error Message: Assert.Equal() Failure: Values differ
      Stack Trace:
         at MyTests.UnitTest1.Failing() in /src/MyTests/UnitTest1.cs:line 14

Test summary: total: 5, failed: 2, succeeded: 3, skipped: 0, duration: 1.6s
Build failed with 2 error(s) in 2.1s
"
    .replace("{ESC}", "\x1b");
    let r = test(&log, 1);
    assert_eq!(r.failed_tests, ["MyTests.UnitTest1.Theory(value: 6)", "MyTests.UnitTest1.Failing"]);
    let d = &r.diagnostics[0];
    assert_eq!(d.code.as_deref(), Some("TESTERROR"));
    assert_eq!(d.message, "Assert.True() Failure");
    assert_eq!((d.file.as_deref(), d.line), (Some("/src/MyTests/UnitTest1.cs"), Some(28)));
    assert_eq!(d.log_range, Some(LogRange::new(2, 7)));
    assert_eq!(summary(&r), (3, 2, 0, 5, Some(0)));
}

#[test]
fn testing_platform_output() {
    let log = "\
failed Shop.Tests.ApiTests.Create_NeedsAdmin(role: \"user\") (270ms)
  from /r/Shop.Tests/bin/Debug/net10.0/Shop.Tests.dll (net10.0|x64)
  Assert.Equal() Failure: Values differ
  Expected: Created
  Actual:   Forbidden
    at Shop.Tests.ApiTests.Create_NeedsAdmin(String role) in /r/Shop.Tests/ApiTests.cs:915
/r/Shop.Tests/bin/Debug/net10.0/Shop.Tests.dll (net10.0|x64) failed with 1 error(s) (8s 406ms)

Test run summary: Failed!
  total: 56
  failed: 1
  succeeded: 54
  skipped: 1
  duration: 9s 12ms
";
    let r = test(log, 2);
    assert_eq!(r.failed_tests, ["Shop.Tests.ApiTests.Create_NeedsAdmin(role: \"user\")"]);
    let d = &r.diagnostics[0];
    assert_eq!(d.message, "Assert.Equal() Failure: Values differ");
    assert_eq!((d.file.as_deref(), d.line), (Some("/r/Shop.Tests/ApiTests.cs"), Some(915)));
    assert_eq!(summary(&r), (54, 1, 1, 56, Some(0)));
}

#[test]
fn nunit_console_two() {
    let log = "\
..F.N
Tests run: 4, Errors: 0, Failures: 1, Inconclusive: 0, Time: 0.1462372 seconds
  Not run: 1, Invalid: 0, Ignored: 1, Skipped: 0

Errors and Failures:
1) Test Failure : Billing.Tests.CalcTests.Add_Cases(2,2,5)
     Expected: 5
  But was:  4

at Billing.Tests.CalcTests.Add_Cases (System.Int32 a) [0x0000f] in /src/CalcTests.cs:41
at System.Reflection.RuntimeMethodInfo.Invoke (System.Object obj) [0x0007c] in <12b418a7818c4ca0>:0

Tests Not Run:
1) Ignored : Billing.Tests.CalcTests.Convert
   Currency conversion not implemented yet
";
    let r = parse_log(parser("dotnet.test", "/src"), log.as_bytes(), 1);
    assert_eq!(r.failed_tests, ["Billing.Tests.CalcTests.Add_Cases(2,2,5)"]);
    let d = &r.diagnostics[0];
    assert_eq!((d.message.as_str(), d.file.as_deref(), d.line), ("Expected: 5", Some("CalcTests.cs"), Some(41)));
    assert_eq!(d.notes, ["But was:  4"]);
    assert_eq!(summary(&r), (3, 1, 1, 5, Some(0)));
}

#[test]
fn trx_artifact_fills_in_what_the_console_lacks() {
    let dir = std::env::temp_dir().join(format!("buildvise-dotnet-trx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trx = dir.join("results.trx");
    std::fs::write(
        &trx,
        "\u{feff}<?xml version=\"1.0\" encoding=\"utf-8\"?>\r\n<TestRun xmlns=\"http://microsoft.com/schemas/VisualStudio/TeamTest/2010\">\r\n<Results>\r\n\
<UnitTestResult testName=\"T.Fails\" outcome=\"Failed\"><Output><ErrorInfo><Message>boom&#xD;\nmore</Message>\
<StackTrace>   at T.Fails() in /src/T.cs:line 7&#xD;\n</StackTrace></ErrorInfo></Output></UnitTestResult>\r\n\
<UnitTestResult testName=\"T.Passes\" outcome=\"Passed\" />\r\n<UnitTestResult testName=\"T.Later\" outcome=\"NotExecuted\" />\r\n\
</Results></TestRun>\r\n",
    )
    .unwrap();
    let end = RunEnd::exited(1).with_artifacts(vec![trx.to_string_lossy().into_owned()]);
    let r = parse_streams(parser("dotnet.test", "/src"), b"", b"", &end);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(r.failed_tests, ["T.Fails"]);
    let d = &r.diagnostics[0];
    assert_eq!((d.message.as_str(), d.file.as_deref(), d.line), ("boom", Some("T.cs"), Some(7)));
    assert_eq!(d.notes, ["more"]);
    assert_eq!(d.log_range, None);
    assert_eq!(summary(&r), (1, 1, 1, 3, Some(0)));
}

#[test]
fn a_build_with_no_test_output_has_no_summary_and_a_test_run_has_zeros() {
    assert_eq!(build("Build succeeded.\n    0 Warning(s)\n", 0).summary, None);
    assert_eq!(summary(&test("  Determining projects to restore...\n", 0)), (0, 0, 0, 0, Some(0)));
}

#[test]
fn odd_input_never_panics() {
    let mut p = parser("dotnet.test", "/src");
    let lines: [&[u8]; 12] = [
        b"\xff\xfe/src/A.cs(1,2): error CS1: bad \xc3",
        b"  Failed ",
        b"  Failed X [",
        b"failed ()",
        b"1) Test Failure : ",
        b"A.cs(: error X: y",
        b"A.cs(99999999999,1): error CS1: overflow",
        b"Total tests:",
        b"Test run summary:",
        b"  total: 99999999999999999999999",
        b"The test running when the crash occurred:",
        b"2026-01-29T20:02:11.9846651Z",
    ];
    for (i, bytes) in lines.iter().enumerate() {
        p.feed(Line::new(Stream::Stdout, 100 - i as u64, bytes));
    }
    let huge = "x".repeat(2 * 1024 * 1024) + ": error CS1: y";
    p.feed(Line::new(Stream::Stderr, 1, huge.as_bytes()));
    let r = p.finish(&RunEnd::exited(1).with_artifacts(vec!["/nonexistent/x.trx".into()]));
    assert!(r.diagnostics.iter().all(|d| !d.message.is_empty()));
}

#[test]
fn text_is_bounded_and_a_cut_line_still_names_its_problem() {
    let long = "ü".repeat(40_000);
    let log = format!(
        "/src/Inv/A.cs(14,25): error CS0029:\n/src/Inv/B.cs(3,1): warning : [/src/Inv/Inv.csproj]\n\
         /src/Inv/C.cs(1,1): error CS1002: {long}\n\
         /w/App/App.csproj : error NU1605: Detected package downgrade [/w/App.sln]\n\
         /w/App/App.csproj : error NU1605:  {long}\n\
         /sdk/Sdk.targets(166,5): error NETSDK1045: SDK too old [/src/{long}.csproj]\n"
    );
    let r = build(&log, 1);
    let messages: Vec<&str> = r.diagnostics.iter().take(2).map(|d| d.message.as_str()).collect();
    assert_eq!(messages, ["error CS0029", "warning"]);
    assert!(r.diagnostics[2].message.len() <= MAX_TEXT + "…".len());
    assert!(r.diagnostics[3].notes[0].len() <= MAX_TEXT + "…".len());
    assert!(r.diagnostics[4].notes[0].len() <= "project: ".len() + MAX_TEXT + "…".len());
    let crash =
        format!("The active test run was aborted. Reason: {long}\nThe test running when the crash occurred:\n{long}\n");
    let r = test(&crash, 1);
    assert!(r.diagnostics[0].message.len() <= MAX_TEXT + "…".len());
    assert!(r.diagnostics[0].test.as_ref().is_some_and(|t| t.len() <= MAX_TEXT + "…".len()));
}

#[test]
fn counts_printed_past_u64_saturate() {
    let max = u64::MAX;
    let line =
        format!("Failed!  - Failed: {max}, Passed: {max}, Skipped: 1, Total: {max}, Duration: 1 s - A.dll (net8.0)\n");
    assert_eq!(summary(&test(&line.repeat(2), 1)), (max, max, 2, max, Some(0)));
    let nunit = format!("Tests run: {max}, Errors: {max}, Failures: 1, Inconclusive: 0, Time: 0.1 seconds\n");
    assert_eq!(summary(&test(&format!("{nunit}{nunit}  Not run: {max}, Invalid: 1\n"), 1)).3, max);
    let long_form = format!("Total tests: Unknown\n     Passed: {max}\n     Failed: {max}\n Total time: 1 Seconds\n");
    assert_eq!(summary(&test(&long_form, 1)), (max, max, 0, max, Some(0)));
}
