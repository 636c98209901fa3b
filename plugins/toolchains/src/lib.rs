//! The plugin library buildvise ships: its five toolchain plugins, exported from one file.
//!
//! Each plugin is a crate of its own (`plugins/cargo`, `npm`, `pytest`, `dotnet`, `generic`),
//! written against `buildvise-plugin-api` as a third party's plugin is, and loaded through the
//! same C ABI. They ship as one library because each library carries its own copy of std,
//! regex and serde: five libraries took 9.3 MiB stripped, this one takes what the bench's size
//! section reports (docs/install.md). The order below is the order the host adds their tools.
//!
//! What it is not: a place for code. A plugin's behaviour belongs in its own crate.

buildvise_plugin_api::export_plugins!(
    buildvise_plugin_cargo::CargoPlugin,
    buildvise_plugin_npm::ThePlugin,
    buildvise_plugin_pytest::ThePlugin,
    buildvise_plugin_dotnet::DotnetPlugin,
    buildvise_plugin_generic::GenericPlugin,
);
