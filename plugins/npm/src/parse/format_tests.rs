//! Each exported format on its own: it reads its own output (snippets of the recognisers' tests,
//! captured from the real tools) and none of the other formats'.

use super::{FORMATS, NpmParser};
use crate::ThePlugin;
use buildvise_plugin_api::testing::parse_log;
use buildvise_plugin_api::{ParseContext, ParseResult, Plugin};

const CWD: &str = "/home/dev/src/crash";

/// One snippet per format, and the message of a diagnostic it gives.
const SNIPPETS: [(&str, &str, &str); 12] = [
    (
        "node-crash",
        "\n> orders-cli@1.0.0 start\n> node src/app.js\n\norder 1: 6\n\
/home/dev/src/crash/src/totals.js:9\n\
\x20 for (const line of order.lines) {\n\
\x20                          ^\n\
\n\
TypeError: order.lines is not iterable\n\
\x20   at orderTotal (/home/dev/src/crash/src/totals.js:9:28)\n\
\x20   at report (/home/dev/src/crash/src/app.js:11:39)\n\
\x20   at Module._compile (node:internal/modules/cjs/loader:1521:14)\n\
\x20   at node:internal/main/run_main_module:28:49\n\
\n\
Node.js v20.20.2\n",
        "TypeError: order.lines is not iterable",
    ),
    (
        "webpack",
        "assets by status 391 bytes [cached] 1 asset\n\n\
ERROR in ./src/index.js 2:0-39\n\
Module not found: Error: Can't resolve './format' in '/home/dev/src/wp/src'\n\n\
webpack 5.112.2 compiled with 1 error in 2669 ms\n",
        "Module not found: Can't resolve './format'",
    ),
    (
        "esbuild",
        "✘ [ERROR] The symbol \"a\" has already been declared\n\n    dup.js:2:6:\n      2 │ const a = 2;\n        ╵       ^\n\n\
\x20 The symbol \"a\" was originally declared here:\n\n    dup.js:1:6:\n      1 │ const a = 1;\n        ╵       ^\n\n1 error\n",
        "The symbol \"a\" has already been declared",
    ),
    (
        "vite",
        "vite v7.3.8 building client environment for production...\ntransforming...\n\
✓ 2 modules transformed.\n✗ Build failed in 103ms\nerror during build:\n\
[vite]: Rollup failed to resolve import \"chart-lib\" from \"/home/dev/src/vite-app/src/main.ts\".\n\
This is most likely unintended because it can break your application at runtime.\n\
If you do want to externalize this module explicitly add it to\n\
`build.rollupOptions.external`\n\
\x20   at viteLog (file:///home/dev/src/vite-app/node_modules/vite/dist/node/chunks/config.js:33885:57)\n\
\x20   at async Promise.all (index 1)\n",
        "Rollup failed to resolve import \"chart-lib\"",
    ),
    (
        "next",
        "   Linting and checking validity of types ...\nFailed to compile.\n\n./app/page.tsx:8:9\n\
Type error: Type 'number' is not assignable to type 'string'.\n\n\
\x20 6 |\n  7 | export default function Home() {\n>  8 |   const title: string = 42;\n    |         ^\n\
Next.js build worker exited with code: 1 and signal: null\n",
        "Type 'number' is not assignable to type 'string'.",
    ),
    (
        "prettier",
        "Checking formatting...\n[warn] src/a.ts\n\
[error] src/broken.ts: SyntaxError: Expression expected. (2:15)\n\
[error]   1 | export function g() {\n\
[error] > 2 |   return (1 + ;\n\
[error]     |               ^\n\
Error occurred when checking code style in 1 file.\n",
        "SyntaxError: Expression expected.",
    ),
    (
        "tsc",
        "\n> shop@1.0.0 build\n> tsc\n\n\
src/models/item.ts(24,14): error TS2322: Type '{ w: string; }' is not assignable to type 'Dims'.\n\
\x20 Types of property 'w' are incompatible.\n\
\x20   Type 'string' is not assignable to type 'number'.\n\
src/util.ts(2,10): error TS2304: Cannot find name 'sym'.\n",
        "Type '{ w: string; }' is not assignable to type 'Dims'.",
    ),
    (
        "eslint",
        "\n> api@1.0.0 lint\n> eslint .\n\n\n\
/home/dev/api/src/router.js\n\
\x20  4:3   error    Unexpected var, use let or const instead  no-var\n\
\x20 10:24  warning  Expected { after 'if' condition           curly\n\
\n\
\u{2716} 2 problems (1 error, 1 warning)\n\
npm error Lifecycle script `lint` failed with error:\n\
npm error code 1\n\
npm error path /home/dev/api\n\
npm error workspace api@1.0.0\n\
npm error location /home/dev/api\n\
npm error command failed\n\
npm error command sh -c eslint .\n",
        "Unexpected var, use let or const instead",
    ),
    (
        "jest",
        "FAIL test/totals.test.js\n\
\x20 \u{25cf} checkout total\n\
\n\
\x20   expect(received).toBe(expected) // Object.is equality\n\
\n\
\x20     at Object.toBe (test/totals.test.js:6:35)\n\
\n\
Test Suites: 1 failed, 1 total\n\
Tests:       1 failed, 1 passed, 2 total\n",
        "expect(received).toBe(expected)",
    ),
    (
        "vitest",
        "\x20FAIL  tests/money.test.ts > split > keeps the remainder\n\
AssertionError: expected [ 333 ] to deeply equal [ 334 ]\n\n\
\x20Test Files  1 failed (1)\n\
\x20     Tests  1 failed | 2 passed (3)\n\
\x20  Start at  23:09:23\n\n\
\x20\u{276f} tests/money.test.ts:23:30\n\
\x20    23|       expect(split(1000, 3)).toEqual([334]);\n\n\
\u{23af}\u{23af}\u{23af}[1/1]\u{23af}\n",
        "AssertionError: expected [ 333 ] to deeply equal [ 334 ]",
    ),
    (
        "mocha",
        "\n\
\x20 Calculator\n\
\x20   1) subtracts\n\
\n\
\n\
\x20 0 passing (12ms)\n\
\x20 1 failing\n\
\n\
\x20 1) Calculator\n\
\x20      subtracts:\n\
\n\
\x20     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\
\n\
3 !== -3\n\
\n\
\x20     at Context.<anonymous> (file:///srv/calc/test/calc.test.mjs:10:14)\n\
\x20     at process.processImmediate (node:internal/timers:478:21)\n\
\n\
\n",
        "Expected values to be strictly equal:",
    ),
    (
        "node-test",
        "\u{25b6} math\n\
\x20 \u{2714} adds (0.5ms)\n\
\x20 \u{2716} subtracts (0.8ms)\n\
\x20   AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\
\x20   \n\
\x20       at TestContext.<anonymous> (file:///srv/m/test/math.test.js:10:12)\n\
\x20       at Test.runInAsyncScope (node:async_hooks:206:9) {\n\
\x20     code: 'ERR_ASSERTION',\n\
\x20   }\n\
\n\
\u{25b6} math (2ms)\n\
\u{2139} tests 2\n\
\u{2139} pass 1\n\
\u{2139} fail 1\n",
        "Expected values to be strictly equal:",
    ),
];

fn parse(format: &str, log: &str) -> ParseResult {
    let parser = ThePlugin.format_parser(format, &ParseContext::new("web.check", CWD)).expect("an exported format");
    parse_log(parser, log.as_bytes(), 1)
}

#[test]
fn every_format_reads_its_own_output() {
    for (format, log, message) in SNIPPETS {
        let result = parse(format, log);
        let found = result.diagnostics.iter().any(|d| d.message.contains(message));
        assert!(found, "{format}: {:?}", result.diagnostics);
    }
}

#[test]
fn every_format_ignores_the_others() {
    for (format, _, _) in SNIPPETS {
        for (other, log, _) in SNIPPETS.iter().filter(|(other, _, _)| *other != format) {
            let result = parse(format, log);
            assert!(result.diagnostics.is_empty(), "{format} read {other}'s output: {:?}", result.diagnostics);
            assert!(result.failed_tests.is_empty(), "{format} read {other}'s tests");
        }
    }
}

#[test]
fn npm_lines_are_no_format_s() {
    let (_, eslint, _) = SNIPPETS[7];
    let result = parse("eslint", eslint);
    assert_eq!(result.diagnostics.len(), 2, "{:?}", result.diagnostics);
    // The whole parser reads the same log, and npm's block is its only addition.
    let all = parse_log(Box::new(NpmParser::new(&ParseContext::new("npm.run", CWD))), eslint.as_bytes(), 1);
    assert!(all.diagnostics.len() >= result.diagnostics.len());
}

#[test]
fn the_manifest_lists_every_format_and_only_those() {
    let manifest = ThePlugin.manifest();
    let names: Vec<&str> = manifest.formats.iter().map(|f| f.name.as_str()).collect();
    let snippets: Vec<&str> = SNIPPETS.iter().map(|(name, _, _)| *name).collect();
    assert_eq!(names, snippets);
    assert_eq!(names.len(), FORMATS.len());
    let context = ParseContext::new("web.check", CWD);
    for name in &names {
        assert!(ThePlugin.format_parser(name, &context).is_some(), "{name}");
    }
    assert!(ThePlugin.format_parser("npm", &context).is_none());
    assert!(ThePlugin.format_parser("TSC", &context).is_none());
}
